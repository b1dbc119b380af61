#include "tests/support/text.h"

#include <catch2/catch.hpp>

namespace plinth::test {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  INFO("'" << from << "' is not in the text");
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string diagnostics_text(const Diagnostics& ds) {
  std::string out;
  for (const auto& d : ds) out += format_diagnostic(d);
  return out;
}

}  // namespace plinth::test
