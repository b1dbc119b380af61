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
#include "engine/cli/common.h"
#include "engine/cli/options.h"
#include "engine/cli/render_events.h"
#include "engine/core/strings.h"
#include "engine/run/plan.h"

namespace plinth::cli {
namespace {

int run_import(const Args& args, Io& io) {
  if (args.positional.size() < 3)
    return fail(io, "import",
                "usage: plinth import ADDRESS ID PATH... (e.g. plinth import 'baremetal.node.train-a[3]' "
                "https://bmc-3.dc1.example blueprints/)");
  Args rest = args;
  rest.positional.assign(args.positional.begin() + 2, args.positional.end());
  auto options = plan_options(rest, "import");
  if (!options) return fail(io, "import", options.error().message);
  const run::ImportRequest request{args.positional[0], args.positional[1], args.flag("force")};
  HumanView view(io, "import");
  run::ProviderSet providers(provider_factory(), provider_options(rest));
  auto imported = run::import_resource(request, *options, providers, view);
  if (!imported) return kExitFailure;
  std::fprintf(io.out,
               "Imported %s (%s %s) into state %s as serial %llu.\n"
               "Nothing was changed on it; run plinth plan to see how it differs from the blueprint.\n",
               request.address.c_str(), imported->import_id.c_str(), safe_text(request.id).c_str(),
               imported->state_path.c_str(), static_cast<unsigned long long>(imported->serial));
  return kExitSuccess;
}

const Register import_command({
    "import",
    "plinth import ADDRESS ID PATH... [--state FILE] [--lock-timeout D] [--force]",
    "Adopt an existing server or instance into state, read through its provider.",
    "ADDRESS must be declared by the blueprint in PATH... (e.g. 'baremetal.node.train-a[3]')\n"
    "and not be in state yet. ID says which existing object it is: for a bare-metal node the\n"
    "URL of its BMC (https://...). The resource is read through its provider with that\n"
    "identity (its inventory is checked against the pool like a refresh does) and recorded\n"
    "in state as the next serial; nothing is changed on it. The next plan then shows how it\n"
    "differs from the blueprint instead of creating a second one. An ID other than the one the\n"
    "blueprint declares for ADDRESS (another pool's BMC), or an object the state records under\n"
    "another address (the same server's UUID or serial behind another BMC address), is refused\n"
    "unless --force.\n"
    "docs/state.md has more.\n"
    "Exit codes: 0 imported, 1 otherwise (nothing is written).",
    {
        {"state", "FILE", "State file (default: plinth.state.json beside the first blueprint)."},
        {"lock-timeout", "D", "How long to wait for the state lock, e.g. 30s, 2m (default 0s: try once)."},
        state_key_flag(),
        provider_option_flag(),
        {"force", "", "Import although the blueprint declares another identity (BMC) for ADDRESS, or the state "
                      "records the object under another address."},
    },
    run_import,
    36,
});

}  // namespace
}  // namespace plinth::cli
