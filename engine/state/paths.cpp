// Where the state file is (and what a link there points to), the
// --lock-timeout duration syntax, and the serial's upper bound.
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>

#include "engine/state/checks.h"
#include "engine/state/lock_error.h"
#include "engine/state/state.h"

namespace plinth::state {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::string default_state_path(const std::vector<std::string>& blueprint_paths) {
  constexpr const char* kName = "plinth.state.json";
  if (blueprint_paths.empty()) return kName;
  fs::path first(blueprint_paths.front());
  std::error_code ec;
  if (fs::is_directory(first, ec)) return (first / kName).string();
  return first.has_parent_path() ? (first.parent_path() / kName).string() : std::string(kName);
}

std::string resolve_state_path(const std::optional<std::string>& flag, const std::vector<std::string>& blueprint_paths) {
  if (flag && !flag->empty()) return *flag;
  if (const char* env = std::getenv("PLINTH_STATE"); env && *env) return env;
  return default_state_path(blueprint_paths);
}

Result<std::string> resolve_state_link(const std::string& path) {
  fs::path p(path);
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p.string();
    std::string target(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
    ssize_t n = ::readlink(p.c_str(), target.data(), target.size());
    if (n < 0)
      return Error::fatal("cannot read the symbolic link " + p.string() + " (the state path " + path +
                          "): " + std::strerror(errno));
    target.resize(static_cast<size_t>(n));
    fs::path t(target);
    p = (t.is_absolute() ? t : p.parent_path() / t).lexically_normal();
  }
  return Error::invalid("the state path " + path +
                        " is a symbolic link that never reaches a file (more than 40 links, a loop?); point it at the "
                        "state file, or pass the file's own path with --state");
}

Status check_serial_room(uint64_t serial, const std::string& source) {
  if (serial != UINT64_MAX) return {};
  return Error::invalid("state file " + source + " is at serial " + std::to_string(serial) +
                        ", the largest a serial can be, so it can never be saved again (the next serial would wrap to "
                        "0); it was edited by hand or damaged. Restore a good version with 'plinth state history' and "
                        "'plinth state restore SERIAL'");
}

Result<milliseconds> parse_duration(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return Error::invalid("invalid duration '" + text + "': " + why +
                          "; write a number with a unit: 500ms, 30s, 2m, 1h or 1m30s");
  };
  if (text.empty()) return bad("it is empty");
  if (text == "0") return milliseconds(0);
  long long total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start) return bad("expected a number at '" + text.substr(start) + "'");
    if (i - start > 9) return bad("the number is too large");
    long long n = std::stoll(text.substr(start, i - start));
    size_t ustart = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string unit = text.substr(ustart, i - ustart);
    long long scale = 0;
    if (unit == "ms") scale = 1;
    else if (unit == "s") scale = 1000;
    else if (unit == "m") scale = 60 * 1000;
    else if (unit == "h") scale = 60 * 60 * 1000;
    else if (unit.empty()) return bad("the number " + std::to_string(n) + " has no unit");
    else return bad("unknown unit '" + unit + "'");
    total += n * scale;
  }
  return milliseconds(total);
}

std::string format_duration(milliseconds d) {
  long long ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  auto part = [&](long long unit, const char* suffix) {
    if (ms >= unit) {
      out += std::to_string(ms / unit) + suffix;
      ms %= unit;
    }
  };
  part(3600000, "h");
  part(60000, "m");
  part(1000, "s");
  part(1, "ms");
  return out;
}

}  // namespace plinth::state

namespace plinth::state {

Error lock_held_error(const std::string& source, const std::string& who, std::chrono::milliseconds timeout) {
  if (timeout.count() == 0)
    return Error{Error::Kind::Conflict,
                 "state " + source + " is locked by " + who +
                     "; wait for it to finish, or pass --lock-timeout=60s to wait, or run 'plinth state "
                     "unlock' if that process is gone",
                 0};
  return Error{Error::Kind::Conflict,
               "state " + source + " is still locked by " + who + " after waiting " + format_duration(timeout) +
                   "; wait for it to finish, or pass a longer --lock-timeout, or run 'plinth state unlock' if "
                   "that process is gone",
               0};
}

}  // namespace plinth::state
