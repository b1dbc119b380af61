#include "engine/core/diagnostic.h"

#include <algorithm>
#include <sstream>
#include <map>
#include <memory>
#include <mutex>

#include "engine/core/files.h"
#include "engine/core/strings.h"

namespace plinth {

const char* to_string(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Info: return "info";
  }
  return "error";
}

bool has_errors(const Diagnostics& ds) {
  return std::any_of(ds.begin(), ds.end(), [](const Diagnostic& d) { return d.severity == Severity::Error; });
}

size_t count(const Diagnostics& ds, Severity s) {
  return static_cast<size_t>(std::count_if(ds.begin(), ds.end(), [s](const Diagnostic& d) { return d.severity == s; }));
}

void sort_diagnostics(Diagnostics& ds) {
  std::stable_sort(ds.begin(), ds.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.loc.file, a.loc.line, a.loc.column, a.code) <
           std::tie(b.loc.file, b.loc.line, b.loc.column, b.code);
  });
}

namespace {

// Reads line `n` (1-based) of `file`; caches whole files since a run often
// reports several diagnostics in one file.
std::string source_line(const std::string& file, int n) {
  static std::mutex mu;
  static std::map<std::string, std::vector<std::string>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(file);
  if (it == cache.end()) {
    std::vector<std::string> lines;
    if (auto text = read_file(file)) {  // also the files compiled into the binary (engine/core/embedded.h)
      std::istringstream in(*text);
      std::string l;
      while (std::getline(in, l)) lines.push_back(l);
    }
    it = cache.emplace(file, std::move(lines)).first;
  }
  if (n <= 0 || static_cast<size_t>(n) > it->second.size()) return "";
  return it->second[static_cast<size_t>(n) - 1];
}

/// The terminal cells valid UTF-8 text takes: one a code point.
size_t cells(std::string_view s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char b) { return (static_cast<unsigned char>(b) & 0xC0) != 0x80; }));
}

}  // namespace

std::string format_diagnostic(const Diagnostic& d, bool color) {
  const char* sev_color = d.severity == Severity::Error ? "\033[1;31m"
                          : d.severity == Severity::Warning ? "\033[1;33m" : "\033[1;36m";
  auto c = [&](const char* code) { return color ? std::string(code) : std::string(); };
  // Messages, addresses and source lines may carry text from hostile input
  // (a policy's message, a blueprint value): never hand the terminal raw
  // control characters (ANSI escapes) or malformed UTF-8. Positions,
  // addresses and codes stay on one line.
  auto safe = [](std::string_view s) { return safe_text(s, false); };
  std::string out;
  if (d.loc.known()) out += c("\033[1m") + safe(d.loc.str()) + ": " + c("\033[0m");
  else if (!d.address.empty()) out += c("\033[1m") + safe(d.address) + ": " + c("\033[0m");
  out += c(sev_color) + to_string(d.severity);
  if (!d.code.empty()) out += "[" + safe(d.code) + "]";
  out += ":" + c("\033[0m") + " " + safe_text(d.message);
  if (d.loc.known() && !d.address.empty()) out += " (" + safe(d.address) + ")";
  out += "\n";
  if (d.show_source && d.loc.known() && d.loc.line > 0) {
    std::string text = source_line(d.loc.file, d.loc.line);
    if (!text.empty()) {
      std::string num = std::to_string(d.loc.line);
      // Made safe character by character so the caret stays under its column
      // (columns count bytes, as yaml-cpp's do; a character is one cell wide,
      // so is the U+FFFD that replaces a bad byte, an escape one cell per
      // character, a tab stays a tab).
      std::string shown, pad;
      const size_t caret = d.loc.column > 0 ? static_cast<size_t>(d.loc.column - 1) : 0;
      for (size_t i = 0; i < text.size();) {
        const std::string_view rest = std::string_view(text).substr(i);
        const std::string_view ch = rest.substr(0, std::max<size_t>(1, utf8_sequence_length(rest)));
        std::string piece = ch == "\t" ? std::string("\t") : safe_text(ch);
        shown += piece;
        if (i < caret) pad += piece == "\t" ? std::string("\t") : std::string(cells(piece), ' ');
        i += ch.size();
      }
      out += " " + num + " | " + shown + "\n";
      out += " " + std::string(num.size(), ' ') + " | ";
      if (d.loc.column > 0) out += pad + c("\033[1;32m") + "^" + c("\033[0m");
      out += "\n";
    }
  }
  if (!d.hint.empty()) out += "  hint: " + safe_text(d.hint) + "\n";
  return out;
}

}  // namespace plinth
