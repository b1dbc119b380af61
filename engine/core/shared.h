#pragma once
// Shared<T>: an immutable value held by reference count, read like a
// std::optional<T>. Copies share the value instead of copying it; equality
// compares values. For large values that several owners read and nobody
// changes (a plan's desired resources are the expanded graph's).
#include <memory>
#include <optional>
#include <stdexcept>

namespace plinth {

template <class T>
class Shared {
 public:
  Shared() = default;
  Shared(std::nullopt_t) {}                                          // NOLINT: as std::optional
  Shared(T value) : p_(std::make_shared<const T>(std::move(value))) {}  // NOLINT: as std::optional
  /// Shares `p` (null: empty), e.g. an element of a shared container through
  /// shared_ptr's aliasing constructor.
  explicit Shared(std::shared_ptr<const T> p) : p_(std::move(p)) {}

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  const T& operator*() const { return *p_; }
  const T* operator->() const { return p_.get(); }
  const T& value() const {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }
  void reset() { p_.reset(); }
  /// `member`, a part of this value, shared: it keeps this value alive.
  template <class U>
  Shared<U> part(const U& member) const {
    return Shared<U>(std::shared_ptr<const U>(p_, &member));
  }

  friend bool operator==(const Shared& a, const Shared& b) {
    return a.p_ == b.p_ || (a.p_ && b.p_ && *a.p_ == *b.p_);
  }

 private:
  std::shared_ptr<const T> p_;
};

}  // namespace plinth
