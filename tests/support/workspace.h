#pragma once
// A blueprint directory outside the source tree, as a user has one, and the
// state files the tests write and read.
#include <map>
#include <string>
#include <vector>

#include "engine/core/wire.h"
#include "engine/provider/resource.h"
#include "engine/state/state.h"
#include "tests/support/run.h"

namespace plinth::test {

class EmulatorProcess;

/// A temporary directory holding the blueprint bp.yaml and the state plinth.state.json, and the
/// environment plinth runs with there.
class Workspace {
 public:
  /// Runs talk to `emulator` (what it printed shows when applied() fails; may be null); apply runs
  /// with --parallelism `parallelism`.
  explicit Workspace(const EmulatorProcess* emulator = nullptr, std::string parallelism = "10",
                     std::map<std::string, std::string> env = {});

  /// Writes `blueprint` to bp.yaml and runs `plinth COMMAND bp.yaml ARGS... --state STATE` in dir, where
  /// `args` is COMMAND ARGS...
  RunResult run(std::vector<std::string> args, const std::string& blueprint);
  /// apply --auto-approve --parallelism N.
  RunResult apply(const std::string& blueprint);
  /// apply, which must succeed.
  RunResult applied(const std::string& blueprint);
  /// plan --detailed-exitcode.
  RunResult plan(const std::string& blueprint);

  /// The state file's path.
  std::string state() const;
  /// The state, which must parse.
  state::StateDocument doc() const;
  /// How many resources of `type` the state holds.
  size_t in_state(const std::string& type) const;
  /// The resource the state records at `address`, which must be there.
  Resource recorded(const std::string& address) const;

  TempDir dir;
  std::map<std::string, std::string> env;

 private:
  const EmulatorProcess* emulator_;
  std::string parallelism_;
};

/// A resource TYPE.NAME[INDEX] (TYPE.NAME when `index` is -1) of `provider` with `attributes`.
Resource make_resource(const std::string& type, const std::string& name, int index, const std::string& provider,
                       Json attributes = Json::object());

/// A new state document holding what the blueprint files `paths` expand to (what a successful apply of
/// them would leave behind); serial 0 and a new lineage.
state::StateDocument expanded_state(const std::vector<std::string>& paths);

/// Writes `dir`/plinth.state.json holding expanded_state({`blueprint_path`}) at `serial` (with
/// `lineage` unless it is "") and returns its path.
std::string write_state_of(const TempDir& dir, const std::string& blueprint_path, uint64_t serial = 1,
                           const std::string& lineage = "");

}  // namespace plinth::test
