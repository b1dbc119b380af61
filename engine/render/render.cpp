// Renders a pool's stack into cloud-init user-data and network config v2.
//
// The output is written by hand (not through a YAML emitter): render_pool runs
// once per pool on every plan, and hand-built text keeps it fast and lets us
// choose block styles and comments. Every user-supplied string lands either in
// a double-quoted YAML scalar (JSON escaping, which YAML accepts) or, after a
// character check, in a shell word / file name.
//
// What is installed, and in which order, follows NVIDIA's documents (cited in
// docs/render.md): the RDMA stack before the driver (nvidia-peermem is built
// against the MOFED ib_core the driver's DKMS build finds), the driver with its
// kernel module flavour, the Fabric Manager of the same version on NVSwitch
// nodes, then CUDA, cuDNN, the container toolkit and the workloads.
#include "engine/render/render.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/core/hash.h"
#include "engine/core/strings.h"
#include "engine/provider/registry.h"

namespace plinth::render {
namespace {

/// NVIDIA's CUDA repository signing keys: 3bf863cc.pub for Debian/Ubuntu
/// (rotated April 2022) and D42D0685.pub for RHEL (same rotation).
constexpr const char* kCudaRepoKeyId = "EB693B3035CD5710E231E123A4B469963BF863CC";
constexpr const char* kKeyServer = "keyserver.ubuntu.com";
constexpr const char* kCudaRepoBase = "https://developer.download.nvidia.com/compute/cuda/repos/";
constexpr const char* kDocaRepoBase = "https://linux.mellanox.com/public/repo/doca/";

/// The operating system a pool's nodes run.
struct Os {
  std::string id = "ubuntu-22.04";  ///< ubuntu-22.04 | ubuntu-24.04 | rhel-8 | rhel-9 | rocky-8 | rocky-9
  bool rhel = false;
  std::string release = "22.04";  ///< "22.04", "24.04", "8", "9"
  std::string cuda_repo() const { return rhel ? "rhel" + release : "ubuntu" + release.substr(0, 2) + release.substr(3); }
};

Os make_os(const std::string& id) {
  Os os;
  os.id = id;
  os.rhel = id.rfind("rhel-", 0) == 0 || id.rfind("rocky-", 0) == 0;
  os.release = id.substr(id.find('-') + 1);
  return os;
}

/// A storage tier the node mounts from a server.
struct Mount {
  const bp::StorageTier* tier = nullptr;
  std::string kind;  ///< nfs | lustre | gpfs | weka | beegfs
  std::string point;
  std::string options;
};

/// What the renderer needs of a node pool or a burst pool.
struct PoolView {
  std::string name;
  bool burst = false;
  std::string provider;
  const bp::Stack* stack = nullptr;
  std::vector<const bp::Vlan*> vlans;          ///< sorted by VLAN id
  std::vector<const bp::StorageTier*> tiers;   ///< sorted by name
  nlohmann::json identity;                     ///< pool-specific part of node.json
  Os os;
  std::string arch = "x86_64";                 ///< x86_64 | sbsa (Grace)
  const catalog::GpuModel* gpu = nullptr;      ///< nullptr: a GPU the catalog does not know
  std::string gpu_name;                        ///< catalog name, or as written when unknown
  int gpus_per_node = 0;
  bool fabric_manager = false;                 ///< the node runs nvidia-fabricmanager
  bool nvlsm = false;                          ///< ... with the NVLink Subnet Manager (4th-gen NVSwitch)
  std::string kernel_modules;                  ///< open | proprietary
  std::vector<std::pair<std::string, int>> mig;  ///< MIG layout per GPU (empty: no MIG)
  std::string mig_label;
  const bp::Fabric* fabric = nullptr;          ///< node pools on an RDMA fabric
  std::string rdma_stack;                      ///< doca-ofed | inbox ("" without an RDMA fabric)
  std::vector<std::string> bond;               ///< interface names / globs bonded into bond0
  std::vector<std::string> rails;              ///< RDMA rail interfaces (never bonded)
  std::string gpu_network;                     ///< burst pools: the instance type's (efa, infiniband, gpudirect-...)
  std::vector<std::string> imex_nodes;         ///< multi-node NVLink (GB200/GB300): the IMEX domain's compute trays
  bool secure_boot = false;                    ///< node pools whose BIOS turns Secure Boot on
  std::string nccl_topology_path;              ///< burst pools: the instance type's NCCL topology file, and its XML
  std::string nccl_topology_xml;
  std::string nccl_graph_path;                 ///< and its NCCL graph (NC A100 v4), and its XML
  std::string nccl_graph_xml;
};

std::string q(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// POSIX shell single-quoting.
std::string shq(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool all_of_chars(std::string_view s, std::string_view extra) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           extra.find(c) != std::string_view::npos;
  });
}

/// Names that become file names, device-mapper names and shell words.
bool safe_name(std::string_view s) { return all_of_chars(s, "._-") && s.front() != '-' && s.front() != '.'; }
bool numeric_version(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
}

std::vector<std::string> split_dots(const std::string& v) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = v.find('.', start)) != std::string::npos; start = dot + 1) parts.push_back(v.substr(start, dot - start));
  parts.push_back(v.substr(start));
  return parts;
}

/// Appends `text` as the body of a YAML literal block indented by `indent`.
void literal(std::string& out, std::string_view text, std::string_view indent) {
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!line.empty()) out.append(indent).append(line);
    out += '\n';
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
}

void write_file(std::string& out, std::string_view path, std::string_view permissions, std::string_view content) {
  out.append("  - path: ").append(path).append("\n    owner: \"root:root\"\n    permissions: \"");
  out.append(permissions).append("\"\n    content: |\n");
  literal(out, content, "      ");
}

/// One runcmd entry in flow form: [a, "b", ...]; every word is quoted.
void run(std::string& out, const std::vector<std::string>& argv) {
  out += "  - [";
  for (size_t i = 0; i < argv.size(); ++i) out.append(i ? ", " : "").append(q(argv[i]));
  out += "]\n";
}

std::string driver_branch(const std::string& driver) { return split_dots(driver).front(); }

Result<std::vector<std::pair<std::string, int>>> mig_layout(const bp::NodePool& p, const catalog::GpuModel* gpu) {
  std::vector<std::pair<std::string, int>> layout;
  const std::string who = "node pool '" + p.name + "'";
  if (!p.mig.profiles.empty()) {
    layout = p.mig.profiles;
  } else if (!p.mig.layout.empty()) {
    if (!gpu || gpu->mig_balanced.empty())
      return Error::invalid(who + " asks for MIG layout '" + p.mig.layout + "', but the catalog has no " + p.mig.layout +
                            " layout for GPU '" + p.hardware.gpu + "'; list the profiles under mig.profiles");
    layout = gpu->mig_balanced;
  } else if (p.mig.enabled()) {
    if (p.mig.instances <= 0)
      return Error::invalid(who + " sets mig.profile '" + p.mig.profile +
                            "' but no instances; set mig.instances to the number of instances per GPU");
    layout = {{p.mig.profile, p.mig.instances}};
  }
  for (const auto& [name, n] : layout)
    if (!all_of_chars(name, ".+-") || n < 1)
      return Error::invalid(who + " has MIG profile '" + name + "', which is not a profile name such as 3g.40gb");
  return layout;
}

