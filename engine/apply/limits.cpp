#include "engine/apply/limits.h"

#include <algorithm>
#include <cmath>

namespace plinth::apply {

TokenBucket::TokenBucket(double rate, double burst)
    : rate_(rate), burst_(std::max(1.0, burst)), tokens_(std::max(1.0, burst)), last_(Clock::now()) {}

std::chrono::milliseconds TokenBucket::take(Clock::time_point now) {
  if (rate_ <= 0) return std::chrono::milliseconds(0);
  std::lock_guard<std::mutex> lock(mu_);
  if (now > last_) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * rate_);
    last_ = now;
  }
  // Tokens may go negative: each caller reserves the next token in line and
  // waits until it has been refilled.
  tokens_ -= 1.0;
  if (tokens_ >= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(-tokens_ / rate_ * 1000.0)));
}

std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int attempt, const Error& error,
                                        std::mt19937_64& rng) {
  using std::chrono::milliseconds;
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

}  // namespace plinth::apply
