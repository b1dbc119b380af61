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

ProviderLimits limits_from(const ProviderConfig& c) {
  using std::chrono::milliseconds;
  ProviderLimits l;
  if (c.has("concurrency")) l.concurrency = static_cast<int>(std::min<int64_t>(c.integer("concurrency"), 1 << 20));
  if (c.has("rate")) l.rate_per_second = c.number("rate");
  if (c.has("burst")) l.burst = std::max(1.0, c.number("burst"));
  if (c.has("retry_attempts"))
    l.retry.max_attempts = static_cast<int>(std::clamp<int64_t>(c.integer("retry_attempts"), 1, 100));
  if (c.has("retry_base_ms")) l.retry.base = milliseconds(c.integer("retry_base_ms"));
  if (c.has("retry_max_ms")) l.retry.cap = milliseconds(c.integer("retry_max_ms"));
  if (c.has("retry_throttle_base_ms")) l.retry.throttle_base = milliseconds(c.integer("retry_throttle_base_ms"));
  if (c.has("retry_throttle_max_ms")) l.retry.throttle_cap = milliseconds(c.integer("retry_throttle_max_ms"));
  if (c.has("read_deadline")) l.deadlines.read = c.duration("read_deadline");
  if (c.has("create_deadline")) l.deadlines.create = c.duration("create_deadline");
  if (c.has("update_deadline")) l.deadlines.update = c.duration("update_deadline");
  if (c.has("delete_deadline")) l.deadlines.remove = c.duration("delete_deadline");
  return l;
}

}  // namespace plinth::apply
