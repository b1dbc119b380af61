// Microsoft.Network: network interfaces and virtual networks with subnets,
// what a virtual machine with a NIC needs.
#include <algorithm>
#include <cstdio>

#include "tests/emulators/azure/arm.h"
#include "tests/emulators/azure/arm_util.h"

namespace plinth::azure_emulator {
namespace {

/// "10.0.0.0/24" -> (network, prefix length); false when not IPv4 CIDR.
bool parse_cidr(const std::string& s, uint32_t& network, int& bits) {
  unsigned a, b, c, d;
  int n = -1;
  char tail = 0;
  if (std::sscanf(s.c_str(), "%u.%u.%u.%u/%d%c", &a, &b, &c, &d, &n, &tail) != 5) return false;
  if (a > 255 || b > 255 || c > 255 || d > 255 || n < 8 || n > 29) return false;
  uint32_t ip = (a << 24) | (b << 16) | (c << 8) | d;
  uint32_t mask = n == 0 ? 0 : ~((1u << (32 - n)) - 1);
  network = ip & mask;
  bits = n;
  return true;
}

std::string ip_string(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 255) + "." + std::to_string((ip >> 8) & 255) +
         "." + std::to_string(ip & 255);
}

std::string etag(std::mt19937_64& rng) { return "W/\"" + new_guid(rng) + "\""; }

std::string subnet_prefix(const json& subnet) {
  const json& p = subnet["properties"];
  if (p.contains("addressPrefix") && p["addressPrefix"].is_string()) return p["addressPrefix"];
  if (p.contains("addressPrefixes") && p["addressPrefixes"].is_array() && !p["addressPrefixes"].empty())
    return p["addressPrefixes"][0].get<std::string>();
  return "";
}

}  // namespace

json* Arm::find_subnet(const std::string& subnet_id, Vnet** vnet_out) {
  std::string id = lower(subnet_id);
  auto cut = id.find("/subnets/");
  if (cut == std::string::npos) return nullptr;
  auto it = vnets_.find(id.substr(0, cut));
  if (it == vnets_.end()) return nullptr;
  std::string name = id.substr(cut + 9);
  for (auto& s : it->second.model["properties"]["subnets"])
    if (lower(s.value("name", "")) == name) {
      if (vnet_out) *vnet_out = &it->second;
      return &s;
    }
  return nullptr;
}

std::string Arm::allocate_ip(const std::string& subnet_id, const std::string& prefix) const {
  uint32_t network = 0;
  int bits = 0;
  if (!parse_cidr(prefix, network, bits)) return "";
  std::set<std::string> used;
  for (const auto& [k, nic] : nics_)
    for (const auto& ipc : nic.model["properties"]["ipConfigurations"])
      if (iequals(ipc["properties"]["subnet"].value("id", ""), subnet_id))
        used.insert(ipc["properties"].value("privateIPAddress", ""));
  uint32_t last = network + (1u << (32 - bits)) - 2;  // the broadcast address is reserved
  for (uint32_t ip = network + 4; ip <= last; ++ip)   // Azure keeps the first four
    if (!used.count(ip_string(ip))) return ip_string(ip);
  return "";
}

json Arm::nic_view(const Nic& nic) const {
  json out = nic.model;
  if (!nic.vm.empty()) {
    auto vm = vms_.find(nic.vm);
    if (vm != vms_.end()) {
      out["properties"]["virtualMachine"] = {{"id", vm->second.model.value("id", "")}};
      bool primary = true;
      const json& refs = vm->second.model["properties"]["networkProfile"]["networkInterfaces"];
      if (refs.is_array() && refs.size() > 1)
        for (const auto& ref : refs)
          if (iequals(ref.value("id", ""), nic.model.value("id", "")))
            primary = ref.contains("properties") && ref["properties"].value("primary", false);
      out["properties"]["primary"] = primary;
      if (vm->second.allocated) out["properties"]["macAddress"] = nic.mac;
    }
  }
  return out;
}

