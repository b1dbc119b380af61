// plinth import ADDRESS ID PATH...: adopt something that already exists (a
// server provisioned by hand, an instance started outside Plinth) into state,
// after reading it through its provider, so the next plan updates it in place
// instead of creating a second one (Terraform's `import`).
//   1. load + expand the blueprint: ADDRESS must be declared there
//   2. state (locked): ADDRESS must not be in it yet
//   3. read: the declared resource, with ID as its identity attribute
//      (ResourceType::import_id, e.g. a node's bmc_endpoint), through the
//      provider's read(); gone, unreadable or inventory errors refuse it
//   4. record what was read as the next serial
#include <algorithm>

#include "engine/blueprint/loader.h"
#include "engine/cli/planning.h"
#include "engine/core/strings.h"
#include "engine/provider/call.h"
#include "engine/provider/registry.h"

namespace plinth::cli {
namespace {

int run_import(const Args& args, Io& io) {
  if (args.positional.size() < 3)
    return fail(io, "import",
                "usage: plinth import ADDRESS ID PATH... (e.g. plinth import 'baremetal.node.train-a[3]' "
                "https://bmc-3.dc1.example blueprints/)");
  const std::string address = args.positional[0], id = args.positional[1];
  Args rest = args;
  rest.positional.assign(args.positional.begin() + 2, args.positional.end());

  // 1. the blueprint must declare it
  auto loaded = load_blueprint(rest.positional, io);
  if (!loaded) return kExitFailure;
  auto desired = graph::expand(loaded->blueprint);
  if (!desired) return fail(io, "import", desired.error().message);
  const Resource* want = desired->find(address);
  if (!want) {
    std::vector<std::string> all;
    for (const auto& r : desired->resources) all.push_back(r.address);
    std::string msg = "the blueprint declares no '" + address + "'; import adopts a resource the blueprint declares";
    if (auto m = closest_match(address, all)) msg += "; did you mean '" + *m + "'?";
    else msg += " (add it to the blueprint first; plinth plan lists the addresses)";
    return fail(io, "import", msg);
  }
  const ResourceType* type = find_resource_type(want->type, want->provider);
  if (!type || type->import_id.empty())
    return fail(io, "import", address + " (" + want->type + ", provider " + want->provider +
                                  ") cannot be imported: its provider declares no identity to adopt it by "
                                  "(plinth providers --json shows each type's import_id); plinth apply creates or "
                                  "records it");

  if (type->import_id == "bmc_endpoint")
    if (auto problem = bp::bmc_endpoint_problem(id); !problem.empty()) return fail(io, "import", problem);

  // 2. state, locked for the whole import
  auto session = open_state(rest, "plinth import");
  if (!session) return fail(io, "import", session.error().message);
  if (!session->notice.empty()) std::fprintf(io.err, "%s\n", session->notice.c_str());
  if (session->doc.find(address))
    return fail(io, "import", address + " is already in state " + session->path +
                                  "; to adopt another one, first forget it: plinth state rm '" + address + "'");

  // 3. read it through its provider
  Resource probe = *want;
  probe.attributes[type->import_id] = id;
  ProviderSet providers(rest);
  if (auto st = providers.open({want->provider}); !st) return fail(io, "import", st.error().message);
  Provider* p = providers.get(want->provider);
  if (!p) return fail(io, "import", "no provider '" + want->provider + "' in this build");
  const apply::ProviderLimits limits = providers.limits_lookup()(want->provider);
  Call call(Deadline::after(limits.deadlines.read), limits.retry);
  auto results = p->read({probe}, call);
  if (results.size() != 1) return fail(io, "import", "provider " + want->provider + " returned no answer for " + address);
  ReadResult& r = results.front();
  print_diagnostics(r.diagnostics, io);
  if (r.error) return fail(io, "import", "cannot read " + address + " (" + type->import_id + " " + id + "): " + r.error->message + "; nothing was imported");
  if (!r.current)
    return fail(io, "import", "there is no " + want->type + " with " + type->import_id + " " + id +
                                  " (the provider found nothing there); nothing was imported");
  if (has_errors(r.diagnostics))
    return fail(io, "import", address + " does not match the blueprint (errors above); nothing was imported. Fix the "
                              "blueprint or pick the right " + type->import_id);

  // 4. record it
  Resource adopted = *r.current;
  adopted.depends_on = want->depends_on;
  adopted.source = want->source;
  state::StateDocument next = session->doc;
  if (next.lineage.empty()) next = state::new_document();
  next.serial = session->doc.serial + 1;
  next.resources.push_back(std::move(adopted));
  std::sort(next.resources.begin(), next.resources.end(),
            [](const Resource& a, const Resource& b) { return a.address < b.address; });
  if (auto st = session->backend->save(next); !st)
    return fail(io, "import", "state " + session->path + ": " + st.error().message);
  std::fprintf(io.out,
               "Imported %s (%s %s) into state %s as serial %llu.\n"
               "Nothing was changed on it; run plinth plan to see how it differs from the blueprint.\n",
               address.c_str(), type->import_id.c_str(), safe_text(id).c_str(), session->path.c_str(),
               static_cast<unsigned long long>(next.serial));
  return kExitSuccess;
}

const Register import_command({
    "import",
    "plinth import ADDRESS ID PATH... [--state FILE] [--lock-timeout D]",
    "Adopt an existing server or instance into state, read through its provider.",
    "ADDRESS must be declared by the blueprint in PATH... (e.g. 'baremetal.node.train-a[3]')\n"
    "and not be in state yet. ID says which existing object it is: for a bare-metal node the\n"
    "URL of its BMC (https://...). The resource is read through its provider with that\n"
    "identity (its inventory is checked against the pool like a refresh does) and recorded\n"
    "in state as the next serial; nothing is changed on it. The next plan then shows how it\n"
    "differs from the blueprint instead of creating a second one. docs/state.md has more.\n"
    "Exit codes: 0 imported, 1 otherwise (nothing is written).",
    {
        {"state", "FILE", "State file (default: plinth.state.json beside the first blueprint)."},
        {"lock-timeout", "D", "How long to wait for the state lock, e.g. 30s, 2m (default 0s: try once)."},
        state_key_flag(),
        provider_option_flag(),
    },
    run_import,
    36,
});

}  // namespace
}  // namespace plinth::cli
