// plinth render PATH... --pool NAME: a pool's cloud-init user-data (or network config).
#include "engine/cli/common.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/provider/nocloud.h"
#include "engine/render/render.h"

namespace plinth::cli {
namespace {

/// --node NAME: the node's NoCloud meta-data (--meta-data) or its whole
/// seed image (--seed FILE), as the baremetal provider delivers them.
int render_node(const Loaded& loaded, const std::string& pool, const std::string& name,
                const render::CloudInit& rendered, const Args& args, Io& io) {
  const bp::NodePool* np = nullptr;
  for (const auto& p : loaded.blueprint.node_pools)
    if (p.name == pool) np = &p;
  if (!np)
    return fail(io, "render", "--node takes a node of a node pool; '" + pool + "' is a burst pool, whose cloud " +
                                  "passes the user-data itself");
  Resource node;
  node.name = pool;
  node.index = -1;
  const std::string prefix = pool + "-";
  if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() &&
      name.find_first_not_of("0123456789", prefix.size()) == std::string::npos && name.size() - prefix.size() < 9)
    node.index = std::stoi(name.substr(prefix.size()));
  if (node.index < 0 || node.index >= np->count)
    return fail(io, "render",
                "pool '" + pool + "' has no node '" + name + "'; its nodes are " + prefix + "0" +
                    (np->count > 1 ? " to " + prefix + std::to_string(np->count - 1) : std::string()));
  node.attributes["user_data_hash"] = rendered.hash;
  const std::string meta = nocloud_meta_data(node);
  const bool want_meta = args.flag("meta-data");
  auto seed = args.get("seed");
  if (want_meta == seed.has_value())
    return fail(io, "render", "with --node, give --meta-data (print the node's meta-data) or --seed FILE (write "
                              "its NoCloud seed image)");
  if (want_meta) {
    std::fputs(meta.c_str(), io.out);
    return kExitSuccess;
  }
  auto iso = nocloud_iso({rendered.user_data, meta, rendered.network_config});
  if (!iso) return fail(io, "render", iso.error().message);
  if (auto st = write_file_atomic(*seed, *iso); !st)
    return fail(io, "render", "cannot write " + *seed + ": " + st.error().message);
  std::fprintf(io.err, "Wrote the NoCloud seed of %s (volume cidata: user-data, meta-data%s) to %s (sha256 %s)\n",
               name.c_str(), rendered.network_config.empty() ? "" : ", network-config", seed->c_str(),
               sha256_hex(*iso).c_str());
  return kExitSuccess;
}

int run_render(const Args& args, Io& io) {
  auto pool = args.get("pool");
  if (!pool || pool->empty())
    return fail(io, "render", "--pool NAME is required; name one node pool or burst pool of the blueprint");
  auto loaded = load_blueprint(args.positional, io);
  if (!loaded) return kExitFailure;
  auto rendered = render::render_pool(loaded->blueprint, *pool);
  if (!rendered) return fail(io, "render", rendered.error().message);

  if (auto node = args.get("node")) return render_node(*loaded, *pool, *node, *rendered, args, io);
  if (args.flag("meta-data") || args.get("seed"))
    return fail(io, "render", "--meta-data and --seed need --node NAME (a node of the pool, e.g. " + *pool + "-0)");

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
    "plinth render PATH... --pool NAME [--network-config] [--output FILE]\n"
    "       plinth render PATH... --pool NAME --node NODE (--meta-data | --seed FILE)",
    "Print a pool's cloud-init user-data (or its network config v2).",
    "Renders the pool's stack into a #cloud-config document: the NVIDIA CUDA apt repository,\n"
    "the pinned driver, CUDA toolkit, cuDNN and container toolkit (apt preferences), the\n"
    "stack's images, the DCGM exporter, LUKS2 for encrypted NVMe tiers, the MIG layout and\n"
    "/etc/plinth/node.json. --network-config prints the network config v2 (bonded uplinks,\n"
    "one VLAN per network) instead. The sha256 of both is every node's user_data_hash, so a\n"
    "changed pin shows in `plinth plan`. --node NODE (POOL-INDEX) with --meta-data prints that\n"
    "node's NoCloud meta-data, with --seed FILE writes the NoCloud seed image (ISO 9660, volume\n"
    "cidata) the baremetal provider inserts into its BMC's virtual media. See docs/render.md.",
    {
        {"pool", "NAME", "The node pool or burst pool to render (required)."},
        {"network-config", "", "Print the network config v2 instead of the user-data."},
        {"output", "FILE", "Write to FILE instead of stdout."},
        {"node", "NODE", "A node of the (node) pool, POOL-INDEX: with --meta-data or --seed."},
        {"meta-data", "", "Print the node's NoCloud meta-data (instance-id, local-hostname)."},
        {"seed", "FILE", "Write the node's NoCloud seed image (user-data, meta-data, network-config) to FILE."},
    },
    run_render,
    40,
});

}  // namespace
}  // namespace plinth::cli
