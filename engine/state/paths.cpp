// Where the state file is.
#include <cctype>
#include <cstdlib>
#include <filesystem>

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
