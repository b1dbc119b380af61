// plinth render PATH... --pool NAME: a pool's cloud-init user-data (or network config).
#include "engine/cli/common.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/render/render.h"

namespace plinth::cli {
namespace {

int run_render(const Args& args, Io& io) {
  auto pool = args.get("pool");
  if (!pool || pool->empty())
    return fail(io, "render", "--pool NAME is required; name one node pool or burst pool of the blueprint");
  auto loaded = load_blueprint(args.positional, io);
  if (!loaded) return kExitFailure;
  auto rendered = render::render_pool(loaded->blueprint, *pool);
  if (!rendered) return fail(io, "render", rendered.error().message);

  const bool network = args.flag("network-config");
  if (network && rendered->network_config.empty())
    return fail(io, "render",
                "pool '" + *pool + "' has no network config: only node pools with networks (VLANs) get one; "
                "burst pools use their cloud's own networking");
  const std::string& text = network ? rendered->network_config : rendered->user_data;
  if (auto output = args.get("output")) {
    if (auto st = write_file_atomic(*output, text); !st)
      return fail(io, "render", "cannot write " + *output + ": " + st.error().message);
    // The file's own digest, then the pool's user_data_hash (a digest of
    // user-data and network config together, which is what plans compare).
    std::fprintf(io.err, "Wrote %s for pool %s to %s (sha256 %s); the pool's user_data_hash is %s\n",
                 network ? "network config" : "user-data", pool->c_str(), output->c_str(), sha256_hex(text).c_str(),
                 rendered->hash.c_str());
  } else {
    std::fputs(text.c_str(), io.out);
  }
  return kExitSuccess;
}

const Register render_command({
    "render",
    "plinth render PATH... --pool NAME [--network-config] [--output FILE]",
    "Print a pool's cloud-init user-data (or its network config v2).",
    "Renders the pool's stack into a #cloud-config document: the NVIDIA CUDA apt repository,\n"
    "the pinned driver, CUDA toolkit, cuDNN and container toolkit (apt preferences), the\n"
    "stack's images, the DCGM exporter, LUKS2 for encrypted NVMe tiers, the MIG layout and\n"
    "/etc/plinth/node.json. --network-config prints the network config v2 (bonded uplinks,\n"
    "one VLAN per network) instead. The sha256 of both is every node's user_data_hash, so a\n"
    "changed pin shows in `plinth plan`. See docs/render.md.",
    {
        {"pool", "NAME", "The node pool or burst pool to render (required)."},
        {"network-config", "", "Print the network config v2 instead of the user-data."},
        {"output", "FILE", "Write to FILE instead of stdout."},
    },
    run_render,
    40,
});

}  // namespace
}  // namespace plinth::cli
