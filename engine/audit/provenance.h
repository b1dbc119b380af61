#pragma once
// Git provenance of a blueprint: which repository, commit and branch it came
// from and whether its files are committed (docs/git-provenance.md).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/result.h"

namespace plinth::audit {

/// Where the blueprint files came from, recorded in every plan, apply and
/// report. A value type; outside a repository only `in_repository=false` and
/// `files` are set.
struct Provenance {
  bool in_repository = false;
  std::string repository;  ///< absolute path of the work tree root (no trailing slash)
  std::string commit;      ///< HEAD commit id, 40 hex digits; "" when HEAD is unborn
  std::string branch;      ///< short branch name ("main"), or "detached"
  bool unborn = false;     ///< the repository has no commit yet (branch is the one HEAD will create)
  /// Paths of the blueprint files relative to the repository root, in the
  /// order given; outside a repository (or outside its work tree) the paths
  /// as given.
  std::vector<std::string> files;
  /// Blueprint files whose content is not exactly what HEAD holds: modified,
  /// staged, untracked, ignored, not in HEAD, or outside the work tree.
  std::vector<std::string> dirty_files;
  bool files_dirty = false;       ///< !dirty_files.empty()
  bool repository_dirty = false;  ///< anything in the work tree is modified, staged or untracked (ignored files excepted)

  bool operator==(const Provenance&) const = default;
};

/// Records the provenance of `blueprint_files` (at least one), using the
/// repository that contains the first file, found by searching its parent
/// directories with libgit2 (no `git` subprocess). Not being in a repository,
/// an unborn HEAD and a detached HEAD are recorded, not errors; the error
/// cases are a repository that libgit2 cannot open or read.
Result<Provenance> record_provenance(const std::vector<std::string>& blueprint_files);

/// The JSON form used in plan files and audit reports: every field above,
/// with the same names.
nlohmann::json to_json(const Provenance& p);

/// One line for terminal output, e.g.
///   "git 3f2a9c1d0b7e on main, blueprint files committed"
///   "git 3f2a9c1d0b7e on main, uncommitted changes in blueprints/a.yaml"
///   "git (no commit yet) on main, uncommitted changes in a.yaml"
///   "not in a git repository"
std::string describe(const Provenance& p);

}  // namespace plinth::audit
