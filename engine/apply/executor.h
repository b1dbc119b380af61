#pragma once
// The apply executor: carries out a Plan through providers, walking its
// dependency graph with bounded parallelism, per-provider concurrency and
// rate limits, retries, and a state journal written after every completed
// operation. docs/apply.md describes the behaviour in full.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/apply/limits.h"
#include "engine/plan/plan.h"
#include "engine/provider/provider.h"
#include "engine/state/state.h"

namespace plinth::apply {

/// Finds the Provider for a provider name, or nullptr when this run has
/// none (the resource then fails with a clear message).
using ProviderLookup = std::function<Provider*(const std::string& name)>;

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
  Stop = 1,  ///< start no new operations, let in-flight ones finish (bounded by drain_timeout)
  Now = 2,   ///< also cancel in-flight operations (Provider::stop); they end within moments
};

/// A change that takes its object down (a replace, a disruptive update) in a
/// group of which at most `max_in_flight` may be down at once: a node pool's
/// rollout (rollout.max_unavailable).
struct Rollout {
  std::string group;  ///< e.g. "baremetal.node.hgx-a"
  int max_in_flight = 1;
};

struct Options {
  int parallelism = 10;  ///< operations in flight at once, across providers (>= 1)
  std::map<std::string, ProviderLimits> limits;  ///< by provider name
  ProviderLimits default_limits;                 ///< for providers absent from `limits`
  /// After a Stop, how long to wait for in-flight operations before
  /// cancelling them as with Cancel::Now.
  std::chrono::milliseconds drain_timeout{60000};
  /// Polled between operations and while waiting; may be null.
  const std::atomic<int>* cancel = nullptr;
  /// Called from worker threads, one call at a time (serialized).
  std::function<void(const Event&)> on_event;
  uint64_t seed = 0;  ///< jitter seed; 0 = random
  /// Where completed operations are journaled once a write to the state
  /// backend fails (a PostgreSQL server that stopped): the state as last
  /// saved, then every operation that completes after, each as a new
  /// version. The apply still starts nothing new. Null: no fallback, the
  /// apply stops with the failed write (docs/state.md, "Local journal").
  std::shared_ptr<state::Backend> fallback;
  /// Fill Report::state (the outputs of the blueprint are evaluated on it).
  bool keep_state = false;
  /// The rollout a change belongs to, nullopt for none (unset: none). At most
  /// max_in_flight changes of one group run at once, independently of
  /// `parallelism`; when one fails, the group's changes not yet started are
  /// skipped (their objects keep their old state) and say why.
  std::function<std::optional<Rollout>(const plan::ResourceChange&)> rollout;
  /// The desired resource as its provider's create and update receive it:
  /// the plan carries what is compared, and this adds what is only derived
  /// from it (a node's rendered cloud-init, too large to keep per node in a
  /// plan of 100,000). Called from worker threads; an error fails the
  /// operation before the provider is called. Unset: the planned resource.
  std::function<Result<Resource>(const Resource&)> prepare;
  /// Called before the provider operation of every change to an existing
  /// object (update, replace, delete; deposed objects excepted): an error
  /// fails the change before anything is touched (the object keeps its
  /// recorded state; its rollout stops). Unset: nothing.
  std::function<Status(const plan::ResourceChange&)> before_change;
  /// Called once an update or replace that before_change preceded succeeded
  /// and was journaled: an error fails the change (which stays recorded).
  /// Unset: nothing.
  std::function<Status(const plan::ResourceChange&)> after_change;
};

enum class OutcomeStatus {
  Succeeded,
  Failed,      ///< the operation failed (after retries); `error` says why
  Skipped,     ///< a dependency failed (or was skipped); `error` names it
  NotStarted,  ///< cancelled before it started
  Cancelled,   ///< in flight when the apply was cancelled; not journaled
};
const char* to_string(OutcomeStatus s);

struct Outcome {
  std::string address;
  plan::Action action = plan::Action::NoOp;
  OutcomeStatus status = OutcomeStatus::NotStarted;
  std::string error;
  std::chrono::milliseconds elapsed{0};
  int attempts = 0;        ///< provider calls made (0 for skips)
  bool timed_out = false;  ///< failed because its deadline passed
  /// A create or replace that created its object: the provider's `computed`
  /// values (the summary shows the type's placement keys from them).
  Json computed = Json::object();
};

struct Report {
  std::vector<Outcome> outcomes;  ///< one per changed resource of the plan, in plan order
  bool cancelled = false;         ///< a Stop or Abandon arrived
  std::string journal_error;      ///< set when a state write failed (the apply stopped)
  uint64_t final_serial = 0;      ///< serial of the last state written
  size_t saves = 0;               ///< state writes made
  uint64_t state_bytes_written = 0;  ///< bytes of state the backend wrote (Backend::bytes_written)
  /// Set when the fallback journal was used: its describe() ("local file
  /// PATH"), and the operations it holds beyond the last saved state.
  std::string fallback_journal;
  size_t fallback_records = 0;
  /// With Options::keep_state: the state as last written to the backend,
  /// unless a write failed or went to the fallback journal.
  std::optional<state::StateDocument> state;
  size_t count(OutcomeStatus s) const;
  /// Everything succeeded and every state write worked.
  bool ok() const { return journal_error.empty() && count(OutcomeStatus::Succeeded) == outcomes.size(); }
};

/// Carries out the changes of `plan` (no-ops are ignored).
///
/// Ordering: a create, update or replace starts after every changed resource
/// in its desired `depends_on`; a delete starts after every changed resource
/// that depended on it before (dependents are removed first). A replace is
/// remove-then-create (the resource is journaled as gone in between), except
/// for types that declare create_before_destroy: the replacement is created
/// first and journaled with the old object as deposed, then the old object is
/// removed; when the create fails the old object stays recorded. A change
/// marked `deposed` removes such a left-over object.
///
/// `state` is the refreshed prior state the plan was made from; the backend
/// must be locked by the caller. After EVERY completed operation the state is
/// saved through `backend` with serial + 1 (one writer at a time), so a crash
/// loses at most the operations in flight.
///
/// The executor is the one owner of retries: retryable and throttled errors
/// are retried with the provider's RetryPolicy (backoff with full jitter,
/// never sooner than a Retry-After), within the operation's deadline (all
/// attempts included; a remove and a create of a replace each have their
/// own). A fatal error, or a deadline that passes, fails the resource and
/// skips its dependents while independent branches go on. A failed state
/// write stops the apply (no new operations start) and is reported in
/// journal_error.
///
/// Cancellation: Stop starts nothing new and waits for operations in flight
/// (up to drain_timeout); Now (or the drain timeout) calls stop() on every
/// provider, so in-flight calls end promptly as Cancelled. execute() returns
/// only after every worker thread has ended: none outlives it.
Report execute(const plan::Plan& plan, state::StateDocument state, state::Backend& backend,
               const ProviderLookup& providers, const Options& options);

}  // namespace plinth::apply
