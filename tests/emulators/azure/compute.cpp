// Microsoft.Compute: virtual machines (PUT/PATCH/GET/DELETE, lists, power
// actions, instance view), resource SKUs, usages, capacity and quota.
#include <algorithm>
#include <climits>
#include <cmath>

#include "tests/emulators/azure/arm.h"
#include "tests/emulators/azure/arm_util.h"

namespace plinth::azure_emulator {
namespace {

const json kNull = nullptr;

/// j[k1][k2]... or null when any step is missing.
const json& at(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object() || !cur->contains(k)) return kNull;
    cur = &(*cur)[k];
  }
  return *cur;
}

std::string str_at(const json& j, std::initializer_list<const char*> path) {
  const json& v = at(j, path);
  return v.is_string() ? v.get<std::string>() : "";
}

std::string zone_of(const json& model) {
  const json& z = at(model, {"zones"});
  return z.is_array() && !z.empty() && z[0].is_string() ? z[0].get<std::string>() : "";
}

std::string canonical_priority(const std::string& p) {
  if (p.empty() || iequals(p, "Regular")) return "Regular";
  if (iequals(p, "Spot")) return "Spot";
  if (iequals(p, "Low")) return "Low";
  return "";
}

std::string hex32(std::mt19937_64& rng) {
  std::string g = new_guid(rng);
  g.erase(std::remove(g.begin(), g.end(), '-'), g.end());
  return g;
}

std::string power_display(const std::string& power) { return "VM " + power; }

}  // namespace

const VmSize* Arm::size_of(const std::string& name) const {
  auto it = catalog_.find(lower(name));
  return it == catalog_.end() ? nullptr : &it->second;
}

bool Arm::sku_restricted(const std::string& location, const std::string& zone, const std::string& size) const {
  return sku_unavailable_.count({Place{location, ""}, lower(size)}) ||
         (!zone.empty() && sku_unavailable_.count({Place{location, zone}, lower(size)}));
}

std::string Arm::capacity_check(const std::string& location, const std::string& zone, const std::string& size,
                                const std::string& except_vm) const {
  auto count = [&](const std::string& z) {
    int n = 0;
    for (const auto& [key, vm] : vms_) {
      if (key == except_vm || !vm.allocated) continue;
      if (vm.model.value("location", "") != location) continue;
      if (!z.empty() && zone_of(vm.model) != z) continue;
      if (lower(str_at(vm.model, {"properties", "hardwareProfile", "vmSize"})) != lower(size)) continue;
      ++n;
    }
    return n;
  };
  std::string code = zone.empty() ? "AllocationFailed" : "ZonalAllocationFailed";
  if (auto it = capacity_.find({Place{location, ""}, lower(size)}); it != capacity_.end() && count("") >= it->second)
    return code;
  if (!zone.empty())
    if (auto it = capacity_.find({Place{location, zone}, lower(size)});
        it != capacity_.end() && count(zone) >= it->second)
      return "ZonalAllocationFailed";
  return "";
}

json Arm::allocation_error(const std::string& code) const {
  std::string where = code == "ZonalAllocationFailed" ? "zone" : "region";
  return {
      {"code", code},
      {"message", "Allocation failed. We do not have sufficient capacity for the requested VM size in this " + where +
                      ". Read more about improving likelihood of allocation success at "
                      "http://aka.ms/allocation-guidance"}};
}

