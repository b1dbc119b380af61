// plinth plan PATH...: what apply would change, resource by resource.
//
// The command is a fixed sequence of steps, each a library call; later
// features slot in between them without reshaping the command:
//   1. load      blueprint files -> validated Blueprint (diagnostics printed)
//   2. expand    Blueprint -> desired resources
//   3. state     lock the state backend, load the prior resources
//      (refresh through providers, `--refresh=false`, goes here)
//   4. diff      desired vs prior -> Plan
//      (policy evaluation of the plan goes here)
//   5. output    text or --json to stdout (`-out PLANFILE` goes here)
//   6. exit code 0 / 2 (--detailed-exitcode) / 1
#include <chrono>

#include "engine/cli/common.h"
#include "engine/cli/policy_gate.h"
#include "engine/graph/expand.h"
#include "engine/plan/format.h"
#include "engine/state/state.h"

namespace plinth::cli {
namespace {

/// The prior resources, read under the state lock (released when this returns:
/// plan never writes state).
Result<state::StateDocument> load_prior(const std::string& path, const std::string& lock_timeout) {
  auto timeout = state::parse_duration(lock_timeout);
  if (!timeout) return Error::invalid("--lock-timeout: " + timeout.error().message);
  auto backend = state::open_local(path);
  auto guard = state::LockGuard::acquire(*backend, "plinth plan", *timeout);
  if (!guard) return guard.error();
  auto doc = backend->load();
  if (!doc) return doc.error();
  if (!*doc) return state::StateDocument{};
  return std::move(**doc);
}

int run_plan(const Args& args, Io& io) {
  // 1. load
  auto loaded = load_blueprint(args.positional, io);
  if (!loaded) return kExitFailure;

  // 2. expand
  auto desired = graph::expand(loaded->blueprint);
  if (!desired) return fail(io, "plan", desired.error().message);

  // 3. state
  const std::string state_path = state::resolve_state_path(args.get("state"), args.positional);
  auto prior = load_prior(state_path, args.get_or("lock-timeout", "0s"));
  if (!prior) return fail(io, "plan", "state " + state_path + ": " + prior.error().message);

  // 4. diff
  plan::Plan p = plan::diff(desired->resources, prior->resources);
  auto policies = run_policies(*loaded, *desired, p, policy_dirs(args), blueprint_dir(args.positional), io);

  // 5. output
  if (args.flag("json")) {
    Json doc = plan::to_json(p);
    Json files = Json::array();
    for (const auto& f : loaded->blueprint.files) files.push_back({{"path", f.path}, {"sha256", f.sha256}});
    doc["blueprint"] = {{"name", loaded->blueprint.metadata.name}, {"files", std::move(files)}};
    doc["state"] = {{"path", state_path}, {"lineage", prior->lineage}, {"serial", prior->serial}};
    std::string text = doc.dump(2);
    text += '\n';
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
    "missing file means nothing exists yet. Exit codes: 0 no changes (or changes without\n"
    "--detailed-exitcode), 2 changes with --detailed-exitcode, 1 error. The text and JSON\n"
    "formats are documented in docs/plan.md.",
    {
        {"state", "FILE", "State file to plan against (default: plinth.state.json beside the first blueprint)."},
        {"json", "", "Print the plan as JSON (format in docs/plan.md)."},
        {"detailed-exitcode", "", "Exit 2 when the plan has changes, 0 when it has none."},
        {"lock-timeout", "D", "How long to wait for the state lock, e.g. 30s, 2m (default 0s: try once)."},
        {"policy-dir", "DIR", "Also evaluate the policies in DIR (repeatable; docs/policy-authoring.md).", true},
    },
    run_plan,
    20,
});

}  // namespace
}  // namespace plinth::cli
