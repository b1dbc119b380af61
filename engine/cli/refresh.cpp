// plinth refresh PATH...: read every resource in state through its provider,
// report drift, record what was observed. Applies nothing.
#include "engine/cli/common.h"
#include "engine/cli/options.h"
#include "engine/cli/render_events.h"
#include "engine/run/plan.h"

namespace plinth::cli {
namespace {

int run_refresh(const Args& args, Io& io) {
  auto options = plan_options(args, "refresh");
  if (!options) return fail(io, "refresh", options.error().message);
  const bool json = args.flag("json");
  auto view = make_view(io, "refresh", json, /*drift_to_stdout=*/true);
  run::ProviderSet providers(provider_factory(), provider_options(args));
  auto r = run::refresh(*options, providers, *view);
  if (!r) return kExitFailure;
  std::string said;
  if (!r->existed)
    said = "No state at " + r->state_path + ": nothing to refresh.";
  else if (r->serial == 0)
    said = "No drift: all " + std::to_string(r->resources) + " resource(s) in " + r->state_path +
           " match what their providers report.";
  else
    said = std::string(r->adopted ? "Adopted " + std::to_string(r->adopted) +
                                        " object(s) into the state: the next plan keeps those the blueprint wants.\n"
                                  : "") +
           "State " + r->state_path + " updated to serial " + std::to_string(r->serial) +
           " with what was observed. Nothing was changed; 'plinth plan' shows what apply would change back.";
  if (json)
    static_cast<JsonView&>(*view).emit("info", said, "refresh_complete",
                                       {{"state", {{"path", r->state_path}, {"serial", r->serial}}},
                                        {"resources", r->resources},
                                        {"drifted", r->drifted},
                                        {"adopted", r->adopted}});
  else
    std::fprintf(io.out, "%s\n", said.c_str());
  return r->serial != 0 && args.flag("detailed-exitcode") ? kExitChanges : kExitSuccess;
}

const Register refresh_command({
    "refresh",
    "plinth refresh PATH... [--state FILE] [--lock-timeout D] [--detailed-exitcode] [--json]",
    "Read resources through their providers and report drift; change nothing.",
    "Reads every resource recorded in the state of PATH... through its provider and\n"
    "prints, per address, each attribute that changed outside Plinth as\n"
    "'path: state value -> observed value' (or that the resource is gone). The state is\n"
    "updated to what was observed (a new serial); no resource is changed. A resource that\n"
    "cannot be read is an error naming it and the state is left as it was.\n"
    "--json prints the drift found and the outcome as JSON lines (docs/apply.md).\n"
    "Exit codes: 0 success, 2 drift found (with --detailed-exitcode), 1 error.",
    {
        {"state", "FILE", "State file (default: plinth.state.json beside the first blueprint)."},
        {"lock-timeout", "D", "How long to wait for the state lock, e.g. 30s, 2m (default 0s: try once)."},
        state_key_flag(),
        {"detailed-exitcode", "", "Exit 2 when drift was found."},
        {"json", "", "Print the drift and the outcome as JSON lines (docs/apply.md)."},
        provider_option_flag(),
    },
    run_refresh,
    34,
});

}  // namespace
}  // namespace plinth::cli