std::string Arm::quota_check(const std::string& sub, const std::string& location, const VmSize& size, bool spot,
                             int extra_vcpus, const std::string& except_vm) const {
  if (extra_vcpus <= 0) return "";
  struct Bucket {
    std::string key, label, resource;
  };
  std::vector<Bucket> buckets;
  if (spot) {
    buckets.push_back({"lowprioritycores", "Low Priority Cores", "lowPriorityCores"});
  } else {
    buckets.push_back({lower(size.family), size.family + " Cores", size.family});
    buckets.push_back({"cores", "Total Regional Cores", "cores"});
  }
  for (const auto& b : buckets) {
    auto limit = quota_.find({location, b.key});
    if (limit == quota_.end()) continue;
    int usage = 0;
    for (const auto& [key, vm] : vms_) {
      if (key == except_vm || vm.sub != sub || vm.model.value("location", "") != location) continue;
      const VmSize* s = size_of(str_at(vm.model, {"properties", "hardwareProfile", "vmSize"}));
      if (!s) continue;
      bool vm_spot = canonical_priority(str_at(vm.model, {"properties", "priority"})) != "Regular";
      if (vm_spot != spot) continue;
      if (b.key == "cores" || b.key == "lowprioritycores" || lower(s->family) == b.key) usage += s->vcpus;
    }
    if (usage + extra_vcpus <= limit->second) continue;
    int needed = usage + extra_vcpus;
    std::string n = std::to_string(needed);
    return "Operation could not be completed as it results in exceeding approved " + b.label +
           " quota. Additional details - Deployment Model: Resource Manager, Location: " + location +
           ", Current Limit: " + std::to_string(limit->second) + ", Current Usage: " + std::to_string(usage) +
           ", Additional Required: " + std::to_string(extra_vcpus) + ", (Minimum) New Limit Required: " + n +
           ". Submit a request for Quota increase at "
           "https://aka.ms/ProdportalCRP/#blade/Microsoft_Azure_Capacity/UsageAndQuota.ReactView/Parameters/"
           "%7B%22subscriptionId%22:%22" +
           sub + "%22,%22command%22:%22openQuotaApprovalBlade%22,%22quotas%22:[%7B%22location%22:%22" + location +
           "%22,%22providerId%22:%22Microsoft.Compute%22,%22resourceName%22:%22" + b.resource +
           "%22,%22quotaRequest%22:%7B%22properties%22:%7B%22limit%22:" + n +
           ",%22unit%22:%22Count%22,%22name%22:%7B%22value%22:%22" + b.resource +
           "%22%7D%7D%7D%7D]%7D by specifying parameters listed in the \u2018Details\u2019 section for deployment to "
           "succeed. Please read more about quota limits at "
           "https://docs.microsoft.com/en-us/azure/azure-supportability/per-vm-quota-requests";
  }
  return "";
}

json Arm::instance_view(const Vm& vm) const {
  std::string state = str_at(vm.model, {"properties", "provisioningState"});
  std::string time = arm_time(SysClock::now());
  json statuses = json::array();
  if (state == "Failed") {
    statuses.push_back({{"code", "ProvisioningState/failed/" + vm.failure_code},
                        {"level", "Error"},
                        {"displayStatus", "Provisioning failed"},
                        {"message", vm.failure_message},
                        {"time", time}});
  } else {
    statuses.push_back({{"code", "ProvisioningState/" + lower(state)},
                        {"level", "Info"},
                        {"displayStatus", state == "Succeeded" ? "Provisioning succeeded" : state},
                        {"time", time}});
  }
  if (!vm.power.empty())
    statuses.push_back(
        {{"code", "PowerState/" + vm.power}, {"level", "Info"}, {"displayStatus", power_display(vm.power)}});
  json view = {{"computerName", str_at(vm.model, {"properties", "osProfile", "computerName"})},
               {"hyperVGeneration", "V2"},
               {"statuses", statuses}};
  std::string disk = str_at(vm.model, {"properties", "storageProfile", "osDisk", "name"});
  if (!disk.empty())
    view["disks"] = json::array({{{"name", disk},
                                  {"statuses",
                                   {{{"code", "ProvisioningState/succeeded"},
                                     {"level", "Info"},
                                     {"displayStatus", "Provisioning succeeded"},
                                     {"time", time}}}}}});
  return view;
}

json Arm::vm_view(const Vm& vm, bool with_instance_view) const {
  json out = vm.model;
  if (with_instance_view) out["properties"]["instanceView"] = instance_view(vm);
  return out;
}

