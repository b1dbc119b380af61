#pragma once
// The command line every emulator reads the same way: `--flag VALUE` or
// `--flag=VALUE`, with whole numbers and fractions checked and errors that
// name the flag.
#include <cstdint>
#include <string>
#include <vector>

namespace plinth::emulator {

/// The whole of `s` as a base-10 integer.
bool to_int(const std::string& s, long long& out);
/// The whole of `s` as a number.
bool to_double(const std::string& s, double& out);

/// Walks argv one flag at a time. Each reader returns "" or an error that
/// names the flag ("--port needs a whole number from 0 to 65535, got 'x'").
class FlagReader {
 public:
  FlagReader(int argc, char** argv);
  /// Moves to the next argument; false after the last.
  bool next();
  /// The flag, without an `=VALUE` part.
  const std::string& flag() const { return flag_; }
  /// The argument as written (for "unknown flag" messages).
  const std::string& arg() const { return args_[i_]; }
  /// Takes the flag's value (its `=VALUE`, else the next argument); false
  /// when there is none. value() holds it afterwards.
  bool need();
  const std::string& value() const { return value_; }

  std::string int_flag(int& out, long long lo, long long hi);
  /// A fraction from 0 to 1.
  std::string rate_flag(double& out);
  std::string str_flag(std::string& out);
  /// Milliseconds as "N" or "MIN<sep>MAX" (a separator from `separators`),
  /// 0 <= MIN <= MAX <= `limit`; `form` spells the syntax in the error.
  std::string latency_flag(int& min, int& max, long long limit = 3600000, const char* separators = "-",
                           const std::string& form = "N or MIN-MAX");
  /// A non-negative whole number.
  std::string seed_flag(uint64_t& out);

 private:
  std::vector<std::string> args_;
  size_t i_ = 0;
  bool started_ = false, has_value_ = false;
  std::string flag_, value_;
};

}  // namespace plinth::emulator
