// plinth plan PATH...: what apply would change, resource by resource.
//
// The command is a fixed sequence of steps, each a library call; later
// features slot in between them without reshaping the command:
//   1. load      blueprint files -> validated Blueprint (diagnostics printed)
//   2. expand    Blueprint -> desired resources
//   3. state     lock the state backend, load the prior resources
//   3b. refresh  read them through their providers (unless --refresh=false)
//   4. diff      desired vs prior -> Plan
//      (steps 1-4 are build_plan in planning.h, shared with apply and destroy)
//      (policy evaluation of the plan goes here)
//   5. output    text or --json to stdout (`-out PLANFILE` goes here)
//   6. exit code 0 / 2 (--detailed-exitcode) / 1
#include "engine/cli/common.h"
#include "engine/cli/planning.h"
#include "engine/cli/policy_gate.h"
#include "engine/plan/format.h"

namespace plinth::cli {
namespace {

int run_plan(const Args& args, Io& io) {
  // 1-4. load, expand, state, refresh, diff (the state lock is released when
  // `planned` dies: plan never writes state)
  ProviderSet providers(args);
  auto planned = build_plan(args, io, "plan", providers);
  if (!planned) return kExitFailure;
  const Loaded* loaded = &planned->loaded;
  const state::StateDocument* prior = &planned->state.doc;
  const std::string& state_path = planned->state.path;
  const plan::Plan& p = planned->plan;
  auto policies = run_policies(*loaded, planned->desired, p, policy_dirs(args), blueprint_dir(args.positional), io);

  // 5. output
  if (args.flag("json")) {
    Json files = Json::array();
    for (const auto& f : loaded->blueprint.files) files.push_back({{"path", f.path}, {"sha256", f.sha256}});
    Json extra = {{"blueprint", {{"name", loaded->blueprint.metadata.name}, {"files", std::move(files)}}},
                  {"state", {{"path", state_path}, {"lineage", prior->lineage}, {"serial", prior->serial}}}};
    std::string text = plan::to_json_text(p, extra);
    std::fwrite(text.data(), 1, text.size(), io.out);
  } else {
    std::string text = plan::to_text(p, {io.color});
    std::fwrite(text.data(), 1, text.size(), io.out);
  }

  // 6. exit code
  if (policies.blocked) return kExitFailure;
  return args.flag("detailed-exitcode") && p.has_changes() ? kExitChanges : kExitSuccess;
}

const Register reg({
    "plan",
    "plinth plan PATH... [--state FILE] [--json] [--detailed-exitcode] [--lock-timeout D]",
    "Show what apply would create, update, replace or destroy.",
    "Loads and validates the blueprint, expands it into resources, reads the prior state\n"
    "(locked while it is read) and prints each resource's action with attribute-level\n"
    "before -> after. Changing a force-new attribute (instance type, stack, user-data hash,\n"
    "BMC endpoint, ...) plans a replace; removing a pool plans deletes. The state file is\n"
    "--state, else $PLINTH_STATE, else plinth.state.json beside the first blueprint; a\n"
    "missing file means nothing exists yet. Before diffing, every resource in state is read\n"
    "through its provider and drift (changes made outside Plinth) is printed to stderr;\n"
    "--refresh=false plans against the state as recorded (docs/apply.md). Exit codes: 0 no\n"
    "changes (or changes without --detailed-exitcode), 2 changes with --detailed-exitcode, 1 error. The text and JSON\n"
    "formats are documented in docs/plan.md.",
    {
        {"state", "FILE", "State file to plan against (default: plinth.state.json beside the first blueprint)."},
        {"json", "", "Print the plan as JSON (format in docs/plan.md)."},
        {"detailed-exitcode", "", "Exit 2 when the plan has changes, 0 when it has none."},
        {"lock-timeout", "D", "How long to wait for the state lock, e.g. 30s, 2m (default 0s: try once)."},
        {"policy-dir", "DIR", "Also evaluate the policies in DIR (repeatable; docs/policy-authoring.md).", true},
        {"refresh", "", "Read the resources in state through their providers first (default true; --refresh=false skips it)."},
        provider_option_flag(),
    },
    run_plan,
    20,
});

}  // namespace
}  // namespace plinth::cli