Result<PoolView> view_pool(const bp::Blueprint& b, const std::string& name, const catalog::Catalog& cat) {
  PoolView v;
  v.name = name;
  const std::vector<std::string>* networks = nullptr;
  const std::vector<std::string>* storage = nullptr;
  std::string stack;
  std::string os;
  if (const bp::NodePool* p = b.find_node_pool(name)) {
    v.provider = p->provider;
    stack = p->stack;
    networks = &p->networks;
    storage = &p->storage;
    v.gpu = cat.gpu(p->hardware.gpu);
    v.gpu_name = v.gpu ? v.gpu->name : p->hardware.gpu;
    v.gpus_per_node = p->hardware.gpus_per_node;
    v.fabric_manager = v.gpu && v.gpu->has_nvswitch(p->hardware.gpus_per_node) && v.gpu->fabric_manager == "node";
    auto mig = mig_layout(*p, v.gpu);
    if (!mig) return mig.error();
    v.mig = std::move(*mig);
    os = bp::operating_system(*p);
    if (!p->fabric.empty()) {
      v.fabric = b.find_fabric(p->fabric);
      if (v.fabric && v.fabric->kind != "infiniband" && v.fabric->kind != "roce-v2") v.fabric = nullptr;
    }
    if (p->interfaces) {
      v.bond = p->interfaces->bond;
      v.rails = p->interfaces->rdma;
    }
    if (p->imex && v.gpu && v.gpu->runs_imex()) v.imex_nodes = p->imex->nodes;
    v.secure_boot = !bp::secure_boot_attribute(*p).empty();
    nlohmann::json mig_json = {{"profile", p->mig.profile}, {"instances", p->mig.instances}};
    if (!v.mig.empty()) {
      nlohmann::json per_gpu = nlohmann::json::object();
      for (const auto& [prof, n] : v.mig) per_gpu[prof] = n;
      mig_json["layout"] = p->mig.layout.empty() ? "custom" : p->mig.layout;
      mig_json["per_gpu"] = std::move(per_gpu);
    }
    // What a node receives depends on its pool's settings, never on the
    // pool's size: growing a pool by one creates one node and replaces none.
    v.identity = {{"kind", "node_pool"}, {"role", p->role}, {"fabric", p->fabric},
                  {"hardware", {{"gpu", v.gpu_name}, {"gpus_per_node", p->hardware.gpus_per_node},
                                {"cpu_cores", p->hardware.cpu_cores}, {"memory_gb", p->hardware.memory_gb}}},
                  {"mig", std::move(mig_json)}};
  } else if (const bp::BurstPool* bpool = b.find_burst_pool(name)) {
    v.burst = true;
    v.provider = bpool->provider;
    stack = bpool->stack;
    networks = &bpool->networks;
    storage = &bpool->storage;
    os = bp::operating_system(*bpool);
    const ProviderSchema* provider = schema_registry().provider(bpool->provider);
    if (const InstanceType* t = provider ? provider->instance_type(bpool->instance_type) : nullptr) {
      v.gpu = cat.gpu(t->gpu);
      v.gpu_name = v.gpu ? v.gpu->name : t->gpu;
      v.gpus_per_node = t->gpu_count;
      v.fabric_manager = t->fabric_manager;
      v.gpu_network = t->gpu_network;
      v.nccl_topology_path = t->nccl_topology_path;
      v.nccl_topology_xml = t->nccl_topology_xml;
      v.nccl_graph_path = t->nccl_graph_path;
      v.nccl_graph_xml = t->nccl_graph_xml;
    }
    v.identity = {{"kind", "burst_pool"}, {"region", bpool->region}, {"zone", bpool->zone},
                  {"instance_type", bpool->instance_type}, {"spot", bpool->spot}};
    if (v.gpu) v.identity["gpu"] = {{"model", v.gpu_name}, {"count", v.gpus_per_node}};
  } else {
    std::vector<std::string> names;
    for (const auto& np : b.node_pools) names.push_back(np.name);
    for (const auto& bu : b.burst_pools) names.push_back(bu.name);
    if (names.empty()) return Error{Error::Kind::NotFound, "unknown pool '" + name + "': the blueprint has no node or burst pools", 0};
    std::string msg = "unknown pool '" + name + "'";
    auto m = closest_match(name, names);
    msg += m ? "; did you mean '" + *m + "'?" : std::string(".");
    msg += " Pools in this blueprint: " + join(names, ", ");
    return Error{Error::Kind::NotFound, msg, 0};
  }
  if (!safe_name(name))
    return Error::invalid("pool name '" + name + "' cannot be used in file names; use letters, digits, '.', '_' and '-'");

  v.os = make_os(os);
  // Azure ND: InfiniBand between VMs, whose drivers Canonical's images lack (the
  // HPC images bring them, and their own driver: IMG003). DOCA-OFED and
  // nvidia-peermem for GPUDirect RDMA; RHEL's rdma-core, as for node pools.
  // What render_sets_up_gpu_network (engine/provider/schema.h) promises the rules: EFA below, InfiniBand here.
  if (v.burst && v.gpu_network == "infiniband") v.rdma_stack = v.os.rhel ? "inbox" : "doca-ofed";
  if (v.gpu && v.gpu->form_factor == "superchip") v.arch = "sbsa";
  v.nvlsm = v.fabric_manager && v.gpu && v.gpu->architecture == "Blackwell";

  v.stack = b.find_stack(stack);
  if (!v.stack) return Error::invalid("pool '" + name + "' uses stack '" + stack + "', which is not defined; " + did_you_mean(stack, [&] {
                                         std::vector<std::string> s;
                                         for (const auto& st : b.stacks) s.push_back(st.name);
                                         return s;
                                       }()));
  // Kernel module flavour: the stack's choice, else what the GPU runs, else NVIDIA's default for the branch.
  const std::string flavours = v.gpu ? cat.kernel_modules(*v.gpu) : "both";
  v.kernel_modules = catalog::effective_kernel_modules(cat, v.gpu, v.stack->kernel_modules, v.stack->driver);
  if (flavours != "both" && flavours != v.kernel_modules)
    return Error::invalid("pool '" + name + "' runs " + v.gpu_name + ", which supports only the " + flavours +
                          " NVIDIA kernel modules, but stack '" + v.stack->name + "' asks for " + v.kernel_modules +
                          "; set kernel_modules: " + flavours + " (or leave it out for NVIDIA's default)");

  for (const auto& n : *networks) {
    const bp::Vlan* vlan = b.find_vlan(n);
    if (!vlan) return Error::invalid("pool '" + name + "' names network '" + n + "', which is not a VLAN of the blueprint");
    v.vlans.push_back(vlan);
  }
  std::sort(v.vlans.begin(), v.vlans.end(), [](const bp::Vlan* a, const bp::Vlan* c) { return a->id < c->id; });
  for (const auto& t : *storage) {
    const bp::StorageTier* tier = b.find_tier(t);
    if (!tier) return Error::invalid("pool '" + name + "' names storage tier '" + t + "', which is not defined");
    v.tiers.push_back(tier);
  }
  std::sort(v.tiers.begin(), v.tiers.end(), [](const bp::StorageTier* a, const bp::StorageTier* c) { return a->name < c->name; });

  if (v.fabric) {
    v.rdma_stack = bp::rdma_stack(*v.fabric, v.os.id);
    if (v.rdma_stack == "doca-ofed" && v.os.rhel)
      return Error::invalid("pool '" + name + "' runs " + v.os.id + " on fabric '" + v.fabric->name +
                            "' with rdma_stack doca-ofed; the DOCA repository is laid out per RHEL minor release, which "
                            "Plinth does not know: set rdma_stack: inbox (RHEL's rdma-core) or install DOCA-OFED in the image");
    if (v.rails.empty() && v.fabric->kind == "infiniband") v.rails = {"ib*"};
  }
  if (!v.burst && v.bond.empty()) v.bond = {"eno*"};
  return v;
}

/// The NVMe tiers a node sets up itself (LUKS2 when encrypted with AES-256-XTS or LUKS2, plain XFS otherwise).
bool luks_tier(const bp::StorageTier& t) {
  return t.kind == "nvme" && t.encryption && (t.encryption->at_rest == "aes-256-xts" || t.encryption->at_rest == "luks2");
}

std::string mount_point(const bp::StorageTier& t) { return t.mount_point.empty() ? "/mnt/" + t.name : t.mount_point; }

bool encrypted_in_transit(const bp::StorageTier& t) {
  return t.encryption && (t.encryption->in_transit == "tls1.3" || t.encryption->in_transit == "tls1.2");
}

Result<std::vector<Mount>> mounts(const PoolView& v) {
  std::vector<Mount> out;
  for (const auto* t : v.tiers) {
    if (t->kind != "nfs" && t->kind != "parallel-fs") continue;
    const std::string who = "storage tier '" + t->name + "' of pool '" + v.name + "'";
    if (t->remote.empty())
      return Error::invalid(who + " has no 'export' to mount; set export: (nfs \"server:/path\", lustre \"mgs@o2ib:/fs\", "
                                  "gpfs the device name, weka \"backend/fs\", beegfs the management host)");
    if (!all_of_chars(t->remote, "._-/:@,[]=") || !safe_name(t->name))
      return Error::invalid(who + " has export '" + t->remote + "', which cannot be used safely in a mount command");
    Mount m;
    m.tier = t;
    m.point = mount_point(*t);
    if (!all_of_chars(m.point, "._-/") || m.point.find("..") != std::string::npos)
      return Error::invalid(who + " has mount point '" + m.point + "', which is not a plain absolute path");
    m.kind = t->kind == "nfs" ? "nfs" : t->backend;
    const bool tls = encrypted_in_transit(*t);
    if (m.kind == "nfs") {
      m.options = "vers=4.2,hard,nconnect=8,_netdev,nofail";
      if (tls) {
        if (v.os.id != "ubuntu-24.04")
          return Error::invalid(who + " encrypts NFS in transit (RPC-with-TLS, xprtsec=tls), which needs Linux 6.5 or newer "
                                      "and ktls-utils; run the pool on os: ubuntu-24.04, or drop encryption.in_transit");
        m.options += ",xprtsec=tls";
      }
    } else if (m.kind == "lustre") {
      m.options = "flock,_netdev,nofail";
      if (tls) m.options += ",skpath=/etc/plinth/keys/lustre-" + t->name;
    } else if (m.kind == "gpfs") {
      m.options = tls ? "cipher" : "defaults";
    } else if (m.kind == "weka") {
      if (tls)
        return Error::invalid(who + " asks for encryption in transit; WEKA encrypts client traffic through its own cluster "
                                    "settings, not a mount option: drop encryption.in_transit from the tier or use nfs/lustre");
      m.options = "_netdev,nofail,x-systemd.requires=weka-agent.service";
    } else if (m.kind == "beegfs") {
      if (tls)
        return Error::invalid(who + " asks for encryption in transit, which BeeGFS does not offer for client traffic");
      m.options = "defaults";
    } else {
      return Error::invalid(who + " is a parallel-fs tier without a backend Plinth can mount; set backend: lustre, gpfs, "
                                  "weka or beegfs");
    }
    out.push_back(std::move(m));
  }
  return out;
}