json Arm::vnet_view(const Vnet& vnet) const {
  json out = vnet.model;
  for (auto& s : out["properties"]["subnets"]) {
    json configs = json::array();
    for (const auto& [k, nic] : nics_)
      for (const auto& ipc : nic.model["properties"]["ipConfigurations"])
        if (iequals(ipc["properties"]["subnet"].value("id", ""), s.value("id", "")))
          configs.push_back({{"id", ipc.value("id", "")}});
    if (!configs.empty()) s["properties"]["ipConfigurations"] = configs;
  }
  return out;
}

Response Arm::network_lro(const Request& r, const Route& rt, int status, json body, const std::string& kind,
                          const std::string& target, const std::string& location) {
  bool is_nic = kind.rfind("networkInterfaces", 0) == 0;
  std::string id = start_op(rt.sub, "Microsoft.Network", location, r.param("api-version"), kind, target,
                            options_.network_delay_ms, nullptr, [this, target, is_nic] {
                              if (is_nic) {
                                auto it = nics_.find(target);
                                if (it != nics_.end())
                                  it->second.model["properties"]["provisioningState"] = "Succeeded";
                              } else {
                                auto it = vnets_.find(target);
                                if (it == vnets_.end()) return;
                                it->second.model["properties"]["provisioningState"] = "Succeeded";
                                for (auto& s : it->second.model["properties"]["subnets"])
                                  s["properties"]["provisioningState"] = "Succeeded";
                              }
                            });
  Response out = json_response(status, body);
  lro_headers(r, out, id, false);
  return out;
}

