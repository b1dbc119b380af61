// plinth refresh PATH...: read every resource in state through its provider,
// report drift, record what was observed. Applies nothing.
#include <functional>

#include "engine/cli/common.h"
#include "engine/cli/execute.h"
#include "engine/cli/options.h"
#include "engine/cli/render_events.h"
#include "engine/cli/untrusted.h"
#include "engine/run/plan.h"

namespace plinth::cli {

int refresh_only(const Args& args, Io& io, const std::string& command) {
  const bool plan_only = command == "plan";
  const bool records = command == "refresh" || command == "apply";
  // The refresh reads what the state records with the fleet's credentials,
  // outside the trust file's checks of a plan: never for a pull request.
  if (untrusted().on)
    return fail(io, command, "-refresh-only reads every resource in state with the fleet's credentials; it is not "
                             "available in untrusted mode (docs/security.md): plan the pull request without it");
  for (const char* flag : {"target", "replace", "destroy", "out"})
    if (args.has(flag))
      return fail(io, command, std::string("-") + flag + " and -refresh-only exclude each other: a refresh-only " +
                                   (plan_only ? "plan" : "run") + " changes no resource and is not saved");
  if (command == "apply" && !args.flag("auto-approve") && !io.in_tty)
    return fail(io, command, "stdin is not a terminal, so there is no one to confirm recording the drift; review it "
                             "with 'plinth plan -refresh-only', then re-run with --auto-approve");
  auto options = plan_options(args, command == "refresh" ? "refresh" : command + " -refresh-only");
  if (!options) return fail(io, command, options.error().message);
  const bool json = args.flag("json");
  auto view = make_view(io, command, json, /*drift_to_stdout=*/true);
  run::ProviderSet providers(provider_factory(), provider_options(args));
  std::function<bool()> approve;
  if (plan_only) approve = [] { return false; };
  else if (command == "apply" && !args.flag("auto-approve")) approve = [&io] { return confirm(io, "refresh-only"); };
  auto r = run::refresh(*options, providers, *view, approve);
  if (!r) return kExitFailure;
  const bool drift = r->drifted > 0 || r->adopted > 0;
  std::string said;
  if (!r->existed)
    said = "No state at " + r->state_path + ": nothing to refresh.";
  else if (!drift)
    said = "No drift: all " + std::to_string(r->resources) + " resource(s) in " + r->state_path +
           " match what their providers report." +
           (r->serial ? " The blueprint's outputs were recorded (serial " + std::to_string(r->serial) + ")." : "");
  else if (plan_only)
    said = "This is a refresh-only plan: plinth apply -refresh-only would record the drift above in " + r->state_path +
           " (" + std::to_string(r->drifted) + " resource(s) changed or gone, " + std::to_string(r->adopted) +
           " adopted) and change no resource.";
  else if (r->declined && !plan_only)
    said = "Nothing was recorded: the state " + r->state_path + " is as it was.";
  else
    said = std::string(r->adopted ? "Adopted " + std::to_string(r->adopted) +
                                        " object(s) into the state: the next plan keeps those the blueprint wants.\n"
                                  : "") +
           "State " + r->state_path + " updated to serial " + std::to_string(r->serial) +
           " with what was observed. Nothing was changed; 'plinth plan' shows what apply would change back.";
  if (json)
    static_cast<JsonView&>(*view).emit("info", said, plan_only ? "refresh_plan" : "refresh_complete",
                                       {{"state", {{"path", r->state_path}, {"serial", r->serial}}},
                                        {"resources", r->resources},
                                        {"drifted", r->drifted},
                                        {"adopted", r->adopted},
                                        {"recorded", records && r->serial != 0}});
  else
    std::fprintf(io.out, "%s\n", said.c_str());
  if (r->declined && !plan_only) return kExitFailure;  // apply -refresh-only, answered no
  return drift && args.flag("detailed-exitcode") ? kExitChanges : kExitSuccess;
}

namespace {

int run_refresh(const Args& args, Io& io) { return refresh_only(args, io, "refresh"); }

const Register refresh_command({
    "refresh",
    "plinth refresh PATH... [--state FILE] [--lock-timeout D] [--detailed-exitcode] [--json]",
    "Read resources through their providers and report drift; change nothing.",
    "Reads every resource recorded in the state of PATH... through its provider and\n"
    "prints, per address, each attribute that changed outside Plinth as\n"
    "'path: state value -> observed value' (or that the resource is gone). The state is\n"
    "updated to what was observed (a new serial); no resource is changed. A resource that\n"
    "cannot be read is an error naming it and the state is left as it was.\n"
    "The same as 'plinth apply -refresh-only --auto-approve'; 'plinth plan -refresh-only'\n"
    "shows the drift without recording it (docs/apply.md, \"Refresh-only\").\n"
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