/// The packages and preferences for a stack.
struct Packages {
  std::vector<std::string> rdma;     ///< installed first (DOCA-OFED, rdma-core)
  std::vector<std::string> driver;   ///< the driver, Fabric Manager, NVLSM
  std::vector<std::string> signed_modules;  ///< Ubuntu under Secure Boot: Canonical's module packages, less "-$(uname -r)"
  std::vector<std::string> rest;     ///< CUDA, cuDNN, container runtime, tools
  std::string preferences;           ///< apt preferences (Ubuntu)
  std::vector<std::string> locks;    ///< dnf versionlock patterns (RHEL)
  std::string module_stream;         ///< dnf module stream of the driver (RHEL)
  std::string cuda;                  ///< the CUDA release pinned
  std::string toolkit;               ///< the container toolkit release
  bool cuda_compat = false;
};

void pin(std::string& prefs, const std::string& why, const std::string& packages, const std::string& version) {
  if (!prefs.empty()) prefs += '\n';
  prefs += "Explanation: " + why + "\nPackage: " + packages + "\nPin: version " + version + "\nPin-Priority: 1001\n";
}

/// Canonical's signed modules for the running kernel (and, on amd64, the
/// signatures the proprietary ones are linked with), then a check that they are
/// the pinned driver: Ubuntu builds them for the driver release it ships.
std::string signed_modules_install(const std::vector<std::string>& packages, const std::string& driver) {
  std::string names, plain;
  for (const auto& p : packages) {
    names += " \"" + p + "-$k\"";
    plain += " " + p + "-$k";
  }
  return "set -e\n"
         "k=$(uname -r)\n"
         "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends" + names + "\n"
         "if [ \"$(dpkg --print-architecture)\" = amd64 ]; then\n"
         "  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \"linux-signatures-nvidia-$k\"\n"
         "fi\n"
         "v=$(modinfo -F version nvidia)\n"
         "if [ \"$v\" != " + shq(driver) + " ]; then\n"
         "  echo \"plinth: Ubuntu's signed NVIDIA modules for kernel $k are driver $v, but the stack pins " + driver +
         "; pin the release Ubuntu publishes for this kernel (apt-cache policy" + plain + ") or turn Secure Boot off\" >&2\n"
         "  exit 1\n"
         "fi\n";
}

Result<Packages> packages(const PoolView& v, const std::vector<Mount>& mounted, bool dcgm, const catalog::Catalog& cat) {
  const bp::Stack& s = *v.stack;
  const std::string where = "stack '" + s.name + "'";
  if (!numeric_version(s.driver))
    return Error::invalid(where + " pins driver '" + s.driver + "'; give the exact NVIDIA driver version, e.g. \"550.54.15\"");
  auto cuda = split_dots(s.cuda);
  if (!numeric_version(s.cuda) || cuda.size() < 2 || cuda.size() > 3)
    return Error::invalid(where + " pins CUDA '" + s.cuda + "'; give major.minor, e.g. \"12.4\"");
  Packages a;
  // The toolkit's components resolve to the newest X.Y.z: pin what the rules validated.
  a.cuda = cuda.size() == 3 ? s.cuda : cat.installed_cuda(s.cuda).value_or(s.cuda + ".0");
  a.toolkit = s.container_toolkit.empty() ? cat.container_toolkit_default() : s.container_toolkit;
  if (!numeric_version(a.toolkit))
    return Error::invalid(where + " pins container toolkit '" + a.toolkit + "'; give a release such as \"1.17.8\"");
  const std::string branch = driver_branch(s.driver);
  const std::string toolkit_pkg = "cuda-toolkit-" + cuda[0] + "-" + cuda[1];
  // Forward compatibility: a CUDA newer than the driver runs through cuda-compat.
  if (s.cuda_compat) {
    auto need = cat.min_driver_for_cuda(a.cuda);
    a.cuda_compat = need && compare_versions(s.driver, *need) < 0;
  }

  // Before R580 Fabric Manager, NSCQ and IMEX carry the branch in their names; from R580 none
  // does (NVIDIA/gpu-driver-container, ubuntu22.04 and rhel9 install.sh: fabricmanager_install,
  // nscq_install, imex_install).
  const bool unversioned = compare_versions(branch, "580") >= 0;

  if (!v.rdma_stack.empty()) {
    if (v.rdma_stack == "doca-ofed") a.rdma = {"doca-ofed"};
    else if (v.os.rhel) a.rdma = {"rdma-core", "libibverbs-utils", "infiniband-diags", "perftest"};
    else a.rdma = {"rdma-core", "ibverbs-providers", "ibverbs-utils", "infiniband-diags", "perftest"};
  }

  if (!v.os.rhel) {
    // NVIDIA Driver Installation Guide: from R560 nvidia-open-<branch> is the open flavour's meta
    // package and cuda-drivers-<branch> the proprietary one; before R560 the open modules came
    // from nvidia-kernel-open-<branch> next to cuda-drivers-<branch>.
    if (v.secure_boot) {
      // Secure Boot: the kernel loads only signed modules, so no DKMS build. Canonical's precompiled
      // modules, signed for Ubuntu's kernels, and the userspace without DKMS, from Ubuntu's archive
      // (restricted), as NVIDIA's precompiled driver containers install them (NVIDIA/gpu-driver-container,
      // ubuntu22.04 and ubuntu24.04 precompiled/nvidia-driver, _install_driver).
      a.driver = {"nvidia-headless-no-dkms-" + branch + "-server", "nvidia-utils-" + branch + "-server"};
      a.signed_modules = v.kernel_modules == "open"
                             ? std::vector<std::string>{"linux-modules-nvidia-" + branch + "-server-open"}
                             : std::vector<std::string>{"linux-objects-nvidia-" + branch + "-server",
                                                        "linux-modules-nvidia-" + branch + "-server"};
    } else if (v.kernel_modules == "open") {
      a.driver = compare_versions(branch, "560") >= 0 ? std::vector<std::string>{"nvidia-open-" + branch}
                                                       : std::vector<std::string>{"nvidia-kernel-open-" + branch, "cuda-drivers-" + branch};
    } else {
      a.driver = {"cuda-drivers-" + branch};
    }
    // The pin below holds the unversioned names at the driver's version.
    const std::string suffix = unversioned ? "" : "-" + branch;
    if (v.fabric_manager) {
      a.driver.push_back("nvidia-fabricmanager" + suffix);
      if (dcgm) a.driver.push_back("libnvidia-nscq" + suffix);
    }
    if (v.nvlsm) a.driver.push_back("nvlsm");
    if (!v.imex_nodes.empty()) a.driver.push_back("nvidia-imex" + suffix);
    a.rest = {toolkit_pkg};
    if (a.cuda_compat) a.rest.push_back("cuda-compat-" + cuda[0] + "-" + cuda[1]);
    pin(a.preferences, "plinth: NVIDIA container toolkit " + a.toolkit,
        "nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container1 libnvidia-container-tools", a.toolkit + "-*");
    pin(a.preferences, "plinth: " + where + " pins NVIDIA driver " + s.driver,
        "cuda-drivers cuda-drivers-* nvidia-* libnvidia-* libxnvctrl* xserver-xorg-video-nvidia-*", s.driver + "-*");
    pin(a.preferences, "plinth: " + where + " pins CUDA " + s.cuda + " (installs " + a.cuda + ")", toolkit_pkg, a.cuda + "-*");
  } else {
    // RHEL / Rocky: the module stream picks the flavour (<branch>-open or <branch>-dkms);
    // cuda-drivers-<branch> and the NVSwitch packages are pinned to the driver.
    a.module_stream = "nvidia-driver:" + branch + (v.kernel_modules == "open" ? "-open" : "-dkms");
    a.driver = {"cuda-drivers-" + branch + "-" + s.driver};
    const std::string infix = unversioned ? "-" : "-" + branch + "-";
    if (v.fabric_manager) {
      // Before R580 the RPM is nvidia-fabric-manager, unbranched (NVIDIA/yum-packaging-fabric-manager
      // fabricmanager.spec: Name nvidia-fabric-manager; nvidia-fabricmanager-<branch> is only a
      // Provides, which dnf does not match with a version appended); from R580 nvidia-fabricmanager
      // (NVIDIA/gpu-driver-container rhel9/install.sh fabricmanager_install, 091f60d and 9f15a32).
      a.driver.push_back((unversioned ? "nvidia-fabricmanager-" : "nvidia-fabric-manager-") + s.driver);
      if (dcgm) a.driver.push_back("libnvidia-nscq" + infix + s.driver);
    }
    if (v.nvlsm) a.driver.push_back("nvlsm");
    if (!v.imex_nodes.empty()) a.driver.push_back("nvidia-imex" + infix + s.driver);
    a.rest = {toolkit_pkg + "-" + a.cuda};
    if (a.cuda_compat) a.rest.push_back("cuda-compat-" + cuda[0] + "-" + cuda[1]);
    a.locks = {"*nvidia*" + s.driver + "*", "cuda-drivers*" + s.driver + "*", toolkit_pkg + "-" + a.cuda + "*"};
  }

  if (!s.cudnn.empty()) {
    auto cudnn = split_dots(s.cudnn);
    if (!numeric_version(s.cudnn) || cudnn.size() < 2 || (cudnn[0] != "8" && cudnn[0] != "9"))
      return Error::invalid(where + " pins cuDNN '" + s.cudnn +
                            "'; the NVIDIA CUDA repository packages cuDNN 8.x and 9.x, give e.g. \"9.1.0\"");
    const std::string version = cudnn.size() == 4 ? s.cudnn + "-*" : s.cudnn + ".*";
    if (!v.os.rhel) {
      if (cudnn[0] == "9") {
        const std::string suffix = "-cuda-" + cuda[0];
        a.rest.push_back("libcudnn9" + suffix);
        a.rest.push_back("libcudnn9-dev" + suffix);
        pin(a.preferences, "plinth: " + where + " pins cuDNN " + s.cudnn, "libcudnn9* cudnn9*", version);
      } else {
        a.rest.push_back("libcudnn8");
        a.rest.push_back("libcudnn8-dev");
        pin(a.preferences, "plinth: " + where + " pins cuDNN " + s.cudnn, "libcudnn8 libcudnn8-dev", version + "+cuda" + cuda[0] + ".*");
      }
    } else if (cudnn[0] == "9") {
      a.rest.push_back("libcudnn9-cuda-" + cuda[0] + "-" + s.cudnn + "*");
      a.rest.push_back("libcudnn9-devel-cuda-" + cuda[0] + "-" + s.cudnn + "*");
    } else {
      a.rest.push_back("libcudnn8-" + s.cudnn + "*");
      a.rest.push_back("libcudnn8-devel-" + s.cudnn + "*");
    }
  }
  if (!v.os.rhel) {
    a.rest.push_back("nvidia-container-toolkit");
    a.rest.push_back("docker.io");
  } else {
    for (const char* p : {"nvidia-container-toolkit-", "nvidia-container-toolkit-base-", "libnvidia-container1-",
                          "libnvidia-container-tools-"})
      a.rest.push_back(p + a.toolkit);
    a.rest.push_back("podman");
    a.locks.push_back("*nvidia-container*" + a.toolkit + "*");
  }
  bool nfs = false, nfs_tls = false;
  for (const auto& m : mounted)
    if (m.kind == "nfs") {
      nfs = true;
      nfs_tls = nfs_tls || m.options.find("xprtsec=tls") != std::string::npos;
    }
  if (nfs) a.rest.push_back(v.os.rhel ? "nfs-utils" : "nfs-common");
  if (nfs_tls) a.rest.push_back("ktls-utils");
  return a;
}

