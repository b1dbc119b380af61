#pragma once
// What an operation is asked to do, as typed values: the CLI parses its flags
// into these once (engine/cli/options.cpp), tests set them directly; nothing
// below engine/cli reads a flag by name.
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/blueprint/trust.h"

namespace plinth::run {

/// Which state, and how it is opened.
struct StateOptions {
  /// --state / $PLINTH_STATE; unset: plinth.state.json beside the first blueprint.
  std::optional<std::string> location;
  /// --state-key-file; unset: $PLINTH_STATE_KEY, else the file $PLINTH_STATE_KEY_FILE.
  std::optional<std::string> key_file;
  std::chrono::milliseconds lock_timeout{0};  ///< --lock-timeout (0: try once)
  bool lock = true;                           ///< -lock=false: a read-only plan takes no lock
};

/// How this run configures its providers (docs/apply.md, "Provider options").
struct ProviderOptions {
  std::vector<std::string> overrides;  ///< --provider-option NAME.KEY=VALUE, in order
  bool force_conflicts = false;        ///< apply --force-conflicts
  /// Untrusted mode (docs/security.md): the operator's trust file; null when
  /// the blueprint is trusted. The blueprint may not set operator-only options.
  const bp::TrustFile* untrusted = nullptr;
};

/// plan, and the planning half of apply and destroy.
struct PlanOptions {
  std::string operation = "plan";  ///< "plan", "apply", "destroy": named in messages and the state lock
  std::vector<std::string> paths;  ///< blueprint files or directories
  StateOptions state;
  bool refresh = true;   ///< read the state's resources through their providers first
  bool destroy = false;  ///< plan the deletion of everything in state
  std::vector<std::string> targets;  ///< -target ADDRESS
  /// -replace ADDRESS: resources to replace although nothing forces it (a
  /// node to reprovision); each must be in the state and the blueprint.
  std::vector<std::string> replace;
  /// Untrusted mode: the trust file every credential use must be allowed by
  /// (and no state is written, not even the lock); null when trusted.
  const bp::TrustFile* untrusted = nullptr;
  /// The plan's `before`s share the state's resources instead of copying
  /// them: they are moved out of the state's document into Planned::prior.
  /// For callers that never change that document (plinth plan); apply
  /// changes it in place, so it plans with copies.
  bool share_state = false;
};

/// The policy packs a run evaluates: the built-in ones, each directory of
/// $PLINTH_POLICY_DIR, then these (--policy-dir).
struct PolicyOptions {
  std::vector<std::string> extra_dirs;
  std::string blueprint_dir = ".";  ///< where waivers.yaml is looked for (run::blueprint_dir)
};

/// apply and destroy, once planned.
struct ApplyOptions {
  std::string operation = "apply";  ///< "apply" or "destroy"
  int parallelism = 10;             ///< operations in flight at once (1-1000)
  PolicyOptions policies;
  StateOptions state;  ///< how the state was opened (a local journal is encrypted as it is)
  /// Asked once the policy gate passed, when there are changes; false stops
  /// with nothing changed. Unset: approved (--auto-approve, a saved plan).
  std::function<bool()> confirm;
  /// Raised by signal handlers (apply::Cancel levels); may be null.
  const std::atomic<int>* cancel = nullptr;
  /// How often an operation still in flight is reported (Operation::Phase::Running).
  std::chrono::milliseconds progress_interval{10000};
};

}  // namespace plinth::run
