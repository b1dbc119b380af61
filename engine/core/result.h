#pragma once
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace plinth {

/// An error that crossed a module boundary: a message that says what failed
/// and what to do next, and a kind so callers (the apply executor, the CLI)
/// can decide whether to retry.
struct Error {
  /// Retryable: worth another attempt (connection reset, 5xx). Throttled: the
  /// service asked to slow down (429, RequestLimitExceeded), retry after
  /// retry_after_ms. Cancelled: stopped on purpose (a signal, Provider::stop).
  /// DeadlineExceeded: the operation's deadline passed; never retried.
  enum class Kind { Fatal, Retryable, Throttled, NotFound, Conflict, Invalid, Cancelled, DeadlineExceeded };
  Kind kind = Kind::Fatal;
  std::string message;
  int retry_after_ms = 0;  ///< Throttled/Retryable: the server's Retry-After, if any

  static Error fatal(std::string m) { return {Kind::Fatal, std::move(m), 0}; }
  static Error invalid(std::string m) { return {Kind::Invalid, std::move(m), 0}; }
  static Error retryable_error(std::string m) { return {Kind::Retryable, std::move(m), 0}; }
  bool retryable() const { return kind == Kind::Retryable || kind == Kind::Throttled; }
};

/// Result<T>: a value or an Error. Exported functions return it instead of
/// throwing (STYLE.md §4); exceptions stay inside modules.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error e) : v_(std::move(e)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    if (!ok()) throw std::logic_error("Result::value() on error: " + error().message);
    return std::get<0>(v_);
  }
  const T& value() const& {
    if (!ok()) throw std::logic_error("Result::value() on error: " + error().message);
    return std::get<0>(v_);
  }
  T&& value() && {
    if (!ok()) throw std::logic_error("Result::value() on error: " + error().message);
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

/// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error e) : err_(std::move(e)), failed_(true) {}
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return err_; }

 private:
  Error err_;
  bool failed_ = false;
};

using Status = Result<void>;

}  // namespace plinth