Response Arm::nic_put(const Request& r, const Route& rt) {
  json body = json::parse(r.body, nullptr, false);
  if (!body.is_object()) return invalid_content(r.body);
  const ResourceGroup* group = find_rg(rt.sub, rt.rg);
  if (!group) return rg_not_found(rt.rg);
  std::string key = lower(rg_id(rt.sub, rt.rg) + "/providers/Microsoft.Network/networkInterfaces/" + rt.name);
  auto existing_it = nics_.find(key);
  Nic* existing = existing_it == nics_.end() ? nullptr : &existing_it->second;
  std::string name = existing ? existing->model.value("name", rt.name) : rt.name;
  std::string id =
      rg_id(rt.sub, group->model.value("name", rt.rg)) + "/providers/Microsoft.Network/networkInterfaces/" + name;
  std::string location;
  if (auto bad = check_location(body, "Microsoft.Network/networkInterfaces", existing ? &existing->model : nullptr, name, rt.rg,
                                false, location))
    return *bad;
  json props = body.contains("properties") && body["properties"].is_object() ? body["properties"] : json::object();
  if (!props.contains("ipConfigurations") || !props["ipConfigurations"].is_array() || props["ipConfigurations"].empty())
    return arm_error(400, "InvalidRequestFormat",
                     "Cannot parse the request: network interface " + id + " must have at least one IP configuration.");
  bool accelerated = props.value("enableAcceleratedNetworking", false);
  if (existing && accelerated && !existing->vm.empty()) {
    const Vm& vm = vms_.at(existing->vm);
    const VmSize* size = size_of(vm.model["properties"]["hardwareProfile"].value("vmSize", ""));
    if (size && !size->accelerated_networking)
      return arm_error(
          400, "VMSizeIsNotPermittedToEnableAcceleratedNetworking",
          "Virtual machine " + vm.model.value("name", "") + " size " + size->name +
              " is not compatible with enabling Accelerated Networking on network interface(s) on the VM.");
  }
  json configs = json::array();
  size_t index = 0;
  for (const auto& ipc : props["ipConfigurations"]) {
    std::string ipc_name = ipc.value("name", "");
    if (ipc_name.empty())
      return arm_error(
          400, "InvalidRequestFormat",
          "Cannot parse the request: IP configuration " + std::to_string(index) + " of " + id + " has no name.");
    std::string subnet_id = ipc.contains("properties") && ipc["properties"].contains("subnet")
                                ? ipc["properties"]["subnet"].value("id", "")
                                : "";
    Vnet* vnet = nullptr;
    json* subnet = subnet_id.empty() ? nullptr : find_subnet(subnet_id, &vnet);
    if (!subnet || vnet->model.value("location", "") != location)
      return arm_error(400, "InvalidResourceReference",
                       "Resource " + (subnet_id.empty() ? std::string("(no subnet)") : subnet_id) +
                           " referenced by resource " + id +
                           " was not found. Please make sure that the referenced resource exists, and that both "
                           "resources are in the same region.");
    std::string ip;
    if (existing)
      for (const auto& old : existing->model["properties"]["ipConfigurations"])
        if (iequals(old.value("name", ""), ipc_name) &&
            iequals(old["properties"]["subnet"].value("id", ""), subnet->value("id", "")))
          ip = old["properties"].value("privateIPAddress", "");
    if (ip.empty()) ip = allocate_ip(subnet->value("id", ""), subnet_prefix(*subnet));
    if (ip.empty())
      return arm_error(400, "SubnetIsFull",
                       "Subnet " + subnet->value("name", "") + " with address prefix " + subnet_prefix(*subnet) +
                           " does not have enough capacity for 1 IP addresses.");
    bool primary = ipc.contains("properties") && ipc["properties"].contains("primary")
                       ? ipc["properties"].value("primary", false)
                       : index == 0;
    configs.push_back({{"name", ipc_name},
                       {"id", id + "/ipConfigurations/" + ipc_name},
                       {"etag", etag(id_rng_)},
                       {"type", "Microsoft.Network/networkInterfaces/ipConfigurations"},
                       {"properties",
                        {{"provisioningState", "Succeeded"},
                         {"privateIPAddress", ip},
                         {"privateIPAllocationMethod", "Dynamic"},
                         {"subnet", {{"id", subnet->value("id", "")}}},
                         {"primary", primary},
                         {"privateIPAddressVersion", "IPv4"}}}});
    ++index;
  }
  json model = {{"name", name},
                {"id", id},
                {"etag", etag(id_rng_)},
                {"type", "Microsoft.Network/networkInterfaces"},
                {"location", location}};
  if (body.contains("tags")) model["tags"] = body["tags"];
  std::string guid = existing ? existing->model["properties"].value("resourceGuid", "") : new_guid(id_rng_);
  model["properties"] = {{"provisioningState", options_.network_delay_ms > 0 ? "Updating" : "Succeeded"},
                         {"resourceGuid", guid},
                         {"ipConfigurations", configs},
                         {"dnsSettings", {{"dnsServers", json::array()}, {"appliedDnsServers", json::array()}}},
                         {"enableAcceleratedNetworking", accelerated},
                         {"vnetEncryptionSupported", false},
                         {"enableIPForwarding", props.value("enableIPForwarding", false)},
                         {"disableTcpStateTracking", false},
                         {"hostedWorkloads", json::array()},
                         {"tapConfigurations", json::array()},
                         {"nicType", "Standard"},
                         {"auxiliaryMode", "None"},
                         {"auxiliarySku", "None"}};
  if (props.contains("networkSecurityGroup"))
    model["properties"]["networkSecurityGroup"] = props["networkSecurityGroup"];
  Nic& nic = existing ? *existing : nics_[key];
  bool created = !existing;
  nic.model = model;
  nic.sub = rt.sub;
  nic.rg = group->model.value("name", rt.rg);
  if (nic.mac.empty()) {
    uint64_t m = id_rng_();
    char buf[32];
    std::snprintf(buf, sizeof buf, "00-0D-3A-%02X-%02X-%02X", static_cast<unsigned>(m & 255),
                  static_cast<unsigned>((m >> 8) & 255), static_cast<unsigned>((m >> 16) & 255));
    nic.mac = buf;
  }
  return network_lro(r, rt, created ? 201 : 200, nic_view(nic), "networkInterfaces.write", key, location);
}

Response Arm::nic_get(const Request& r, const Route& rt) {
  (void)r;
  if (!find_rg(rt.sub, rt.rg)) return rg_not_found(rt.rg);
  auto it = nics_.find(lower(rg_id(rt.sub, rt.rg) + "/providers/Microsoft.Network/networkInterfaces/" + rt.name));
  if (it == nics_.end()) return not_found("Microsoft.Network/networkInterfaces", rt.name, rt.rg);
  return json_response(200, nic_view(it->second));
}

