// plinth validate PATH...: load strictly and run the domain rules.
#include "engine/cli/common.h"

namespace plinth::cli {
namespace {

int run_validate(const Args& args, Io& io) {
  auto loaded = load_blueprint(args.positional, io);
  if (!loaded) return kExitFailure;
  size_t warnings = count(loaded->diagnostics, Severity::Warning);
  std::fprintf(io.out, "%s is valid: %zu node pool(s), %zu burst pool(s), %zu warning(s).\n",
               loaded->blueprint.metadata.name.empty() ? "blueprint" : loaded->blueprint.metadata.name.c_str(),
               loaded->blueprint.node_pools.size(), loaded->blueprint.burst_pools.size(), warnings);
  return kExitSuccess;
}

const Register reg({
    "validate",
    "plinth validate PATH... [flags]",
    "Check blueprints: strict schema, references and GPU/ML domain rules.",
    "PATH is a blueprint file or a directory of *.yaml files; several are merged into one\n"
    "blueprint. Every error is printed with file:line:column and a hint; warnings do not\n"
    "fail the run. Rule IDs are listed in docs/rules.md.",
    {},
    run_validate,
    10,
});

}  // namespace
}  // namespace plinth::cli