Response Arm::vm_put(const Request& r, const Route& rt, bool patch) {
  json body = json::parse(r.body, nullptr, false);
  if (!body.is_object()) return invalid_content(r.body);
  const ResourceGroup* group = find_rg(rt.sub, rt.rg);
  if (!group) return rg_not_found(rt.rg);
  if (group->deleting)
    return arm_error(
        409, "ResourceGroupBeingDeleted",
        "The resource group '" + rt.rg + "' is in deprovisioning state and cannot perform this operation.");
  std::string rg_name = group->model.value("name", rt.rg);
  std::string key = lower(rg_id(rt.sub, rt.rg) + "/providers/Microsoft.Compute/virtualMachines/" + rt.name);
  auto existing_it = vms_.find(key);
  Vm* existing = existing_it == vms_.end() ? nullptr : &existing_it->second;
  std::string name = existing ? existing->model.value("name", rt.name) : rt.name;
  std::string id = rg_id(rt.sub, rg_name) + "/providers/Microsoft.Compute/virtualMachines/" + name;

  if (patch) {
    if (!existing) return not_found("Microsoft.Compute/virtualMachines", rt.name, rt.rg);
    // JSON merge patch, except that "tags" replaces the whole tag set.
    json merged = existing->model;
    merged.merge_patch(body);
    if (body.contains("tags")) merged["tags"] = body["tags"];
    body = merged;
  }
  if (existing && str_at(existing->model, {"properties", "provisioningState"}) == "Deleting")
    return arm_error(409, "OperationNotAllowed",
                     "Operation 'PUT' is not allowed on VM '" + name +
                         "' since the VM is marked for deletion. You can only retry the Delete operation (or wait for "
                         "an ongoing one to complete).");

  // ---- validation, in the order the real service reports problems
  std::string location;
  if (auto bad = check_location(body, "Microsoft.Compute/virtualMachines", existing ? &existing->model : nullptr, name,
                                rt.rg, true, location))
    return *bad;
  json props = body.contains("properties") && body["properties"].is_object() ? body["properties"] : json::object();
  if (existing) {
    // A PUT that leaves out write-only or defaulted parts keeps them.
    const json& old = existing->model["properties"];
    if (!props.contains("hardwareProfile") && old.contains("hardwareProfile"))
      props["hardwareProfile"] = old["hardwareProfile"];
    if (!props.contains("osProfile") && old.contains("osProfile")) props["osProfile"] = old["osProfile"];
    if (!props.contains("storageProfile") && old.contains("storageProfile"))
      props["storageProfile"] = old["storageProfile"];
    if (!props.contains("networkProfile") && old.contains("networkProfile"))
      props["networkProfile"] = old["networkProfile"];
  }
  std::string size_name = str_at(props, {"hardwareProfile", "vmSize"});
  if (size_name.empty())
    return arm_error(400, "InvalidParameter", "Required parameter 'hardwareProfile.vmSize' is missing (null).",
                     "hardwareProfile.vmSize");
  const VmSize* size = size_of(size_name);
  if (!size) {
    std::string known;
    for (const auto& [k, s] : catalog_) known += (known.empty() ? "" : ", ") + s.name;
    return arm_error(400, "InvalidParameter",
                     "The requested VM size " + size_name +
                         " is not available in the current region. The sizes "
                         "available in the current region are: " +
                         known + ".",
                     "vmSize");
  }
  size_name = size->name;
  props["hardwareProfile"]["vmSize"] = size_name;

  std::string zone;
  if (body.contains("zones")) {
    const json& z = body["zones"];
    if (!z.is_array() || z.size() > 1)
      return arm_error(400, "InvalidParameter",
                       "Virtual machine '" + name + "' can be placed in only one availability zone.", "zones");
    if (z.size() == 1) {
      zone = z[0].is_string() ? z[0].get<std::string>() : "";
      if (zone != "1" && zone != "2" && zone != "3")
        return arm_error(400, "InvalidParameter",
                         "The zone(s) '" + (z[0].is_string() ? zone : z[0].dump()) + "' for resource '" + name +
                             "' is not supported. The supported zones for location '" + location + "' are '1,2,3'.",
                         "zones");
    }
  }
  std::string priority = canonical_priority(str_at(props, {"priority"}));
  if (priority.empty())
    return arm_error(400, "InvalidParameter",
                     "The value '" + str_at(props, {"priority"}) +
                         "' of parameter 'priority' is not valid. Allowed values are 'Regular', 'Low' and 'Spot'.",
                     "priority");
  bool spot = priority != "Regular";
  if (props.contains("priority")) props["priority"] = priority;
  std::string eviction = str_at(props, {"evictionPolicy"});
  if (!eviction.empty() && !spot)
    return arm_error(400, "InvalidParameter",
                     "Eviction policy can be set only on Azure Spot Virtual Machines and Low priority virtual "
                     "machines.",
                     "evictionPolicy");
  if (spot) {
    if (eviction.empty()) eviction = "Deallocate";
    if (!iequals(eviction, "Deallocate") && !iequals(eviction, "Delete"))
      return arm_error(400, "InvalidParameter",
                       "The value '" + eviction +
                           "' of parameter 'evictionPolicy' is not valid. Allowed values are "
                           "'Deallocate' and 'Delete'.",
                       "evictionPolicy");
    props["evictionPolicy"] = iequals(eviction, "Delete") ? "Delete" : "Deallocate";
  }
  if (props.contains("billingProfile")) {
    const json& max = at(props, {"billingProfile", "maxPrice"});
    if (!spot)
      return arm_error(
          400, "InvalidParameter",
          "billingProfile can be set only on Azure Spot Virtual Machines and Low priority virtual machines.",
          "billingProfile");
    if (!max.is_null() && (!max.is_number() || (max.get<double>() != -1 && max.get<double>() < 0.00001)))
      return arm_error(400, "InvalidParameter",
                       "The value '" + max.dump() +
                           "' of parameter 'billingProfile.maxPrice' is not valid. It must be "
                           "-1 or a price in US dollars greater than or equal to 0.00001.",
                       "billingProfile.maxPrice");
  }
  if (!props.contains("osProfile") || !props["osProfile"].is_object())
    return arm_error(400, "InvalidParameter", "Required parameter 'osProfile' is missing (null).", "osProfile");
  json& os = props["osProfile"];
  std::optional<std::string> custom_data;
  if (os.contains("customData")) {
    if (!os["customData"].is_string() || !base64_decode(os["customData"].get<std::string>()) ||
        os["customData"].get<std::string>().size() > 87380)
      return arm_error(400, "InvalidParameter",
                       "Custom data in OSProfile must be in Base64 encoding and with a maximum length of 87380 "
                       "characters.",
                       "customData");
    custom_data = os["customData"].get<std::string>();
    os.erase("customData");
  }
  os.erase("adminPassword");
  if (str_at(os, {"adminUsername"}).empty())
    return arm_error(400, "InvalidParameter", "Required parameter 'adminUsername' is missing (null).", "adminUsername");
  if (!os.contains("computerName")) os["computerName"] = name;
  if (!os.contains("secrets")) os["secrets"] = json::array();
  if (!os.contains("allowExtensionOperations")) os["allowExtensionOperations"] = true;
  if (!os.contains("requireGuestProvisionSignal")) os["requireGuestProvisionSignal"] = true;

  // Network interfaces: they must exist, be free, share the VM's location,
  // one primary, and allow accelerated networking only on sizes that have it.
  const json& nic_refs = at(props, {"networkProfile", "networkInterfaces"});
  if (!nic_refs.is_array() || nic_refs.empty())
    return arm_error(400, "InvalidParameter",
                     "Required parameter 'networkProfile.networkInterfaces' is missing (null); a virtual machine needs "
                     "at least one network interface.",
                     "networkProfile.networkInterfaces");
  std::vector<std::string> nic_keys;
  int primaries = 0;
  for (const auto& ref : nic_refs) {
    std::string nic_id = str_at(ref, {"id"});
    auto nic = nics_.find(lower(nic_id));
    if (nic_id.empty() || nic == nics_.end())
      return arm_error(400, "InvalidParameter",
                       "Network interface '" + nic_id + "' referenced by virtual machine '" + name +
                           "' was not found. Create it before the virtual machine.",
                       "networkProfile.networkInterfaces.id");
    if (!nic->second.vm.empty() && nic->second.vm != key)
      return arm_error(409, "NicInUse",
                       "Network interface " + nic->second.model.value("id", "") + " is in use by virtual machine " +
                           vms_.at(nic->second.vm).model.value("id", "") + " and cannot be attached to '" + name +
                           "'.");
    if (nic->second.model.value("location", "") != location)
      return arm_error(400, "InvalidParameter",
                       "Network interface '" + nic_id + "' is in location '" + nic->second.model.value("location", "") +
                           "' but virtual machine '" + name + "' is in '" + location + "'.",
                       "networkProfile.networkInterfaces.id");
    if (nic_refs.size() == 1 || at(ref, {"properties", "primary"}) == true) ++primaries;
    if (!size->accelerated_networking && at(nic->second.model, {"properties", "enableAcceleratedNetworking"}) == true) {
      std::string compatible;
      for (const auto& [k, s] : catalog_)
        if (s.accelerated_networking) compatible += (compatible.empty() ? "" : ", ") + s.name;
      return arm_error(400, "VMSizeIsNotPermittedToEnableAcceleratedNetworking",
                       "Virtual machine " + name + " size " + size_name +
                           " is not compatible with enabling Accelerated Networking on network interface(s) on the VM. "
                           "Compatible VM sizes: " +
                           compatible);
    }
    nic_keys.push_back(nic->first);
  }
  if (primaries != 1)
    return arm_error(400, "InvalidParameter",
                     "Virtual machine " + name + " must have one network interface set as the primary.",
                     "networkProfile.networkInterfaces");

  // Storage: the OS disk gets the defaults Azure fills in.
  json& storage = props["storageProfile"];
  if (!storage.is_object()) storage = json::object();
  json& disk = storage["osDisk"];
  if (!disk.is_object()) disk = json::object();
  if (!disk.contains("name")) {
    std::string old_name = existing ? str_at(existing->model, {"properties", "storageProfile", "osDisk", "name"}) : "";
    disk["name"] = !old_name.empty() ? old_name : name + "_OsDisk_1_" + hex32(id_rng_);
  }
  if (!disk.contains("osType")) disk["osType"] = os.contains("windowsConfiguration") ? "Windows" : "Linux";
  if (!disk.contains("createOption")) disk["createOption"] = "FromImage";
  if (!disk.contains("caching")) disk["caching"] = "ReadWrite";
  if (!disk.contains("deleteOption")) disk["deleteOption"] = "Detach";
  if (!disk.contains("diskSizeGB")) disk["diskSizeGB"] = 30;
  if (!disk["managedDisk"].is_object()) disk["managedDisk"] = json::object();
  if (!disk["managedDisk"].contains("storageAccountType")) disk["managedDisk"]["storageAccountType"] = "Premium_LRS";
  disk["managedDisk"]["id"] = "/subscriptions/" + rt.sub + "/resourceGroups/" + rg_name +
                              "/providers/Microsoft.Compute/disks/" + disk["name"].get<std::string>();
  if (!storage.contains("dataDisks")) storage["dataDisks"] = json::array();

  // Properties that cannot change after creation.
  if (existing) {
    const json& old = existing->model;
    auto unchanged = [&](const json& a, const json& b) { return a == b || (a.is_null() && b.is_null()); };
    std::vector<std::pair<std::string, bool>> checks = {
        {"zones", unchanged(at(old, {"zones"}), body.contains("zones") ? body["zones"] : kNull) ||
                      (zone_of(old).empty() && zone.empty())},
        {"priority", canonical_priority(str_at(old, {"properties", "priority"})) == priority},
        {"evictionPolicy", str_at(old, {"properties", "evictionPolicy"}) == str_at(props, {"evictionPolicy"})},
        {"customData", !custom_data || *custom_data == existing->custom_data},
        {"adminUsername", str_at(old, {"properties", "osProfile", "adminUsername"}) == str_at(os, {"adminUsername"})},
        {"computerName", str_at(old, {"properties", "osProfile", "computerName"}) == str_at(os, {"computerName"})},
        {"osDisk.name", str_at(old, {"properties", "storageProfile", "osDisk", "name"}) == str_at(disk, {"name"})}};
    for (const auto& [property, same] : checks)
      if (!same)
        return arm_error(409, "PropertyChangeNotAllowed", "Changing property '" + property + "' is not allowed.",
                         property);
  }

  if (sku_restricted(location, zone, size_name))
    return arm_error(409, "SkuNotAvailable",
                     "The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: " +
                         size_name + "' is currently not available in location '" + location + "'" +
                         (zone.empty() ? "" : " zones '" + zone + "'") +
                         ". Please try another size or deploy to a different location or different zone. See "
                         "https://aka.ms/azureskunotavailable for details.");

  int old_vcpus = 0;
  if (existing)
    if (const VmSize* old = size_of(str_at(existing->model, {"properties", "hardwareProfile", "vmSize"})))
      old_vcpus = (lower(old->family) == lower(size->family)) ? old->vcpus : 0;
  if (std::string q = quota_check(rt.sub, location, *size, spot, size->vcpus - old_vcpus, key); !q.empty())
    return arm_error(409, "OperationNotAllowed", q);

  // ---- accepted: decide the allocation now, report it when the operation ends
  std::string old_size = existing ? str_at(existing->model, {"properties", "hardwareProfile", "vmSize"}) : "";
  bool resize = existing && existing->allocated && !iequals(old_size, size_name);
  bool needs_allocation =
      !existing || resize ||
      (str_at(existing->model, {"properties", "provisioningState"}) == "Failed" && !existing->allocated);
  std::string allocation = needs_allocation ? capacity_check(location, zone, size_name, key) : "";

  json model = existing ? existing->model : json::object();
  model["id"] = id;
  model["name"] = name;
  model["type"] = "Microsoft.Compute/virtualMachines";
  model["location"] = location;
  if (body.contains("tags"))
    model["tags"] = body["tags"];
  else
    model.erase("tags");
  if (!zone.empty())
    model["zones"] = json::array({zone});
  else
    model.erase("zones");
  for (const char* k : {"identity", "plan", "extendedLocation"})
    if (body.contains(k)) model[k] = body[k];
  json old_props = existing ? existing->model["properties"] : json::object();
  props["vmId"] = old_props.contains("vmId") ? old_props["vmId"] : json(new_guid(id_rng_));
  props["timeCreated"] =
      old_props.contains("timeCreated") ? old_props["timeCreated"] : json(iso_millis(SysClock::now()));
  props["provisioningState"] = existing ? "Updating" : "Creating";
  props.erase("instanceView");
  model["properties"] = props;

  Vm& vm = existing ? *existing : vms_[key];
  bool created = !existing;
  vm.model = model;
  vm.sub = rt.sub;
  vm.rg = rg_name;
  if (custom_data) vm.custom_data = *custom_data;
  bool was_allocated = vm.allocated;
  if (needs_allocation && allocation.empty()) {
    vm.allocated = true;
    vm.power = "starting";
  }
  // Attach the referenced interfaces, detach the ones no longer listed.
  for (auto& [nk, nic] : nics_)
    if (nic.vm == key && std::find(nic_keys.begin(), nic_keys.end(), nk) == nic_keys.end()) nic.vm.clear();
  for (const auto& nk : nic_keys) nics_[nk].vm = key;

  std::string version = r.param("api-version");
  vm.op = start_op(
      rt.sub, "Microsoft.Compute", location, version, created ? "virtualMachines.create" : "virtualMachines.update",
      key, options_.lro_delay_ms, allocation.empty() ? json(nullptr) : allocation_error(allocation),
      [this, key] {
        auto it = vms_.find(key);
        if (it == vms_.end()) return;
        Vm& v = it->second;
        v.model["properties"]["provisioningState"] = "Succeeded";
        if (v.power == "starting" || v.power.empty()) v.power = "running";
        v.failure_code.clear();
        v.failure_message.clear();
        v.op.clear();
      },
      [this, key, allocation, old_size, resize, was_allocated] {
        auto it = vms_.find(key);
        if (it == vms_.end()) return;
        Vm& v = it->second;
        v.model["properties"]["provisioningState"] = "Failed";
        v.failure_code = allocation;
        v.failure_message = allocation_error(allocation)["message"];
        if (resize) {
          v.model["properties"]["hardwareProfile"]["vmSize"] = old_size;  // the old allocation stays
          v.allocated = was_allocated;
        } else {
          v.allocated = false;
          v.power = "";
        }
        v.op.clear();
      });
  Response out = json_response(created ? 201 : 200, vm_view(vm, false));
  lro_headers(r, out, vm.op, false);
  return out;
}

