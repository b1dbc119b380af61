// plinth apply PATH...: make the infrastructure match the blueprint.
//   1-4. build_plan: load -> expand -> state (locked) -> refresh -> diff
//   5.   execute_plan: show plan -> policy gate -> confirm -> executor -> summary
// A saved plan file (plinth plan -out) will enter at step 5 with its own Plan.
#include "engine/cli/execute.h"

namespace plinth::cli {
namespace {

int run_apply(const Args& args, Io& io) {
  if (!args.flag("auto-approve") && !io.in_tty)
    return fail(io, "apply", "stdin is not a terminal, so there is no one to confirm the changes; review them with "
                             "'plinth plan' and re-run with --auto-approve");
  ProviderSet providers(args);
  auto planned = build_plan(args, io, "apply", providers);
  if (!planned) return kExitFailure;
  return execute_plan(args, io, "apply", *planned, providers);
}

const Register reg({
    "apply",
    "plinth apply PATH... [--auto-approve] [--parallelism N] [--state FILE] [--lock-timeout D] [--refresh=false]",
    "Create, update, replace or destroy resources so they match the blueprint.",
    "Plans as 'plinth plan' does (refreshing state through the providers first unless\n"
    "--refresh=false), prints the plan, runs the policy gate, asks for confirmation on a\n"
    "terminal (only 'yes' approves; without a terminal --auto-approve is required), then\n"
    "carries out the changes in dependency order, --parallelism at a time, retrying\n"
    "throttled and retryable errors. The state is saved after every completed operation.\n"
    "SIGINT/SIGTERM stop starting new operations and wait for those in flight; a second\n"
    "signal abandons them. Re-running apply converges. Providers are configured with\n"
    "PLINTH_<PROVIDER>_<OPTION> variables or --provider-option (docs/apply.md).\n"
    "Exit codes: 0 every change succeeded (or there was none), 1 otherwise.",
    execute_flags(),
    run_apply,
    30,
});

}  // namespace
}  // namespace plinth::cli