constexpr std::string_view kNvmeScript = R"SH(#!/bin/sh
# plinth-nvme TIER MODE KEY_FILE MOUNT_POINT (written by plinth render)
# Puts storage tier TIER on this node's blank NVMe namespaces (no partitions, no
# filesystem, RAID or LUKS signature) as one RAID 0 array and mounts it at
# MOUNT_POINT. MODE luks encrypts the array with LUKS2, AES-256-XTS
# (aes-xts-plain64, 512-bit key), keyed from KEY_FILE; MODE plain formats it
# directly. Idempotent: an existing array is opened, never reformatted.
set -eu
tier=$1 mode=$2 key=$3 mnt=$4
name=plinth-$tier
md=/dev/md/$name
if [ "$mode" = luks ] && [ ! -r "$key" ]; then
  echo "plinth-nvme: key file $key for tier $tier is missing; place it (mode 0400) and run: $0 $tier $mode $key $mnt" >&2
  exit 1
fi
mdadm_conf=/etc/mdadm/mdadm.conf
[ -d /etc/mdadm ] || mdadm_conf=/etc/mdadm.conf
if [ ! -e "$md" ]; then
  set --
  for dev in /dev/nvme[0-9]*n[0-9]*; do
    case "$dev" in *p[0-9]*) continue ;; esac
    [ -b "$dev" ] || continue
    [ "$(lsblk --noheadings --output NAME "$dev" | wc -l)" -eq 1 ] || continue
    if blkid --probe "$dev" >/dev/null 2>&1; then continue; fi
    set -- "$@" "$dev"
  done
  if [ "$#" -eq 0 ]; then
    echo "plinth-nvme: no blank NVMe namespace left for tier $tier" >&2
    exit 1
  fi
  mdadm --create "$md" --run --force --level=0 --raid-devices="$#" "$@"
  mdadm --detail --brief "$md" >> "$mdadm_conf"
  if [ "$mode" = luks ]; then
    cryptsetup luksFormat --batch-mode --type luks2 --cipher aes-xts-plain64 --key-size 512 --key-file "$key" "$md"
  fi
fi
dev=$md
if [ "$mode" = luks ]; then
  [ -e "/dev/mapper/$name" ] || cryptsetup open --type luks2 --key-file "$key" "$md" "$name"
  grep -q "^$name " /etc/crypttab 2>/dev/null || echo "$name $md $key luks,discard" >> /etc/crypttab
  dev=/dev/mapper/$name
fi
blkid "$dev" >/dev/null 2>&1 || mkfs.xfs -q "$dev"
grep -q "^$dev " /etc/fstab || echo "$dev $mnt xfs defaults,nofail 0 2" >> /etc/fstab
mkdir -p "$mnt"
mountpoint -q "$mnt" || mount "$mnt"
)SH";