Response Arm::vm_get(const Request& r, const Route& rt) {
  if (!find_rg(rt.sub, rt.rg)) return rg_not_found(rt.rg);
  std::string key = lower(rg_id(rt.sub, rt.rg) + "/providers/Microsoft.Compute/virtualMachines/" + rt.name);
  auto it = vms_.find(key);
  if (it == vms_.end()) return not_found("Microsoft.Compute/virtualMachines", rt.name, rt.rg);
  if (rt.kind == Kind::kVmInstanceView) return json_response(200, instance_view(it->second));
  bool expand = iequals(r.param("$expand"), "instanceView");
  return json_response(200, vm_view(it->second, expand));
}

void Arm::remove_vm(const std::string& key) {
  auto it = vms_.find(key);
  if (it == vms_.end()) return;
  const json& refs = at(it->second.model, {"properties", "networkProfile", "networkInterfaces"});
  // Interfaces with deleteOption Delete go with the VM; the others are detached.
  std::vector<std::string> doomed;
  for (auto& [nk, nic] : nics_) {
    if (nic.vm != key) continue;
    nic.vm.clear();
    if (refs.is_array())
      for (const auto& ref : refs)
        if (lower(str_at(ref, {"id"})) == nk && iequals(str_at(ref, {"properties", "deleteOption"}), "Delete"))
          doomed.push_back(nk);
  }
  for (const auto& nk : doomed) nics_.erase(nk);
  vms_.erase(it);
}

