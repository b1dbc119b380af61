#pragma once
// Small building blocks of the apply executor, which is the one owner of
// retries: a token-bucket rate limiter, exponential backoff with full jitter,
// and the per-provider limits read from a provider's options.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>

#include "engine/core/result.h"
#include "engine/core/retry.h"
#include "engine/provider/options.h"
#include "engine/provider/schema.h"

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

using plinth::backoff_delay;
using plinth::RetryPolicy;

/// Limits for the calls to one provider, from its options (common_options()).
struct ProviderLimits {
  int concurrency = 0;         ///< at most this many operations in flight; 0 = only --parallelism bounds it
  double rate_per_second = 0;  ///< token bucket refill rate for provider calls; 0 = unlimited
  double burst = 1;            ///< tokens the bucket holds
  RetryPolicy retry;
  Deadlines deadlines;         ///< per operation, all attempts included
  bool operator==(const ProviderLimits&) const = default;
};

/// The limits `config` sets: concurrency, rate, burst, retry_attempts,
/// retry_base_ms, retry_max_ms and the read/create/update/delete deadlines
/// (parse_provider_config filled in their defaults).
ProviderLimits limits_from(const ProviderConfig& config);

}  // namespace plinth::apply
