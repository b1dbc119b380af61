#include "tests/emulators/common/flags.h"

#include <charconv>

namespace plinth::emulator {

bool to_int(const std::string& s, long long& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

bool to_double(const std::string& s, double& out) {
  try {
    size_t used = 0;
    out = std::stod(s, &used);
    return used == s.size();
  } catch (...) {
    return false;
  }
}

FlagReader::FlagReader(int argc, char** argv) : args_(argv + 1, argv + argc) {}

bool FlagReader::next() {
  if (started_) ++i_;
  started_ = true;
  if (i_ >= args_.size()) return false;
  flag_ = args_[i_];
  value_.clear();
  has_value_ = false;
  if (auto eq = flag_.find('='); flag_.rfind("--", 0) == 0 && eq != std::string::npos) {
    value_ = flag_.substr(eq + 1);
    flag_ = flag_.substr(0, eq);
    has_value_ = true;
  }
  return true;
}

bool FlagReader::need() {
  if (has_value_) return true;
  if (i_ + 1 >= args_.size()) return false;
  value_ = args_[++i_];
  has_value_ = true;
  return true;
}

std::string FlagReader::int_flag(int& out, long long lo, long long hi) {
  long long n = 0;
  if (!need()) return flag_ + " needs a value";
  if (!to_int(value_, n) || n < lo || n > hi)
    return flag_ + " needs a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got '" +
           value_ + "'";
  out = static_cast<int>(n);
  return "";
}

std::string FlagReader::rate_flag(double& out) {
  if (!need()) return flag_ + " needs a value";
  if (!to_double(value_, out) || out < 0 || out > 1) return flag_ + " needs a fraction from 0 to 1, got '" + value_ + "'";
  return "";
}

std::string FlagReader::str_flag(std::string& out) {
  if (!need()) return flag_ + " needs a value";
  out = value_;
  return "";
}

std::string FlagReader::latency_flag(int& min, int& max, long long limit, const char* separators,
                                     const std::string& form) {
  if (!need()) return flag_ + " needs " + form;
  auto sep = value_.find_first_of(separators);
  long long lo = 0, hi = 0;
  bool ok = sep == std::string::npos ? (to_int(value_, lo) && (hi = lo, true))
                                     : (to_int(value_.substr(0, sep), lo) && to_int(value_.substr(sep + 1), hi));
  if (!ok || lo < 0 || hi < lo || hi > limit)
    return flag_ + " needs " + form + " milliseconds with MIN <= MAX, got '" + value_ + "'";
  min = static_cast<int>(lo);
  max = static_cast<int>(hi);
  return "";
}

std::string FlagReader::seed_flag(uint64_t& out) {
  long long s = 0;
  if (!need() || !to_int(value_, s) || s < 0) return flag_ + " needs a non-negative whole number";
  out = static_cast<uint64_t>(s);
  return "";
}

}  // namespace plinth::emulator