constexpr std::string_view kMountScript = R"SH(#!/bin/sh
# plinth-mount KIND TIER SOURCE MOUNT_POINT OPTIONS (written by plinth render)
# Mounts storage tier TIER from SOURCE at MOUNT_POINT and keeps it across
# reboots. KIND is nfs, lustre, gpfs, weka or beegfs. Idempotent. Stops with
# a message naming what is missing (a file system client, a key, a cluster
# setting) instead of leaving a node that looks ready without its data.
set -eu
kind=$1 tier=$2 src=$3 mnt=$4 opts=$5
fail() { echo "plinth-mount: tier $tier: $*" >&2; exit 1; }
mkdir -p "$mnt"
mountpoint -q "$mnt" && exit 0
case "$kind" in
  nfs|lustre|weka)
    case "$kind" in
      nfs) fstype=nfs4 ;;
      lustre)
        fstype=lustre
        modinfo lustre >/dev/null 2>&1 || fail "the Lustre client for kernel $(uname -r) is not installed; add it to the image (Whamcloud's or your storage vendor's lustre-client packages) and run: $0 $*"
        if [ -f /etc/plinth/lnet-rails ] && [ ! -f /etc/modprobe.d/plinth-lnet.conf ]; then
          # o2ib is LNet over RDMA: the rail it runs on needs an IPv4 (IPoIB) address.
          rails=$(grep -v '^#' /etc/plinth/lnet-rails || true)
          [ -n "$rails" ] || rails=$(for d in /sys/class/infiniband/*/device/net/*; do [ -e "$d" ] && echo "${d##*/}"; done)
          ifc=
          for pat in $rails; do
            for d in /sys/class/net/$pat; do
              [ -e "$d" ] || continue
              if ip -4 -o addr show dev "${d##*/}" | grep -q ' inet '; then ifc=${d##*/}; break 2; fi
            done
          done
          [ -n "$ifc" ] || fail "LNet o2ib needs an RDMA rail with an IPv4 (IPoIB) address and no interface matching /etc/plinth/lnet-rails (or, with none listed, of an RDMA device) has one; give the rail its address on the fabric's IPoIB network and run: $0 $*"
          echo "options lnet networks=\"o2ib0($ifc)\"" > /etc/modprobe.d/plinth-lnet.conf
        fi
        case "$opts" in *skpath=*)
          keys=${opts#*skpath=}; keys=${keys%%,*}
          [ -d "$keys" ] || fail "encryption in transit needs the file system's shared keys (Lustre SSK) in $keys; place them and run: $0 $*" ;;
        esac ;;
      weka)
        fstype=wekafs
        command -v weka >/dev/null 2>&1 || fail "the WEKA client is not installed; install it from your WEKA cluster and run: $0 $*" ;;
    esac
    grep -q "[[:space:]]${mnt}[[:space:]]" /etc/fstab || echo "$src $mnt $fstype $opts 0 0" >> /etc/fstab
    mount "$mnt"
    ;;
  gpfs)
    mm=/usr/lpp/mmfs/bin
    [ -x "$mm/mmmount" ] || fail "the IBM Storage Scale client is not installed or this node is not a cluster member (mmaddnode); then run: $0 $*"
    "$mm/mmgetstate" | grep -q active || "$mm/mmstartup"
    if [ "$opts" = cipher ]; then
      ciphers=$("$mm/mmlsconfig" cipherList | awk '{print $2}')
      case "$ciphers" in ""|EMPTY|AUTHONLY) fail "encryption in transit is required but the cluster's cipherList is '${ciphers:-unset}'; set it on the cluster (mmchconfig cipherList=AES256-GCM-SHA384)" ;; esac
    fi
    "$mm/mmmount" "$src" "$mnt"
    ;;
  beegfs)
    command -v beegfs-setup-client >/dev/null 2>&1 || fail "the BeeGFS client is not installed; add beegfs-client to the image and run: $0 $*"
    beegfs-setup-client -m "$src"
    grep -q "^$mnt " /etc/beegfs/beegfs-mounts.conf 2>/dev/null || echo "$mnt /etc/beegfs/beegfs-client.conf" >> /etc/beegfs/beegfs-mounts.conf
    systemctl enable --now beegfs-helperd beegfs-client
    ;;
  *) fail "unknown file system kind $kind" ;;
esac
)SH";

std::string mig_script(const PoolView& v, const catalog::GpuModel* gpu) {
  // nvidia-smi's profile tuples take a placement start ("3g.40gb:4"): create every
  // instance where the catalog's placement search put it, so mixed layouts fit.
  std::vector<std::string> tuples;
  if (gpu) {
    auto fit = catalog::place_mig(*gpu, v.mig);
    if (fit.fits)
      for (const auto& [prof, start] : fit.slots) tuples.push_back(prof + ":" + std::to_string(start));
  }
  if (tuples.empty())
    for (const auto& [prof, n] : v.mig)
      for (int i = 0; i < n; ++i) tuples.push_back(prof);
  return "#!/bin/sh\n# plinth: MIG layout of pool " + v.name + ": " + v.mig_label +
         " on every GPU.\n"
         "set -eu\n"
         "nvidia-smi -mig 1\n"
         "# A GPU whose MIG mode is still pending needs a reset before instances can be created.\n"
         "if nvidia-smi --query-gpu=mig.mode.pending,mig.mode.current --format=csv,noheader | grep -q 'Enabled, Disabled'; then\n"
         "  nvidia-smi --gpu-reset\n"
         "fi\n"
         "nvidia-smi mig -dci || true\n"
         "nvidia-smi mig -dgi || true\n"
         "nvidia-smi mig -cgi " +
         shq(join(tuples, ",")) + " -C\n";
}

constexpr std::string_view kMigUnit = R"([Unit]
Description=plinth: create the pool's MIG instances
After=nvidia-persistenced.service nvidia-fabricmanager.service
Before=docker.service podman.service dcgm-exporter.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/plinth-mig

[Install]
WantedBy=multi-user.target
)";

constexpr std::string_view kCdiUnit = R"([Unit]
Description=plinth: describe the NVIDIA GPUs for Podman (CDI)
After=nvidia-persistenced.service nvidia-fabricmanager.service plinth-mig.service
Before=dcgm-exporter.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/bin/nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml

[Install]
WantedBy=multi-user.target
)";

std::string dcgm_unit(const std::string& image, bool mig, bool podman) {
  const std::string engine = podman ? "/usr/bin/podman" : "/usr/bin/docker";
  const std::string gpus = podman ? "--device nvidia.com/gpu=all" : "--gpus all";
  return std::string("[Unit]\nDescription=NVIDIA DCGM exporter: GPU metrics for Prometheus on :9400\n") + "After=" +
         (podman ? "plinth-cdi.service" : "docker.service") + " nvidia-persistenced.service" + (mig ? " plinth-mig.service" : "") +
         (podman ? "\nRequires=plinth-cdi.service" : "\nRequires=docker.service") +
         "\n\n"
         "[Service]\n"
         "ExecStartPre=-" + engine + " rm --force dcgm-exporter\n"
         "ExecStart=" + engine + " run --rm --name dcgm-exporter " + gpus + " --cap-add SYS_ADMIN --publish 9400:9400 " + image +
         "\nExecStop=" + engine + " stop dcgm-exporter\n"
         "Restart=always\n"
         "RestartSec=10\n\n"
         "[Install]\n"
         "WantedBy=multi-user.target\n";
}

/// The image's repository ends in "/dcgm-exporter" (any registry, tag or digest).
/// plinth-probe runs at boot and every five minutes; `plinth verify` calls
/// facts older than an hour stale.
constexpr std::string_view kProbeUnit = R"([Unit]
Description=plinth: report what this node runs for plinth verify (docs/verify.md)
After=nvidia-fabricmanager.service nvidia-persistenced.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/plinth-probe
Nice=10
)";

constexpr std::string_view kProbeTimer = R"([Unit]
Description=plinth: run plinth-probe every five minutes

[Timer]
OnBootSec=2min
OnUnitActiveSec=5min

[Install]
WantedBy=timers.target
)";

/// A probe.conf value: one line, whatever the blueprint wrote.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

bool is_dcgm_exporter(std::string_view image) {
  size_t end = image.find('@');
  std::string_view repo = image.substr(0, end);
  size_t colon = repo.rfind(':');
  if (colon != std::string_view::npos && repo.find('/', colon) == std::string_view::npos) repo = repo.substr(0, colon);
  constexpr std::string_view suffix = "/dcgm-exporter";
  return repo.size() >= suffix.size() && repo.substr(repo.size() - suffix.size()) == suffix;
}

/// The VLAN that carries the node's default route: the first management VLAN, else the lowest id.
const bp::Vlan* default_route_vlan(const PoolView& v) {
  for (const auto* vlan : v.vlans)
    if (vlan->purpose == "management") return vlan;
  return v.vlans.empty() ? nullptr : v.vlans.front();
}

/// How LNet reaches the Lustre servers a pool mounts.
struct Lnet {
  std::string modprobe;            ///< the `options lnet` line ("" = LNet's default: tcp0 on the first interface)
  /// o2ib over rails written as globs (or none written): plinth-mount picks the
  /// first matching interface with an IPv4 address at mount time.
  bool resolve = false;
  std::vector<std::string> rails;  ///< the globs; empty: every RDMA device's network interface
  bool ipoib = false;              ///< the InfiniBand rails need an IPv4 (IPoIB) address: DHCP on them
};

/// o2ib on the pool's RDMA rails when it has an RDMA fabric and a server has an
/// o2ib NID (the first rail named outright, else the first rail matching a
/// glob that has an address when the tier is mounted); else tcp on the VLAN
/// whose subnet holds a server's tcp NID (tcp0(vlanID)); else LNet's default.
Lnet lnet_for(const PoolView& v, const std::vector<Mount>& mounted) {
  Lnet out;
  std::vector<bp::LustreNid> nids;
  for (const auto& m : mounted)
    if (m.kind == "lustre")
      for (auto& n : bp::lustre_nids(m.tier->remote)) nids.push_back(std::move(n));
  auto has = [&](const char* lnd) {
    return std::any_of(nids.begin(), nids.end(), [&](const bp::LustreNid& n) { return n.lnd == lnd; });
  };
  if (v.fabric && has("o2ib")) {
    out.ipoib = v.fabric->kind == "infiniband";
    for (const auto& r : v.rails)
      if (r.find_first_of("*?[") == std::string::npos) {
        out.modprobe = "options lnet networks=\"o2ib0(" + r + ")\"";
        return out;
      }
    out.resolve = true;
    out.rails = v.rails;  // globs, or none (RoCE without `interfaces.rdma`): every RDMA device's interface
    return out;
  }
  for (const auto& n : nids) {
    if (n.lnd != "tcp") continue;
    for (const auto* vlan : v.vlans)
      if (bp::vlan_holds(*vlan, n.address)) {
        out.modprobe = "options lnet networks=\"tcp0(vlan" + std::to_string(vlan->id) + ")\"";
        return out;
      }
  }
  return out;
}

