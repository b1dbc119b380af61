#pragma once
// The retry policy the engine applies to every provider operation, and its
// backoff (the engine is the one owner of retries: docs/apply.md).
#include <chrono>
#include <random>

#include "engine/core/result.h"

namespace plinth {

/// How failed provider requests and operations are retried.
struct RetryPolicy {
  int max_attempts = 5;                  ///< attempts in a row without progress, the first included
  std::chrono::milliseconds base{250};   ///< first backoff ceiling
  std::chrono::milliseconds cap{20000};  ///< no backoff ceiling grows beyond this
  /// Throttling without a Retry-After (a quota per minute, as GCE's 429s and
  /// EC2's RequestLimitExceeded): waits from about throttle_base, doubling up
  /// to throttle_cap, as Google's and AWS's clients do; such attempts are not
  /// counted against max_attempts: the operation's deadline bounds them.
  std::chrono::milliseconds throttle_base{1000};
  std::chrono::milliseconds throttle_cap{60000};
  bool operator==(const RetryPolicy&) const = default;
};

/// True for throttling that names no wait (no Retry-After): RetryPolicy's throttle_* apply.
bool throttled_without_wait(const Error& error);

/// The wait before retry number `attempt` (1 = the first retry) after `error`:
/// full jitter, uniform in [0, min(cap, base * 2^(attempt-1))], but never less
/// than the server's Retry-After (error.retry_after_ms) and never more than
/// max(cap, Retry-After). Throttling without a Retry-After waits uniform in
/// [c/2, c] with c = min(throttle_cap, throttle_base * 2^(attempt-1)).
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int attempt, const Error& error, std::mt19937_64& rng);

}  // namespace plinth
