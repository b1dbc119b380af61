// plinth destroy PATH...: remove everything the state holds, dependents first.
#include "engine/cli/common.h"
#include "engine/cli/execute.h"
#include "engine/cli/options.h"

namespace plinth::cli {
namespace {

int run_destroy(const Args& args, Io& io) {
  if (!args.flag("auto-approve") && !io.in_tty)
    return fail(io, "destroy", "stdin is not a terminal, so there is no one to confirm the destruction; re-run with "
                               "--auto-approve if you mean it");
  if (args.flag("json") && !args.flag("auto-approve"))
    return fail(io, "destroy", "--json prints events for a program to read, so there is no one to answer the "
                               "question: add --auto-approve");
  return plan_and_execute(args, io, "destroy");
}

std::vector<FlagSpec> destroy_flags() {
  auto flags = execute_flags();
  for (auto& f : flags)
    if (f.name == "json")
      f.help = "Print one JSON object per line (the plan, each operation, the outcome) instead of text; needs "
               "--auto-approve (docs/apply.md, \"Machine-readable output\").";
  flags.push_back({"target", "ADDRESS",
                   "Destroy only ADDRESS (or every node of TYPE.POOL) and what depends on it.", true});
  return flags;
}

const Register destroy_command({
    "destroy",
    "plinth destroy PATH... [--auto-approve] [--parallelism N] [--state FILE] [--lock-timeout D] [-target ADDRESS]... "
    "[--json]",
    "Destroy every resource recorded in state.",
    "Plans a delete for every resource in the state of PATH... (refreshed first unless\n"
    "--refresh=false), dependents before what they depend on, and carries it out like\n"
    "apply: confirmation, policy gate, parallelism, retries, a state save after every\n"
    "deletion, signals. Bare-metal nodes are powered off and their boot override cleared;\n"
    "disks are never wiped. --json prints one JSON object per line, as apply --json does\n"
    "(docs/apply.md). Exit codes: 0 everything was destroyed, 1 otherwise.",
    destroy_flags(),
    run_destroy,
    32,
});

}  // namespace
}  // namespace plinth::cli