Result<std::string> network_config(const PoolView& v, const Lnet& lnet) {
  if (v.burst || v.vlans.empty()) return std::string();
  int mtu = 0;
  for (const auto* vlan : v.vlans) mtu = std::max(mtu, vlan->mtu);
  const std::string m = std::to_string(mtu);
  const bp::Vlan* gateway = default_route_vlan(v);
  // VRFs: every VRF a VLAN names, except that the default-route VLAN stays in the main table.
  std::map<std::string, std::vector<std::string>> vrfs;
  for (const auto* vlan : v.vlans) {
    if (vlan->vrf.empty() || vlan == gateway) continue;
    if (!safe_name(vlan->vrf) || vlan->vrf.size() > 11)
      return Error::invalid("VLAN '" + vlan->name + "' names VRF '" + vlan->vrf +
                            "'; a VRF becomes the Linux device 'vrf-NAME', so use at most 11 letters, digits, '.', '_' or '-'");
    vrfs["vrf-" + vlan->vrf].push_back("vlan" + std::to_string(vlan->id));
  }
  std::string out;
  out.reserve(1024 + 200 * v.vlans.size());
  out += "# plinth: network config v2 for pool " + v.name + ": the uplinks " + join(v.bond, ", ") +
         " bonded with LACP into bond0,\n"
         "# one tagged VLAN per network on bond0 (DHCP), the default route only through " +
         (gateway ? "VLAN '" + gateway->name + "'" : std::string("bond0")) + (v.rails.empty() ? "" : ",\n# RDMA rails " + join(v.rails, ", ") + " kept out of the bond") +
         ".\nversion: 2\nethernets:\n";
  for (size_t i = 0; i < v.bond.size(); ++i)
    out += "  uplink" + std::to_string(i) + ":\n    match:\n      name: " + q(v.bond[i]) + "\n    mtu: " + m + "\n";
  const bool roce = v.fabric && v.fabric->kind == "roce-v2";
  // IPoIB: LNet o2ib needs an IPv4 address on the InfiniBand rail, from the
  // fabric's IPoIB network (a DHCP server there, docs/render.md).
  if (lnet.ipoib)
    for (size_t i = 0; i < v.rails.size(); ++i)
      out += "  rail" + std::to_string(i) + ":  # IPoIB rail on fabric " + v.fabric->name +
             " (Lustre over o2ib)\n    match:\n      name: " + q(v.rails[i]) +
             "\n    dhcp4: true\n    dhcp4-overrides:\n      use-routes: false\n      use-dns: false\n";
  if (roce)
    for (size_t i = 0; i < v.rails.size(); ++i)
      out += "  rail" + std::to_string(i) + ":  # RoCE rail on fabric " + v.fabric->name +
             "\n    match:\n      name: " + q(v.rails[i]) +
             "\n    mtu: 9000\n    dhcp4: true\n    dhcp4-overrides:\n      use-routes: false\n      use-dns: false\n";
  out += "bonds:\n  bond0:\n    interfaces: [";
  for (size_t i = 0; i < v.bond.size(); ++i) out += (i ? ", uplink" : "uplink") + std::to_string(i);
  out += "]\n    mtu: " + m +
         "\n    dhcp4: false\n"
         "    parameters:\n"
         "      mode: 802.3ad\n"
         "      lacp-rate: fast\n"
         "      mii-monitor-interval: 100\n"
         "      transmit-hash-policy: layer3+4\n"
         "vlans:\n";
  for (const auto* vlan : v.vlans) {
    const std::string id = std::to_string(vlan->id);
    out += "  vlan" + id + ":  # " + vlan->name + " " + vlan->cidr + (vlan->purpose.empty() ? "" : " (" + vlan->purpose + ")") +
           (vlan == gateway ? ", default route" : "") + "\n";
    out += "    id: " + id + "\n    link: bond0\n    mtu: " + std::to_string(vlan->mtu) + "\n    dhcp4: true\n";
    if (vlan != gateway) out += "    dhcp4-overrides:\n      use-routes: false\n      use-dns: false\n";
  }
  if (!vrfs.empty()) {
    out += "vrfs:\n";
    int table = 1000;
    for (const auto& [name, members] : vrfs) {
      out += "  " + name + ":\n    table: " + std::to_string(++table) + "\n    interfaces: [" + join(members, ", ") + "]\n";
    }
  }
  return out;
}

/// Everything a pool's cloud-init is written from.
/// The shell steps that install the AWS EFA installer `version` after checking its GPG signature
/// (AWS EC2 User Guide, "Install the EFA software" and "Verify the EFA installer using a GPG signature").
std::string efa_install(const std::string& version) {
  return "set -e; v=" + version +
         "; base=https://efa-installer.amazonaws.com; d=$(mktemp -d); cd \"$d\"; export GNUPGHOME=\"$d/gnupg\"; "
         "mkdir -m 0700 \"$GNUPGHOME\"; curl -fsSLO \"$base/aws-efa-installer-$v.tar.gz\"; "
         "curl -fsSLO \"$base/aws-efa-installer-$v.tar.gz.sig\"; curl -fsSL \"$base/aws-efa-installer.key\" | gpg --batch "
         "--import; gpg --batch --verify \"aws-efa-installer-$v.tar.gz.sig\" \"aws-efa-installer-$v.tar.gz\"; "
         "tar -xf \"aws-efa-installer-$v.tar.gz\"; cd aws-efa-installer; ./efa_installer.sh -y; cd /; rm -rf \"$d\"";
}

struct Prepared {
  PoolView v;
  std::vector<Mount> mounted;
  Packages pk;
  std::string netcfg;
  Lnet lnet;
  std::vector<const bp::StorageTier*> nvme;
  std::string dcgm_image;
  bool dcgm = false;
  bool own_dcgm = false;
  bool mig = false;
  bool doca = false;
  std::string doca_dir;
  nlohmann::json node;  ///< /etc/plinth/node.json
};

