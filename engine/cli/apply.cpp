// plinth apply PATH...|PLANFILE: make the infrastructure match the blueprint.
//   1-4. run::plan: load -> expand -> state (locked) -> refresh -> diff
//        (a saved plan file instead: read it, check every binding, take its Plan)
//   5.   run::apply: show plan -> policy gate -> confirm -> executor -> summary
//        (execute.h: the question and the signals)
#include <filesystem>

#include "engine/blueprint/loader.h"
#include "engine/cli/common.h"
#include "engine/cli/execute.h"
#include "engine/cli/options.h"
#include "engine/cli/render_events.h"
#include "engine/core/strings.h"
#include "engine/plan/planfile.h"
#include "engine/run/saved_plan.h"

namespace plinth::cli {
namespace {

/// True when PATH... is one saved plan file rather than blueprints.
bool is_planfile(const std::vector<std::string>& paths) {
  if (paths.size() != 1) return false;
  std::filesystem::path p(paths.front());
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec)) return false;
  std::string ext = p.extension().string();
  return ext != ".yaml" && ext != ".yml";
}

/// What was applied must be reproducible from a commit: blueprint files with
/// uncommitted changes are refused unless --allow-dirty.
bool check_clean(const Args& args, Io& io, const std::vector<std::string>& files) {
  if (args.flag("allow-dirty")) return true;
  if (auto st = run::require_committed(files); !st) {
    fail(io, "apply", st.error().message);
    return false;
  }
  return true;
}

/// apply PLANFILE: re-checks every binding of the saved plan (blueprint and
/// policy hashes, state lineage and serial, git commit, plinth version, and
/// the signature with --verify-key) and executes exactly the saved plan.
int apply_planfile(const Args& args, Io& io, const std::string& path) {
  if (args.has("target"))
    return fail(io, "apply", "-target selects resources while planning; a saved plan runs as it was saved (make it "
                             "with plinth plan -target ADDRESS -out PLANFILE)");
  if (args.has("replace"))
    return fail(io, "apply", "-replace is decided while planning; a saved plan runs as it was saved (make it "
                             "with plinth plan -replace ADDRESS -out PLANFILE)");
  std::optional<plan::PlanKey> key;
  if (auto key_path = args.get("verify-key")) {
    auto k = plan::PlanKey::load(*key_path);
    if (!k) return fail(io, "apply", "--verify-key: " + k.error().message);
    key.emplace(std::move(*k));
  }
  auto pf = plan::read_planfile(path, key ? &*key : nullptr);
  if (!pf) return fail(io, "apply", pf.error().message + "; nothing was changed");
  std::vector<std::string> files;
  for (const auto& [f, sha] : pf->bindings.blueprints) files.push_back(f);
  if (!check_clean(args, io, files)) return kExitFailure;

  // Saving the plan after reviewing it was the approval (Terraform asks no
  // question for a saved plan either); what runs is exactly what was shown.
  Args from_plan = args;
  from_plan.positional = files;
  from_plan.set("auto-approve", "true");
  auto options = plan_options(from_plan, "apply");
  if (!options) return fail(io, "apply", options.error().message);
  auto apply_opts = apply_options(from_plan, "apply");
  if (!apply_opts) return fail(io, "apply", apply_opts.error().message);
  auto view = make_view(io, "apply", args.flag("json"));
  run::ProviderSet providers(provider_factory(), provider_options(from_plan));
  auto planned = run::plan_saved(*pf, path, *options, providers, *view);
  if (!planned) return kExitFailure;
  return execute(from_plan, io, std::move(*apply_opts), *planned, providers, *view);
}

int run_apply(const Args& args, Io& io) {
  if (args.flag("refresh-only")) {
    if (is_planfile(args.positional))
      return fail(io, "apply", "-refresh-only reads the state's resources again; it takes blueprint paths, not a "
                               "saved plan");
    return refresh_only(args, io, "apply");
  }
  if (is_planfile(args.positional)) return apply_planfile(args, io, args.positional.front());
  if (args.flag("json") && !args.flag("auto-approve"))
    return fail(io, "apply", "--json prints events for a program to read, so there is no one to answer the "
                             "question: add --auto-approve, or apply a saved plan (plinth plan -out PLANFILE)");
  if (!args.flag("auto-approve") && !io.in_tty)
    return fail(io, "apply", "stdin is not a terminal, so there is no one to confirm the changes; review them with "
                             "'plinth plan -out PLANFILE' and apply that file (no question is asked for a saved "
                             "plan), or re-run with --auto-approve");
  if (args.has("verify-key"))
    return fail(io, "apply", "--verify-key applies to a saved plan file: plinth apply PLANFILE --verify-key KEY");
  Diagnostics diags;
  auto files = bp::collect_blueprint_files(args.positional, diags);
  if (!has_errors(diags) && !files.empty() && !check_clean(args, io, files)) return kExitFailure;
  return plan_and_execute(args, io, "apply");
}