Response Arm::vm_delete(const Request& r, const Route& rt) {
  if (!find_rg(rt.sub, rt.rg)) return rg_not_found(rt.rg);
  std::string key = lower(rg_id(rt.sub, rt.rg) + "/providers/Microsoft.Compute/virtualMachines/" + rt.name);
  auto it = vms_.find(key);
  if (it == vms_.end()) {
    Response out;
    out.status = 204;
    return out;
  }
  Vm& vm = it->second;
  vm.model["properties"]["provisioningState"] = "Deleting";
  if (!vm.power.empty() && vm.power != "deallocated") vm.power = "deallocating";
  vm.op = start_op(rt.sub, "Microsoft.Compute", vm.model.value("location", ""), r.param("api-version"),
                   "virtualMachines.delete", key, options_.lro_delay_ms, nullptr, [this, key] { remove_vm(key); });
  Response out;
  out.status = 202;
  lro_headers(r, out, vm.op, true);
  return out;
}

Response Arm::vm_list(const Request& r, const Route& rt) {
  std::string prefix;
  if (rt.kind == Kind::kVmList) {
    if (!find_rg(rt.sub, rt.rg)) return rg_not_found(rt.rg);
    prefix = lower(rg_id(rt.sub, rt.rg)) + "/providers/microsoft.compute/virtualmachines/";
  } else {
    prefix = "/subscriptions/" + rt.sub + "/";
  }
  bool expand = iequals(r.param("$expand"), "instanceView") || iequals(r.param("statusOnly"), "true");
  std::vector<json> items;
  for (const auto& [key, vm] : vms_)
    if (key.rfind(prefix, 0) == 0) items.push_back(vm_view(vm, expand));
  return page(r, items);
}

