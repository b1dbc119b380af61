// plinth catalog [--markdown]: the GPU / CUDA / instance-type facts the rules use.
#include "engine/catalog/markdown.h"
#include "engine/cli/common.h"
#include "engine/core/strings.h"
#include "engine/provider/registry.h"

namespace plinth::cli {
namespace {

int run_catalog(const Args& args, Io& io) {
  if (!args.positional.empty()) return fail(io, "catalog", "unexpected argument '" + args.positional.front() + "'");
  auto cat = load_catalog();
  if (!cat) return fail(io, "catalog", "cannot load the catalog: " + cat.error().message);
  if (args.flag("markdown")) {
    std::string md = catalog::catalog_markdown(*cat);
    std::fwrite(md.data(), 1, md.size(), io.out);
    return kExitSuccess;
  }
  std::fprintf(io.out, "catalog %s\n\nGPUs:\n", cat->version().c_str());
  for (const auto* g : cat->gpu_models())
    std::fprintf(io.out, "  %-24s %-9s %4d GB  %s%s\n", g->name.c_str(), g->architecture.c_str(), g->memory_gb,
                 g->product_name.c_str(), g->has_nvswitch(8) ? "  (NVSwitch at 8 GPUs)" : "");
  std::fprintf(io.out, "\nCUDA -> minimum driver:\n");
  for (const auto& v : cat->cuda_versions())
    std::fprintf(io.out, "  %-8s %s\n", v.c_str(), cat->min_driver_for_cuda(v)->c_str());
  // Instance types belong to the providers that sell them (their schemas).
  for (const ProviderSchema* p : schema_registry().providers()) {
    if (p->instance_types.empty()) continue;
    std::fprintf(io.out, "\n%s instance types (provider %s):\n", p->name.c_str(), p->source.c_str());
    for (const auto& t : p->instance_types)
      std::fprintf(io.out, "  %-32s %2d x %s\n", t.name.c_str(), t.gpu_count, t.gpu.c_str());
  }
  return kExitSuccess;
}

const Register catalog_command({
    "catalog",
    "plinth catalog [--markdown]",
    "Show the GPU, CUDA, driver and instance-type facts the rules check against.",
    "Prints the catalog's GPU models, CUDA releases with their minimum drivers and the\n"
    "instance types each cloud provider declares (docs/providers/NAME.md). --markdown\n"
    "prints the catalog's full reference with sources, which is docs/catalog.md.\n"
    "PLINTH_CATALOG_DIR replaces the built-in data.",
    {
        {"markdown", "", "Print the Markdown reference (docs/catalog.md)."},
    },
    run_catalog,
    66,
});

}  // namespace
}  // namespace plinth::cli