Response Arm::nic_delete(const Request& r, const Route& rt) {
  if (!find_rg(rt.sub, rt.rg)) return rg_not_found(rt.rg);
  std::string key = lower(rg_id(rt.sub, rt.rg) + "/providers/Microsoft.Network/networkInterfaces/" + rt.name);
  auto it = nics_.find(key);
  if (it == nics_.end()) {
    Response out;
    out.status = 204;
    return out;
  }
  if (!it->second.vm.empty() && vms_.count(it->second.vm))
    return arm_error(400, "NicInUse",
                     "Network Interface " + it->second.model.value("id", "") + " is used by existing resource " +
                         vms_.at(it->second.vm).model.value("id", "") +
                         ". In order to delete the network interface, it must be dissociated from the resource. To "
                         "learn more, see aka.ms/deletenic.");
  it->second.model["properties"]["provisioningState"] = "Deleting";
  std::string id =
      start_op(rt.sub, "Microsoft.Network", it->second.model.value("location", ""), r.param("api-version"),
               "networkInterfaces.delete", key, options_.network_delay_ms, nullptr, [this, key] { nics_.erase(key); });
  Response out;
  out.status = 202;
  lro_headers(r, out, id, true);
  return out;
}

Response Arm::nic_list(const Request& r, const Route& rt) {
  if (!find_rg(rt.sub, rt.rg)) return rg_not_found(rt.rg);
  std::string prefix = lower(rg_id(rt.sub, rt.rg)) + "/providers/microsoft.network/networkinterfaces/";
  std::vector<json> items;
  for (const auto& [k, nic] : nics_)
    if (k.rfind(prefix, 0) == 0) items.push_back(nic_view(nic));
  return page(r, items);
}

Response Arm::vnet_put(const Request& r, const Route& rt) {
  json body = json::parse(r.body, nullptr, false);
  if (!body.is_object()) return invalid_content(r.body);
  const ResourceGroup* group = find_rg(rt.sub, rt.rg);
  if (!group) return rg_not_found(rt.rg);
  std::string key = lower(rg_id(rt.sub, rt.rg) + "/providers/Microsoft.Network/virtualNetworks/" + rt.name);
  auto existing_it = vnets_.find(key);
  Vnet* existing = existing_it == vnets_.end() ? nullptr : &existing_it->second;
  std::string name = existing ? existing->model.value("name", rt.name) : rt.name;
  std::string id =
      rg_id(rt.sub, group->model.value("name", rt.rg)) + "/providers/Microsoft.Network/virtualNetworks/" + name;
  std::string location;
  if (auto bad = check_location(body, "Microsoft.Network/virtualNetworks", existing ? &existing->model : nullptr, name, rt.rg,
                                false, location))
    return *bad;
  json props = body.contains("properties") && body["properties"].is_object() ? body["properties"] : json::object();
  json prefixes =
      props.contains("addressSpace") ? props["addressSpace"].value("addressPrefixes", json::array()) : json::array();
  if (!prefixes.is_array() || prefixes.empty())
    return arm_error(400, "InvalidRequestFormat",
                     "Cannot parse the request: virtual network " + id + " needs addressSpace.addressPrefixes.");
  for (const auto& p : prefixes) {
    uint32_t n;
    int b;
    if (!p.is_string() || !parse_cidr(p.get<std::string>(), n, b))
      return arm_error(400, "InvalidAddressPrefixFormat",
                       "Address prefix " + p.dump() + " of resource " + id + " is not formatted correctly.");
  }
  json subnets = json::array();
  for (const auto& s : props.value("subnets", json::array())) {
    std::string sname = s.value("name", "");
    std::string prefix = s.contains("properties") ? s["properties"].value("addressPrefix", "") : "";
    uint32_t n;
    int b;
    if (sname.empty() || !parse_cidr(prefix, n, b))
      return arm_error(
          400, "InvalidAddressPrefixFormat",
          "Subnet '" + sname + "' of resource " + id + " needs an IPv4 addressPrefix such as 10.0.0.0/24.");
    subnets.push_back({{"name", sname},
                       {"id", id + "/subnets/" + sname},
                       {"etag", etag(id_rng_)},
                       {"type", "Microsoft.Network/virtualNetworks/subnets"},
                       {"properties",
                        {{"provisioningState", options_.network_delay_ms > 0 ? "Updating" : "Succeeded"},
                         {"addressPrefix", prefix},
                         {"delegations", json::array()},
                         {"privateEndpointNetworkPolicies", "Disabled"},
                         {"privateLinkServiceNetworkPolicies", "Enabled"}}}});
  }
  // A subnet that disappears must be empty.
  if (existing)
    for (const auto& old : existing->model["properties"]["subnets"]) {
      bool kept = false;
      for (const auto& s : subnets) kept = kept || iequals(s.value("name", ""), old.value("name", ""));
      if (kept) continue;
      for (const auto& [k, nic] : nics_)
        for (const auto& ipc : nic.model["properties"]["ipConfigurations"])
          if (iequals(ipc["properties"]["subnet"].value("id", ""), old.value("id", "")))
            return arm_error(400, "InUseSubnetCannotBeDeleted",
                             "Subnet " + old.value("name", "") + " is in use by " + ipc.value("id", "") +
                                 " and cannot be deleted. In order to delete the subnet, delete all the resources "
                                 "within the subnet. See aka.ms/deletesubnet.");
    }
  json model = {{"name", name},
                {"id", id},
                {"etag", etag(id_rng_)},
                {"type", "Microsoft.Network/virtualNetworks"},
                {"location", location}};
  if (body.contains("tags")) model["tags"] = body["tags"];
  std::string guid = existing ? existing->model["properties"].value("resourceGuid", "") : new_guid(id_rng_);
  model["properties"] = {{"provisioningState", options_.network_delay_ms > 0 ? "Updating" : "Succeeded"},
                         {"resourceGuid", guid},
                         {"addressSpace", {{"addressPrefixes", prefixes}}},
                         {"subnets", subnets},
                         {"virtualNetworkPeerings", json::array()},
                         {"enableDdosProtection", false}};
  Vnet& vnet = existing ? *existing : vnets_[key];
  bool created = !existing;
  vnet.model = model;
  vnet.sub = rt.sub;
  vnet.rg = group->model.value("name", rt.rg);
  return network_lro(r, rt, created ? 201 : 200, vnet_view(vnet), "virtualNetworks.write", key, location);
}

