// plinth verify: each node's facts against its pool (docs/verify.md).
#include "engine/verify/verify.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <set>

#include "engine/core/strings.h"
#include "engine/provider/resource.h"
#include "engine/render/render.h"

namespace plinth::verify {
namespace {

constexpr const char* kMissing = "VER001";
constexpr const char* kUndeclared = "VER002";
constexpr const char* kDriver = "VER003";
constexpr const char* kGpus = "VER004";
constexpr const char* kFabricManager = "VER005";
constexpr const char* kMig = "VER006";
constexpr const char* kNvlink = "VER007";
constexpr const char* kRdma = "VER008";
constexpr const char* kMount = "VER009";
constexpr const char* kEncryption = "VER010";
constexpr const char* kEcc = "VER011";
constexpr const char* kStale = "VER012";
constexpr const char* kNoProbe = "VER013";

struct Gpu {
  std::string uuid, product, ecc, mig_mode;
  int mig_devices = 0;
  std::set<std::string> gpu_instances;
  std::map<std::string, int> profiles;  ///< from nvidia-smi mig -lgi or DCGM's GPU_I_PROFILE
  int links_up = 0, links_down = 0;
};

struct Port {
  std::string device, port, state, layer;
  double rate = 0;
};

struct Mounted {
  std::string fstype, source;
  std::optional<bool> encrypted;
};

/// Everything one node reported, from the probe and the DCGM exporter.
struct Node {
  std::string name, pool, stack, format;
  bool probe = false, dcgm = false;
  double timestamp = 0;
  std::string driver, cuda, dcgm_driver;
  std::optional<int> gpus;
  bool smi_failed = false;
  std::map<int, Gpu> gpu;
  std::map<std::string, bool> services, modules;
  std::map<std::string, Port> ports;  ///< "device/port"
  std::map<std::string, Mounted> mounts;
  std::map<std::string, std::string> dcgm_models;  ///< DCGM gpu index -> modelName
  std::set<std::string> dcgm_instances;            ///< "gpu/GPU_I_ID" counted once
};

int to_int(const std::string& s) {
  try {
    return std::stoi(s);
  } catch (...) {
    return -1;
  }
}

std::map<std::string, Node> gather(const std::vector<Sample>& samples) {
  std::map<std::string, Node> nodes;
  for (const auto& s : samples) {
    const bool dcgm = s.name == "dcgm_gpu" || s.name.rfind("DCGM_FI_DEV_", 0) == 0;
    const std::string name = dcgm ? s.label("Hostname") : s.label("node");
    if (name.empty()) continue;
    Node& n = nodes[name];
    n.name = name;
    if (dcgm) {
      n.dcgm = true;
      const std::string g = s.label("gpu");
      if (!s.label("modelName").empty()) n.dcgm_models[g] = s.label("modelName");
      if (!s.label("DCGM_FI_DRIVER_VERSION").empty()) n.dcgm_driver = s.label("DCGM_FI_DRIVER_VERSION");
      const std::string profile = s.label("GPU_I_PROFILE");
      if (!profile.empty() && n.dcgm_instances.insert(g + "/" + s.label("GPU_I_ID")).second) {
        int gi = to_int(g);
        if (gi >= 0) {
          n.gpu[gi].profiles[profile]++;
          n.gpu[gi].gpu_instances.insert("dcgm:" + s.label("GPU_I_ID"));
        }
      }
      continue;
    }
    if (s.name == "plinth_probe_info") {
      n.probe = true;
      n.pool = s.label("pool");
      n.stack = s.label("stack");
      n.format = s.label("format");
    } else if (s.name == "plinth_probe_timestamp_seconds") {
      n.timestamp = s.value;
    } else if (s.name == "plinth_probe_check_ok" && s.label("check") == "nvidia-smi") {
      n.smi_failed = s.value == 0;
    } else if (s.name == "plinth_gpu_driver_info") {
      n.driver = s.label("driver_version");
      n.cuda = s.label("cuda_version");
    } else if (s.name == "plinth_gpus") {
      n.gpus = static_cast<int>(s.value);
    } else if (s.name == "plinth_gpu_info") {
      Gpu& g = n.gpu[to_int(s.label("gpu"))];
      g.uuid = s.label("uuid");
      g.product = s.label("product");
      g.ecc = s.label("ecc_mode");
      g.mig_mode = s.label("mig_mode");
    } else if (s.name == "plinth_gpu_mig_devices") {
      n.gpu[to_int(s.label("gpu"))].mig_devices = static_cast<int>(s.value);
    } else if (s.name == "plinth_gpu_mig_device_info") {
      n.gpu[to_int(s.label("gpu"))].gpu_instances.insert(s.label("gpu_instance"));
    } else if (s.name == "plinth_gpu_mig_profile_instances") {
      Gpu& g = n.gpu[to_int(s.label("gpu"))];
      if (n.dcgm_instances.empty()) g.profiles[s.label("profile")] = static_cast<int>(s.value);
    } else if (s.name == "plinth_gpu_nvlink_up") {
      Gpu& g = n.gpu[to_int(s.label("gpu"))];
      ++(s.value == 1 ? g.links_up : g.links_down);
    } else if (s.name == "plinth_service_active") {
      n.services[s.label("service")] = s.value == 1;
    } else if (s.name == "plinth_kernel_module_loaded") {
      n.modules[s.label("module")] = s.value == 1;
    } else if (s.name == "plinth_ib_port_info") {
      Port& p = n.ports[s.label("device") + "/" + s.label("port")];
      p.device = s.label("device");
      p.port = s.label("port");
      p.state = s.label("state");
      p.layer = s.label("link_layer");
    } else if (s.name == "plinth_ib_port_rate_gbps") {
      n.ports[s.label("device") + "/" + s.label("port")].rate = s.value;
    } else if (s.name == "plinth_mount_info") {
      Mounted& m = n.mounts[s.label("mountpoint")];
      m.fstype = s.label("fstype");
      m.source = s.label("source");
    } else if (s.name == "plinth_mount_encrypted") {
      n.mounts[s.label("mountpoint")].encrypted = s.value == 1;
    }
  }
  return nodes;
}

std::string utc(double unix_seconds) {
  if (unix_seconds <= 0) return "";
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// A pool the blueprint declares, as verify sees it.
struct Pool {
  std::string name;
  bool burst = false;
  int count = 0;  ///< node pool count, burst pool desired
  const bp::Origin* origin = nullptr;
  nlohmann::json doc;  ///< render::node_document
};

/// The file system type /proc/mounts shows for a tier of this kind.
std::vector<std::string> fstypes(const std::string& kind) {
  if (kind == "nvme") return {"xfs"};
  if (kind == "nfs") return {"nfs", "nfs4"};
  if (kind == "weka") return {"wekafs"};
  return {kind};
}

class Checker {
 public:
  Checker(const bp::Blueprint& b, const catalog::Catalog& cat, const Options& o, Outcome& out)
      : b_(b), cat_(cat), opt_(o), out_(out) {}

  void node(const Pool& pool, const Node& n) {
    errors_ = 0;
    const nlohmann::json& d = pool.doc;
    const std::string who = "node " + n.name + " (pool " + pool.name + ")";
    if (n.probe) {
      if (n.format != kProbeFormat)
        add(pool, n, kStale, Severity::Warning,
            who + " reports probe format '" + n.format + "'; this plinth reads format " + kProbeFormat,
            "install the probe of this plinth version on the node (plinth render writes it; docs/verify.md)");
      if (n.timestamp > 0 && now() - n.timestamp > static_cast<double>(opt_.max_age_s))
        add(pool, n, kStale, Severity::Warning,
            who + ": its facts are from " + utc(n.timestamp) + ", more than " + std::to_string(opt_.max_age_s / 60) +
                " minutes old",
            "check that plinth-probe.timer runs on the node (systemctl status plinth-probe.timer) and that the node "
            "exporter serves its textfile directory");
      if (!n.stack.empty() && n.stack != d["stack"].value("name", ""))
        add(pool, n, kDriver, Severity::Error,
            who + " was provisioned with stack '" + n.stack + "', the pool now uses stack '" +
                d["stack"].value("name", "") + "'",
            "apply the blueprint so the node is reprovisioned with its pool's stack");
    } else {
      add(pool, n, kNoProbe, Severity::Warning,
          who + " reports only DCGM exporter series, no plinth-probe facts: services, RDMA, mounts and encryption "
                "are not checked",
          "reprovision the node with plinth's rendered cloud-init, or install plinth-probe (plinth verify "
          "--probe-script) with its timer");
    }
    const std::string want_driver = d["stack"].value("driver", "");
    const std::string driver = !n.dcgm_driver.empty() ? n.dcgm_driver : n.driver;
    if (n.smi_failed && n.dcgm_models.empty())
      add(pool, n, kGpus, Severity::Error,
          who + ": nvidia-smi is installed but fails, so no NVIDIA driver answers (stack driver " + want_driver + ")",
          "check the kernel module on the node (dmesg | grep -i nvrm, modinfo nvidia) and reboot after driver "
          "installs; Secure Boot rejects unsigned modules");
    else if (!driver.empty() && driver != want_driver)
      add(pool, n, kDriver, Severity::Error, who + " runs NVIDIA driver " + driver + ", the stack pins " + want_driver,
          "reinstall the pinned driver (apply the blueprint to reprovision the node) and stop unattended upgrades "
          "from moving it (apt-mark hold / dnf versionlock)");
    gpus(pool, n, who);
    if (d["nvswitch"].value("fabric_manager", false)) {
      auto it = n.services.find("nvidia-fabricmanager");
      if (it != n.services.end() && !it->second)
        add(pool, n, kFabricManager, Severity::Error,
            who + ": nvidia-fabricmanager is not active on an NVSwitch node; CUDA cannot use the GPUs until it runs",
            "systemctl enable --now nvidia-fabricmanager; its version must equal the driver's (journalctl -u "
            "nvidia-fabricmanager names a mismatch)");
    }
    mig(pool, n, who);
    rdma(pool, n, who);
    storage(pool, n, who);
    if (errors_ == 0) ++out_.nodes_matching;
  }

  void add(const Pool& pool, const Node& n, const char* code, Severity sev, std::string message, std::string hint) {
    Diagnostic diag;
    diag.code = code;
    diag.severity = sev;
    diag.message = std::move(message);
    diag.hint = std::move(hint);
    diag.address = n.name;
    if (pool.origin) diag.loc = pool.origin->loc;
    diag.show_source = false;
    if (sev == Severity::Error) ++errors_;
    out_.findings.push_back(std::move(diag));
  }

  double now() const {
    return opt_.now ? static_cast<double>(opt_.now)
                    : static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count());
  }

 private:
  void gpus(const Pool& pool, const Node& n, const std::string& who) {
    const nlohmann::json& d = pool.doc;
    std::string model;
    int count = 0;
    if (d.contains("hardware")) {
      model = d["hardware"].value("gpu", "");
      count = d["hardware"].value("gpus_per_node", 0);
    } else if (d.contains("gpu")) {
      model = d["gpu"].value("model", "");
      count = d["gpu"].value("count", 0);
    }
    if (n.smi_failed && n.dcgm_models.empty()) return;
    int seen = -1;
    std::vector<std::string> products;
    // The DCGM exporter runs on the driver, so where it reports GPUs its view
    // is the GPUs' identity; the probe's nvidia-smi facts stand in without it.
    if (!n.dcgm_models.empty()) {
      seen = static_cast<int>(n.dcgm_models.size());
      for (const auto& [i, m] : n.dcgm_models) products.push_back(m);
    } else if (n.probe && n.gpus) {
      seen = *n.gpus;
      for (const auto& [i, g] : n.gpu)
        if (!g.product.empty()) products.push_back(g.product);
    }
    if (seen >= 0 && seen != count)
      add(pool, n, kGpus, Severity::Error,
          who + " shows " + std::to_string(seen) + " GPU" + (seen == 1 ? "" : "s") + ", the pool declares " +
              std::to_string(count) + " x " + model,
          "look for a GPU that fell off the bus (nvidia-smi, dmesg | grep -i xid), reseat or replace it; or correct "
          "the pool's hardware in the blueprint");
    const catalog::GpuModel* want = cat_.gpu(model);
    std::set<std::string> wrong;
    for (const auto& p : products) {
      const catalog::GpuModel* got = cat_.gpu(p);
      if (want && got != want && ascii_lower(p) != ascii_lower(want->product_name)) wrong.insert(p);
    }
    if (!wrong.empty())
      add(pool, n, kGpus, Severity::Error,
          who + " has " + join(std::vector<std::string>(wrong.begin(), wrong.end()), ", ") + ", the pool declares " +
              model + (want ? " (" + want->product_name + ")" : ""),
          "move the node to a pool of its GPU model, or correct the pool's hardware.gpu");
    if (want && want->ecc) {
      std::vector<std::string> off;
      for (const auto& [i, g] : n.gpu)
        if (g.ecc == "Disabled") off.push_back(std::to_string(i));
      if (!off.empty())
        add(pool, n, kEcc, Severity::Warning, who + ": ECC is disabled on GPU " + join(off, ", "),
            "nvidia-smi -e 1 and reboot: without ECC, memory errors corrupt training silently");
    }
    std::vector<std::string> down;
    for (const auto& [i, g] : n.gpu)
      if (g.links_down > 0)
        down.push_back("GPU " + std::to_string(i) + " (" + std::to_string(g.links_down) + " of " +
                       std::to_string(g.links_up + g.links_down) + " down)");
    if (!down.empty())
      add(pool, n, kNvlink, Severity::Warning, who + " has inactive NVLinks: " + join(down, ", "),
          "run nvidia-smi nvlink --status and DCGM diagnostics (dcgmi diag -r 2); an NVLink down halves the "
          "collective bandwidth of that GPU");
  }

  void mig(const Pool& pool, const Node& n, const std::string& who) {
    std::map<std::string, int> want;
    if (pool.doc.contains("mig") && pool.doc["mig"].contains("per_gpu"))
      for (const auto& [prof, k] : pool.doc["mig"]["per_gpu"].items()) want[prof] = k.get<int>();
    auto layout = [](const std::map<std::string, int>& m) {  // "2 x 1g.10gb + 1 x 3g.40gb"
      std::vector<std::string> parts;
      for (const auto& [p, k] : m) parts.push_back(std::to_string(k) + " x " + p);
      return join(parts, " + ");
    };
    int want_total = 0;
    for (const auto& [p, k] : want) want_total += k;
    std::vector<std::string> differ;
    for (const auto& [i, g] : n.gpu) {
      if (i < 0) continue;
      const bool enabled = g.mig_mode == "Enabled" || g.mig_devices > 0 || !g.profiles.empty();
      const std::string gpu = "GPU " + std::to_string(i);
      if (want.empty()) {
        if (enabled) {
          std::string what = !g.profiles.empty()           ? layout(g.profiles)
                             : !g.gpu_instances.empty()    ? std::to_string(g.gpu_instances.size()) + " GPU instances"
                                                           : "MIG mode on";
          differ.push_back(gpu + ": " + what);
        }
        continue;
      }
      if (g.mig_mode == "Disabled" && g.profiles.empty()) {
        differ.push_back(gpu + ": MIG mode off");
      } else if (!g.profiles.empty()) {
        if (g.profiles != want) differ.push_back(gpu + ": " + layout(g.profiles));
      } else if (!g.gpu_instances.empty() && static_cast<int>(g.gpu_instances.size()) != want_total) {
        differ.push_back(gpu + ": " + std::to_string(g.gpu_instances.size()) + " GPU instances");
      } else if (g.gpu_instances.empty() && g.mig_mode == "Enabled" && n.probe) {
        differ.push_back(gpu + ": MIG mode on, no GPU instances");
      }
    }
    if (differ.empty()) return;
    const std::string declared = want.empty() ? "no MIG" : layout(want) + " per GPU";
    add(pool, n, kMig, Severity::Error, who + " has a MIG layout the blueprint does not declare (" + join(differ, "; ") +
                                            "); the pool declares " + declared,
        want.empty() ? "disable MIG (nvidia-smi -mig 0, then reboot or reset the GPUs) or declare the layout under the "
                       "pool's mig:"
                     : "restart plinth-mig.service (it applies the declared layout) after draining the node");
  }

  void rdma(const Pool& pool, const Node& n, const std::string& who) {
    const nlohmann::json& d = pool.doc;
    if (!d.contains("rdma") || !n.probe) return;
    const std::string kind = d["rdma"].value("kind", "");
    const bp::Fabric* f = b_.find_fabric(d["rdma"].value("fabric", ""));
    const std::string layer = kind == "infiniband" ? "InfiniBand" : "Ethernet";
    int active = 0;
    std::vector<std::string> slow;
    for (const auto& [key, p] : n.ports) {
      if (p.layer != layer) continue;
      if (p.state != "ACTIVE") continue;
      ++active;
      if (f && f->speed_gbps > 0 && p.rate < f->speed_gbps)
        slow.push_back(key + " at " + std::to_string(static_cast<int>(p.rate)) + " Gb/s");
    }
    if (active == 0)
      add(pool, n, kRdma, Severity::Error,
          who + " has no active " + layer + " RDMA port on fabric '" + d["rdma"].value("fabric", "") + "'",
          "check the cabling and the subnet manager (ibstat; for RoCE the switch port and PFC settings)");
    if (!slow.empty())
      add(pool, n, kRdma, Severity::Error,
          who + ": " + join(slow, ", ") + ", below the fabric's " + std::to_string(f->speed_gbps) + " Gb/s",
          "a port that trains at a lower rate (HDR instead of NDR) has a bad cable or transceiver; replace it");
    auto pm = n.modules.find("nvidia_peermem");
    if (d["rdma"].value("peermem", false) && pm != n.modules.end() && !pm->second)
      add(pool, n, kRdma, Severity::Error, who + ": nvidia_peermem is not loaded, so GPUDirect RDMA is off",
          "modprobe nvidia-peermem (it must be built against the running DOCA-OFED; reinstall the driver after "
          "OFED updates)");
  }

  void storage(const Pool& pool, const Node& n, const std::string& who) {
    if (!n.probe || n.mounts.empty()) return;
    for (const auto& t : pool.doc["storage"]) {
      const std::string point = t.value("mount", "");
      if (point.empty()) continue;
      const std::string kind = t.contains("fs") ? t.value("fs", "") : t.value("kind", "");
      auto it = n.mounts.find(point);
      const std::string tier = "storage tier '" + t.value("name", "") + "'";
      if (it == n.mounts.end()) {
        add(pool, n, kMount, Severity::Error, who + ": " + tier + " is not mounted at " + point,
            "run /usr/local/sbin/plinth-mount or plinth-nvme again (journalctl -u cloud-final names why it stopped)");
        continue;
      }
      auto types = fstypes(kind);
      if (std::find(types.begin(), types.end(), it->second.fstype) == types.end())
        add(pool, n, kMount, Severity::Error,
            who + ": " + point + " is " + it->second.fstype + " from " + it->second.source + ", " + tier + " is " +
                kind,
            "unmount what is there and mount the tier (plinth-mount / plinth-nvme)");
      if (t.value("luks", false) && it->second.encrypted && !*it->second.encrypted) {
        add(pool, n, kEncryption, Severity::Error,
            who + ": " + tier + " is declared encrypted at rest, but " + point + " (" + it->second.source +
                ") is not on dm-crypt",
            "move the data off, then let plinth-nvme set the tier up with LUKS2 (it never reformats an existing "
            "array)");
        unencrypted_.insert(n.name);
      } else if (t.value("luks", false) && it->second.encrypted) {
        encrypted_.insert(n.name);
      }
    }
  }

 public:
  std::set<std::string> encrypted_, unencrypted_;

 private:
  const bp::Blueprint& b_;
  const catalog::Catalog& cat_;
  const Options& opt_;
  Outcome& out_;
  int errors_ = 0;
};

}  // namespace

const std::vector<Rule>& rules() {
  static const std::vector<Rule> r = {
      {kMissing, Severity::Error, "A declared node does not report",
       "check that the node is up, that its node exporter (and DCGM exporter) is scraped, and that plinth-probe "
       "runs; a burst pool below `desired` is a warning"},
      {kUndeclared, Severity::Error, "A node reports that the blueprint does not declare",
       "remove the node (plinth apply deletes what the blueprint no longer declares) or declare it"},
      {kDriver, Severity::Error, "The node runs another NVIDIA driver (or stack) than its pool pins",
       "reprovision the node; hold the driver packages so unattended upgrades cannot move them"},
      {kGpus, Severity::Error, "GPU count or model differs, or nvidia-smi fails",
       "find the GPU that fell off the bus (dmesg, Xid errors) or correct hardware: in the blueprint"},
      {kFabricManager, Severity::Error, "nvidia-fabricmanager is not active on an NVSwitch node",
       "systemctl enable --now nvidia-fabricmanager, at the driver's version"},
      {kMig, Severity::Error, "The MIG layout differs from the pool's mig:",
       "restart plinth-mig.service after draining the node, or declare the layout"},
      {kNvlink, Severity::Warning, "NVLinks are inactive", "run DCGM diagnostics; service the GPU baseboard"},
      {kRdma, Severity::Error, "RDMA ports down or slower than the fabric, or nvidia_peermem not loaded",
       "check cables, transceivers and the subnet manager; load nvidia-peermem"},
      {kMount, Severity::Error, "A storage tier is not mounted where and as declared",
       "run plinth-mount / plinth-nvme again and read why it stopped"},
      {kEncryption, Severity::Error, "A tier declared encrypted at rest is not on dm-crypt",
       "recreate the tier with LUKS2 (plinth-nvme)"},
      {kEcc, Severity::Warning, "ECC is disabled on a GPU that has it", "nvidia-smi -e 1, then reboot"},
      {kStale, Severity::Warning, "The node's facts are stale or in an unknown probe format",
       "check plinth-probe.timer and the node exporter's textfile directory"},
      {kNoProbe, Severity::Warning, "Only DCGM exporter series: the probe does not report",
       "install plinth-probe (plinth verify --probe-script) and its timer"},
  };
  return r;
}

Result<Outcome> compare(const bp::Blueprint& blueprint, const catalog::Catalog& catalog,
                        const std::vector<Sample>& samples, const Options& options) {
  std::vector<Pool> pools;
  std::vector<std::string> names;
  for (const auto& p : blueprint.node_pools) names.push_back(p.name);
  for (const auto& p : blueprint.burst_pools) names.push_back(p.name);
  if (!options.pool.empty() && std::find(names.begin(), names.end(), options.pool) == names.end())
    return Error::invalid("unknown pool '" + options.pool + "'; " + did_you_mean(options.pool, names));
  for (const auto& p : blueprint.node_pools)
    pools.push_back({p.name, false, p.count, &p.origin, {}});
  for (const auto& p : blueprint.burst_pools)
    pools.push_back({p.name, true, p.desired, &p.origin, {}});
  for (auto& p : pools) {
    auto doc = render::node_document(blueprint, p.name, catalog);
    if (!doc) return Error::invalid("pool '" + p.name + "': " + doc.error().message);
    p.doc = std::move(*doc);
  }

  Outcome out;
  Checker check(blueprint, catalog, options, out);
  std::map<std::string, Node> nodes = gather(samples);
  std::set<std::string> claimed;
  double newest = 0;
  int services_seen = 0, auditd = 0;
  double newest_services = 0, newest_crypt = 0;
  int crypt_nodes = 0;

  auto pool_of = [&](const Node& n) -> const Pool* {
    if (!n.pool.empty()) {
      for (const auto& p : pools)
        if (p.name == n.pool) return &p;
      return nullptr;
    }
    for (const auto& p : pools) {  // DCGM only: the host name says (POOL-INDEX)
      const std::string prefix = p.name + "-";
      if (!p.burst && n.name.size() > prefix.size() && n.name.rfind(prefix, 0) == 0 &&
          n.name.find_first_not_of("0123456789", prefix.size()) == std::string::npos)
        return &p;
    }
    return nullptr;
  };

  for (const auto& p : pools) {
    if (!options.pool.empty() && p.name != options.pool) continue;
    out.pools.push_back(p.name);
    out.nodes_declared += p.count;
    std::vector<const Node*> mine;  // the nodes of this pool that report
    if (!p.burst) {
      for (int i = 0; i < p.count; ++i) {
        const std::string name = node_name(p.name, i);
        out.checked.push_back(name);
        auto it = nodes.find(name);
        if (it == nodes.end()) {
          Node ghost;
          ghost.name = name;
          check.add(p, ghost, kMissing, Severity::Error,
                    "node " + name + " (pool " + p.name + ") is declared but reports nothing: no plinth-probe or "
                    "DCGM exporter series",
                    "check that the node is up and that Prometheus scrapes its node exporter (up{instance=...}); "
                    "a node that never booted its rendered cloud-init has no probe");
          continue;
        }
        if (it->second.probe && !it->second.pool.empty() && it->second.pool != p.name) continue;  // another pool's
        mine.push_back(&it->second);
        claimed.insert(name);
      }
    } else {
      for (const auto& [name, n] : nodes)
        if (n.pool == p.name) {
          mine.push_back(&n);
          claimed.insert(name);
          out.checked.push_back(name);
        }
      const int seen = static_cast<int>(mine.size());
      if (seen < p.count) {
        Node pool_node;
        pool_node.name = p.name;
        check.add(p, pool_node, kMissing, Severity::Warning,
                  "burst pool " + p.name + ": " + std::to_string(seen) + " of its " + std::to_string(p.count) +
                      " desired nodes report",
                  "check the cloud's instances of the pool (plinth refresh) and that Prometheus discovers them");
      }
    }
    out.nodes_seen += static_cast<int>(mine.size());
    for (const Node* node : mine) {
      const Node& n = *node;
      check.node(p, n);
      newest = std::max(newest, n.timestamp);
      if (!n.services.empty()) {
        ++services_seen;
        auto a = n.services.find("auditd");
        if (a != n.services.end() && a->second) ++auditd;
        newest_services = std::max(newest_services, n.timestamp);
      }
    }
  }
  // Nodes that report and that no checked pool declares.
  for (const auto& [name, n] : nodes) {
    if (claimed.count(name)) continue;
    const Pool* owner = pool_of(n);
    if (!options.pool.empty() && (!owner || owner->name != options.pool) && n.pool != options.pool) continue;
    Pool none{n.pool.empty() ? "?" : n.pool, false, 0, nullptr, {}};
    std::string why;
    if (!owner)
      why = n.pool.empty() ? "its name matches no node pool" : "its pool '" + n.pool + "' is not in the blueprint";
    else
      why = "pool " + owner->name + " declares " + std::to_string(owner->count) + " nodes (" + owner->name + "-0 to " +
            owner->name + "-" + std::to_string(owner->count - 1) + ")";
    check.add(owner ? *owner : none, n, kUndeclared, Severity::Error,
              "node " + name + " reports, but the blueprint does not declare it: " + why,
              "delete the node or declare it; a node the blueprint lost is one nobody patches");
  }
  std::set<std::string> mounting = check.encrypted_;
  mounting.insert(check.unencrypted_.begin(), check.unencrypted_.end());
  const int crypt_of = static_cast<int>(mounting.size());
  for (const auto& name : check.encrypted_)
    if (!check.unencrypted_.count(name)) {
      ++crypt_nodes;
      newest_crypt = std::max(newest_crypt, nodes.at(name).timestamp);
    }
  if (crypt_of > 0)
    out.observations.push_back(
        {"encryption_at_rest",
         "Tiers declared encrypted at rest are mounted on dm-crypt (LUKS2) on " + std::to_string(crypt_nodes) + " of " +
             std::to_string(crypt_of) + " nodes that mount them",
         {"hipaa:164.312(a)(2)(iv)", "soc2:CC6.1", "gdpr:Art.32"},
         crypt_nodes,
         crypt_of,
         utc(newest_crypt)});
  if (services_seen > 0)
    out.observations.push_back({"audit_logging",
                                "auditd is active on " + std::to_string(auditd) + " of " +
                                    std::to_string(services_seen) + " nodes that report their services",
                                {"hipaa:164.312(b)", "soc2:CC7.2"},
                                auditd,
                                services_seen,
                                utc(newest_services)});
  if (out.nodes_declared > 0)
    out.observations.push_back({"configuration",
                                std::to_string(out.nodes_matching) + " of " + std::to_string(out.nodes_declared) +
                                    " declared nodes run what the blueprint declares (plinth verify)",
                                {"soc2:CC7.1"},
                                out.nodes_matching,
                                out.nodes_declared,
                                utc(newest)});
  out.newest = utc(newest);
  std::stable_sort(out.findings.begin(), out.findings.end(), [](const Diagnostic& a, const Diagnostic& b) {
    if (a.address != b.address) return a.address < b.address;
    return a.code < b.code;
  });
  return out;
}

}  // namespace plinth::verify
