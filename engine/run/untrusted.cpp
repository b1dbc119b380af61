#include "engine/run/untrusted.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "engine/blueprint/loader.h"

namespace plinth::run {
namespace fs = std::filesystem;

namespace {

/// `inner` lies in `dir` (both made absolute and free of symbolic links).
bool inside(const fs::path& inner, const fs::path& dir) {
  std::error_code ec;
  fs::path a = fs::weakly_canonical(inner, ec), b = fs::weakly_canonical(dir, ec);
  auto [end, _] = std::mismatch(b.begin(), b.end(), a.begin(), a.end());
  return end == b.end();
}

/// The git work tree holding `dir` (the nearest ancestor with a .git), else `dir`.
fs::path checkout_of(const fs::path& dir) {
  std::error_code ec;
  fs::path d = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  for (fs::path p = d; !p.empty(); p = p.parent_path()) {
    if (fs::exists(p / ".git", ec)) return p;
    if (p == p.parent_path()) break;
  }
  return d;
}

/// Commands that only read: everything else writes state or changes the fleet.
const std::set<std::string> kReadOnly = {"plan", "validate", "show", "graph", "render", "rules", "catalog",
                                          "version", "providers", "policy", "audit", "verify", "help",
                                          "completion"};

}  // namespace

bool runs_untrusted(const std::string& command) { return kReadOnly.count(command) > 0; }

Result<bp::TrustFile> check_untrusted(const std::string& command, const std::string& trust,
                                      const std::optional<std::string>& state, const std::vector<std::string>& paths) {
  if (!runs_untrusted(command))
    return Error::invalid("refusing to run plinth " + command +
                          " in untrusted mode (--untrusted or PLINTH_UNTRUSTED=1): it writes state or changes the "
                          "fleet; untrusted mode is for plans of a pull request (docs/security.md)");
  std::error_code ec;
  // The pull request controls the checkout that holds its blueprint (and the
  // working directory when no path is given).
  std::vector<fs::path> checkouts;
  for (const auto& p : paths)
    checkouts.push_back(checkout_of(fs::is_directory(p, ec) ? fs::path(p) : fs::absolute(p, ec).parent_path()));
  if (paths.empty()) checkouts.push_back(checkout_of(fs::current_path(ec)));
  bp::TrustFile loaded_trust;
  if (!trust.empty()) {
    for (const auto& dir : checkouts)
      if (inside(fs::absolute(trust, ec), dir))
        return Error::invalid("the trust file " + trust + " is inside " + dir.string() +
                              ", the checkout of the blueprint, which the pull request controls; keep the trust file "
                              "outside it (e.g. in the CI runner's configuration, or a checkout of the base branch "
                              "beside it) and pass it with --trust or PLINTH_TRUST_FILE");
    auto loaded = bp::load_trust_file(trust);
    if (!loaded) return loaded.error();
    loaded_trust = std::move(*loaded);
  }
  if (command == "plan") {
    if (!state || state->empty())
      return Error::invalid("an untrusted plan needs the state named by the operator: pass --state LOCATION or set "
                            "PLINTH_STATE (the default, beside the blueprint, is in the pull request's checkout)");
    // A state file in the checkout is the pull request's: its endpoints would
    // get the operator's credentials when the plan refreshes.
    if (state->find("://") == std::string::npos)
      for (const auto& dir : checkouts)
        if (inside(fs::absolute(*state, ec), dir))
          return Error::invalid("the state " + *state + " is inside " + dir.string() +
                                ", the checkout of the blueprint, which the pull request controls; plan against the "
                                "operator's state (a PostgreSQL URL, or the base branch's copy checked out beside it)");
  }
  // A blueprint file that is a symbolic link to a file elsewhere (a key, a
  // credentials file) would be read, and its lines quoted in errors.
  Diagnostics ignored;
  for (const auto& f : bp::collect_blueprint_files(paths, ignored)) {
    fs::path link = f;
    if (!fs::is_symlink(link, ec)) continue;
    if (!inside(fs::canonical(link, ec), fs::absolute(link, ec).parent_path()))
      return Error::invalid("the blueprint file " + f + " is a symbolic link out of its directory (to " +
                            fs::canonical(link, ec).string() + "); an untrusted plan reads no file outside the checkout");
  }
  return loaded_trust;
}

}  // namespace plinth::run
