#include "engine/provider/call.h"

#include <memory>
#include <thread>

namespace plinth {

Call::Call(Deadline deadline, RetryPolicy policy, const std::atomic<bool>* cancel, RetryHook on_retry, uint64_t seed)
    : deadline_(deadline),
      policy_(policy),
      cancel_(cancel),
      on_retry_(std::move(on_retry)),
      rng_(seed ? seed : std::random_device{}()) {}

bool Call::retry(const Error& error) {
  if (!error.retryable() || cancelled()) return false;
  std::chrono::milliseconds wait;
  int failed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Throttling without a Retry-After is bounded by the deadline, not the
    // attempts (a generous bound only when there is no deadline).
    const int budget = std::max(1, policy_.max_attempts);
    const bool quota = throttled_without_wait(error);
    if (quota ? deadline_.unlimited() && streak_ >= 4 * budget : streak_ >= budget) {
      stopped_by_ = "attempts";
      return false;
    }
    wait = backoff_delay(policy_, streak_, error, rng_);
    if (!deadline_.unlimited() && wait >= deadline_.remaining()) {
      stopped_by_ = "deadline";
      return false;
    }
    failed = attempts_++;
    ++streak_;
    stopped_by_.clear();
  }
  if (on_retry_) on_retry_(error, failed, wait);
  // Sleep in short steps so a cancellation ends the wait at once.
  const auto until = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < until && !cancelled())
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(until - std::chrono::steady_clock::now(), std::chrono::milliseconds(20)));
  return !cancelled();
}

void Call::progress() {
  std::lock_guard<std::mutex> lock(mu_);
  streak_ = 1;
}

int Call::attempts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return attempts_;
}

std::string Call::stopped_by() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopped_by_;
}

std::unique_ptr<Call> Call::fork() const {
  Deadline d = deadline_.unlimited() ? Deadline::never() : Deadline::after(deadline_.budget());
  return std::make_unique<Call>(d, policy_, cancel_, on_retry_);
}

}  // namespace plinth
