// How the domain rules write numbers and name the nearest known values in
// their messages and hints (hints.h).
#include "engine/validate/hints.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "engine/core/strings.h"

namespace plinth::validate {
namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (const auto& n : names) q.push_back("'" + n + "'");
  return join(q, ", ");
}

}  // namespace

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string nearby_versions(const std::string& v, const std::vector<std::string>& known) {
  std::string below, above;
  for (const auto& k : known) {
    if (compare_versions(k, v) < 0) below = k;
    else if (above.empty()) above = k;
  }
  std::vector<std::string> near;
  if (!below.empty()) near.push_back(below);
  if (!above.empty()) near.push_back(above);
  return join(near, " or ");
}

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  auto prefix = [&](const std::string& c) {
    size_t n = 0;
    while (n < c.size() && n < word.size() && c[n] == word[n]) ++n;
    return n;
  };
  std::vector<std::tuple<int, size_t, std::string>> scored;  // distance, common prefix, name
  for (const auto& c : candidates) scored.emplace_back(edit_distance(word, c), prefix(c), c);
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) < std::get<0>(b) : std::get<1>(a) > std::get<1>(b);
  });
  if (scored.empty()) return "";
  if (closest_match(word, {std::get<2>(scored[0])})) return "did you mean '" + std::get<2>(scored[0]) + "'?";
  std::vector<std::string> best;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) best.push_back(std::get<2>(scored[i]));
  return "closest known: " + quoted_list(best);
}

}  // namespace plinth::validate
