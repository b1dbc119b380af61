#include "engine/core/retry.h"

#include <algorithm>

namespace plinth {

namespace {

/// min(cap, base * 2^(attempt-1)): the backoff ceiling of retry `attempt`.
long long doubled_ceiling(long long base, long long cap, int attempt) {
  long long ceiling = base;
  for (int i = 1; i < attempt && ceiling < cap; ++i) ceiling *= 2;
  return std::min(ceiling, cap);
}

}  // namespace

bool throttled_without_wait(const Error& error) {
  return error.kind == Error::Kind::Throttled && error.retry_after_ms <= 0;
}

std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int attempt, const Error& error,
                                        std::mt19937_64& rng) {
  using std::chrono::milliseconds;
  if (throttled_without_wait(error)) {
    const long long ceiling = doubled_ceiling(std::max<long long>(1, policy.throttle_base.count()),
                                              std::max<long long>(1, policy.throttle_cap.count()), attempt);
    std::uniform_int_distribution<long long> half(ceiling / 2, ceiling);
    return milliseconds(half(rng));
  }
  const long long cap = policy.cap.count();
  const long long ceiling = doubled_ceiling(policy.base.count(), cap, attempt);
  std::uniform_int_distribution<long long> dist(0, std::max(0LL, ceiling));
  long long wait = dist(rng);
  const long long server = error.retry_after_ms;
  if (server > wait) wait = server;
  return milliseconds(std::min(wait, std::max(cap, server)));
}

}  // namespace plinth
