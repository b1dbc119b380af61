// plinth destroy PATH...: remove everything the state holds, dependents first.
#include "engine/cli/execute.h"

namespace plinth::cli {
namespace {

int run_destroy(const Args& args, Io& io) {
  if (!args.flag("auto-approve") && !io.in_tty)
    return fail(io, "destroy", "stdin is not a terminal, so there is no one to confirm the destruction; re-run with "
                               "--auto-approve if you mean it");
  ProviderSet providers(args);
  auto planned = build_plan(args, io, "destroy", providers, /*destroy=*/true);
  if (!planned) return kExitFailure;
  return execute_plan(args, io, "destroy", *planned, providers);
}

std::vector<FlagSpec> destroy_flags() {
  auto flags = execute_flags();
  flags.push_back({"target", "ADDRESS",
                   "Destroy only ADDRESS (or every node of TYPE.POOL) and what depends on it.", true});
  return flags;
}

const Register destroy_command({
    "destroy",
    "plinth destroy PATH... [--auto-approve] [--parallelism N] [--state FILE] [--lock-timeout D] [-target ADDRESS]...",
    "Destroy every resource recorded in state.",
    "Plans a delete for every resource in the state of PATH... (refreshed first unless\n"
    "--refresh=false), dependents before what they depend on, and carries it out like\n"
    "apply: confirmation, policy gate, parallelism, retries, a state save after every\n"
    "deletion, signals. Bare-metal nodes are powered off and their boot override cleared;\n"
    "disks are never wiped. Exit codes: 0 everything was destroyed, 1 otherwise.",
    destroy_flags(),
    run_destroy,
    32,
});

}  // namespace
}  // namespace plinth::cli
