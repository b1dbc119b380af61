#pragma once
// One provider operation as the engine runs it: its deadline, its
// cancellation and the retries it may make.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>

#include "engine/core/deadline.h"
#include "engine/core/result.h"
#include "engine/core/retry.h"

namespace plinth {

/// The engine owns retries, and a Call is how it lends them to a provider:
/// a provider whose request failed with a retryable error calls retry(),
/// which waits the backoff the engine's policy gives (never less than a
/// Retry-After) and says whether another attempt fits the policy and the
/// deadline. The attempt budget (RetryPolicy::max_attempts) bounds a run of
/// consecutive failures, whoever retried (a request inside a provider, or the
/// engine repeating the whole operation for a provider that returned the
/// error); a provider that makes progress (a request of a multi-request
/// operation succeeded) calls progress(), which starts a new run, so a long
/// operation on a flaky endpoint is not failed by unrelated blips while the
/// deadline still bounds the whole operation. Thread-safe: a provider may share one Call among the requests of
/// an operation that it sends in parallel.
class Call {
 public:
  /// Called (outside the lock) before each wait: the error, the attempt that
  /// failed and the wait.
  using RetryHook = std::function<void(const Error&, int attempt, std::chrono::milliseconds wait)>;

  explicit Call(Deadline deadline = Deadline::never(), RetryPolicy policy = {},
                const std::atomic<bool>* cancel = nullptr, RetryHook on_retry = {}, uint64_t seed = 0);
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  const Deadline& deadline() const { return deadline_; }
  const std::atomic<bool>* cancel() const { return cancel_; }
  bool cancelled() const { return cancel_ && cancel_->load(); }

  /// After a failed attempt: true (after waiting the backoff) when another
  /// attempt is allowed; false when the error is not retryable, the attempts
  /// are used up, the backoff would pass the deadline or the call was
  /// cancelled. A true answer counts the next attempt.
  bool retry(const Error& error);
  /// A request of this operation succeeded: the next failure starts a new
  /// run of attempts.
  void progress();
  /// Attempts made so far in total (at least 1).
  int attempts() const;
  /// Why the last retry() said no: "" (it said yes, or the error was not
  /// retryable), "attempts" or "deadline".
  std::string stopped_by() const;
  /// A fresh Call for one item of a batch: the same policy, hook and
  /// cancellation, its own attempts, and a deadline of the same budget
  /// starting now (unlimited stays unlimited).
  std::unique_ptr<Call> fork() const;

 private:
  Deadline deadline_;
  RetryPolicy policy_;
  const std::atomic<bool>* cancel_;
  RetryHook on_retry_;
  mutable std::mutex mu_;
  std::mt19937_64 rng_;
  int attempts_ = 1;  ///< in total
  int streak_ = 1;    ///< attempts since the last progress()
  std::string stopped_by_;
};

}  // namespace plinth
