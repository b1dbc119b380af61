// Where the state file is (and what a link there points to) and the
// serial's upper bound, and the lock messages both backends share.
// (Durations are engine/core/duration.h.)
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

std::string holder_description(const LockHolder& h) {
  return "PID " + std::to_string(h.pid) + " on " + h.host + " since " + h.time + " (" + h.operation + ")";
}

std::string this_host() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "unknown-host";
  return host;
}

std::string utc_iso8601(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace plinth::state
