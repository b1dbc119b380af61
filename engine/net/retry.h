#pragma once
#include <chrono>
#include <functional>
#include <thread>
#include <type_traits>

#include "engine/core/result.h"

namespace plinth::net {

/// How often and how long to retry retryable errors (Error::retryable()).
struct RetryPolicy {
  int max_attempts = 5;          ///< total tries, the first included (1 = no retry)
  int base_delay_ms = 200;       ///< backoff before the 2nd try is drawn from [0, base]
  int max_delay_ms = 10000;      ///< cap of the exponential backoff window
  int max_retry_after_ms = 60000;  ///< a server's Retry-After is honoured up to this
};

/// The wait before retry number `attempt` (1 = the first retry) after `error`:
/// the server's Retry-After when it gave one (capped at max_retry_after_ms),
/// otherwise "full jitter": uniform in [0, min(max_delay, base * 2^(attempt-1))].
int backoff_delay_ms(const RetryPolicy& policy, int attempt, const Error& error);

/// Sleeps; tests may replace it to observe delays.
using SleepFn = std::function<void(int ms)>;
void sleep_ms(int ms);

/// Calls `op` (returning Result<T> or Status) until it succeeds, fails with a
/// non-retryable error, or max_attempts is reached; between tries waits
/// `backoff_delay_ms`. Returns the last result; after exhausting the attempts
/// the error message says how many tries were made.
template <typename Op>
auto with_retries(const RetryPolicy& policy, Op&& op, const SleepFn& sleep = sleep_ms) -> decltype(op()) {
  for (int attempt = 1;; ++attempt) {
    auto r = op();
    if (r.ok() || !r.error().retryable()) return r;
    if (attempt >= policy.max_attempts) {
      Error e = r.error();
      if (policy.max_attempts > 1) e.message += " (gave up after " + std::to_string(attempt) + " attempts)";
      return e;
    }
    sleep(backoff_delay_ms(policy, attempt, r.error()));
  }
}

}  // namespace plinth::net
