#pragma once
// Small building blocks of the apply executor: a token-bucket rate limiter
// and exponential backoff with full jitter. (engine/net did not exist when the
// executor was written; apply links only engine/plan, so it keeps its own.)
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>

#include "engine/core/result.h"

namespace plinth::apply {

/// A token bucket: `rate` tokens per second, at most `burst` saved up.
/// rate <= 0 means unlimited. Thread-safe.
class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  TokenBucket(double rate, double burst);
  /// Takes one token. Returns how long the caller must wait before using it
  /// (zero when a token was available): tokens are handed out in order, so
  /// n callers at once get waits of 0, 1/rate, 2/rate, ...
  std::chrono::milliseconds take(Clock::time_point now = Clock::now());

 private:
  std::mutex mu_;
  double rate_, burst_, tokens_;
  Clock::time_point last_;
};

/// How failed provider calls are retried.
struct RetryPolicy {
  int max_attempts = 6;                          ///< total calls, including the first
  std::chrono::milliseconds base{250};           ///< first backoff ceiling
  std::chrono::milliseconds cap{20000};          ///< no backoff ceiling grows beyond this
  bool operator==(const RetryPolicy&) const = default;
};

/// The wait before retry number `attempt` (1 = the first retry) after `error`:
/// full jitter, uniform in [0, min(cap, base * 2^(attempt-1))], but never less
/// than the server's Retry-After (error.retry_after_ms) and never more than
/// max(cap, Retry-After).
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int attempt, const Error& error, std::mt19937_64& rng);

}  // namespace plinth::apply
