// Test-only control endpoints under /__emulator/ (not part of Azure's API):
// inspect everything, change capacity, quota and SKU availability, evict a
// Spot VM, lose the next answers, mint tokens. docs/emulators.md lists them.
#include "tests/emulators/azure/arm.h"
#include "tests/emulators/azure/arm_util.h"

namespace plinth::azure_emulator {
namespace {

Response control_error(int status, const std::string& message) { return json_response(status, {{"error", message}}); }

}  // namespace

json Arm::dump_vm(const std::string& key, const Vm& vm) const {
  json model = vm.model;
  if (!vm.custom_data.empty()) model["properties"]["osProfile"]["customData"] = vm.custom_data;
  const json& zones = vm.model.contains("zones") ? vm.model["zones"] : json::array();
  return {{"id", vm.model.value("id", key)},
          {"name", vm.model.value("name", "")},
          {"resourceGroup", vm.rg},
          {"subscription", vm.sub},
          {"location", vm.model.value("location", "")},
          {"zone", zones.empty() ? json(nullptr) : zones[0]},
          {"size", vm.model["properties"]["hardwareProfile"].value("vmSize", "")},
          {"priority", vm.model["properties"].value("priority", "Regular")},
          {"provisioningState", vm.model["properties"].value("provisioningState", "")},
          {"powerState", vm.power.empty() ? json(nullptr) : json(vm.power)},
          {"allocated", vm.allocated},
          {"failure", vm.failure_code.empty() ? json(nullptr) : json(vm.failure_code)},
          {"evictedAt", vm.evicted.empty() ? json(nullptr) : json(vm.evicted)},
          {"operation", vm.op.empty() ? json(nullptr) : json(vm.op)},
          {"model", model}};
}

Response Arm::control(const Request& r) {
  auto s = segments(r.path);
  std::string what = s.size() >= 2 ? s[1] : "";
  json body = r.body.empty() ? json::object() : json::parse(r.body, nullptr, false);
  if (!body.is_object()) return control_error(400, "the body must be a JSON object");
  std::lock_guard<std::mutex> lock(mu_);
  advance(Clock::now());
  auto ops_view = [&] {
    json out = json::array();
    for (const auto& [id, op] : ops_) {
      json o = {{"id", id},
                {"kind", op.kind},
                {"target", op.target},
                {"provider", op.provider},
                {"status", op.status},
                {"startTime", arm_time(op.started)}};
      if (op.ended) o["endTime"] = arm_time(*op.ended);
      if (!op.error.is_null()) o["error"] = op.error;
      out.push_back(o);
    }
    return out;
  };
  auto vms_view = [&] {
    json out = json::array();
    for (const auto& [k, vm] : vms_) out.push_back(dump_vm(k, vm));
    return out;
  };

  if (r.method == "GET" && what == "state") {
    json rgs = json::array(), nics = json::array(), vnets = json::array(), capacity = json::array(),
         quota = json::array(), skus = json::array();
    for (const auto& [k, g] : rgs_) rgs.push_back(g.model);
    for (const auto& [k, n] : nics_) {
      json v = nic_view(n);
      v["attachedTo"] = n.vm.empty() ? json(nullptr) : json(vms_.count(n.vm) ? vms_.at(n.vm).model["id"] : json(n.vm));
      nics.push_back(v);
    }
    for (const auto& [k, v] : vnets_) vnets.push_back(vnet_view(v));
    for (const auto& [key, n] : capacity_) {
      int used = 0;
      for (const auto& [vk, vm] : vms_)
        if (vm.allocated && vm.model.value("location", "") == key.first.location &&
            lower(vm.model["properties"]["hardwareProfile"].value("vmSize", "")) == key.second &&
            (key.first.zone.empty() ||
             (vm.model.contains("zones") && vm.model["zones"].size() == 1 && vm.model["zones"][0] == key.first.zone)))
          ++used;
      capacity.push_back({{"location", key.first.location},
                          {"zone", key.first.zone.empty() ? json(nullptr) : json(key.first.zone)},
                          {"size", key.second},
                          {"limit", n},
                          {"allocated", used}});
    }
    for (const auto& [key, n] : quota_)
      quota.push_back({{"location", key.first}, {"family", key.second}, {"limit", n}});
    for (const auto& [place, size] : sku_unavailable_)
      skus.push_back({{"location", place.location},
                      {"zone", place.zone.empty() ? json(nullptr) : json(place.zone)},
                      {"size", size}});
    json subs = options_.subscriptions;
    return json_response(200, {{"entra", entra_.describe()},
                               {"subscriptions", subs},
                               {"resourceGroups", rgs},
                               {"virtualMachines", vms_view()},
                               {"networkInterfaces", nics},
                               {"virtualNetworks", vnets},
                               {"operations", ops_view()},
                               {"capacity", capacity},
                               {"quota", quota},
                               {"skuUnavailable", skus},
                               {"counters", counters_.snapshot()}});
  }
  if (r.method == "GET" && what == "vms") return json_response(200, vms_view());
  if (r.method == "GET" && what == "operations") return json_response(200, ops_view());
  if (what == "counters") {
    if (r.method == "DELETE") {
      counters_.reset();
      return json_response(200, counters_.snapshot());
    }
    if (r.method == "GET") return json_response(200, counters_.snapshot());
  }
  if (r.method == "POST" && what == "capacity") {
    std::string location = lower(body.value("location", ""));
    std::string zone = body.contains("zone") && body["zone"].is_string() ? body["zone"].get<std::string>() : "";
    std::string size = lower(body.value("size", ""));
    if (!location_known(location) || size.empty() || (!zone.empty() && zone != "1" && zone != "2" && zone != "3"))
      return control_error(400,
                           "capacity needs {\"location\": one of --locations, \"zone\": \"1\"|\"2\"|\"3\" "
                           "(optional), \"size\", \"count\": N or null}");
    if (body.contains("count") && body["count"].is_number_integer())
      capacity_[{Place{location, zone}, size}] = body["count"].get<int>();
    else
      capacity_.erase({Place{location, zone}, size});
    return json_response(
        200, {{"location", location}, {"zone", zone}, {"size", size}, {"count", body.value("count", json())}});
  }
  if (r.method == "POST" && what == "quota") {
    std::string location = lower(body.value("location", ""));
    std::string family = lower(body.value("family", ""));
    if (!location_known(location) || family.empty())
      return control_error(400, "quota needs {\"location\": one of --locations, \"family\", \"limit\": N or null}");
    if (body.contains("limit") && body["limit"].is_number_integer())
      quota_[{location, family}] = body["limit"].get<int>();
    else
      quota_.erase({location, family});
    return json_response(200, {{"location", location}, {"family", family}, {"limit", body.value("limit", json())}});
  }
  if (r.method == "POST" && what == "sku-availability") {
    std::string location = lower(body.value("location", ""));
    std::string zone = body.contains("zone") && body["zone"].is_string() ? body["zone"].get<std::string>() : "";
    std::string size = lower(body.value("size", ""));
    if (!location_known(location) || size.empty() || !body.contains("available") || !body["available"].is_boolean())
      return control_error(400,
                           "sku-availability needs {\"location\", \"zone\" (optional), \"size\", \"available\": "
                           "true|false}");
    if (body["available"].get<bool>())
      sku_unavailable_.erase({Place{location, zone}, size});
    else
      sku_unavailable_.insert({Place{location, zone}, size});
    return json_response(200, body);
  }
  if (r.method == "POST" && what == "evict") {
    std::string key = lower(body.value("id", ""));
    auto it = vms_.find(key);
    if (it == vms_.end()) return control_error(404, "no virtual machine with id '" + body.value("id", "") + "'");
    std::string priority = it->second.model["properties"].value("priority", "Regular");
    if (priority != "Spot" && priority != "Low")
      return control_error(409, "virtual machine '" + body.value("id", "") + "' has priority " + priority +
                                    "; only Spot and Low priority VMs are evicted");
    std::string policy = it->second.model["properties"].value("evictionPolicy", "Deallocate");
    json before = dump_vm(key, it->second);
    evict(it->second, key);
    auto after = vms_.find(key);
    return json_response(200, {{"id", before["id"]},
                               {"evictionPolicy", policy},
                               {"deleted", after == vms_.end()},
                               {"powerState", after == vms_.end() ? json(nullptr) : json(after->second.power)}});
  }
  if (r.method == "POST" && what == "faults") {
    if (body.contains("loseNextResponses")) {
      if (!body["loseNextResponses"].is_number_integer() || body["loseNextResponses"].get<int>() < 0)
        return control_error(400, "loseNextResponses must be a whole number");
      lose_next_ = body["loseNextResponses"].get<int>();
      lose_methods_ = {"PUT", "POST", "PATCH", "DELETE"};
      if (body.contains("methods") && body["methods"].is_array()) {
        lose_methods_.clear();
        for (const auto& m : body["methods"])
          if (m.is_string()) lose_methods_.insert(m.get<std::string>());
      }
    }
    if (body.contains("throttleNext")) {
      if (!body["throttleNext"].is_number_integer() || body["throttleNext"].get<int>() < 0)
        return control_error(400, "throttleNext must be a whole number");
      throttle_next_ = body["throttleNext"].get<int>();
    }
    json methods = lose_methods_;
    return json_response(200,
                         {{"loseNextResponses", lose_next_}, {"methods", methods}, {"throttleNext", throttle_next_}});
  }
  if (r.method == "POST" && what == "complete-operations") {
    // Every operation in progress ends now, as if its delay had passed.
    int n = 0;
    for (auto& [id, op] : ops_)
      if (op.status == "InProgress") {
        op.due = Clock::now();
        ++n;
      }
    advance(Clock::now());
    return json_response(200, {{"completed", n}});
  }
  if (r.method == "POST" && what == "token") {
    std::string client = body.value("clientId", options_.apps.front().client_id);
    std::string resource = body.value("resource", std::string("https://management.azure.com/"));
    int lifetime = body.value("lifetimeSeconds", options_.token_lifetime_s);
    auto token = entra_.issue(client, resource, lifetime);
    if (!token) return control_error(404, "no application '" + client + "'");
    return json_response(200, {{"access_token", *token}, {"token_type", "Bearer"}, {"expires_in", lifetime}});
  }
  return control_error(404, "unknown control endpoint " + r.method + " " + r.path +
                                "; see docs/emulators.md (state, vms, operations, counters, capacity, quota, "
                                "sku-availability, evict, faults, complete-operations, token)");
}

}  // namespace plinth::azure_emulator
