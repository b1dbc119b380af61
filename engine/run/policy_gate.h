#pragma once
// The policy step of plan, apply and audit: run the packs against the
// blueprint, its graph and the plan, apply the waivers, report the verdicts,
// say whether to stop.
#include <string>
#include <vector>

#include "engine/graph/expand.h"
#include "engine/plan/plan.h"
#include "engine/policy/policy.h"
#include "engine/run/blueprint.h"
#include "engine/run/events.h"
#include "engine/run/options.h"

namespace plinth::run {

/// The built-in packs: compiled into the binary (engine/core/embedded.h), so
/// they are there wherever plinth runs; "<builtin>/policies".
std::string builtin_policy_dir();

/// The built-in packs, then each directory of $PLINTH_POLICY_DIR (a
/// colon-separated list), then options.extra_dirs: all of them are loaded;
/// none is required.
std::vector<std::string> policy_dirs(const PolicyOptions& options);

/// The sandbox limits for policy runs: the defaults, with the wall-clock
/// limit per check and per policy file from $PLINTH_POLICY_TIMEOUT ("30s",
/// "500ms"; docs/policy-authoring.md) when set. A value that does not parse
/// is a warning event and the default stays.
policy::Limits policy_limits(Events& events);

/// Where waivers.yaml is looked for: the first PATH when it is a directory,
/// else the directory of the first blueprint file.
std::string blueprint_dir(const std::vector<std::string>& paths);

struct PolicyOutcome {
  policy::Evaluation evaluation;  ///< every verdict (waivers applied), for reports
  bool blocked = false;  ///< a mandatory policy failed or errored, a waiver expired, or a pack is broken
};

/// Evaluates `policy_dirs` against the loaded blueprint, its expanded graph
/// and the plan, applies `blueprint_dir`/waivers.yaml, and reports the
/// evaluation (Events::policy_checked). Call it after the diff and before
/// any provider call that changes anything.
PolicyOutcome run_policies(const Loaded& loaded, const graph::ResourceGraph& graph, const plan::Plan& plan,
                           const std::vector<std::string>& policy_dirs, const std::string& blueprint_dir,
                           Events& events);

}  // namespace plinth::run
