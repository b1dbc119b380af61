#include "engine/core/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace plinth {

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  const int limit = std::max<int>(2, static_cast<int>(word.size()) / 3);
  std::optional<std::string> best;
  int best_d = limit + 1;
  for (const auto& c : candidates) {
    int d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  if (auto m = closest_match(word, candidates)) return "did you mean '" + *m + "'?";
  if (!candidates.empty() && candidates.size() <= 12) return "expected one of: " + join(candidates, ", ");
  return "";
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

int compare_versions(std::string_view a, std::string_view b) {
  auto next = [](std::string_view& s) {
    size_t dot = s.find('.');
    std::string_view part = s.substr(0, dot);
    s = dot == std::string_view::npos ? std::string_view{} : s.substr(dot + 1);
    return part;
  };
  while (!a.empty() || !b.empty()) {
    std::string_view pa = next(a), pb = next(b);
    long na = 0, nb = 0;
    auto ra = std::from_chars(pa.data(), pa.data() + pa.size(), na);
    auto rb = std::from_chars(pb.data(), pb.data() + pb.size(), nb);
    bool numa = ra.ec == std::errc{} && ra.ptr == pa.data() + pa.size();
    bool numb = rb.ec == std::errc{} && rb.ptr == pb.data() + pb.size();
    if (pa.empty()) { numa = true; na = 0; }
    if (pb.empty()) { numb = true; nb = 0; }
    if (numa && numb) {
      if (na != nb) return na < nb ? -1 : 1;
    } else {
      int c = pa.compare(pb);
      if (c != 0) return c < 0 ? -1 : 1;
    }
  }
  return 0;
}

}  // namespace plinth
