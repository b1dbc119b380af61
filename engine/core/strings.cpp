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

std::optional<size_t> invalid_utf8_offset(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F;  // no UTF-16 surrogates
    else if (c >= 0xEE && c <= 0xEF) len = 3;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;  // nothing above U+10FFFF
    else return i;
    if (i + len > n || p[i + 1] < lo || p[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) return i;
    i += len;
  }
  return std::nullopt;
}

std::string escape_control(std::string_view text, bool keep_tab_newline) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && !(keep_tab_newline && (c == '\t' || c == '\n'))) || c == 0x7f) {
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 0xf];
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    auto bad = invalid_utf8_offset(text.substr(i, std::min<size_t>(4, text.size() - i)));
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (bad && *bad == 0) {  // not the start of a valid sequence: show the byte
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
      ++i;
      continue;
    }
    if (c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {  // C1 control U+0080-U+009F
      auto c1 = static_cast<unsigned char>(text[i + 1]);
      out += "\\u{";
      out += hex[c1 >> 4];
      out += hex[c1 & 0xf];
      out += "}";
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
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
