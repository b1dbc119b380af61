#include "engine/blueprint/blueprint.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include "engine/core/ipv4.h"
#include "engine/core/strings.h"

namespace plinth::bp {

namespace {
template <typename T>
const T* find_named(const std::vector<T>& v, const std::string& name) {
  auto it = std::find_if(v.begin(), v.end(), [&](const T& x) { return x.name == name; });
  return it == v.end() ? nullptr : &*it;
}
}  // namespace

const Stack* Blueprint::find_stack(const std::string& n) const { return find_named(stacks, n); }
const Vlan* Blueprint::find_vlan(const std::string& n) const { return find_named(vlans, n); }
const Fabric* Blueprint::find_fabric(const std::string& n) const { return find_named(fabrics, n); }
const StorageTier* Blueprint::find_tier(const std::string& n) const { return find_named(tiers, n); }
const NodePool* Blueprint::find_node_pool(const std::string& n) const { return find_named(node_pools, n); }
const BurstPool* Blueprint::find_burst_pool(const std::string& n) const { return find_named(burst_pools, n); }
const ProviderDecl* Blueprint::find_provider(const std::string& n) const { return find_named(providers, n); }

namespace {

// The OS one path component names ("rocky-9.4-ml.iso" -> "rocky-9"), or "".
std::string os_in(const std::string& part) {
  auto major_after = [&](std::string_view word) -> std::string {
    size_t at = part.find(word);
    if (at == std::string::npos) return "";
    for (size_t i = at + word.size(); i < part.size(); ++i)
      if (std::isdigit(static_cast<unsigned char>(part[i]))) return std::string(1, part[i]);
    return "";
  };
  for (std::string_view family : {"rocky", "rhel", "redhat", "red-hat"}) {
    std::string major = major_after(family);
    if (major == "8" || major == "9") return (family == "rocky" ? "rocky-" : "rhel-") + major;
  }
  if (part.find("24.04") != std::string::npos || part.find("noble") != std::string::npos) return "ubuntu-24.04";
  if (part.find("22.04") != std::string::npos || part.find("jammy") != std::string::npos) return "ubuntu-22.04";
  return "";
}

}  // namespace

std::string os_from_image(std::string image) {
  std::transform(image.begin(), image.end(), image.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // Only the path names the image: skip "scheme://host".
  if (size_t scheme = image.find("://"); scheme != std::string::npos) {
    size_t path = image.find('/', scheme + 3);
    image = path == std::string::npos ? "" : image.substr(path);
  }
  // The last component that names an OS: ".../ubuntu-24.04/", ".../rocky-9.4/vmlinuz".
  std::vector<std::string> parts;
  for (size_t start = 0; start <= image.size();) {
    size_t end = image.find('/', start);
    if (end == std::string::npos) end = image.size();
    parts.push_back(image.substr(start, end - start));
    start = end + 1;
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it)
    if (std::string os = os_in(*it); !os.empty()) return os;
  return "";
}

std::string operating_system(const NodePool& p) {
  if (!p.os.empty()) return p.os;
  std::string from_image = p.boot ? os_from_image(p.boot->image) : "";
  return from_image.empty() ? "ubuntu-22.04" : from_image;
}

std::string operating_system(const BurstPool& p) { return p.os.empty() ? "ubuntu-22.04" : p.os; }

std::vector<std::string> candidate_types(const BurstPool& p, const std::string& fallback_setting) {
  std::vector<std::string> types = {p.instance_type};
  if (!fallback_setting.empty())
    if (const auto it = p.settings.find(fallback_setting); it != p.settings.end() && it->is_array())
      for (const auto& t : *it)
        if (t.is_string() && std::find(types.begin(), types.end(), t.get<std::string>()) == types.end())
          types.push_back(t.get<std::string>());
  return types;
}

bool rhel_family(const std::string& os) { return os.rfind("rhel-", 0) == 0 || os.rfind("rocky-", 0) == 0; }

bool vlan_holds(const Vlan& v, const std::string& address) {
  auto ip = parse_ipv4(address);
  auto range = parse_cidr(v.cidr);
  return ip && range && range->contains(*ip);
}

std::string secure_boot_attribute(const NodePool& p) {
  for (const auto& [key, value] : p.bios) {
    const std::string k = ascii_lower(key), v = ascii_lower(value);
    if (k.rfind("secureboot", 0) == 0 && (v == "enabled" || v == "on" || v == "true" || v == "1")) return key;
  }
  return "";
}

std::string rdma_stack(const Fabric& f, const std::string& os) {
  if (!f.rdma_stack.empty()) return f.rdma_stack;
  return rhel_family(os) ? "inbox" : "doca-ofed";
}

std::vector<LustreNid> lustre_nids(const std::string& export_) {
  std::vector<LustreNid> out;
  const size_t fs = export_.find(":/");
  if (fs == std::string::npos) return out;
  const std::string servers = export_.substr(0, fs);
  size_t start = 0;
  while (start <= servers.size()) {
    size_t end = servers.find_first_of(",:", start);
    if (end == std::string::npos) end = servers.size();
    const std::string nid = servers.substr(start, end - start);
    if (const size_t at = nid.find('@'); at != std::string::npos && at > 0 && at + 1 < nid.size()) {
      LustreNid n{nid.substr(0, at), "", nid.substr(at + 1)};
      n.lnd = n.net;
      while (!n.lnd.empty() && n.lnd.back() >= '0' && n.lnd.back() <= '9') n.lnd.pop_back();
      out.push_back(std::move(n));
    }
    start = end + 1;
  }
  return out;
}

std::vector<EntityOrigin> entity_origins(const Blueprint& b) {
  std::vector<EntityOrigin> out;
  auto add = [&](const char* kind, const std::string& name, const Origin& o) { out.push_back({kind, name, &o}); };
  add("metadata", "", b.metadata.origin);
  for (const auto& s : b.stacks) add("stack", s.name, s.origin);
  for (const auto& v : b.vlans) add("vlan", v.name, v.origin);
  for (const auto& f : b.fabrics) add("fabric", f.name, f.origin);
  for (const auto& t : b.tiers) add("tier", t.name, t.origin);
  for (const auto& k : b.backups) add("backup", k.name, k.origin);
  for (const auto& p : b.node_pools) add("pool", p.name, p.origin);
  for (const auto& p : b.burst_pools) add("burst", p.name, p.origin);
  for (const auto& n : b.access.namespaces) add("namespace", n.name, n.origin);
  for (const auto& r : b.access.roles) add("role", r.name, r.origin);
  if (b.access.audit_logging) add("audit_logging", "", b.access.audit_logging->origin);
  if (b.access.transport) add("transport", "", b.access.transport->origin);
  if (b.monitoring) add("monitoring", "", b.monitoring->origin);
  for (const auto& c : b.clusters) add("cluster", c.name, c.origin);
  for (const auto& p : b.providers) add("provider", p.name, p.origin);
  for (const auto& o : b.outputs) add("output", o.name, o.origin);
  return out;
}

int max_unavailable(const NodePool& p) {
  if (!p.rollout) return 1;
  const int n = p.rollout->percent ? static_cast<int>(static_cast<long long>(p.count) * p.rollout->max_unavailable / 100)
                                   : p.rollout->max_unavailable;
  return std::max(1, n);
}

std::chrono::milliseconds drain_timeout(const NodePool& p) {
  return p.rollout && p.rollout->drain_timeout.count() > 0 ? p.rollout->drain_timeout : kDrainTimeout;
}

}  // namespace plinth::bp