Response Arm::vm_action(const Request& r, const Route& rt) {
  if (!find_rg(rt.sub, rt.rg)) return rg_not_found(rt.rg);
  std::string action = lower(rt.action);
  if (action != "start" && action != "deallocate" && action != "poweroff" && action != "restart")
    return arm_error(400, "InvalidResourceType",
                     "The resource type 'virtualMachines/" + rt.action +
                         "' could not be found in the namespace 'Microsoft.Compute' for api version '" +
                         r.param("api-version") +
                         "'. The emulator implements start, deallocate, powerOff and restart.");
  std::string key = lower(rg_id(rt.sub, rt.rg) + "/providers/Microsoft.Compute/virtualMachines/" + rt.name);
  auto it = vms_.find(key);
  if (it == vms_.end()) return not_found("Microsoft.Compute/virtualMachines", rt.name, rt.rg);
  Vm& vm = it->second;
  std::string state = str_at(vm.model, {"properties", "provisioningState"});
  if (state == "Deleting")
    return arm_error(409, "OperationNotAllowed",
                     "Operation '" + rt.action + "' is not allowed on VM '" + vm.model.value("name", "") +
                         "' since the VM is marked for deletion. You can only retry the Delete operation (or wait for "
                         "an ongoing one to complete).");
  json error = nullptr;
  std::string final_power;
  bool release = false;
  if (action == "start" || action == "restart") {
    if (!vm.allocated) {
      std::string code = capacity_check(vm.model.value("location", ""), zone_of(vm.model),
                                        str_at(vm.model, {"properties", "hardwareProfile", "vmSize"}), key);
      if (!code.empty())
        error = allocation_error(code);
      else
        vm.allocated = true;
    }
    if (error.is_null()) vm.power = "starting";
    final_power = "running";
  } else if (action == "deallocate") {
    if (vm.power != "deallocated") vm.power = "deallocating";
    final_power = "deallocated";
    release = true;
  } else {
    if (vm.power == "running" || vm.power == "starting") vm.power = "stopping";
    final_power = vm.allocated ? "stopped" : vm.power;
  }
  vm.model["properties"]["provisioningState"] = "Updating";
  std::string code = error.is_null() ? "" : error.value("code", "");
  vm.op = start_op(
      rt.sub, "Microsoft.Compute", vm.model.value("location", ""), r.param("api-version"), "virtualMachines." + action,
      key, options_.lro_delay_ms, error,
      [this, key, final_power, release] {
        auto i = vms_.find(key);
        if (i == vms_.end()) return;
        i->second.power = final_power;
        if (release) i->second.allocated = false;
        i->second.model["properties"]["provisioningState"] = "Succeeded";
        i->second.op.clear();
      },
      [this, key, code] {
        auto i = vms_.find(key);
        if (i == vms_.end()) return;
        i->second.model["properties"]["provisioningState"] = "Failed";
        i->second.failure_code = code;
        i->second.failure_message = allocation_error(code)["message"];
        i->second.op.clear();
      });
  Response out;
  out.status = 202;
  lro_headers(r, out, vm.op, true);
  return out;
}

