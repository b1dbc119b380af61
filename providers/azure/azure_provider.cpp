// azure.vm over Azure Resource Manager: what each call sends is described in
// docs/providers/azure.md.
#include "providers/azure/azure_provider.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "engine/core/hash.h"
#include "engine/core/strings.h"
#include "providers/azure/schema.h"
#include "providers/common/config.h"
#include "providers/common/json_fields.h"

namespace plinth::azure {

namespace {

using cloud::str;
using cloud::strings;
using cloud::at;
using cloud::attributes_hash;

/// j[key] when j is an object that has it, else null: ARM's answers are not trusted to have a shape.
const Json& field(const Json& j, const char* key) {
  static const Json none;
  if (!j.is_object()) return none;
  auto it = j.find(key);
  return it == j.end() ? none : *it;
}

bool flag(const Json& j, const char* key, bool fallback) {
  const Json& v = field(j, key);
  return v.is_boolean() ? v.get<bool>() : fallback;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string base64(const std::string& s) {
  std::string out(4 * ((s.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

/// The attributes that force a new VM (what its name is made from).
Json forcing(const Json& attributes) {
  Json out = Json::object();
  if (!attributes.is_object()) return out;
  for (const auto& spec : schema().resource_types.front().attributes)
    if (spec.force_new && attributes.contains(spec.name)) out[spec.name] = attributes[spec.name];
  return out;
}

std::string tag(const Json& vm, const char* key) {
  return str(field(vm, "tags"), key);
}

/// The instance view's status with `prefix` ("PowerState/"), without it.
std::string status_of(const Json& vm, const std::string& prefix) {
  const Json& statuses = field(field(field(vm, "properties"), "instanceView"), "statuses");
  if (!statuses.is_array()) return "";
  for (const auto& s : statuses) {
    const std::string code = str(s, "code");
    if (code.rfind(prefix, 0) == 0) return code.substr(prefix.size());
  }
  return "";
}

const Json& props(const Json& vm) {
  static const Json empty = Json::object();
  return vm.is_object() && vm.contains("properties") && vm["properties"].is_object() ? vm["properties"] : empty;
}

/// What Plinth records of a VM (computed).
Json observed(const Json& vm, const std::string& private_ip) {
  const Json& p = props(vm);
  const Json& zones = field(vm, "zones");
  Json c = {{"id", str(vm, "id")},
            {"name", str(vm, "name")},
            {"vm_id", str(p, "vmId")},
            {"instance_type", str(field(p, "hardwareProfile"), "vmSize")},
            {"zone", zones.is_array() && !zones.empty() && zones[0].is_string() ? zones[0].get<std::string>() : ""},
            {"location", str(vm, "location")},
            {"priority", str(p, "priority").empty() ? "Regular" : str(p, "priority")},
            {"provisioning_state", str(p, "provisioningState")}};
  if (auto e = str(p, "evictionPolicy"); !e.empty()) c["eviction_policy"] = e;
  if (auto power = status_of(vm, "PowerState/"); !power.empty()) c["power_state"] = power;
  const Json& nics = field(field(p, "networkProfile"), "networkInterfaces");
  if (nics.is_array() && !nics.empty()) c["nic_id"] = str(nics[0], "id");
  if (!private_ip.empty()) c["private_ip"] = private_ip;
  return c;
}

bool spot(const Json& vm) {
  const std::string p = str(props(vm), "priority");
  return p == "Spot" || p == "Low";
}

/// The last path segment of an ARM id.
std::string leaf(const std::string& id) { return id.substr(id.rfind('/') + 1); }

std::string missing(const char* option, const char* var) {
  return std::string("option ") + option + " (" + var + ")";
}

}  // namespace

std::string vm_name(const std::string& lineage, const std::string& address, const std::string& name, int index,
                    const Json& attributes) {
  std::string base;
  for (char c : ascii_lower(name)) base += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  if (base.size() > 40) base.resize(40);
  return base + "-" + std::to_string(index) + "-" +
         sha256_hex(lineage + "\n" + address + "\n" + forcing(attributes).dump()).substr(0, 8);
}

Json nic_body(const Resource& desired, const std::string& location, const std::string& subnet_id, const Json& tags) {
  const Json& a = desired.attributes;
  return {{"location", location},
          {"tags", tags},
          {"properties",
           {{"enableAcceleratedNetworking", flag(a, "accelerated_networking", true)},
            {"ipConfigurations",
             {{{"name", "ipconfig1"},
               {"properties",
                {{"subnet", {{"id", subnet_id}}}, {"privateIPAllocationMethod", "Dynamic"}, {"primary", true}}}}}}}}};
}

Json vm_body(const Resource& desired, const std::string& location, const std::string& size, const std::string& zone,
             const std::string& nic_id, const std::string& computer_name, const Json& tags) {
  const Json& a = desired.attributes;
  const std::string user = str(a, "admin_username").empty() ? "plinth" : str(a, "admin_username");
  const std::string image = str(a, "image");
  Json image_ref;
  if (image.rfind("/", 0) == 0) {
    image_ref = {{"id", image}};
  } else {
    auto parts = split(image, ':');
    image_ref = {{"publisher", parts.size() > 0 ? parts[0] : ""},
                 {"offer", parts.size() > 1 ? parts[1] : ""},
                 {"sku", parts.size() > 2 ? parts[2] : ""},
                 {"version", parts.size() > 3 ? parts[3] : "latest"}};
  }
  const Json& disk = field(a, "os_disk");
  Json managed = {{"storageAccountType", str(disk, "type").empty() ? "Premium_LRS" : str(disk, "type")}};
  if (auto des = str(disk, "disk_encryption_set_id"); !des.empty()) managed["diskEncryptionSet"] = {{"id", des}};
  Json os_disk = {{"createOption", "FromImage"}, {"caching", "ReadWrite"}, {"deleteOption", "Delete"},
                  {"managedDisk", managed}};
  if (field(disk, "size_gb").is_number_integer()) os_disk["diskSizeGB"] = field(disk, "size_gb");
  Json os = {{"computerName", computer_name},
             {"adminUsername", user},
             {"linuxConfiguration",
              {{"disablePasswordAuthentication", true},
               {"ssh",
                {{"publicKeys",
                  {{{"path", "/home/" + user + "/.ssh/authorized_keys"}, {"keyData", str(a, "ssh_public_key")}}}}}}}}};
  if (auto ud = str(desired.computed, "user_data"); !ud.empty()) os["customData"] = base64(ud);
  Json p = {{"hardwareProfile", {{"vmSize", size}}},
            {"storageProfile", {{"imageReference", image_ref}, {"osDisk", os_disk}}},
            {"osProfile", os},
            {"networkProfile",
             {{"networkInterfaces", {{{"id", nic_id}, {"properties", {{"primary", true}, {"deleteOption", "Delete"}}}}}}}}};
  if (flag(disk, "encryption_at_host", false)) p["securityProfile"] = {{"encryptionAtHost", true}};
  if (flag(a, "spot", false)) {
    p["priority"] = "Spot";
    p["evictionPolicy"] = str(a, "eviction_policy").empty() ? "Deallocate" : str(a, "eviction_policy");
    double price = field(a, "max_price").is_number() ? field(a, "max_price").get<double>() : -1.0;
    p["billingProfile"] = {{"maxPrice", price}};
  }
  Json body = {{"location", location}, {"tags", tags}, {"properties", p}};
  if (!zone.empty()) body["zones"] = Json::array({zone});
  return body;
}

const ProviderSchema& AzureProvider::schema() const { return azure::schema(); }

Status AzureProvider::configure(const ProviderConfig& config) {
  config_ = config;
  ArmSettings s;
  s.tenant_id = config.str("tenant_id");
  s.client_id = config.str("client_id");
  s.client_secret = config.str("client_secret");
  const std::string cert = config.str("client_certificate_path");
  s.federated_token_file = config.str("federated_token_file");
  // azure-identity's order: a service principal's secret or certificate, workload identity (a federated
  // token), then the managed identity of the machine.
  const bool principal = !s.client_secret.empty() || !cert.empty() || !s.federated_token_file.empty();
  s.managed_identity = !principal && config.flag("managed_identity");
  std::vector<std::string> lacking;
  if (!s.managed_identity) {
    if (s.tenant_id.empty()) lacking.push_back(missing("tenant_id", "AZURE_TENANT_ID"));
    if (s.client_id.empty()) lacking.push_back(missing("client_id", "AZURE_CLIENT_ID"));
    if (!principal)
      lacking.push_back(missing("client_secret", "AZURE_CLIENT_SECRET") + ", " +
                        missing("client_certificate_path", "AZURE_CLIENT_CERTIFICATE_PATH") + " or " +
                        missing("federated_token_file", "AZURE_FEDERATED_TOKEN_FILE"));
  }
  if (config.str("subscription_id").empty()) lacking.push_back(missing("subscription_id", "AZURE_SUBSCRIPTION_ID"));
  if (!lacking.empty())
    return Error::invalid("Azure credentials are incomplete: set " + join(lacking, ", ") +
                          " (a service principal: az ad sp create-for-rbac prints them; workload identity: "
                          "AZURE_FEDERATED_TOKEN_FILE with the app's tenant and client ids)");
  s.identity_endpoint = config.str("identity_endpoint");
  s.identity_header = config.str("identity_header");
  if (!config.str("imds_endpoint").empty()) s.imds_endpoint = config.str("imds_endpoint");
  if (!cert.empty() && s.client_secret.empty()) {
    std::ifstream in(cert);
    if (!in) return Error::invalid("option client_certificate_path: cannot read " + cert);
    std::stringstream ss;
    ss << in.rdbuf();
    s.client_certificate_pem = ss.str();
  }
  auto rates = parse_rates(config.values.value("request_rates", Json::object()));
  if (!rates) return rates.error();
  s.rates = std::move(*rates);
  s.authority_host = config.str("authority_host").empty() ? "https://login.microsoftonline.com"
                                                           : config.str("authority_host");
  s.endpoint = config.str("resource_manager_endpoint").empty() ? "https://management.azure.com"
                                                               : config.str("resource_manager_endpoint");
  s.audience = config.str("resource_manager_audience").empty() ? "https://management.azure.com/"
                                                               : config.str("resource_manager_audience");
  s.poll_ms = cloud::clamp_int(config, "poll_ms", 5000, 0, 600000);
  s.max_poll_ms = cloud::clamp_int(config, "max_poll_ms", 60000, 0, 3600000);
  location_ = config.str("location");
  http_ = std::make_unique<net::Client>(cloud::http_options(config));
  const bool managed = s.managed_identity;
  arm_ = std::make_unique<ArmClient>(*http_, std::move(s), &stopped_);
  // Nothing else was set: the managed identity is asked now, so a machine without one stops the run
  // before anything is planned (PLAN001), with what to set.
  if (managed)
    if (auto st = arm_->first_token(); !st)
      return Error{st.error().kind,
                   "no Azure credentials: set AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET (or "
                   "AZURE_CLIENT_CERTIFICATE_PATH, or AZURE_FEDERATED_TOKEN_FILE for workload identity), or run where "
                   "a managed identity is; " + st.error().message,
                   0};
  return {};
}

void AzureProvider::bind(const StateBinding& binding) {
  binding_.set(binding);
}

Result<AzureProvider::Where> AzureProvider::where_of(const Resource& r, bool for_create) const {
  Where w{config_.str("subscription_id"), str(r.attributes, "resource_group"), str(r.attributes, "region")};
  if (w.location.empty()) w.location = location_;
  if (for_create && w.resource_group.empty())
    return Error::invalid(r.address + ": burst pool '" + r.name +
                          "' sets no resource_group; add `resource_group: NAME` to the pool (" + r.source.str() + ")");
  if (for_create && w.location.empty())
    return Error::invalid(r.address + ": no location; set `region:` on burst pool '" + r.name + "' or AZURE_LOCATION");
  return w;
}

std::string AzureProvider::vm_path(const Where& w, const std::string& name) const {
  return "/subscriptions/" + w.subscription + "/resourceGroups/" + w.resource_group +
         "/providers/Microsoft.Compute/virtualMachines/" + name;
}

std::string AzureProvider::nic_path(const Where& w, const std::string& name) const {
  return "/subscriptions/" + w.subscription + "/resourceGroups/" + w.resource_group +
         "/providers/Microsoft.Network/networkInterfaces/" + name;
}

Status AzureProvider::delete_and_wait(const std::string& path, const std::string& api, const std::string& what,
                                      Call& call) {
  auto out = arm_->send("DELETE", path, api, Json(), call, what);
  if (auto* f = std::get_if<ArmFailure>(&out)) {
    if (f->status == 404) return {};
    return f->error;
  }
  auto done = arm_->wait(std::get<ArmReply>(out), call, what);
  if (auto* f = std::get_if<ArmFailure>(&done); f && f->status != 404) return f->error;
  return {};
}

Result<Json> AzureProvider::get_vm(const std::string& path, const std::string& what, Call& call) {
  auto out = arm_->send("GET", path + "?$expand=instanceView", kComputeApi, Json(), call, what);
  if (auto* f = std::get_if<ArmFailure>(&out)) {
    if (f->status == 404) return Json();
    return f->error;
  }
  return std::get<ArmReply>(out).body;
}

Result<std::string> AzureProvider::subnet_for(const Resource& desired, const Where& w, Call& call) {
  if (auto id = str(desired.attributes, "subnet_id"); !id.empty()) return id;
  const std::string key = ascii_lower(w.subscription + "/" + w.resource_group + "/" + w.location);
  std::lock_guard<std::mutex> lock(net_mu_);
  if (auto it = nets_.find(key); it != nets_.end()) return it->second;
  const std::string lineage = binding_.get().lineage;
  const std::string rg = "/subscriptions/" + w.subscription + "/resourceGroups/" + w.resource_group;
  auto got = arm_->send("GET", rg, kResourcesApi, Json(), call, "GET resourceGroups/" + w.resource_group);
  if (auto* f = std::get_if<ArmFailure>(&got)) {
    if (f->status != 404) return f->error;
    auto made = arm_->send("PUT", rg, kResourcesApi, {{"location", w.location}, {"tags", {{kTagLineage, lineage}}}},
                           call, "PUT resourceGroups/" + w.resource_group);
    if (auto* g = std::get_if<ArmFailure>(&made)) return g->error;
  }
  const std::string vnet = "plinth-" + ascii_lower(w.location);
  const std::string vnet_path = rg + "/providers/Microsoft.Network/virtualNetworks/" + vnet;
  const std::string what = "PUT virtualNetworks/" + vnet + " in " + w.resource_group;
  auto v = arm_->send("GET", vnet_path, kNetworkApi, Json(), call, "GET virtualNetworks/" + vnet);
  if (auto* f = std::get_if<ArmFailure>(&v)) {
    if (f->status != 404) return f->error;
    Json body = {{"location", w.location},
                 {"tags", {{kTagLineage, lineage}}},
                 {"properties",
                  {{"addressSpace", {{"addressPrefixes", {"10.0.0.0/16"}}}},
                   {"subnets", {{{"name", "gpu"}, {"properties", {{"addressPrefix", "10.0.0.0/16"}}}}}}}}};
    auto made = arm_->send("PUT", vnet_path, kNetworkApi, body, call, what);
    if (auto* g = std::get_if<ArmFailure>(&made)) return g->error;
    auto done = arm_->wait(std::get<ArmReply>(made), call, what);
    if (auto* g = std::get_if<ArmFailure>(&done)) return g->error;
  }
  const std::string id = vnet_path + "/subnets/gpu";
  nets_[key] = id;
  return id;
}

Result<Resource> AzureProvider::create(const Resource& desired, Call& call) {
  if (!arm_) return Error::fatal("the azure provider was used before configure()");
  const Json& a = desired.attributes;
  auto w = where_of(desired, true);
  if (!w) return w.error();
  if (str(a, "image").empty())
    return Error::invalid(desired.address + ": burst pool '" + desired.name +
                          "' sets no image; add `image: PUBLISHER:OFFER:SKU:VERSION` (or an image resource id) to the "
                          "pool (" + desired.source.str() + ")");
  if (str(a, "ssh_public_key").empty())
    return Error::invalid(desired.address + ": burst pool '" + desired.name +
                          "' sets no ssh_public_key; add `ssh_public_key: \"ssh-ed25519 AAAA...\"` to the pool (" +
                          desired.source.str() + ")");
  const StateBinding binding = binding_.get();
  const std::string name = vm_name(binding.lineage, desired.address, desired.name, desired.index, a);
  const std::string path = vm_path(*w, name);
  const std::string nic_name = name + "-nic";
  const std::string npath = nic_path(*w, nic_name);
  const std::string what = "virtualMachines/" + name + " in " + w->resource_group;
  const Json tags = {{kTagAddress, desired.address},
                     {kTagLineage, binding.lineage},
                     {kTagBlueprint, binding.blueprint},
                     {kTagAttributes, attributes_hash(a)}};
  auto finish = [&](const Json& vm, const std::string& ip) {
    Resource r = desired;
    r.computed = observed(vm, ip);
    return r;
  };

  // A VM of this name may exist: a create whose answer was lost, or a Spot
  // VM that Azure evicted and deallocated. Take it (started) when it is ours.
  auto existing = get_vm(path, "GET " + what, call);
  if (!existing) return at(desired.address, existing.error());
  if (!existing->is_null()) {
    if (const std::string owner = tag(*existing, kTagAddress); owner != desired.address)
      return Error::fatal(desired.address + ": a VM named " + name + " exists in resource group " + w->resource_group +
                          " that Plinth did not make for this address (its plinth:address tag is '" + owner +
                          "'); delete or rename it, then apply again");
    const std::string state = str(props(*existing), "provisioningState");
    if (state == "Succeeded") {
      const std::string power = status_of(*existing, "PowerState/");
      if (power != "deallocated" && power != "deallocating" && power != "stopped") return finish(*existing, "");
      auto started = arm_->send("POST", path + "/start", kComputeApi, Json(), call, "POST " + what + "/start");
      std::variant<Json, ArmFailure> done = ArmFailure{};
      if (auto* f = std::get_if<ArmFailure>(&started)) done = *f;
      else done = arm_->wait(std::get<ArmReply>(started), call, "POST " + what + "/start");
      if (std::holds_alternative<Json>(done)) {
        auto vm = get_vm(path, "GET " + what, call);
        if (!vm) return at(desired.address, vm.error());
        return finish(*vm, "");
      }
      const ArmFailure& f = std::get<ArmFailure>(done);
      if (f.error.kind != Error::Kind::Conflict) return at(desired.address, f.error);
      // No room to start it where it is: make it anew over the candidates.
    }
    if (auto st = delete_and_wait(path, kComputeApi, "DELETE " + what, call); !st)
      return at(desired.address, st.error());
  }

  // Candidates: the pool's size, then its fallbacks; zones in order starting
  // at this VM's index, so a pool spreads over them.
  const std::vector<std::string> sizes = cloud::candidate_types(a, "instance_types");
  std::vector<std::string> zones = strings(a, "zones");
  if (zones.empty()) zones = {str(a, "zone")};
  cloud::spread(zones, desired.index);

  auto subnet = subnet_for(desired, *w, call);
  if (!subnet) return at(desired.address, subnet.error());

  size_t refusals = 0;
  auto launch = [&](const std::string& size, size_t z) -> cloud::Launched {
    const std::string& zone = zones[z];
    const std::string place = size + " in " + w->location + (zone.empty() ? "" : " zone " + zone);
    auto nic = arm_->send("PUT", npath, kNetworkApi, nic_body(desired, w->location, *subnet, tags), call,
                          "PUT networkInterfaces/" + nic_name);
    if (auto* f = std::get_if<ArmFailure>(&nic)) return at(desired.address, f->error);
    std::string ip;
    {
      const Json& nb = std::get<ArmReply>(nic).body;
      const Json& cfgs = field(props(nb), "ipConfigurations");
      if (cfgs.is_array() && !cfgs.empty()) ip = str(props(cfgs[0]), "privateIPAddress");
    }
    auto nic_done = arm_->wait(std::get<ArmReply>(nic), call, "PUT networkInterfaces/" + nic_name);
    if (auto* f = std::get_if<ArmFailure>(&nic_done)) return at(desired.address, f->error);

    const Json body = vm_body(desired, w->location, size, zone, npath, name, tags);
    auto put = arm_->send("PUT", path, kComputeApi, body, call, "PUT " + what + " (" + place + ")");
    std::variant<Json, ArmFailure> done = ArmFailure{};
    if (auto* f = std::get_if<ArmFailure>(&put)) done = *f;
    else done = arm_->wait(std::get<ArmReply>(put), call, "PUT " + what + " (" + place + ")");
    if (std::holds_alternative<Json>(done)) {
      auto vm = get_vm(path, "GET " + what, call);
      if (!vm) return at(desired.address, vm.error());
      return finish(*vm, ip);
    }
    const ArmFailure& f = std::get<ArmFailure>(done);
    if (f.error.kind != Error::Kind::Conflict) return at(desired.address, f.error);
    // A VM whose allocation failed stays (Failed) and counts against quota: remove it before the next try.
    if (std::holds_alternative<ArmReply>(put))
      if (auto st = delete_and_wait(path, kComputeApi, "DELETE " + what, call); !st)
        return at(desired.address, st.error());
    ++refusals;
    return cloud::NoCapacity{place, f.error.message};
  };
  auto made = cloud::first_with_capacity(
      desired, sizes, zones.size(), launch,
      ". List fallbacks in the pool (instance_types or zones) to let Plinth try elsewhere");
  // Nothing fitted: the NIC goes too (the VM never took it).
  if (refusals == sizes.size() * zones.size())
    (void)delete_and_wait(npath, kNetworkApi, "DELETE networkInterfaces/" + nic_name, call);
  return made;
}

Result<Resource> AzureProvider::update(const Resource& prior, const Resource& desired, Call& call) {
  if (!arm_) return Error::fatal("the azure provider was used before configure()");
  const std::string id = str(prior.computed, "id");
  Resource r = desired;
  r.computed = prior.computed;
  if (id.empty()) return r;
  const StateBinding binding = binding_.get();
  const Json tags = {{kTagAddress, desired.address},
                     {kTagLineage, binding.lineage},
                     {kTagBlueprint, binding.blueprint},
                     {kTagAttributes, attributes_hash(desired.attributes)}};
  const std::string what = "PATCH virtualMachines/" + leaf(id);
  auto out = arm_->send("PATCH", id, kComputeApi, {{"tags", tags}}, call, what);
  if (auto* f = std::get_if<ArmFailure>(&out)) return at(desired.address, f->error);
  auto done = arm_->wait(std::get<ArmReply>(out), call, what);
  if (auto* f = std::get_if<ArmFailure>(&done)) return at(desired.address, f->error);
  return r;
}

Status AzureProvider::remove(const Resource& prior, Call& call) {
  if (!arm_) return Error::fatal("the azure provider was used before configure()");
  const std::string id = str(prior.computed, "id");
  if (id.empty()) return {};
  if (auto st = delete_and_wait(id, kComputeApi, "DELETE virtualMachines/" + leaf(id), call); !st)
    return at(prior.address, st.error());
  // The NIC was made with deleteOption Delete and went with the VM; one that stayed goes now.
  if (auto nic = str(prior.computed, "nic_id"); !nic.empty())
    if (auto st = delete_and_wait(nic, kNetworkApi, "DELETE networkInterfaces/" + leaf(nic), call); !st)
      return at(prior.address, st.error());
  return {};
}

Result<std::map<std::string, Json>> AzureProvider::list(const Where& w, Call& call) {
  std::map<std::string, Json> out;
  std::string next = "/subscriptions/" + w.subscription + "/resourceGroups/" + w.resource_group +
                     "/providers/Microsoft.Compute/virtualMachines?$expand=instanceView";
  std::string api = kComputeApi;
  const std::string what = "GET virtualMachines in " + w.resource_group;
  std::set<std::string> seen;
  while (!next.empty()) {
    if (!seen.insert(next).second)
      return Error::fatal("ARM answered the same nextLink twice (" + next + ") while listing " + what.substr(4) +
                          "; refusing to loop");
    auto page = arm_->send("GET", next, api, Json(), call, what);
    if (auto* f = std::get_if<ArmFailure>(&page)) {
      if (f->code == "ResourceGroupNotFound") return out;
      return f->error;
    }
    const Json& j = std::get<ArmReply>(page).body;
    if (const Json& items = field(j, "value"); items.is_array())
      for (const auto& vm : items)
        if (!str(vm, "name").empty()) out[ascii_lower(str(vm, "name"))] = vm;
    next = str(j, "nextLink");
    api.clear();  // a nextLink carries its api-version
  }
  return out;
}

std::vector<ReadResult> AzureProvider::read(const std::vector<Resource>& resources, const Call& call) {
  std::vector<ReadResult> results(resources.size());
  std::map<std::string, std::pair<Where, std::vector<size_t>>> groups;
  for (size_t i = 0; i < resources.size(); ++i) {
    results[i].address = resources[i].address;
    auto w = where_of(resources[i], false);
    Where where = w ? *w : Where{};
    // The group the VM really is in (its id), else the pool's.
    if (auto id = str(resources[i].computed, "id"); !id.empty()) {
      auto parts = split(id, '/');
      for (size_t k = 0; k + 1 < parts.size(); ++k)
        if (ascii_lower(parts[k]) == "resourcegroups") where.resource_group = parts[k + 1];
    }
    auto& g = groups[ascii_lower(where.resource_group)];
    g.first = where;
    g.second.push_back(i);
  }
  if (!arm_) {
    for (auto& r : results) r.error = Error::fatal("the azure provider was used before configure()");
    return results;
  }
  for (const auto& [key, group] : groups) {
    const auto& [where, idx] = group;
    bool any = false;
    for (size_t i : idx) any = any || !str(resources[i].computed, "id").empty();
    if (!any || where.resource_group.empty()) continue;
    auto c = call.fork();
    auto listed = list(where, *c);
    for (size_t i : idx) {
      const Resource& res = resources[i];
      ReadResult& out = results[i];
      if (!listed) {
        out.error = at(res.address, listed.error());
        continue;
      }
      const std::string name = str(res.computed, "name");
      auto it = listed->find(ascii_lower(name));
      if (name.empty() || it == listed->end()) {
        if (str(res.computed, "eviction_policy") == "Delete" && flag(res.attributes, "spot", false))
          out.gone_reason = "evicted by Azure or deleted outside Plinth (Spot VM with evictionPolicy Delete)";
        continue;
      }
      const Json& vm = it->second;
      const std::string power = status_of(vm, "PowerState/");
      if (spot(vm) && (power == "deallocated" || power == "deallocating")) {
        // Plinth never deallocates: a deallocated Spot VM was evicted.
        out.gone_reason = "evicted by Azure (Spot VM " + power + ", evictionPolicy " +
                          str(props(vm), "evictionPolicy") + ")";
        continue;
      }
      out.current = cloud::with_computed(res, observed(vm, str(res.computed, "private_ip")));
    }
  }
  return results;
}

Result<std::vector<Resource>> AzureProvider::discover(const std::vector<Resource>& known,
                                                      const std::vector<Resource>& desired, const Call& call) {
  return cloud::discover(binding_, arm_ != nullptr, schema(), desired,
                         [&](const std::string& lineage) -> Result<std::vector<cloud::Tagged>> {
    std::map<std::string, Where> groups;
    std::set<std::string> names;
    for (const auto& r : known) {
      if (auto w = where_of(r, false); w && !w->resource_group.empty()) groups[ascii_lower(w->resource_group)] = *w;
      names.insert(ascii_lower(str(r.computed, "name")));
    }
    for (const auto& r : desired)
      if (auto w = where_of(r, false); w && !w->resource_group.empty()) groups[ascii_lower(w->resource_group)] = *w;
    std::vector<cloud::Tagged> tagged;
    for (const auto& [key, where] : groups) {
      auto c = call.fork();
      auto listed = list(where, *c);
      if (!listed) return listed.error();
      for (const auto& [name, vm] : *listed) {
        if (tag(vm, kTagLineage) != lineage) continue;
        if (str(props(vm), "provisioningState") != "Succeeded") continue;
        // An evicted (deallocated) Spot VM is not adopted: the next create starts it again by name.
        if (const std::string power = status_of(vm, "PowerState/");
            spot(vm) && (power == "deallocated" || power == "deallocating"))
          continue;
        tagged.push_back({tag(vm, kTagAddress), tag(vm, kTagAttributes), names.count(name) > 0,
                          {{"instance_type", str(field(props(vm), "hardwareProfile"), "vmSize")},
                           {"region", str(vm, "location")},
                           {"resource_group", where.resource_group},
                           {"spot", spot(vm)}},
                          observed(vm, "")});
      }
    }
    return tagged;
  });
}

}  // namespace plinth::azure
