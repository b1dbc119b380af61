#pragma once
// The apply executor: carries out a Plan through providers, walking its
// dependency graph with bounded parallelism, per-provider concurrency and
// rate limits, retries, and a state journal written after every completed
// operation. docs/apply.md describes the behaviour in full.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/apply/limits.h"
#include "engine/plan/plan.h"
#include "engine/provider/provider.h"
#include "engine/state/state.h"

namespace plinth::apply {

/// Finds the Provider for a provider name ("baremetal"), or nullptr when this
/// build has none. Never asked for "plinth" (logical resources).
using ProviderLookup = std::function<Provider*(const std::string& name)>;

/// Limits for the calls to one provider.
struct ProviderLimits {
  int concurrency = 0;         ///< at most this many operations in flight; 0 = only --parallelism bounds it
  double rate_per_second = 0;  ///< token bucket refill rate for provider calls; 0 = unlimited
  double burst = 1;            ///< tokens the bucket holds
  bool operator==(const ProviderLimits&) const = default;
};

/// What an observer sees while the executor runs (progress lines, bars).
struct Event {
  enum class Kind { Started, Retrying, Finished };
  Kind kind = Kind::Started;
  std::string address;
  plan::Action action = plan::Action::NoOp;
  std::string message;  ///< Retrying: the error; Finished: the outcome's error ("" on success)
  bool ok = true;       ///< Finished: the operation succeeded
  std::chrono::milliseconds elapsed{0};
  int attempt = 1;      ///< Retrying: the attempt that failed
  std::chrono::milliseconds wait{0};  ///< Retrying: the backoff before the next attempt
};

/// How an apply is cancelled: the CLI's signal handling sets the level.
enum class Cancel : int {
  None = 0,
  Stop = 1,     ///< start no new operations, let in-flight ones finish (bounded wait)
  Abandon = 2,  ///< stop waiting for in-flight operations
};

struct Options {
  int parallelism = 10;  ///< operations in flight at once, across providers (>= 1)
  std::map<std::string, ProviderLimits> limits;  ///< by provider name; absent: unlimited
  RetryPolicy retry;
  /// After a Stop, how long to wait for in-flight operations before abandoning them.
  std::chrono::milliseconds drain_timeout{60000};
  /// Polled between operations and while waiting; may be null.
  const std::atomic<int>* cancel = nullptr;
  /// Called from worker threads, one call at a time (serialized).
  std::function<void(const Event&)> on_event;
  uint64_t seed = 0;  ///< jitter seed; 0 = random
};

enum class OutcomeStatus {
  Succeeded,
  Failed,      ///< the operation failed (after retries); `error` says why
  Skipped,     ///< a dependency failed (or was skipped); `error` names it
  NotStarted,  ///< cancelled before it started
  Abandoned,   ///< in flight when the executor stopped waiting; not journaled
};
const char* to_string(OutcomeStatus s);

struct Outcome {
  std::string address;
  plan::Action action = plan::Action::NoOp;
  OutcomeStatus status = OutcomeStatus::NotStarted;
  std::string error;
  std::chrono::milliseconds elapsed{0};
  int attempts = 0;  ///< provider calls made (0 for logical resources and skips)
};

struct Report {
  std::vector<Outcome> outcomes;  ///< one per changed resource of the plan, in plan order
  bool cancelled = false;         ///< a Stop or Abandon arrived
  std::string journal_error;      ///< set when a state write failed (the apply stopped)
  uint64_t final_serial = 0;      ///< serial of the last state written
  size_t saves = 0;               ///< state writes made
  size_t count(OutcomeStatus s) const;
  /// Everything succeeded and every state write worked.
  bool ok() const { return journal_error.empty() && count(OutcomeStatus::Succeeded) == outcomes.size(); }
};

/// Carries out the changes of `plan` (no-ops are ignored).
///
/// Ordering: a create, update or replace starts after every changed resource
/// in its desired `depends_on`; a delete starts after every changed resource
/// that depended on it before (dependents are removed first). A replace is
/// remove-then-create (the resource is journaled as gone in between).
///
/// `state` is the refreshed prior state the plan was made from; the backend
/// must be locked by the caller. After EVERY completed operation the state is
/// saved through `backend` with serial + 1 (one writer at a time), so a crash
/// loses at most the operations in flight. Resources of provider "plinth"
/// (logical: VLANs, tiers, access, monitoring) are recorded in state without
/// any provider call. Retryable and throttled errors are retried per
/// options.retry; a fatal error fails the resource and skips its dependents
/// while independent branches go on. A failed state write stops the apply
/// (no new operations start) and is reported in journal_error.
Report execute(const plan::Plan& plan, state::StateDocument state, state::Backend& backend,
               const ProviderLookup& providers, const Options& options);

}  // namespace plinth::apply
