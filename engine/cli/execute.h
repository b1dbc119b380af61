#pragma once
// The execution half of apply and destroy: policy gate, confirmation,
// signals, the executor with progress output, the summary and exit code.
// The plan may come from build_plan (PATH...) or, later, a saved plan file.
#include <string>

#include "engine/cli/planning.h"

namespace plinth::cli {

/// Runs the changes of `planned.plan` against `planned.state` (locked):
/// prints the plan, runs the policy gate (before any provider call that
/// changes anything), asks for confirmation ("Only 'yes' will be accepted")
/// on a TTY unless --auto-approve, executes with --parallelism and the
/// providers' limits, prints progress and a summary. SIGINT/SIGTERM stop
/// starting operations; a second one abandons those in flight. Returns 0
/// only when every change succeeded.
int execute_plan(const Args& args, Io& io, const std::string& command, Planned& planned, ProviderSet& providers);

/// Flags shared by apply and destroy.
std::vector<FlagSpec> execute_flags();

}  // namespace plinth::cli