Result<Prepared> prepare(const bp::Blueprint& blueprint, const std::string& pool, const catalog::Catalog& cat) {
  auto viewed = view_pool(blueprint, pool, cat);
  if (!viewed) return viewed.error();
  Prepared out;
  out.v = std::move(*viewed);
  PoolView& v = out.v;
  const bp::Stack& s = *v.stack;
  const bool dcgm = blueprint.monitoring && blueprint.monitoring->dcgm;
  auto mounted = mounts(v);
  if (!mounted) return mounted.error();
  auto pk = packages(v, *mounted, dcgm, cat);
  if (!pk) return pk.error();
  out.lnet = lnet_for(v, *mounted);
  for (const auto& r : out.lnet.rails)
    if (!all_of_chars(r, "._-*?[]"))
      return Error::invalid("pool '" + v.name + "' names RDMA rail '" + r + "', which is not an interface name or glob");
  auto netcfg = network_config(v, out.lnet);
  if (!netcfg) return netcfg.error();
  for (const auto& image : s.images)
    if (!all_of_chars(image, "._-/:@"))
      return Error::invalid("stack '" + s.name + "' lists image '" + image +
                            "', which is not a registry/repository[:tag][@sha256:digest] reference");
  std::vector<const bp::StorageTier*>& nvme = out.nvme;
  for (const auto* t : v.tiers) {
    if (t->kind != "nvme") continue;
    if (!safe_name(t->name))
      return Error::invalid("storage tier '" + t->name + "' cannot name a RAID device; use letters, digits, '.', '_' and '-'");
    const std::string point = mount_point(*t);
    if (!all_of_chars(point, "._-/") || point.find("..") != std::string::npos)
      return Error::invalid("storage tier '" + t->name + "' has mount point '" + point + "', which is not a plain absolute path");
    nvme.push_back(t);
  }
  std::string& dcgm_image = out.dcgm_image;
  dcgm_image = cat.dcgm_exporter_image();
  bool& own_dcgm = out.own_dcgm;
  for (const auto& image : s.images)
    if (is_dcgm_exporter(image)) {
      dcgm_image = image;
      own_dcgm = true;
      break;
    }
  const bool mig = out.mig = !v.mig.empty();
  if (mig) {
    std::vector<std::string> parts;
    for (const auto& [prof, n] : v.mig) parts.push_back(std::to_string(n) + " x " + prof);
    v.mig_label = join(parts, " + ");
  }
  const bool doca = out.doca = v.rdma_stack == "doca-ofed";
  out.doca_dir = (v.os.rhel ? "" : "ubuntu" + v.os.release) + "/" + (v.arch == "sbsa" ? "arm64-sbsa" : "x86_64") + "/";

  nlohmann::json& node = out.node;
  node = v.identity;
  node["blueprint"] = blueprint.metadata.name;
  node["pool"] = v.name;
  node["provider"] = v.provider;
  node["os"] = v.os.id;
  node["arch"] = v.arch;
  node["stack"] = {{"name", s.name},         {"driver", s.driver},   {"kernel_modules", v.kernel_modules},
                   {"cuda", s.cuda},         {"cuda_installed", pk->cuda}, {"cuda_compat", pk->cuda_compat},
                   {"cudnn", s.cudnn},       {"container_toolkit", pk->toolkit}, {"frameworks", s.frameworks},
                   {"images", s.images}};
  node["nvswitch"] = {{"fabric_manager", v.fabric_manager}, {"nvlink_subnet_manager", v.nvlsm}};
  if (!v.imex_nodes.empty()) node["imex"] = {{"nodes", v.imex_nodes}};
  if (v.fabric)
    node["rdma"] = {{"fabric", v.fabric->name}, {"kind", v.fabric->kind}, {"stack", v.rdma_stack},
                    {"peermem", doca}, {"interfaces", v.rails}};
  else if (!v.rdma_stack.empty())  // a burst instance type's own InfiniBand
    node["rdma"] = {{"fabric", ""}, {"kind", v.gpu_network}, {"stack", v.rdma_stack}, {"peermem", doca},
                    {"interfaces", nlohmann::json::array()}};
  node["networks"] = nlohmann::json::array();
  for (const auto* vlan : v.vlans)
    node["networks"].push_back({{"name", vlan->name}, {"vlan", vlan->id}, {"cidr", vlan->cidr}, {"mtu", vlan->mtu}, {"vrf", vlan->vrf}});
  node["storage"] = nlohmann::json::array();
  for (const auto* t : v.tiers) {
    nlohmann::json j = {{"name", t->name}, {"kind", t->kind}, {"luks", luks_tier(*t)}, {"mount", ""}};
    if (t->kind == "nvme") j["mount"] = mount_point(*t);
    for (const auto& m : *mounted)
      if (m.tier == t) {
        j["mount"] = m.point;
        j["source"] = t->remote;
        j["fs"] = m.kind;
        j["encrypted_in_transit"] = encrypted_in_transit(*t);
      }
    node["storage"].push_back(std::move(j));
  }
  node["monitoring"] = {{"dcgm_exporter", dcgm ? dcgm_image : ""}};

  out.dcgm = dcgm;
  out.mounted = std::move(*mounted);
  out.pk = std::move(*pk);
  out.netcfg = std::move(*netcfg);
  return out;
}

}  // namespace

Result<nlohmann::json> node_document(const bp::Blueprint& blueprint, const std::string& pool, const catalog::Catalog& cat) {
  auto prepared = prepare(blueprint, pool, cat);
  if (!prepared) return prepared.error();
  return std::move(prepared->node);
}

Result<CloudInit> render_pool(const bp::Blueprint& blueprint, const std::string& pool) {
  auto cat = catalog::default_catalog();
  if (!cat) return Error::invalid("cannot load the catalog: " + cat.error().message);
  return render_pool(blueprint, pool, **cat);
}

