#pragma once
// The time an operation may take, all its attempts and requests included.
#include <chrono>
#include <string>

namespace plinth {

/// A point in time after which an operation gives up, with the budget it was
/// given (for messages: "within its deadline of 2s"). A value type; the
/// default never expires.
class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  Deadline() = default;
  /// Expires `budget` from now.
  static Deadline after(std::chrono::milliseconds budget) { return Deadline(Clock::now() + budget, budget); }
  static Deadline never() { return Deadline(); }

  bool unlimited() const { return at_ == Clock::time_point::max(); }
  bool passed(Clock::time_point now = Clock::now()) const { return !unlimited() && now >= at_; }
  /// Time left (zero when passed; a very large value when unlimited).
  std::chrono::milliseconds remaining(Clock::time_point now = Clock::now()) const {
    if (unlimited()) return std::chrono::milliseconds(std::chrono::hours(24 * 365));
    if (now >= at_) return std::chrono::milliseconds(0);
    return std::chrono::duration_cast<std::chrono::milliseconds>(at_ - now);
  }
  /// `limit`, shortened to what is left of the deadline.
  std::chrono::milliseconds clamp(std::chrono::milliseconds limit, Clock::time_point now = Clock::now()) const {
    return std::min(limit, remaining(now));
  }
  Clock::time_point at() const { return at_; }
  std::chrono::milliseconds budget() const { return budget_; }

 private:
  Deadline(Clock::time_point at, std::chrono::milliseconds budget) : at_(at), budget_(budget) {}
  Clock::time_point at_ = Clock::time_point::max();
  std::chrono::milliseconds budget_{0};
};

}  // namespace plinth