Response Arm::vnet_get(const Request& r, const Route& rt) {
  (void)r;
  if (!find_rg(rt.sub, rt.rg)) return rg_not_found(rt.rg);
  auto it = vnets_.find(lower(rg_id(rt.sub, rt.rg) + "/providers/Microsoft.Network/virtualNetworks/" + rt.name));
  if (it == vnets_.end()) return not_found("Microsoft.Network/virtualNetworks", rt.name, rt.rg);
  return json_response(200, vnet_view(it->second));
}

Response Arm::vnet_delete(const Request& r, const Route& rt) {
  if (!find_rg(rt.sub, rt.rg)) return rg_not_found(rt.rg);
  std::string key = lower(rg_id(rt.sub, rt.rg) + "/providers/Microsoft.Network/virtualNetworks/" + rt.name);
  auto it = vnets_.find(key);
  if (it == vnets_.end()) {
    Response out;
    out.status = 204;
    return out;
  }
  for (const auto& s : it->second.model["properties"]["subnets"])
    for (const auto& [k, nic] : nics_)
      for (const auto& ipc : nic.model["properties"]["ipConfigurations"])
        if (iequals(ipc["properties"]["subnet"].value("id", ""), s.value("id", "")))
          return arm_error(400, "InUseSubnetCannotBeDeleted",
                           "Subnet " + s.value("name", "") + " is in use by " + ipc.value("id", "") +
                               " and cannot be deleted. In order to delete the subnet, delete all the resources "
                               "within the subnet. See aka.ms/deletesubnet.");
  it->second.model["properties"]["provisioningState"] = "Deleting";
  std::string id =
      start_op(rt.sub, "Microsoft.Network", it->second.model.value("location", ""), r.param("api-version"),
               "virtualNetworks.delete", key, options_.network_delay_ms, nullptr, [this, key] { vnets_.erase(key); });
  Response out;
  out.status = 202;
  lro_headers(r, out, id, true);
  return out;
}