Result<CloudInit> render_pool(const bp::Blueprint& blueprint, const std::string& pool, const catalog::Catalog& cat) {
  auto prepared = prepare(blueprint, pool, cat);
  if (!prepared) return prepared.error();
  Prepared& pr = *prepared;
  PoolView& v = pr.v;
  const bp::Stack& s = *v.stack;
  const bool dcgm = pr.dcgm, own_dcgm = pr.own_dcgm, mig = pr.mig, doca = pr.doca;
  const std::string& dcgm_image = pr.dcgm_image;
  const std::string& doca_dir = pr.doca_dir;
  const std::vector<const bp::StorageTier*>& nvme = pr.nvme;
  const std::vector<Mount>* mounted = &pr.mounted;
  const Packages* pk = &pr.pk;
  const nlohmann::json& node = pr.node;
  std::string ud;
  ud.reserve(12288);
  ud += "#cloud-config\n";
  ud += "# plinth: " + std::string(v.burst ? "burst" : "node") + " pool " + q(v.name) + " (" + v.provider +
        ") of blueprint " + q(blueprint.metadata.name) + ", stack " + q(s.name) + ", " + v.os.id + " " + v.arch +
        ".\n# Generated by `plinth render`; change the blueprint, not this file.\n";
  const std::string cuda_repo = std::string(kCudaRepoBase) + v.os.cuda_repo() + "/" + v.arch + "/";
  ud += "package_update: true\n";
  if (!v.os.rhel) {
    ud += "apt:\n"
          "  sources:\n"
          "    nvidia-cuda.list:\n"
          "      source: \"deb [signed-by=$KEY_FILE] " +
          cuda_repo + " /\"\n      keyid: \"" + kCudaRepoKeyId + "\"\n      keyserver: \"" + kKeyServer + "\"\n";
  } else {
    ud += "yum_repos:\n"
          "  cuda-" + v.os.cuda_repo() + "-" + v.arch + ":\n"
          "    name: \"NVIDIA CUDA " + v.os.cuda_repo() + " " + v.arch + "\"\n"
          "    baseurl: \"" + cuda_repo + "\"\n"
          "    enabled: true\n"
          "    gpgcheck: true\n"
          "    gpgkey: \"" + cuda_repo + "D42D0685.pub\"\n";
  }

  ud += "write_files:\n";
  if (!v.os.rhel) write_file(ud, "/etc/apt/preferences.d/plinth-nvidia.pref", "0644", pk->preferences);
  write_file(ud, "/etc/plinth/node.json", "0644", node.dump(2) + "\n");
  // Not in sources.list.d yet: cloud-init's package_update runs before the
  // key is fetched (runcmd), and a source without its key fails that update.
  if (doca)
    write_file(ud, "/etc/plinth/apt/doca.list", "0644",
               "deb [signed-by=/etc/apt/keyrings/doca.gpg] " + std::string(kDocaRepoBase) + cat.doca_version() + "/" + doca_dir + " ./\n");
  if (doca) write_file(ud, "/etc/modules-load.d/nvidia-peermem.conf", "0644", "# plinth: GPUDirect RDMA over DOCA-OFED\nnvidia-peermem\n");
  if (v.nvlsm)
    write_file(ud, "/etc/modules-load.d/plinth-nvlsm.conf", "0644",
               "# plinth: the NVLink Subnet Manager of fourth-generation NVSwitch talks to the switches through umad\nib_umad\n");
  // IMEX reads one address per line, every compute tray of the NVLink domain (this one too).
  if (!v.imex_nodes.empty()) write_file(ud, "/etc/nvidia-imex/nodes_config.cfg", "0644", join(v.imex_nodes, "\n") + "\n");
  // The topology NCCL cannot see through the VM's virtualised PCIe (and the graph of NVLink-bridged
  // GPU pairs), and /etc/nccl.conf pointing at them, as the provider's own images set them (Azure's
  // HPC images: components/customizations/ndv4.sh, ndv5.sh; ncv4.sh, without InfiniBand).
  if (!v.nccl_topology_path.empty()) {
    write_file(ud, v.nccl_topology_path, "0644", v.nccl_topology_xml);
    if (!v.nccl_graph_path.empty()) write_file(ud, v.nccl_graph_path, "0644", v.nccl_graph_xml);
    write_file(ud, "/etc/nccl.conf", "0644",
               std::string(v.gpu_network == "infiniband" ? "NCCL_IB_PCI_RELAXED_ORDERING=1\n" : "") +
                   "NCCL_TOPO_FILE=" + v.nccl_topology_path + "\n" +
                   (v.nccl_graph_path.empty() ? "" : "NCCL_GRAPH_FILE=" + v.nccl_graph_path + "\n") +
                   "NCCL_IGNORE_CPU_AFFINITY=1\n");
  }
  if (!pr.lnet.modprobe.empty())
    write_file(ud, "/etc/modprobe.d/plinth-lnet.conf", "0644",
               "# plinth: the LNet network that reaches this pool's Lustre servers\n" + pr.lnet.modprobe + "\n");
  else if (pr.lnet.resolve)
    write_file(ud, "/etc/plinth/lnet-rails", "0644",
               "# plinth: LNet o2ib on the first interface matching these RDMA rails that has an IPv4 address\n"
               "# (none listed: any RDMA device's interface), chosen by plinth-mount before the first Lustre mount\n" +
                   join(pr.lnet.rails, " ") + "\n");
  if (!nvme.empty()) write_file(ud, "/usr/local/sbin/plinth-nvme", "0755", kNvmeScript);
  if (!mounted->empty()) write_file(ud, "/usr/local/sbin/plinth-mount", "0755", kMountScript);
  if (mig) {
    write_file(ud, "/usr/local/sbin/plinth-mig", "0755", mig_script(v, v.gpu));
    write_file(ud, "/etc/systemd/system/plinth-mig.service", "0644", kMigUnit);
  }
  if (v.os.rhel) write_file(ud, "/etc/systemd/system/plinth-cdi.service", "0644", kCdiUnit);
  if (dcgm) write_file(ud, "/etc/systemd/system/dcgm-exporter.service", "0644", dcgm_unit(dcgm_image, mig, v.os.rhel));
  write_file(ud, "/usr/local/sbin/plinth-probe", "0755", probe_script());
  write_file(ud, "/etc/plinth/probe.conf", "0644",
             "# plinth: what this node was provisioned as, for plinth-probe (docs/verify.md)\npool=" + one_line(v.name) +
                 "\nstack=" + one_line(s.name) + "\nblueprint=" + one_line(blueprint.metadata.name) + "\n");
  write_file(ud, "/etc/systemd/system/plinth-probe.service", "0644", kProbeUnit);
  write_file(ud, "/etc/systemd/system/plinth-probe.timer", "0644", kProbeTimer);

  ud += "runcmd:\n";
  if (!v.os.rhel) {
    const std::vector<std::string> apt = {"env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "--no-install-recommends"};
    // The headers DKMS builds against (none under Secure Boot unless DOCA-OFED builds).
    if (!v.secure_boot || doca)
      run(ud, {"sh", "-c", "DEBIAN_FRONTEND=noninteractive apt-get install -y \"linux-headers-$(uname -r)\""});
    if (doca) {
      run(ud, {"sh", "-c",
               "install -d -m 0755 /etc/apt/keyrings && curl -fsSL " + std::string(kDocaRepoBase) +
                   "GPG-KEY-Mellanox.pub | gpg --dearmor --yes -o /etc/apt/keyrings/doca.gpg && "
                   "install -m 0644 /etc/plinth/apt/doca.list /etc/apt/sources.list.d/doca.list && apt-get update"});
    }
    // The RDMA stack first: nvidia-peermem builds against the ib_core it finds.
    if (!pk->rdma.empty()) {
      auto cmd = apt;
      cmd.insert(cmd.end(), pk->rdma.begin(), pk->rdma.end());
      run(ud, cmd);
    }
    auto driver = apt;
    driver.insert(driver.end(), pk->driver.begin(), pk->driver.end());
    run(ud, driver);
    if (!pk->signed_modules.empty()) run(ud, {"sh", "-c", signed_modules_install(pk->signed_modules, s.driver)});
    auto rest = apt;
    rest.insert(rest.end(), pk->rest.begin(), pk->rest.end());
    if (!nvme.empty()) rest.insert(rest.end(), {"cryptsetup", "mdadm", "xfsprogs"});
    // Its textfile collector reads /var/lib/prometheus/node-exporter, where plinth-probe writes.
    if (blueprint.monitoring && blueprint.monitoring->prometheus) rest.push_back("prometheus-node-exporter");
    run(ud, rest);
  } else {
    const std::vector<std::string> dnf = {"dnf", "install", "-y"};
    // Both streams render picks (<branch>-dkms, <branch>-open) build the kernel
    // modules with DKMS, which comes from EPEL, whose packages need CodeReady
    // Builder (RHEL), CRB (Rocky 9) or PowerTools (Rocky 8): NVIDIA's driver
    // installation guide, "Red Hat Enterprise Linux / Rocky Linux", and
    // yum-packaging-dkms-nvidia (the precompiled streams need neither).
    if (v.os.id.rfind("rhel-", 0) == 0) {
      run(ud, {"sh", "-c", "subscription-manager repos --enable \"codeready-builder-for-rhel-" + v.os.release + "-$(arch)-rpms\""});
      run(ud, {"dnf", "install", "-y", "https://dl.fedoraproject.org/pub/epel/epel-release-latest-" + v.os.release + ".noarch.rpm"});
    } else {
      run(ud, {"dnf", "config-manager", "--set-enabled", v.os.release == "8" ? "powertools" : "crb"});
      run(ud, {"dnf", "install", "-y", "epel-release"});
    }
    run(ud, {"sh", "-c", "dnf install -y \"kernel-devel-$(uname -r)\" \"kernel-headers-$(uname -r)\" dnf-plugin-versionlock"});
    if (!pk->rdma.empty()) {
      auto cmd = dnf;
      cmd.insert(cmd.end(), pk->rdma.begin(), pk->rdma.end());
      run(ud, cmd);
    }
    run(ud, {"dnf", "module", "enable", "-y", pk->module_stream});
    auto driver = dnf;
    driver.insert(driver.end(), pk->driver.begin(), pk->driver.end());
    run(ud, driver);
    auto rest = dnf;
    rest.insert(rest.end(), pk->rest.begin(), pk->rest.end());
    if (!nvme.empty()) rest.insert(rest.end(), {"cryptsetup", "mdadm", "xfsprogs"});
    run(ud, rest);
    std::vector<std::string> lock = {"dnf", "versionlock", "add"};
    lock.insert(lock.end(), pk->locks.begin(), pk->locks.end());
    run(ud, lock);
  }
  // EFA: the installer AWS documents, checked against its signature, brings the
  // EFA kernel module, libfabric and the aws-ofi-nccl plugin; without them NCCL
  // between instances runs over TCP sockets on the ENA interface.
  if (v.gpu_network == "efa") run(ud, {"sh", "-c", efa_install(cat.efa_installer_version())});
  if (pk->cuda_compat) {
    auto parts = split_dots(pk->cuda);
    const std::string compat = "/usr/local/cuda-" + parts[0] + "." + parts[1] + "/compat";
    run(ud, {"sh", "-c", "echo " + compat + " > /etc/ld.so.conf.d/000-plinth-cuda-compat.conf && ldconfig"});
  }
  if (v.fabric_manager) run(ud, {"systemctl", "enable", "nvidia-fabricmanager.service"});
  if (!v.imex_nodes.empty()) run(ud, {"systemctl", "enable", "nvidia-imex.service"});
  for (const auto* t : nvme) {
    const bool luks = luks_tier(*t);
    run(ud, {"/usr/local/sbin/plinth-nvme", t->name, luks ? "luks" : "plain", luks ? "/etc/plinth/keys/" + t->name + ".key" : "-",
             mount_point(*t)});
  }
  for (const auto& m : *mounted) run(ud, {"/usr/local/sbin/plinth-mount", m.kind, m.tier->name, m.tier->remote, m.point, m.options});
  if (std::any_of(mounted->begin(), mounted->end(), [](const Mount& m) { return m.options.find("xprtsec=tls") != std::string::npos; }))
    run(ud, {"systemctl", "enable", "--now", "tlshd.service"});
  if (!v.os.rhel) {
    run(ud, {"nvidia-ctk", "runtime", "configure", "--runtime=docker"});
    run(ud, {"systemctl", "restart", "docker"});
    for (const auto& image : s.images) run(ud, {"docker", "pull", image});
    if (dcgm && !own_dcgm) run(ud, {"docker", "pull", dcgm_image});
  } else {
    for (const auto& image : s.images) run(ud, {"podman", "pull", image});
    if (dcgm && !own_dcgm) run(ud, {"podman", "pull", dcgm_image});
    run(ud, {"systemctl", "enable", "plinth-cdi.service"});
  }
  if (mig) run(ud, {"systemctl", "enable", "plinth-mig.service"});
  if (dcgm) run(ud, {"systemctl", "enable", "dcgm-exporter.service"});
  run(ud, {"systemctl", "enable", "plinth-probe.timer"});
  ud += "power_state:\n"
        "  mode: reboot\n"
        "  message: " + q("plinth: rebooting to load NVIDIA driver " + s.driver + " (" + v.kernel_modules + " kernel modules)") + "\n"
        "  timeout: 30\n"
        "  condition: true\n";

  CloudInit out;
  out.user_data = std::move(ud);
  out.network_config = std::move(pr.netcfg);
  out.hash = sha256_hex(out.user_data + out.network_config);
  return out;
}

}  // namespace plinth::render
