// Renders a pool's stack into cloud-init user-data and network config v2.
//
// The output is written by hand (not through a YAML emitter): render_pool runs
// once per pool on every plan, and hand-built text keeps it fast and lets us
// choose block styles and comments. Every user-supplied string lands either in
// a double-quoted YAML scalar (JSON escaping, which YAML accepts) or, after a
// character check, in a shell word / file name.
#include "engine/render/render.h"

#include <algorithm>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/core/hash.h"
#include "engine/core/strings.h"

namespace plinth::render {
namespace {

/// NVIDIA's CUDA repository signing key (3bf863cc.pub, rotated April 2022).
constexpr const char* kCudaRepoKeyId = "EB693B3035CD5710E231E123A4B469963BF863CC";
constexpr const char* kKeyServer = "keyserver.ubuntu.com";

/// What the renderer needs of a node pool or a burst pool.
struct PoolView {
  std::string name;
  bool burst = false;
  std::string provider;
  const bp::Stack* stack = nullptr;
  std::vector<const bp::Vlan*> vlans;          ///< sorted by VLAN id
  std::vector<const bp::StorageTier*> tiers;   ///< sorted by name
  nlohmann::json identity;                     ///< pool-specific part of node.json
  std::string mig_profile;                     ///< "" = no MIG
  int mig_instances = 0;
  std::string ubuntu = "22.04";
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

Result<PoolView> view_pool(const bp::Blueprint& b, const std::string& name) {
  PoolView v;
  v.name = name;
  const std::vector<std::string>* networks = nullptr;
  const std::vector<std::string>* storage = nullptr;
  std::string stack;
  if (const bp::NodePool* p = b.find_node_pool(name)) {
    v.provider = p->provider;
    stack = p->stack;
    networks = &p->networks;
    storage = &p->storage;
    if (p->mig.profile != "none" && !p->mig.profile.empty()) {
      if (p->mig.instances <= 0)
        return Error::invalid("node pool '" + name + "' sets mig.profile '" + p->mig.profile +
                              "' but no instances; set mig.instances to the number of instances per GPU");
      if (!all_of_chars(p->mig.profile, ".+"))
        return Error::invalid("node pool '" + name + "' has MIG profile '" + p->mig.profile +
                              "', which is not a profile name such as 3g.40gb");
      v.mig_profile = p->mig.profile;
      v.mig_instances = p->mig.instances;
    }
    if (p->boot && (p->boot->image.find("24.04") != std::string::npos || p->boot->image.find("noble") != std::string::npos))
      v.ubuntu = "24.04";
    v.identity = {{"kind", "node_pool"}, {"role", p->role}, {"count", p->count}, {"fabric", p->fabric},
                  {"hardware", {{"gpu", p->hardware.gpu}, {"gpus_per_node", p->hardware.gpus_per_node},
                                {"cpu_cores", p->hardware.cpu_cores}, {"memory_gb", p->hardware.memory_gb}}},
                  {"mig", {{"profile", p->mig.profile}, {"instances", p->mig.instances}}}};
  } else if (const bp::BurstPool* bpool = b.find_burst_pool(name)) {
    v.burst = true;
    v.provider = bpool->provider;
    stack = bpool->stack;
    networks = &bpool->networks;
    storage = &bpool->storage;
    v.identity = {{"kind", "burst_pool"}, {"region", bpool->region}, {"zone", bpool->zone},
                  {"instance_type", bpool->instance_type}, {"spot", bpool->spot}};
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

  v.stack = b.find_stack(stack);
  if (!v.stack) return Error::invalid("pool '" + name + "' uses stack '" + stack + "', which is not defined; " + did_you_mean(stack, [&] {
                                         std::vector<std::string> s;
                                         for (const auto& st : b.stacks) s.push_back(st.name);
                                         return s;
                                       }()));
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
  return v;
}

bool luks_tier(const bp::StorageTier& t) {
  return t.kind == "nvme" && t.encryption && (t.encryption->at_rest == "aes-256-xts" || t.encryption->at_rest == "luks2");
}

/// The image's repository ends in "/dcgm-exporter" (any registry, tag or digest).
bool is_dcgm_exporter(std::string_view image) {
  size_t end = image.find('@');
  std::string_view repo = image.substr(0, end);
  size_t colon = repo.rfind(':');
  if (colon != std::string_view::npos && repo.find('/', colon) == std::string_view::npos) repo = repo.substr(0, colon);
  constexpr std::string_view suffix = "/dcgm-exporter";
  return repo.size() >= suffix.size() && repo.substr(repo.size() - suffix.size()) == suffix;
}

/// The apt packages and preferences for a stack: the driver branch's
/// cuda-drivers meta package, cuda-toolkit-X-Y, cuDNN, the container toolkit.
struct AptPlan {
  std::vector<std::string> packages;
  std::string preferences;
};

void pin(std::string& prefs, const std::string& why, const std::string& packages, const std::string& version) {
  if (!prefs.empty()) prefs += '\n';
  prefs += "Explanation: " + why + "\nPackage: " + packages + "\nPin: version " + version + "\nPin-Priority: 1001\n";
}

Result<AptPlan> apt_plan(const bp::Stack& s) {
  const std::string where = "stack '" + s.name + "'";
  if (!numeric_version(s.driver))
    return Error::invalid(where + " pins driver '" + s.driver + "'; give the exact NVIDIA driver version, e.g. \"550.54.15\"");
  auto cuda = split_dots(s.cuda);
  if (!numeric_version(s.cuda) || cuda.size() < 2 || cuda.size() > 3)
    return Error::invalid(where + " pins CUDA '" + s.cuda + "'; give major.minor, e.g. \"12.4\"");
  AptPlan a;
  const std::string branch = split_dots(s.driver).front();
  const std::string toolkit = "cuda-toolkit-" + cuda[0] + "-" + cuda[1];
  a.packages = {"cuda-drivers-" + branch, toolkit};
  pin(a.preferences, "plinth: NVIDIA container toolkit " + std::string(kContainerToolkitVersion),
      "nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container1 libnvidia-container-tools",
      std::string(kContainerToolkitVersion) + "-*");
  pin(a.preferences, "plinth: " + where + " pins NVIDIA driver " + s.driver,
      "cuda-drivers cuda-drivers-* nvidia-* libnvidia-* xserver-xorg-video-nvidia-*", s.driver + "-*");
  if (cuda.size() == 3) pin(a.preferences, "plinth: " + where + " pins CUDA " + s.cuda, toolkit, s.cuda + "-*");
  if (!s.cudnn.empty()) {
    auto cudnn = split_dots(s.cudnn);
    if (!numeric_version(s.cudnn) || cudnn.size() < 2 || (cudnn[0] != "8" && cudnn[0] != "9"))
      return Error::invalid(where + " pins cuDNN '" + s.cudnn +
                            "'; the NVIDIA CUDA repository packages cuDNN 8.x and 9.x, give e.g. \"9.1.0\"");
    const std::string version = cudnn.size() == 4 ? s.cudnn + "-*" : s.cudnn + ".*";
    if (cudnn[0] == "9") {
      const std::string suffix = "-cuda-" + cuda[0];
      a.packages.push_back("libcudnn9" + suffix);
      a.packages.push_back("libcudnn9-dev" + suffix);
      pin(a.preferences, "plinth: " + where + " pins cuDNN " + s.cudnn, "libcudnn9* cudnn9*", version);
    } else {
      a.packages.push_back("libcudnn8");
      a.packages.push_back("libcudnn8-dev");
      pin(a.preferences, "plinth: " + where + " pins cuDNN " + s.cudnn, "libcudnn8 libcudnn8-dev",
          version + "+cuda" + cuda[0] + ".*");
    }
  }
  a.packages.push_back("nvidia-container-toolkit");
  a.packages.push_back("docker.io");
  return a;
}

constexpr std::string_view kLuksScript = R"SH(#!/bin/sh
# plinth-luks TIER KEY_FILE MOUNT_POINT (written by plinth render)
# Puts storage tier TIER on this node's blank NVMe namespaces (no partitions, no
# filesystem, RAID or LUKS signature) as one RAID 0 array encrypted with LUKS2,
# AES-256-XTS (aes-xts-plain64, 512-bit key), keyed from KEY_FILE, and mounts it at
# MOUNT_POINT. Idempotent: an existing array is opened, never reformatted.
set -eu
tier=$1 key=$2 mnt=$3
name=plinth-$tier
md=/dev/md/$name
if [ ! -r "$key" ]; then
  echo "plinth-luks: key file $key for tier $tier is missing; place it (mode 0400) and run: $0 $tier $key $mnt" >&2
  exit 1
fi
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
    echo "plinth-luks: no blank NVMe namespace left for tier $tier" >&2
    exit 1
  fi
  mdadm --create "$md" --run --force --level=0 --raid-devices="$#" "$@"
  mdadm --detail --brief "$md" >> /etc/mdadm/mdadm.conf
  cryptsetup luksFormat --batch-mode --type luks2 --cipher aes-xts-plain64 --key-size 512 --key-file "$key" "$md"
fi
[ -e "/dev/mapper/$name" ] || cryptsetup open --type luks2 --key-file "$key" "$md" "$name"
blkid "/dev/mapper/$name" >/dev/null 2>&1 || mkfs.xfs -q "/dev/mapper/$name"
grep -q "^$name " /etc/crypttab 2>/dev/null || echo "$name $md $key luks,discard" >> /etc/crypttab
grep -q "^/dev/mapper/$name " /etc/fstab || echo "/dev/mapper/$name $mnt xfs defaults,nofail 0 2" >> /etc/fstab
mkdir -p "$mnt"
mountpoint -q "$mnt" || mount "$mnt"
)SH";

std::string mig_script(const PoolView& v) {
  std::string layout;
  for (int i = 0; i < v.mig_instances; ++i) layout += (i ? "," : "") + v.mig_profile;
  return "#!/bin/sh\n# plinth: MIG layout of pool " + v.name + ": " + std::to_string(v.mig_instances) + " x " +
         v.mig_profile +
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
         shq(layout) + " -C\n";
}

constexpr std::string_view kMigUnit = R"([Unit]
Description=plinth: create the pool's MIG instances
After=nvidia-persistenced.service
Before=docker.service dcgm-exporter.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/plinth-mig

[Install]
WantedBy=multi-user.target
)";

std::string dcgm_unit(const std::string& image, bool mig) {
  return std::string("[Unit]\nDescription=NVIDIA DCGM exporter: GPU metrics for Prometheus on :9400\n") +
         "After=docker.service nvidia-persistenced.service" + (mig ? " plinth-mig.service" : "") +
         "\nRequires=docker.service\n\n"
         "[Service]\n"
         "ExecStartPre=-/usr/bin/docker rm --force dcgm-exporter\n"
         "ExecStart=/usr/bin/docker run --rm --name dcgm-exporter --gpus all --cap-add SYS_ADMIN --publish 9400:9400 " +
         image +
         "\nExecStop=/usr/bin/docker stop dcgm-exporter\n"
         "Restart=always\n"
         "RestartSec=10\n\n"
         "[Install]\n"
         "WantedBy=multi-user.target\n";
}

std::string network_config(const PoolView& v) {
  if (v.burst || v.vlans.empty()) return "";
  int mtu = 0;
  for (const auto* vlan : v.vlans) mtu = std::max(mtu, vlan->mtu);
  const std::string m = std::to_string(mtu);
  std::string out;
  out.reserve(512 + 160 * v.vlans.size());
  out += "# plinth: network config v2 for pool " + v.name +
         ": Ethernet uplinks (en*) bonded with LACP into bond0,\n"
         "# one tagged VLAN per network on bond0, addresses by DHCP from each VLAN's CIDR.\n"
         "version: 2\n"
         "ethernets:\n"
         "  uplinks:\n"
         "    match:\n"
         "      name: \"en*\"\n"
         "    mtu: " + m + "\n"
         "bonds:\n"
         "  bond0:\n"
         "    interfaces: [uplinks]\n"
         "    mtu: " + m + "\n"
         "    dhcp4: true\n"
         "    parameters:\n"
         "      mode: 802.3ad\n"
         "      lacp-rate: fast\n"
         "      mii-monitor-interval: 100\n"
         "      transmit-hash-policy: layer3+4\n"
         "vlans:\n";
  for (const auto* vlan : v.vlans) {
    const std::string id = std::to_string(vlan->id);
    out += "  vlan" + id + ":  # " + vlan->name + " " + vlan->cidr + (vlan->purpose.empty() ? "" : " (" + vlan->purpose + ")") + "\n";
    out += "    id: " + id + "\n    link: bond0\n    mtu: " + std::to_string(vlan->mtu) + "\n    dhcp4: true\n";
  }
  return out;
}

}  // namespace

Result<CloudInit> render_pool(const bp::Blueprint& blueprint, const std::string& pool) {
  auto viewed = view_pool(blueprint, pool);
  if (!viewed) return viewed.error();
  const PoolView& v = *viewed;
  const bp::Stack& s = *v.stack;
  auto apt = apt_plan(s);
  if (!apt) return apt.error();

  for (const auto& image : s.images)
    if (!all_of_chars(image, "._-/:@"))
      return Error::invalid("stack '" + s.name + "' lists image '" + image +
                            "', which is not a registry/repository[:tag][@sha256:digest] reference");
  std::vector<const bp::StorageTier*> luks;
  for (const auto* t : v.tiers) {
    if (!luks_tier(*t)) continue;
    if (!safe_name(t->name))
      return Error::invalid("storage tier '" + t->name + "' cannot name a LUKS device; use letters, digits, '.', '_' and '-'");
    luks.push_back(t);
  }
  const bool dcgm = blueprint.monitoring && blueprint.monitoring->dcgm;
  std::string dcgm_image = kDefaultDcgmExporterImage;
  for (const auto& image : s.images)
    if (is_dcgm_exporter(image)) {
      dcgm_image = image;
      break;
    }
  const bool mig = !v.mig_profile.empty();

  nlohmann::json node = v.identity;
  node["blueprint"] = blueprint.metadata.name;
  node["pool"] = v.name;
  node["provider"] = v.provider;
  node["os"] = "ubuntu-" + v.ubuntu;
  node["stack"] = {{"name", s.name}, {"driver", s.driver}, {"cuda", s.cuda}, {"cudnn", s.cudnn},
                   {"frameworks", s.frameworks}, {"images", s.images}};
  node["networks"] = nlohmann::json::array();
  for (const auto* vlan : v.vlans)
    node["networks"].push_back({{"name", vlan->name}, {"vlan", vlan->id}, {"cidr", vlan->cidr}, {"mtu", vlan->mtu}});
  node["storage"] = nlohmann::json::array();
  for (const auto* t : v.tiers)
    node["storage"].push_back({{"name", t->name}, {"kind", t->kind}, {"luks", luks_tier(*t)},
                               {"mount", luks_tier(*t) ? "/mnt/" + t->name : ""}});
  node["monitoring"] = {{"dcgm_exporter", dcgm ? dcgm_image : ""}};

  std::string ud;
  ud.reserve(8192);
  ud += "#cloud-config\n";
  ud += "# plinth: " + std::string(v.burst ? "burst" : "node") + " pool " + q(v.name) + " (" + v.provider +
        ") of blueprint " + q(blueprint.metadata.name) + ", stack " + q(s.name) +
        ".\n# Generated by `plinth render`; change the blueprint, not this file.\n";
  const std::string repo = v.ubuntu == "24.04" ? "ubuntu2404" : "ubuntu2204";
  ud += "package_update: true\n"
        "apt:\n"
        "  sources:\n"
        "    nvidia-cuda.list:\n"
        "      source: \"deb [signed-by=$KEY_FILE] https://developer.download.nvidia.com/compute/cuda/repos/" +
        repo + "/x86_64/ /\"\n      keyid: \"" + kCudaRepoKeyId + "\"\n      keyserver: \"" + kKeyServer + "\"\n";

  ud += "write_files:\n";
  write_file(ud, "/etc/apt/preferences.d/plinth-nvidia.pref", "0644", apt->preferences);
  write_file(ud, "/etc/plinth/node.json", "0644", node.dump(2) + "\n");
  if (!luks.empty()) write_file(ud, "/usr/local/sbin/plinth-luks", "0755", kLuksScript);
  if (mig) {
    write_file(ud, "/usr/local/sbin/plinth-mig", "0755", mig_script(v));
    write_file(ud, "/etc/systemd/system/plinth-mig.service", "0644", kMigUnit);
  }
  if (dcgm) write_file(ud, "/etc/systemd/system/dcgm-exporter.service", "0644", dcgm_unit(dcgm_image, mig));

  ud += "runcmd:\n";
  run(ud, {"sh", "-c", "DEBIAN_FRONTEND=noninteractive apt-get install -y linux-headers-$(uname -r)"});
  std::vector<std::string> install = {"env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "--no-install-recommends"};
  install.insert(install.end(), apt->packages.begin(), apt->packages.end());
  if (!luks.empty()) install.insert(install.end(), {"cryptsetup", "mdadm", "xfsprogs"});
  run(ud, install);
  for (const auto* t : luks) run(ud, {"/usr/local/sbin/plinth-luks", t->name, "/etc/plinth/keys/" + t->name + ".key", "/mnt/" + t->name});
  run(ud, {"nvidia-ctk", "runtime", "configure", "--runtime=docker"});
  run(ud, {"systemctl", "restart", "docker"});
  for (const auto& image : s.images) run(ud, {"docker", "pull", image});
  if (dcgm && dcgm_image == kDefaultDcgmExporterImage) run(ud, {"docker", "pull", dcgm_image});
  if (mig) run(ud, {"systemctl", "enable", "plinth-mig.service"});
  if (dcgm) run(ud, {"systemctl", "enable", "dcgm-exporter.service"});
  ud += "power_state:\n"
        "  mode: reboot\n"
        "  message: " + q("plinth: rebooting to load NVIDIA driver " + s.driver) + "\n"
        "  timeout: 30\n"
        "  condition: true\n";

  CloudInit out;
  out.user_data = std::move(ud);
  out.network_config = network_config(v);
  out.hash = sha256_hex(out.user_data + out.network_config);
  return out;
}

}  // namespace plinth::render
