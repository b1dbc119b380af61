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

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  return std::string(s);
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string index_ranges(std::vector<int> indices) {
  std::sort(indices.begin(), indices.end());
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    if (j >= i + 2) {
      out += std::to_string(indices[i]) + ".." + std::to_string(indices[j]);
      i = j + 1;
    } else {
      out += std::to_string(indices[i]);
      ++i;
    }
  }
  return "[" + out + "]";
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

size_t utf8_sequence_length(std::string_view s) {
  if (s.empty()) return 0;
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  // Lead byte: the sequence length and the allowed range of the second byte
  // (Unicode 15, table 3-7), which rules out overlongs, surrogates and > U+10FFFF.
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC) n = 3;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c >= 0xEE && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i)
    if (b(i) < 0x80 || b(i) > 0xBF) return 0;
  return n;
}

std::optional<size_t> invalid_utf8_offset(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_sequence_length(s.substr(i));
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

bool valid_utf8(std::string_view s) { return !invalid_utf8_offset(s); }

std::string to_valid_utf8(std::string_view s) {
  if (valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_sequence_length(s.substr(i));
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string safe_text(std::string_view s, bool keep_tab_newline) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_sequence_length(s.substr(i));
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (n == 1) {
      if ((c < 0x20 && !(keep_tab_newline && (c == '\t' || c == '\n'))) || c == 0x7F) {
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
      i += 1;
      continue;
    }
    // Decode the code point to test the ranges written out as escapes.
    uint32_t cp = n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    if ((cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
        cp == 0xFFFE || cp == 0xFFFF) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 15];
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string xml_escape(std::string_view text) {
  // safe_text first: malformed UTF-8 would make the document malformed, and
  // control characters (not allowed in XML 1.0, or terminal escapes) become
  // visible escapes such as "\x1b".
  const std::string safe = safe_text(text);
  std::string out;
  out.reserve(safe.size());
  for (char ch : safe) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

}  // namespace plinth