void Arm::evict(Vm& vm, const std::string& key) {
  preempt(key);
  vm.op.clear();
  vm.evicted = iso_millis(SysClock::now());
  counters_.count_event("evictions");
  if (iequals(str_at(vm.model, {"properties", "evictionPolicy"}), "Delete")) {
    remove_vm(key);
    return;
  }
  vm.power = "deallocated";
  vm.allocated = false;
  vm.model["properties"]["provisioningState"] = "Succeeded";
}

Response Arm::skus(const Request& r, const Route& rt) {
  Filter filter;
  std::string only_location;
  if (std::string err = parse_filter(r.param("$filter"), filter); !err.empty())
    return arm_error(400, "InvalidFilterInQueryString", err);
  for (const auto& [field, value] : filter.clauses)
    if (field == "location") only_location = lower(value);
  json value = json::array();
  for (const auto& [k, size] : catalog_) {
    for (const auto& location : options_.locations) {
      if (!only_location.empty() && location != only_location) continue;
      json restrictions = json::array();
      std::vector<std::string> zones_out;
      for (const auto& [place, s] : sku_unavailable_) {
        if (s != k || place.location != location) continue;
        if (place.zone.empty())
          restrictions.push_back({{"type", "Location"},
                                  {"values", {location}},
                                  {"restrictionInfo", {{"locations", {location}}}},
                                  {"reasonCode", "NotAvailableForSubscription"}});
        else
          zones_out.push_back(place.zone);
      }
      if (!zones_out.empty())
        restrictions.push_back({{"type", "Zone"},
                                {"values", {location}},
                                {"restrictionInfo", {{"locations", {location}}, {"zones", zones_out}}},
                                {"reasonCode", "NotAvailableForSubscription"}});
      std::string short_size = size.name.rfind("Standard_", 0) == 0 ? size.name.substr(9) : size.name;
      value.push_back(
          {{"resourceType", "virtualMachines"},
           {"name", size.name},
           {"tier", "Standard"},
           {"size", short_size},
           {"family", size.family},
           {"locations", {location}},
           {"locationInfo", {{{"location", location}, {"zones", {"1", "2", "3"}}, {"zoneDetails", json::array()}}}},
           {"capabilities",
            {{{"name", "vCPUs"}, {"value", std::to_string(size.vcpus)}},
             {{"name", "AcceleratedNetworkingEnabled"}, {"value", size.accelerated_networking ? "True" : "False"}},
             {{"name", "LowPriorityCapable"}, {"value", "True"}}}},
           {"restrictions", restrictions}});
    }
  }
  (void)rt;
  return json_response(200, {{"value", value}});
}

