#include "engine/core/retry.h"

#include <algorithm>

namespace plinth {

bool throttled_without_wait(const Error& error) {
  return error.kind == Error::Kind::Throttled && error.retry_after_ms <= 0;
}

std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int attempt, const Error& error,
                                        std::mt19937_64& rng) {
  using std::chrono::milliseconds;
  if (throttled_without_wait(error)) {
    const long long cap = std::max<long long>(1, policy.throttle_cap.count());
    long long ceiling = std::max<long long>(1, policy.throttle_base.count());
    for (int i = 1; i < attempt && ceiling < cap; ++i) ceiling *= 2;
    ceiling = std::min(ceiling, cap);
    std::uniform_int_distribution<long long> half(ceiling / 2, ceiling);
    return milliseconds(half(rng));
  }
  const long long cap = policy.cap.count();
  long long ceiling = policy.base.count();
  for (int i = 1; i < attempt && ceiling < cap; ++i) ceiling *= 2;
  ceiling = std::min(ceiling, cap);
  std::uniform_int_distribution<long long> dist(0, std::max(0LL, ceiling));
  long long wait = dist(rng);
  const long long server = error.retry_after_ms;
  if (server > wait) wait = server;
  return milliseconds(std::min(wait, std::max(cap, server)));
}

}  // namespace plinth
