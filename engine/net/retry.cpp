#include "engine/net/retry.h"

#include <algorithm>
#include <random>

namespace plinth::net {

int backoff_delay_ms(const RetryPolicy& policy, int attempt, const Error& error) {
  if (error.retry_after_ms > 0) return std::min(error.retry_after_ms, policy.max_retry_after_ms);
  long long window = std::max(policy.base_delay_ms, 0);
  for (int i = 1; i < attempt && window < policy.max_delay_ms; ++i) window *= 2;
  window = std::min<long long>(window, policy.max_delay_ms);
  if (window <= 0) return 0;
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return static_cast<int>(std::uniform_int_distribution<long long>(0, window)(rng));
}

void sleep_ms(int ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

}  // namespace plinth::net