Response Arm::usages(const Request& r, const Route& rt) {
  (void)r;
  if (!location_known(rt.location))
    return arm_error(404, "NotFound", "The location '" + rt.location + "' is not available for this subscription.");
  std::map<std::string, std::pair<std::string, int>> usage;  // lower key -> (name, vCPUs)
  usage["cores"] = {"cores", 0};
  usage["lowprioritycores"] = {"lowPriorityCores", 0};
  for (const auto& [k, s] : catalog_) usage[lower(s.family)] = {s.family, 0};
  for (const auto& [key, vm] : vms_) {
    if (vm.sub != rt.sub || vm.model.value("location", "") != rt.location) continue;
    const VmSize* s = size_of(str_at(vm.model, {"properties", "hardwareProfile", "vmSize"}));
    if (!s) continue;
    if (canonical_priority(str_at(vm.model, {"properties", "priority"})) != "Regular") {
      usage["lowprioritycores"].second += s->vcpus;
    } else {
      usage["cores"].second += s->vcpus;
      usage[lower(s->family)].second += s->vcpus;
    }
  }
  json value = json::array();
  for (const auto& [k, u] : usage) {
    auto limit = quota_.find({rt.location, k});
    std::string label = k == "cores"              ? "Total Regional vCPUs"
                        : k == "lowprioritycores" ? "Total Regional Low-priority vCPUs"
                                                  : u.first + " vCPUs";
    value.push_back({{"unit", "Count"},
                     {"currentValue", u.second},
                     {"limit", limit == quota_.end() ? INT_MAX : limit->second},
                     {"name", {{"value", u.first}, {"localizedValue", label}}}});
  }
  return json_response(200, {{"value", value}});
}

}  // namespace plinth::azure_emulator