Response Arm::vnet_list(const Request& r, const Route& rt) {
  if (!find_rg(rt.sub, rt.rg)) return rg_not_found(rt.rg);
  std::string prefix = lower(rg_id(rt.sub, rt.rg)) + "/providers/microsoft.network/virtualnetworks/";
  std::vector<json> items;
  for (const auto& [k, v] : vnets_)
    if (k.rfind(prefix, 0) == 0) items.push_back(vnet_view(v));
  return page(r, items);
}

Response Arm::subnet(const Request& r, const Route& rt) {
  if (!find_rg(rt.sub, rt.rg)) return rg_not_found(rt.rg);
  std::string vkey = lower(rg_id(rt.sub, rt.rg) + "/providers/Microsoft.Network/virtualNetworks/" + rt.name);
  auto it = vnets_.find(vkey);
  if (it == vnets_.end()) return not_found("Microsoft.Network/virtualNetworks", rt.name, rt.rg);
  json view = vnet_view(it->second);
  if (rt.kind == Kind::kSubnetList) {
    if (r.method != "GET")
      return arm_error(405, "MethodNotAllowed",
                       "The requested resource does not support http method '" + r.method + "'.");
    return json_response(200, {{"value", view["properties"]["subnets"]}});
  }
  json& subnets = it->second.model["properties"]["subnets"];
  auto find = [&](json& list) -> json* {
    for (auto& s : list)
      if (iequals(s.value("name", ""), rt.child)) return &s;
    return nullptr;
  };
  if (r.method == "GET") {
    json* s = find(view["properties"]["subnets"]);
    if (!s) return not_found("Microsoft.Network/virtualNetworks/subnets", rt.name + "/" + rt.child, rt.rg);
    return json_response(200, *s);
  }
  if (r.method == "PUT") {
    json body = json::parse(r.body, nullptr, false);
    if (!body.is_object()) return invalid_content(r.body);
    std::string prefix = body.contains("properties") ? body["properties"].value("addressPrefix", "") : "";
    uint32_t n;
    int b;
    if (!parse_cidr(prefix, n, b))
      return arm_error(400, "InvalidAddressPrefixFormat",
                       "Subnet '" + rt.child + "' needs an IPv4 addressPrefix such as 10.0.0.0/24.");
    json* s = find(subnets);
    bool created = !s;
    std::string id = it->second.model.value("id", "") + "/subnets/" + (s ? s->value("name", rt.child) : rt.child);
    json subnet = {{"name", s ? s->value("name", rt.child) : rt.child},
                   {"id", id},
                   {"etag", etag(id_rng_)},
                   {"type", "Microsoft.Network/virtualNetworks/subnets"},
                   {"properties",
                    {{"provisioningState", options_.network_delay_ms > 0 ? "Updating" : "Succeeded"},
                     {"addressPrefix", prefix},
                     {"delegations", json::array()},
                     {"privateEndpointNetworkPolicies", "Disabled"},
                     {"privateLinkServiceNetworkPolicies", "Enabled"}}}};
    if (s)
      *s = subnet;
    else
      subnets.push_back(subnet);
    return network_lro(r, rt, created ? 201 : 200, subnet, "virtualNetworks.subnets.write", vkey,
                       it->second.model.value("location", ""));
  }
  if (r.method == "DELETE") {
    json* s = find(subnets);
    if (!s) {
      Response out;
      out.status = 204;
      return out;
    }
    for (const auto& [k, nic] : nics_)
      for (const auto& ipc : nic.model["properties"]["ipConfigurations"])
        if (iequals(ipc["properties"]["subnet"].value("id", ""), s->value("id", "")))
          return arm_error(400, "InUseSubnetCannotBeDeleted",
                           "Subnet " + s->value("name", "") + " is in use by " + ipc.value("id", "") +
                               " and cannot be deleted. In order to delete the subnet, delete all the resources "
                               "within the subnet. See aka.ms/deletesubnet.");
    std::string name = s->value("name", "");
    for (auto i = subnets.begin(); i != subnets.end(); ++i)
      if (iequals(i->value("name", ""), name)) {
        subnets.erase(i);
        break;
      }
    Response out;
    out.status = 200;
    return out;
  }
  return arm_error(405, "MethodNotAllowed", "The requested resource does not support http method '" + r.method + "'.");
}

}  // namespace plinth::azure_emulator
