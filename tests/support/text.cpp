#include "tests/support/text.h"

#include <algorithm>

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
  if (from.empty()) return s;
  // Copied into a new string (linear), not replaced in place: a large plan
  // names its blueprint's path once per resource.
  std::string out;
  size_t done = 0;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, done)) {
    out.append(s, done, at - done);
    out += to;
    done = at + from.size();
  }
  if (done == 0) return s;
  out.append(s, done, std::string::npos);
  return out;
}

std::string diagnostics_text(const Diagnostics& ds) {
  std::string out;
  for (const auto& d : ds) out += format_diagnostic(d);
  return out;
}

std::string placement_lines(const std::string& pool, std::map<std::string, std::vector<int>> where) {
  std::string out = "Placement:\n";
  for (auto& [placement, indices] : where) {
    std::sort(indices.begin(), indices.end());
    std::string list;  // runs of three or more as FIRST..LAST
    for (size_t a = 0, b = 0; a < indices.size(); a = b + 1) {
      for (b = a; b + 1 < indices.size() && indices[b + 1] == indices[b] + 1;) ++b;
      std::string run = b >= a + 2 ? std::to_string(indices[a]) + ".." + std::to_string(indices[b])
                                   : std::to_string(indices[a]);
      if (b == a + 1) run += ", " + std::to_string(indices[b]);
      list += (list.empty() ? "" : ", ") + run;
    }
    out += "  " + std::to_string(indices.size()) + " x " + pool + ": " + placement + ": [" + list + "]\n";
  }
  return out;
}

}  // namespace plinth::test