std::vector<FlagSpec> apply_flags() {
  auto flags = execute_flags();
  flags.push_back({"verify-key", "KEY",
                   "With a saved plan: refuse it unless it is signed by this Ed25519 public key or HMAC secret."});
  flags.push_back({"allow-dirty", "", "Apply blueprint files that have uncommitted git changes."});
  flags.push_back({"force-conflicts", "",
                   "Take over fields that another field manager owns (Kubernetes server-side apply force=true); "
                   "without it such a field is reported as a conflict naming the manager (docs/providers/kubernetes.md)."});
  flags.push_back({"target", "ADDRESS",
                   "Apply only ADDRESS (or every node of TYPE.POOL) and what it depends on; for exceptional "
                   "situations (docs/apply.md).",
                   true});
  flags.push_back({"refresh-only", "",
                   "Only record in state what changed outside Plinth (after the question, unless --auto-approve); "
                   "change no resource (docs/apply.md, \"Refresh-only\")."});
  flags.push_back({"replace", "ADDRESS",
                   "Replace ADDRESS (one resource, e.g. a node to reprovision) although nothing forces it "
                   "(repeatable; docs/apply.md).",
                   true});
  return flags;
}

const Register apply_command({
    "apply",
    "plinth apply PATH...|PLANFILE [--auto-approve] [--parallelism N] [--state FILE] [--lock-timeout D] "
    "[--refresh=false] [--verify-key KEY] [--allow-dirty] [--force-conflicts] [-target ADDRESS]... [--json]",
    "Create, update, replace or destroy resources so they match the blueprint.",
    "Plans as 'plinth plan' does (refreshing state through the providers first unless\n"
    "--refresh=false), prints the plan, runs the policy gate, asks for confirmation on a\n"
    "terminal (only 'yes' approves; without a terminal --auto-approve is required; a saved\n"
    "plan file is applied without a question: saving it was the approval), then\n"
    "carries out the changes in dependency order, --parallelism at a time, retrying\n"
    "throttled and retryable errors. Every completed operation is saved to the state before\n"
    "it counts as done (operations completing together share a save). When a PostgreSQL\n"
    "state goes away mid-apply, what completes after is kept in a local journal\n"
    "in a directory of your own ($PLINTH_JOURNAL_DIR, else ~/.local/state/plinth/journal)\n"
    "that the next apply or 'plinth state push-journal' writes into the state (docs/state.md).\n"
    "SIGTERM stops at once (in-flight requests are cancelled, within moments); SIGINT\n"
    "stops starting new operations and lets those in flight finish, a second SIGINT\n"
    "cancels them. The state holds exactly what completed; re-running apply converges. Providers are configured with\n"
    "PLINTH_<PROVIDER>_<OPTION> variables or --provider-option (docs/apply.md).\n"
    "A saved plan (plinth plan -out PLANFILE) is applied exactly as saved, after checking\n"
    "that the blueprint and policy files, the state's lineage and serial, the git commit and\n"
    "the plinth version are those it was made with (and its signature, with --verify-key);\n"
    "a stale, altered or already applied plan is refused with the binding that changed\n"
    "(docs/plan-files.md). Blueprint files with uncommitted git changes are refused unless\n"
    "--allow-dirty, so what is applied can always be reproduced from a commit.\n"
    "An operation still running after 10 seconds is reported every 10 seconds\n"
    "(\"ADDRESS: still creating... [10s elapsed]\"; PLINTH_PROGRESS_INTERVAL changes the period).\n"
    "--json prints one JSON object per line instead (the plan's changes, each operation's\n"
    "start, progress, retries and end, policy verdicts, drift, the outcome; docs/apply.md).\n"
    "Exit codes: 0 every change succeeded (or there was none), 1 otherwise.",
    apply_flags(),
    run_apply,
    30,
});

}  // namespace
}  // namespace plinth::cli
