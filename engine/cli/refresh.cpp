// plinth refresh PATH...: read every resource in state through its provider,
// report drift, record what was observed. Applies nothing.
#include "engine/cli/planning.h"

namespace plinth::cli {
namespace {

int run_refresh(const Args& args, Io& io) {
  auto session = open_state(args, "plinth refresh");
  if (!session) return fail(io, "refresh", session.error().message);
  if (!session->notice.empty()) std::fprintf(io.err, "%s\n", session->notice.c_str());
  if (!session->existed) {
    std::fprintf(io.out, "No state at %s: nothing to refresh.\n", session->path.c_str());
    return kExitSuccess;
  }
  ProviderSet providers(args);
  // The blueprint says which plugins (and options) its providers are, and
  // what objects of this state not recorded in it would be.
  std::vector<Resource> desired;
  std::string blueprint_name;
  if (!args.positional.empty()) {
    auto loaded = load_blueprint(args.positional, io);
    if (!loaded) return kExitFailure;
    providers.use_declarations(loaded->blueprint.providers);
    blueprint_name = loaded->blueprint.metadata.name;
    if (auto g = graph::expand(loaded->blueprint)) desired = std::move(g->resources);
  }
  providers.bind({session->doc.lineage, blueprint_name});
  const size_t n = session->doc.resources.size();
  auto r = refresh_state(*session, providers, io, "refresh", io.out, {}, desired);
  if (!r) return kExitFailure;
  if (r->drift.empty() && r->adopted.empty()) {
    std::fprintf(io.out, "No drift: all %zu resource(s) in %s match what their providers report.\n", n,
                 session->path.c_str());
    return kExitSuccess;
  }
  state::StateDocument next = session->doc;
  next.serial = session->doc.serial + 1;
  if (auto s = session->backend->save(next); !s)
    return fail(io, "refresh", "state " + session->path + ": " + s.error().message);
  if (!r->adopted.empty())
    std::fprintf(io.out, "Adopted %zu object(s) into the state: the next plan keeps those the blueprint wants.\n",
                 r->adopted.size());
  std::fprintf(io.out,
               "State %s updated to serial %llu with what was observed. Nothing was changed; "
               "'plinth plan' shows what apply would change back.\n",
               session->path.c_str(), static_cast<unsigned long long>(next.serial));
  return args.flag("detailed-exitcode") ? kExitChanges : kExitSuccess;
}

const Register refresh_command({
    "refresh",
    "plinth refresh PATH... [--state FILE] [--lock-timeout D] [--detailed-exitcode]",
    "Read resources through their providers and report drift; change nothing.",
    "Reads every resource recorded in the state of PATH... through its provider and\n"
    "prints, per address, each attribute that changed outside Plinth as\n"
    "'path: state value -> observed value' (or that the resource is gone). The state is\n"
    "updated to what was observed (a new serial); no resource is changed. A resource that\n"
    "cannot be read is an error naming it and the state is left as it was.\n"
    "Exit codes: 0 success, 2 drift found (with --detailed-exitcode), 1 error.",
    {
        {"state", "FILE", "State file (default: plinth.state.json beside the first blueprint)."},
        {"lock-timeout", "D", "How long to wait for the state lock, e.g. 30s, 2m (default 0s: try once)."},
        state_key_flag(),
        {"detailed-exitcode", "", "Exit 2 when drift was found."},
        provider_option_flag(),
    },
    run_refresh,
    34,
});

}  // namespace
}  // namespace plinth::cli
