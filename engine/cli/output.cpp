// plinth output [NAME] [--json]: the values of the blueprint's outputs as the
// last apply recorded them in the state (docs/blueprint.md, "Outputs").
#include "engine/cli/common.h"
#include "engine/cli/options.h"
#include "engine/core/strings.h"
#include "engine/run/state_session.h"
#include "engine/state/state.h"

namespace plinth::cli {
namespace {

std::string pretty(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace); }

/// A value on one line: strings as they are, anything else as compact JSON.
std::string one_line(const Json& v) {
  if (v.is_string()) return safe_text(v.get<std::string>(), false);
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

int run_output(const Args& args, Io& io) {
  if (args.positional.size() > 1)
    return fail(io, "output", "unexpected argument '" + args.positional[1] + "'; usage: plinth output [NAME] [--json]");
  run::StateOptions key;
  key.key_file = args.get("state-key-file");
  const std::string location = state::resolve_state_path(args.get("state"));
  const std::string path = state::redact_location(location);
  auto backend = run::open_state_backend(key, location);
  if (!backend) return fail(io, "output", backend.error().message);
  auto doc = (*backend)->load();
  if (!doc) return fail(io, "output", doc.error().message);
  if (!*doc)
    return fail(io, "output", "no state at " + path +
                                  " yet, so no outputs (they are recorded by plinth apply); pass --state FILE or set "
                                  "PLINTH_STATE to read another");
  const Json& outputs = (*doc)->outputs;
  const bool json = args.flag("json");

  if (args.positional.empty()) {
    if (json) {
      std::fprintf(io.out, "%s\n", pretty(outputs).c_str());
      return kExitSuccess;
    }
    if (outputs.empty()) {
      std::fprintf(io.err,
                   "plinth output: no outputs in state %s: declare them under outputs: in the blueprint "
                   "(docs/blueprint.md, \"Outputs\") and run plinth apply\n",
                   path.c_str());
      return kExitSuccess;
    }
    for (const auto& [name, o] : outputs.items()) {
      if (o.value("sensitive", false)) std::fprintf(io.out, "%s = (sensitive: plinth output %s)\n", name.c_str(), name.c_str());
      else std::fprintf(io.out, "%s = %s\n", name.c_str(), pretty(o["value"]).c_str());
    }
    return kExitSuccess;
  }

  const std::string& name = args.positional.front();
  auto it = outputs.find(name);
  if (it == outputs.end()) {
    std::vector<std::string> names;
    for (const auto& [n, _] : outputs.items()) names.push_back(n);
    return fail(io, "output",
                "no output '" + safe_text(name) + "' in state " + path + " (" +
                    (names.empty() ? std::string("it records none") : "it records " + join(names, ", ")) +
                    "); an output is recorded by plinth apply once the blueprint declares it and one of its pools "
                    "has a node in state");
  }
  const Json& value = (*it)["value"];
  if (json) {
    std::fprintf(io.out, "%s\n", pretty(value).c_str());
    return kExitSuccess;
  }
  // One line per node, "NODE VALUE": what a shell loop reads.
  for (const auto& [pool, nodes] : value.items())
    for (const auto& [node, v] : nodes.items()) std::fprintf(io.out, "%s %s\n", node.c_str(), one_line(v).c_str());
  return kExitSuccess;
}

const Register output_command({
    "output",
    "plinth output [NAME] [--json] [--state FILE]",
    "Print the blueprint's outputs (node names, BMC endpoints, addresses) as the last apply recorded them.",
    "Outputs are declared under outputs: in the blueprint (docs/blueprint.md, \"Outputs\"): an\n"
    "attribute (or several) of every node of some pools. plinth apply, destroy and apply\n"
    "-refresh-only record their values in the state; this command reads only the state (no\n"
    "blueprint, no provider).\n\n"
    "  plinth output               every output, NAME = value (sensitive ones hidden)\n"
    "  plinth output NAME          one line per node: NODE VALUE (objects as JSON)\n"
    "  plinth output --json        {NAME: {description, sensitive, value}}\n"
    "  plinth output NAME --json   the value: {POOL: {NODE: value}}\n\n"
    "NODE is POOL-INDEX (hgx-a-0). docs/blueprint.md shows an Ansible inventory and a Slurm\n"
    "node list made from outputs.",
    {
        {"json", "", "Print JSON (sensitive values included)."},
        {"state", "FILE", "State file (default: $PLINTH_STATE, else plinth.state.json)."},
        state_key_flag(),
    },
    run_output,
    58,
});

}  // namespace
}  // namespace plinth::cli
