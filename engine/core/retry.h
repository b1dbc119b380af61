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
  bool operator==(const RetryPolicy&) const = default;
};

/// The wait before retry number `attempt` (1 = the first retry) after `error`:
/// full jitter, uniform in [0, min(cap, base * 2^(attempt-1))], but never less
/// than the server's Retry-After (error.retry_after_ms) and never more than
/// max(cap, Retry-After).
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int attempt, const Error& error, std::mt19937_64& rng);

}  // namespace plinth
