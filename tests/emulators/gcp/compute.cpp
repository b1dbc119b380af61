#include "tests/emulators/gcp/compute.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <regex>

#include "providers/gcp/jwt.h"
#include "tests/emulators/gcp/catalog.h"
#include "tests/emulators/gcp/instance_spec.h"
#include "tests/emulators/gcp/list_filter.h"

namespace plinth::gcp_emulator {

using nlohmann::json;

namespace {

const std::regex kUuid(R"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})");
constexpr size_t kMaxPage = 500;

std::string rfc3339(std::chrono::system_clock::time_point t) {
  // Google answers in Pacific time with an explicit offset; a fixed -07:00 keeps the shape.
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000) - 7 * 3600;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03d-07:00", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string limit_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

/// Parses maxResults / orderBy / pageToken / filter. `scope` binds tokens to
/// the list they came from.
struct ListParams {
  std::shared_ptr<const ListFilter> filter;
  size_t max = kMaxPage;
  bool newest_first = false;
  std::string after;  ///< keyset: the sort key of the last item of the previous page
  std::string sig;
};

std::optional<ApiAnswer> list_params(const ApiCall& c, const std::string& scope, ListParams& p) {
  auto q = [&](const char* k) {
    auto it = c.query.find(k);
    return it == c.query.end() ? std::optional<std::string>() : it->second;
  };
  if (auto f = q("filter")) {
    std::string err;
    p.filter = ListFilter::parse(*f, err);
    if (!p.filter) return invalid_field("filter", *f, "Invalid list filter expression.");
  } else {
    std::string err;
    p.filter = ListFilter::parse("", err);
  }
  if (auto m = q("maxResults")) {
    long long n = -1;
    try {
      size_t used = 0;
      n = std::stoll(*m, &used);
      if (used != m->size()) n = -1;
    } catch (...) {
      n = -1;
    }
    if (n < 0) return invalid_field("maxResults", *m, "Must be greater than or equal to 0");
    if (n > static_cast<long long>(kMaxPage))
      return invalid_field("maxResults", *m, "Must be less than or equal to 500");
    p.max = n == 0 ? kMaxPage : static_cast<size_t>(n);
  }
  std::string order = q("orderBy").value_or("");
  if (order == "creationTimestamp desc")
    p.newest_first = true;
  else if (!order.empty() && order != "name")
    return invalid_field("orderBy", order, "Only ordering by 'creationTimestamp desc' and 'name' is supported.");
  p.sig = fingerprint(scope + "\n" + q("filter").value_or("") + "\n" + order);
  if (auto t = q("pageToken"); t && !t->empty()) {
    auto raw = gcp::base64url_decode(*t);
    json tok = raw ? json::parse(*raw, nullptr, false) : json();
    if (!tok.is_object() || tok.value("s", "") != p.sig || !tok.contains("k") || !tok["k"].is_string())
      return invalid_field("pageToken", *t, "The page token is invalid or belongs to another list request.");
    p.after = tok["k"];
  }
  return std::nullopt;
}

std::string page_token(const std::string& key, const std::string& sig) {
  return gcp::base64url_encode(json{{"k", key}, {"s", sig}}.dump());
}

std::string sort_key(const ListParams& p, uint64_t seq, const std::string& name) {
  if (!p.newest_first) return name;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020llu", static_cast<unsigned long long>(UINT64_MAX - seq));
  return buf;
}

}  // namespace

std::string compute_method(const std::string& m, const std::vector<std::string>& p) {
  size_t n = p.size();
  if (n < 2 || p[0] != "projects") return "";
  if (n == 2) return m == "GET" ? "compute.projects.get" : "";
  if (p[2] == "aggregated" && n == 4 && p[3] == "instances")
    return m == "GET" ? "compute.instances.aggregatedList" : "";
  if (p[2] == "regions") {
    if (n == 3) return m == "GET" ? "compute.regions.list" : "";
    if (n == 4) return m == "GET" ? "compute.regions.get" : "";
    return "";
  }
  if (p[2] != "zones") return "";
  if (n == 3) return m == "GET" ? "compute.zones.list" : "";
  if (n == 4) return m == "GET" ? "compute.zones.get" : "";
  const std::string& coll = p[4];
  if (coll == "instances") {
    if (n == 5) return m == "GET" ? "compute.instances.list" : m == "POST" ? "compute.instances.insert" : "";
    if (n == 6) return m == "GET" ? "compute.instances.get" : m == "DELETE" ? "compute.instances.delete" : "";
    if (n == 7 && m == "POST") {
      if (p[6] == "stop") return "compute.instances.stop";
      if (p[6] == "start") return "compute.instances.start";
      if (p[6] == "setLabels") return "compute.instances.setLabels";
    }
    return "";
  }
  if (coll == "operations") {
    if (n == 5) return m == "GET" ? "compute.zoneOperations.list" : "";
    if (n == 6) return m == "GET" ? "compute.zoneOperations.get" : "";
    if (n == 7 && p[6] == "wait") return m == "POST" ? "compute.zoneOperations.wait" : "";
    return "";
  }
  if (coll == "disks") {
    if (n == 6) return m == "GET" ? "compute.disks.get" : m == "DELETE" ? "compute.disks.delete" : "";
    return "";
  }
  if (coll == "machineTypes" || coll == "acceleratorTypes") {
    if (n == 5) return m == "GET" ? "compute." + coll + ".list" : "";
    if (n == 6) return m == "GET" ? "compute." + coll + ".get" : "";
  }
  return "";
}

std::string compute_permission(const std::string& method) {
  if (method == "compute.instances.insert") return "compute.instances.create";
  if (method == "compute.instances.aggregatedList") return "compute.instances.list";
  if (method == "compute.zoneOperations.wait") return "compute.zoneOperations.get";
  return method;
}

Compute::Compute(ComputeSettings settings) : s_(std::move(settings)) {}

void Compute::set_base_url(const std::string& base) {
  std::lock_guard<std::mutex> lock(mu_);
  base_ = base;
}

std::string Compute::stamp(Clock::time_point t) const {
  // The wall-clock time of emulator time t (the clock offset included).
  return rfc3339(std::chrono::system_clock::now() +
                 std::chrono::duration_cast<std::chrono::system_clock::duration>(t - Clock::now()));
}

bool Compute::known_zone(const std::string& zone) const {
  return std::find(s_.zones.begin(), s_.zones.end(), zone) != s_.zones.end();
}

uint64_t Compute::next_id() {
  ++seq_;
  return 4700000000000000000ULL + seq_ * 7919ULL;
}

ApiAnswer Compute::handle(const std::string& method, const ApiCall& call) {
  std::unique_lock<std::mutex> lock(mu_);
  advance(now());
  if (method == "compute.zoneOperations.wait") {
    const auto& p = call.path;
    if (!known_zone(p[3])) return not_found("projects/" + s_.project + "/zones/" + p[3]);
    return operation_wait(p[3], p[5], lock);
  }
  try {
    return dispatch(method, call);
  } catch (const json::exception& e) {
    // A field of the wrong JSON type (checks read fields before anything changes).
    return error_answer(400, "invalid", std::string("Invalid JSON payload received. ") + e.what(), "global",
                        "INVALID_ARGUMENT");
  }
}

ApiAnswer Compute::dispatch(const std::string& method, const ApiCall& c) {
  const auto& p = c.path;
  if (method == "compute.projects.get") return project_get();
  if (method == "compute.regions.list" || method == "compute.regions.get") return regions(method, c);
  if (method == "compute.zones.list") return zones_list();
  if (method == "compute.instances.aggregatedList") return aggregated(c);
  const std::string& zone = p[3];
  if (!known_zone(zone)) return not_found("projects/" + s_.project + "/zones/" + zone);
  if (method == "compute.zones.get") return zone_get(zone);
  if (method == "compute.instances.insert") return insert(c, zone);
  if (method == "compute.instances.list") return list(c, zone);
  if (method == "compute.instances.get") return get(zone, p[5]);
  if (method == "compute.instances.delete") return remove(c, zone, p[5]);
  if (method == "compute.instances.stop") return stop_start(c, zone, p[5], false);
  if (method == "compute.instances.start") return stop_start(c, zone, p[5], true);
  if (method == "compute.instances.setLabels") return set_labels(c, zone, p[5]);
  if (method == "compute.zoneOperations.get") return operation_get(zone, p[5]);
  if (method == "compute.zoneOperations.list") return operation_list(c, zone);
  if (method == "compute.disks.get") return disk_get(zone, p[5]);
  if (method == "compute.disks.delete") return disk_delete(c, zone, p[5]);
  if (method == "compute.machineTypes.get" || method == "compute.machineTypes.list")
    return machine_type_call(method, c, zone);
  if (method == "compute.acceleratorTypes.get" || method == "compute.acceleratorTypes.list")
    return accelerator_type_call(method, c, zone);
  return error_answer(404, "notFound", "The requested method is not implemented by gcp-emulator: " + method);
}

// --- project, regions, zones, machine and accelerator types --------------------

ApiAnswer Compute::project_get() const {
  const std::string project_path = "projects/" + s_.project;
  json quotas = json::array();
  auto use = usage();
  for (const auto& [key, limit] : s_.quotas)
    if (key.find('@') == std::string::npos)
      quotas.push_back({{"metric", key}, {"limit", limit}, {"usage", use.count(key) ? use[key] : 0.0}});
  return {200,
          {{"kind", "compute#project"},
           {"id", s_.project_number},
           {"name", s_.project},
           {"creationTimestamp", "2024-01-01T00:00:00.000-07:00"},
           {"selfLink", link(project_path)},
           {"defaultServiceAccount", s_.project_number + "-compute@developer.gserviceaccount.com"},
           {"quotas", quotas}},
          false};
}

ApiAnswer Compute::regions(const std::string& method, const ApiCall& c) const {
  const auto& p = c.path;
  const std::string project_path = "projects/" + s_.project;
  std::vector<std::string> regions;
  for (const auto& z : s_.zones)
    if (std::find(regions.begin(), regions.end(), region_of(z)) == regions.end()) regions.push_back(region_of(z));
  std::sort(regions.begin(), regions.end());
  auto use = usage();
  auto region_json = [&](const std::string& r) {
    json zones = json::array(), quotas = json::array();
    for (const auto& z : s_.zones)
      if (region_of(z) == r) zones.push_back(zone_link(z));
    for (const auto& [key, limit] : s_.quotas) {
      auto at = key.find('@');
      if (at != std::string::npos && key.substr(at + 1) == r)
        quotas.push_back({{"metric", key.substr(0, at)}, {"limit", limit}, {"usage", use.count(key) ? use[key] : 0.0}});
    }
    return json{{"kind", "compute#region"},
                {"id", std::to_string(1000 + std::hash<std::string>{}(r) % 1000)},
                {"name", r},
                {"description", r},
                {"status", "UP"},
                {"zones", zones},
                {"quotas", quotas},
                {"selfLink", link(project_path + "/regions/" + r)}};
  };
  if (method == "compute.regions.get") {
    if (std::find(regions.begin(), regions.end(), p[3]) == regions.end())
      return not_found(project_path + "/regions/" + p[3]);
    return {200, region_json(p[3]), false};
  }
  json items = json::array();
  for (const auto& r : regions) items.push_back(region_json(r));
  return {200,
          {{"kind", "compute#regionList"},
           {"id", project_path + "/regions"},
           {"items", items},
           {"selfLink", link(project_path + "/regions")}},
          false};
}

ApiAnswer Compute::zones_list() const {
  const std::string project_path = "projects/" + s_.project;
  json items = json::array();
  for (const auto& z : s_.zones)
    items.push_back({{"kind", "compute#zone"},
                     {"name", z},
                     {"description", z},
                     {"status", "UP"},
                     {"region", link(project_path + "/regions/" + region_of(z))},
                     {"selfLink", zone_link(z)}});
  return {200,
          {{"kind", "compute#zoneList"},
           {"id", project_path + "/zones"},
           {"items", items},
           {"selfLink", link(project_path + "/zones")}},
          false};
}

ApiAnswer Compute::zone_get(const std::string& zone) const {
  const std::string project_path = "projects/" + s_.project;
  return {200,
          {{"kind", "compute#zone"},
           {"id", std::to_string(2000 + std::hash<std::string>{}(zone) % 1000)},
           {"name", zone},
           {"description", zone},
           {"status", "UP"},
           {"region", link(project_path + "/regions/" + region_of(zone))},
           {"selfLink", zone_link(zone)}},
          false};
}

ApiAnswer Compute::machine_type_call(const std::string& method, const ApiCall& c, const std::string& zone) const {
  const auto& p = c.path;
  const std::string project_path = "projects/" + s_.project;
  auto mt_json = [&](const MachineType& m) {
    json j = {{"kind", "compute#machineType"},
              {"id", std::to_string(900000 + std::hash<std::string>{}(m.name) % 100000)},
              {"creationTimestamp", "2015-01-01T00:00:00.000-07:00"},
              {"name", m.name},
              {"description",
               std::to_string(m.cpus) + " vCPUs, " + std::to_string(m.memory_mb / 1024) + " GB RAM" +
                   (m.accelerator_count ? ", " + std::to_string(m.accelerator_count) + " accelerator cards" : "")},
              {"guestCpus", m.cpus},
              {"memoryMb", m.memory_mb},
              {"imageSpaceGb", 0},
              {"maximumPersistentDisks", 128},
              {"maximumPersistentDisksSizeGb", "263168"},
              {"zone", zone},
              {"selfLink", zone_link(zone) + "/machineTypes/" + m.name},
              {"isSharedCpu", m.shared_cpu}};
    if (m.accelerator_count)
      j["accelerators"] =
          json::array({{{"guestAcceleratorType", m.accelerator}, {"guestAcceleratorCount", m.accelerator_count}}});
    return j;
  };
  if (method == "compute.machineTypes.get") {
    const MachineType* m = find_machine_type(p[5]);
    if (!m) return not_found(project_path + "/zones/" + zone + "/machineTypes/" + p[5]);
    return {200, mt_json(*m), false};
  }
  ListParams lp;
  if (auto e = list_params(c, "machineTypes/" + zone, lp)) return *e;
  json items = json::array();
  std::string last;
  bool more = false;
  for (const auto& m : machine_types()) {
    if (!lp.after.empty() && m.name <= lp.after) continue;
    json j = mt_json(m);
    if (!lp.filter->matches(j)) continue;
    if (items.size() == lp.max) {
      more = true;
      break;
    }
    items.push_back(j);
    last = m.name;
  }
  json out = {{"kind", "compute#machineTypeList"},
              {"id", project_path + "/zones/" + zone + "/machineTypes"},
              {"selfLink", zone_link(zone) + "/machineTypes"}};
  if (!items.empty()) out["items"] = items;
  if (more) out["nextPageToken"] = page_token(last, lp.sig);
  return {200, out, false};
}

ApiAnswer Compute::accelerator_type_call(const std::string& method, const ApiCall& c, const std::string& zone) const {
  const auto& p = c.path;
  const std::string project_path = "projects/" + s_.project;
  auto at_json = [&](const AcceleratorType& a) {
    return json{{"kind", "compute#acceleratorType"},
                {"id", std::to_string(10000 + std::hash<std::string>{}(a.name) % 10000)},
                {"creationTimestamp", "2017-01-01T00:00:00.000-07:00"},
                {"name", a.name},
                {"description", a.description},
                {"zone", zone_link(zone)},
                {"maximumCardsPerInstance", a.max_per_instance},
                {"selfLink", zone_link(zone) + "/acceleratorTypes/" + a.name}};
  };
  if (method == "compute.acceleratorTypes.get") {
    const AcceleratorType* a = find_accelerator_type(p[5]);
    if (!a) return not_found(project_path + "/zones/" + zone + "/acceleratorTypes/" + p[5]);
    return {200, at_json(*a), false};
  }
  ListParams lp;
  if (auto e = list_params(c, "acceleratorTypes/" + zone, lp)) return *e;
  json items = json::array();
  for (const auto& a : accelerator_types())
    if (lp.filter->matches(at_json(a))) items.push_back(at_json(a));
  json out = {{"kind", "compute#acceleratorTypeList"},
              {"id", project_path + "/zones/" + zone + "/acceleratorTypes"},
              {"selfLink", zone_link(zone) + "/acceleratorTypes"}};
  if (!items.empty()) out["items"] = items;
  return {200, out, false};
}

// --- time ------------------------------------------------------------------

void Compute::advance(Clock::time_point now) {
  for (;;) {
    Operation* next = nullptr;
    bool to_done = false;
    Clock::time_point when{};
    for (const auto& name : active_) {
      Operation& op = ops_.at(name);
      bool d = op.status == "RUNNING";
      Clock::time_point t = d ? op.done_at : op.start_at;
      if (t > now) continue;
      if (!next || t < when || (t == when && op.seq < next->seq)) {
        next = &op;
        when = t;
        to_done = d;
      }
    }
    if (!next) return;
    transition(*next, to_done);
  }
}

void Compute::finish_now_if_instant(Operation& op) {
  if (s_.operation_ms == 0) {
    transition(op, false);
    transition(op, true);
  }
}

void Compute::transition(Operation& op, bool to_done) {
  auto inst_it = instances_.find({op.zone, op.target_name});
  Instance* inst = nullptr;
  if (op.target_kind == "instances" && inst_it != instances_.end() && inst_it->second.id == op.target_id)
    inst = &inst_it->second;
  auto release = [&] {
    if (inst && inst->busy_op == op.name) inst->busy_op.clear();
  };
  auto erase_instance = [&] {
    for (const auto& d : inst->disks) {
      auto it = disks_.find({op.zone, d});
      if (it == disks_.end() || it->second.user != inst->name) continue;
      if (it->second.auto_delete)
        disks_.erase(it);
      else
        it->second.user.clear();
    }
    instances_.erase(inst_it);
    inst = nullptr;
  };
  if (!to_done) {
    op.status = "RUNNING";
    op.start_time = stamp(op.start_at);
    if (inst) {
      if (op.type == "insert" && inst->status == "PROVISIONING") inst->status = "STAGING";
      if (op.type == "start" && inst->status == "PROVISIONING") inst->status = "STAGING";
    }
    cv_.notify_all();
    return;
  }
  op.status = "DONE";
  op.end_time = stamp(op.done_at);
  active_.erase(op.name);
  bool failed = !op.error.is_null();
  if (op.type == "insert" && inst) {
    if (failed) {
      erase_instance();
    } else {
      inst->status = "RUNNING";
      inst->last_start = op.end_time;
    }
  } else if (op.type == "delete" && inst) {
    erase_instance();
  } else if (op.type == "stop" && inst) {
    inst->status = "TERMINATED";
    inst->last_stop = op.end_time;
  } else if (op.type == "start" && inst) {
    inst->status = failed ? "TERMINATED" : "RUNNING";
    if (!failed) inst->last_start = op.end_time;
  } else if (op.type == "compute.instances.preempted" && inst) {
    if (inst->termination_action == "DELETE") {
      erase_instance();
    } else {
      inst->status = "TERMINATED";
      inst->last_stop = op.end_time;
    }
  } else if (op.type == "delete" && op.target_kind == "disks") {
    disks_.erase({op.zone, op.target_name});
  }
  if (inst) release();
  cv_.notify_all();
}

Compute::Operation& Compute::new_operation(const std::string& zone, const std::string& type, const std::string& user,
                                           const std::string& target_kind, const std::string& target_name,
                                           uint64_t target_id) {
  Operation op;
  op.id = next_id();
  op.seq = seq_;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count();
  char name[96];
  std::snprintf(name, sizeof name, "operation-%lld-%013llx-%08llx-%08llx", static_cast<long long>(ms),
                static_cast<unsigned long long>(op.id & 0xfffffffffffffULL),
                static_cast<unsigned long long>((op.seq * 2654435761ULL) & 0xffffffffULL),
                static_cast<unsigned long long>((op.id ^ 0x9e3779b97f4a7c15ULL) & 0xffffffffULL));
  op.name = name;
  op.zone = zone;
  op.type = type;
  op.user = user;
  op.target_kind = target_kind;
  op.target_name = target_name;
  op.target_id = target_id;
  auto t = now();
  op.start_at = t + std::chrono::milliseconds(s_.operation_ms / 3);
  op.done_at = t + std::chrono::milliseconds(s_.operation_ms);
  op.insert_time = stamp(now());
  active_.insert(op.name);
  return ops_[op.name] = std::move(op);
}

// --- requestId ---------------------------------------------------------------

std::optional<ApiAnswer> Compute::replay(const ApiCall& c, std::string& request_id) {
  auto it = c.query.find("requestId");
  if (it == c.query.end() || it->second.empty()) return std::nullopt;
  request_id = it->second;
  if (!std::regex_match(request_id, kUuid) || request_id == "00000000-0000-0000-0000-000000000000")
    return invalid_field("requestId", request_id,
                         "The request id must be a valid UUID with the exception that zero UUID is not supported "
                         "(00000000-0000-0000-0000-000000000000).");
  auto seen = request_ids_.find(lower(request_id));
  if (seen == request_ids_.end()) return std::nullopt;
  return ApiAnswer{200, render(ops_.at(seen->second)), true};
}

void Compute::remember(const std::string& request_id, const std::string& op) {
  if (!request_id.empty()) request_ids_[lower(request_id)] = op;
}

// --- capacity and quota --------------------------------------------------------

std::optional<int> Compute::capacity_limit(const std::string& zone, const std::string& type) const {
  if (auto it = s_.capacity.find(zone + "/" + type); it != s_.capacity.end()) return it->second;
  if (auto it = s_.capacity.find(type); it != s_.capacity.end()) return it->second;
  return std::nullopt;
}

int Compute::capacity_used(const std::string& zone, const std::string& type) const {
  int used = 0;
  for (const auto& [key, inst] : instances_)
    if (inst.zone == zone && inst.machine_type == type && !inst.doomed && inst.status != "TERMINATED") ++used;
  return used;
}

json Compute::capacity_error(const Instance& inst, const std::string& project_zone) const {
  auto limit = capacity_limit(inst.zone, inst.machine_type);
  if (!limit || capacity_used(inst.zone, inst.machine_type) < *limit) return nullptr;
  std::string message =
      "The zone '" + project_zone + "' does not have enough resources available to fulfill the request.  ";
  if (!s_.stockout_details) {
    return json{{"errors", json::array({{{"code", "ZONE_RESOURCE_POOL_EXHAUSTED"},
                                         {"message", message + "Try a different zone, or try again later."}}})}};
  }
  std::vector<std::string> available;
  for (const auto& z : s_.zones) {
    if (z == inst.zone || region_of(z) != region_of(inst.zone)) continue;
    auto l = capacity_limit(z, inst.machine_type);
    if (!l || capacity_used(z, inst.machine_type) < *l) available.push_back(z);
  }
  const MachineType* mt = find_machine_type(inst.machine_type);
  std::string acc;
  int acc_count = 0;
  if (mt && mt->accelerator_count) {
    acc = mt->accelerator;
    acc_count = mt->accelerator_count;
  } else if (inst.spec.contains("guestAccelerators") && !inst.spec["guestAccelerators"].empty()) {
    acc = inst.spec["guestAccelerators"][0].value("_name", "");
    acc_count = inst.spec["guestAccelerators"][0].value("acceleratorCount", 0);
  }
  std::string zones_text;
  for (const auto& z : available) zones_text += (zones_text.empty() ? "" : ", ") + z;
  std::string what = "A " + inst.machine_type + " VM instance" +
                     (acc_count ? " with " + std::to_string(acc_count) + " " + acc + " accelerator(s)" : "");
  std::string localized = what + " is currently unavailable in the " + inst.zone + " zone. " +
                          (available.empty() ? ""
                                             : "Consider trying your request in the " + zones_text +
                                                   " zone(s), which currently has capacity to accommodate your "
                                                   "request. ") +
                          "Alternatively, you can try your request again with a different VM hardware configuration "
                          "or at a later time. For more information, see the troubleshooting documentation.";
  json metadatas = {{"vmType", inst.machine_type}, {"zone", inst.zone}};
  if (acc_count) metadatas["attachment"] = acc + ":" + std::to_string(acc_count);
  if (!available.empty()) {
    std::string csv;
    for (const auto& z : available) csv += (csv.empty() ? "" : ",") + z;
    metadatas["zonesAvailable"] = csv;
  }
  json details = json::array(
      {{{"errorInfo",
         {{"reason", "resource_availability"}, {"domain", "compute.googleapis.com"}, {"metadatas", metadatas}}}},
       {{"help",
         {{"links", json::array({{{"description", "Troubleshooting documentation"},
                                  {"url", "https://cloud.google.com/compute/docs/resource-error"}}})}}}},
       {{"localizedMessage", {{"locale", "en-US"}, {"message", localized}}}}});
  return json{{"errors", json::array({{{"code", "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"},
                                       {"message", message + "'(resource type:compute)'."},
                                       {"errorDetails", details}}})}};
}

std::map<std::string, double> Compute::usage_of(const Instance& inst) const {
  std::map<std::string, double> out;
  std::string region = region_of(inst.zone);
  auto has_limit = [&](const std::string& metric) { return s_.quotas.count(metric + "@" + region) > 0; };
  const MachineType* mt = find_machine_type(inst.machine_type);
  if (!mt) return out;
  std::string cpus = inst.spot && has_limit("PREEMPTIBLE_CPUS") ? "PREEMPTIBLE_CPUS" : "CPUS";
  out[cpus + "@" + region] += mt->cpus;
  out["INSTANCES@" + region] += 1;
  std::string acc = mt->accelerator;
  int count = mt->accelerator_count;
  if (!count && inst.spec.contains("guestAccelerators") && !inst.spec["guestAccelerators"].empty()) {
    acc = inst.spec["guestAccelerators"][0].value("_name", "");
    count = inst.spec["guestAccelerators"][0].value("acceleratorCount", 0);
  }
  if (const AcceleratorType* a = find_accelerator_type(acc); a && count) {
    std::string g =
        inst.spot && has_limit("PREEMPTIBLE_" + a->quota_metric) ? "PREEMPTIBLE_" + a->quota_metric : a->quota_metric;
    out[g + "@" + region] += count;
    out["GPUS_ALL_REGIONS"] += count;
  }
  return out;
}

std::map<std::string, double> Compute::usage() const {
  std::map<std::string, double> total;
  for (const auto& [key, inst] : instances_) {
    if (inst.doomed || inst.status == "TERMINATED") continue;
    for (const auto& [k, v] : usage_of(inst)) total[k] += v;
  }
  return total;
}

json Compute::quota_error(const Instance& inst) const {
  auto want = usage_of(inst);
  auto have = usage();
  // GPU metrics first, then CPUs, instances and the global GPU quota: the order GCP reports them in.
  std::vector<std::string> order;
  for (const auto& [k, v] : want)
    if (k.find("GPUS@") != std::string::npos) order.push_back(k);
  for (const auto& [k, v] : want)
    if (k.find("GPUS@") == std::string::npos && k != "GPUS_ALL_REGIONS") order.push_back(k);
  if (want.count("GPUS_ALL_REGIONS")) order.push_back("GPUS_ALL_REGIONS");
  for (const auto& key : order) {
    auto limit = s_.quotas.find(key);
    if (limit == s_.quotas.end() || have[key] + want[key] <= limit->second) continue;
    auto at = key.find('@');
    std::string metric = key.substr(0, at);
    std::string region = at == std::string::npos ? "" : key.substr(at + 1);
    std::string limit_name = metric;
    std::replace(limit_name.begin(), limit_name.end(), '_', '-');
    json info = {{"metricName", "compute.googleapis.com/" + lower(metric)},
                 {"limitName", limit_name + (region.empty() ? "-per-project" : "-per-project-region")},
                 {"limit", limit->second}};
    if (!region.empty()) info["dimensions"] = {{"region", region}};
    std::string message = "Quota '" + metric + "' exceeded.  Limit: " + limit_text(limit->second) +
                          (region.empty() ? " globally." : " in region " + region + ".");
    return json{{"errors", json::array({{{"code", "QUOTA_EXCEEDED"},
                                         {"message", message},
                                         {"errorDetails", json::array({{{"quotaInfo", info}}})}}})}};
  }
  return nullptr;
}

// --- rendering ---------------------------------------------------------------

json Compute::render(const Instance& inst) const {
  json j = inst.spec;
  std::string self = zone_link(inst.zone) + "/instances/" + inst.name;
  j["kind"] = "compute#instance";
  j["id"] = std::to_string(inst.id);
  j["creationTimestamp"] = inst.created;
  j["name"] = inst.name;
  j["zone"] = zone_link(inst.zone);
  j["status"] = inst.status;
  j["selfLink"] = self;
  j["machineType"] = zone_link(inst.zone) + "/machineTypes/" + inst.machine_type;
  const MachineType* mt = find_machine_type(inst.machine_type);
  j["cpuPlatform"] = inst.status == "RUNNING" && mt ? mt->cpu_platform : "Unknown CPU Platform";
  j["labelFingerprint"] = fingerprint(json(inst.labels).dump());
  if (!inst.labels.empty()) j["labels"] = inst.labels;
  if (!inst.last_start.empty()) j["lastStartTimestamp"] = inst.last_start;
  if (!inst.last_stop.empty()) j["lastStopTimestamp"] = inst.last_stop;
  if (j.contains("guestAccelerators"))
    for (auto& a : j["guestAccelerators"]) a.erase("_name");
  j["fingerprint"] = fingerprint(j.dump());
  return j;
}

json Compute::render(const Operation& op) const {
  json j = {{"kind", "compute#operation"},
            {"id", std::to_string(op.id)},
            {"name", op.name},
            {"zone", zone_link(op.zone)},
            {"operationType", op.type},
            {"targetLink", zone_link(op.zone) + "/" + op.target_kind + "/" + op.target_name},
            {"targetId", std::to_string(op.target_id)},
            {"status", op.status},
            {"user", op.user},
            {"progress", op.status == "DONE" ? 100 : 0},
            {"insertTime", op.insert_time},
            {"selfLink", zone_link(op.zone) + "/operations/" + op.name}};
  if (!op.start_time.empty()) j["startTime"] = op.start_time;
  if (!op.end_time.empty()) j["endTime"] = op.end_time;
  if (!op.status_message.empty()) j["statusMessage"] = op.status_message;
  if (op.status == "DONE" && !op.error.is_null()) {
    j["error"] = op.error;
    j["httpErrorStatusCode"] = op.http_error;
    j["httpErrorMessage"] = op.http_error_message;
  }
  return j;
}

json Compute::render(const Disk& d) const {
  json j = {{"kind", "compute#disk"},
            {"id", std::to_string(d.id)},
            {"creationTimestamp", d.created},
            {"name", d.name},
            {"sizeGb", std::to_string(d.size_gb)},
            {"zone", zone_link(d.zone)},
            {"status", "READY"},
            {"selfLink", zone_link(d.zone) + "/disks/" + d.name},
            {"type", zone_link(d.zone) + "/diskTypes/" + d.type},
            {"physicalBlockSizeBytes", "4096"}};
  if (!d.source_image.empty()) j["sourceImage"] = d.source_image;
  if (!d.user.empty()) j["users"] = json::array({zone_link(d.zone) + "/instances/" + d.user});
  return j;
}

// --- instances ----------------------------------------------------------------

ApiAnswer Compute::insert(const ApiCall& c, const std::string& zone) {
  std::string request_id;
  if (auto r = replay(c, request_id)) return *r;
  if (c.query.count("sourceInstanceTemplate"))
    return error_answer(400, "badRequest",
                        "gcp-emulator does not implement instance templates (sourceInstanceTemplate)");

  InstanceSpec v;
  if (auto e = build_instance_spec(json::parse(c.body, nullptr, false),
                                   SpecScope{s_.project, s_.project_number, zone, base_}, ip_seq_, v))
    return *e;
  const std::string& name = v.name;
  Instance inst;
  inst.zone = zone;
  inst.name = v.name;
  inst.machine_type = v.machine_type;
  inst.spot = v.spot;
  inst.termination_action = v.termination_action;
  inst.labels = v.labels;
  json spec = v.spec;
  std::vector<Disk> new_disks;
  for (const auto& d : v.disks) {
    Disk disk;
    disk.zone = zone;
    disk.name = d.name;
    disk.type = d.type;
    disk.source_image = d.source_image;
    disk.size_gb = d.size_gb;
    disk.auto_delete = d.auto_delete;
    new_disks.push_back(disk);
  }

  // Conflicts are answered synchronously, as GCP does.
  if (instances_.count({zone, name}))
    return error_answer(
        409, "alreadyExists",
        "The resource 'projects/" + s_.project + "/zones/" + zone + "/instances/" + name + "' already exists");

  inst.id = next_id();
  inst.seq = seq_;
  inst.status = "PROVISIONING";
  inst.created = stamp(now());
  inst.spec = spec;
  for (const auto& d : new_disks) inst.disks.push_back(d.name);

  // Failures that GCP reports in the operation: an existing disk, quota, then capacity.
  json failure = nullptr;
  int http = 0;
  std::string http_message;
  for (const auto& d : new_disks)
    if (failure.is_null() && disks_.count({zone, d.name})) {
      failure = json{{"errors", json::array({{{"code", "RESOURCE_ALREADY_EXISTS"},
                                              {"message", "The resource 'projects/" + s_.project + "/zones/" + zone +
                                                              "/disks/" + d.name + "' already exists"}}})}};
      http = 409;
      http_message = "CONFLICT";
    }
  if (failure.is_null()) {
    failure = quota_error(inst);
    http = 403;
    http_message = "FORBIDDEN";
  }
  if (failure.is_null()) {
    failure = capacity_error(inst, "projects/" + s_.project + "/zones/" + zone);
    http = 503;
    http_message = "SERVICE UNAVAILABLE";
  }
  inst.doomed = !failure.is_null();
  if (!inst.doomed) {
    for (auto& d : new_disks) {
      d.id = next_id();
      d.created = inst.created;
      d.user = name;
      disks_[{zone, d.name}] = d;
    }
  }
  Operation& op = new_operation(zone, "insert", c.caller.email, "instances", name, inst.id);
  if (inst.doomed) {
    op.error = failure;
    op.http_error = http;
    op.http_error_message = http_message;
  }
  inst.busy_op = op.name;
  instances_[{zone, name}] = std::move(inst);
  remember(request_id, op.name);
  finish_now_if_instant(op);
  return {200, render(op), true};
}

ApiAnswer Compute::get(const std::string& zone, const std::string& name) {
  auto it = instances_.find({zone, name});
  if (it == instances_.end()) return not_found("projects/" + s_.project + "/zones/" + zone + "/instances/" + name);
  return {200, render(it->second), false};
}

ApiAnswer Compute::remove(const ApiCall& c, const std::string& zone, const std::string& name) {
  std::string request_id;
  if (auto r = replay(c, request_id)) return *r;
  std::string path = "projects/" + s_.project + "/zones/" + zone + "/instances/" + name;
  auto it = instances_.find({zone, name});
  if (it == instances_.end()) return not_found(path);
  Instance& inst = it->second;
  if (inst.spec.value("deletionProtection", false))
    return error_answer(400, "resourceInUseByAnotherResource",
                        "Invalid resource usage: 'Resource cannot be deleted if it's protected against deletion.'.");
  if (!inst.busy_op.empty()) return error_answer(400, "resourceNotReady", "The resource '" + path + "' is not ready");
  Operation& op = new_operation(zone, "delete", c.caller.email, "instances", name, inst.id);
  inst.busy_op = op.name;
  if (inst.status != "TERMINATED") inst.status = "STOPPING";
  remember(request_id, op.name);
  finish_now_if_instant(op);
  return {200, render(op), true};
}

ApiAnswer Compute::stop_start(const ApiCall& c, const std::string& zone, const std::string& name, bool start) {
  std::string request_id;
  if (auto r = replay(c, request_id)) return *r;
  std::string path = "projects/" + s_.project + "/zones/" + zone + "/instances/" + name;
  auto it = instances_.find({zone, name});
  if (it == instances_.end()) return not_found(path);
  Instance& inst = it->second;
  if (!inst.busy_op.empty()) return error_answer(400, "resourceNotReady", "The resource '" + path + "' is not ready");
  Operation& op = new_operation(zone, start ? "start" : "stop", c.caller.email, "instances", name, inst.id);
  if (start && inst.status == "TERMINATED") {
    // Checked while it is still TERMINATED, so it does not count against itself.
    json failure = quota_error(inst);
    int http = 403;
    std::string msg = "FORBIDDEN";
    if (failure.is_null()) {
      failure = capacity_error(inst, "projects/" + s_.project + "/zones/" + zone);
      http = 503;
      msg = "SERVICE UNAVAILABLE";
    }
    inst.status = "PROVISIONING";
    if (!failure.is_null()) {
      op.error = failure;
      op.http_error = http;
      op.http_error_message = msg;
    }
    inst.busy_op = op.name;
  } else if (!start && inst.status != "TERMINATED") {
    inst.status = "STOPPING";
    inst.busy_op = op.name;
  } else {
    // Starting a running instance or stopping a stopped one changes nothing.
    op.start_at = op.done_at = now();
  }
  remember(request_id, op.name);
  advance(now());
  finish_now_if_instant(op);
  return {200, render(ops_.at(op.name)), true};
}

ApiAnswer Compute::set_labels(const ApiCall& c, const std::string& zone, const std::string& name) {
  std::string request_id;
  if (auto r = replay(c, request_id)) return *r;
  std::string path = "projects/" + s_.project + "/zones/" + zone + "/instances/" + name;
  auto it = instances_.find({zone, name});
  if (it == instances_.end()) return not_found(path);
  json body = json::parse(c.body, nullptr, false);
  if (!body.is_object()) return error_answer(400, "parseError", "Invalid JSON payload received.");
  std::string fp = body.value("labelFingerprint", "");
  if (fp != fingerprint(json(it->second.labels).dump()))
    return error_answer(412, "conditionNotMet", "Labels fingerprint either invalid or resource labels have changed",
                        "global", "FAILED_PRECONDITION");
  std::map<std::string, std::string> labels;
  if (auto e = check_labels(body.value("labels", json::object()), "labels", labels)) return *e;
  it->second.labels = labels;
  Operation& op = new_operation(zone, "setLabels", c.caller.email, "instances", name, it->second.id);
  remember(request_id, op.name);
  finish_now_if_instant(op);
  return {200, render(op), true};
}

ApiAnswer Compute::list(const ApiCall& c, const std::string& zone) {
  ListParams lp;
  if (auto e = list_params(c, "instances/" + zone, lp)) return *e;
  std::vector<std::pair<std::string, const Instance*>> rows;
  for (const auto& [key, inst] : instances_)
    if (inst.zone == zone) rows.push_back({sort_key(lp, inst.seq, inst.name), &inst});
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  json items = json::array();
  std::string last;
  bool more = false;
  for (const auto& [key, inst] : rows) {
    if (!lp.after.empty() && key <= lp.after) continue;
    json j = render(*inst);
    if (!lp.filter->matches(j)) continue;
    if (items.size() == lp.max) {
      more = true;
      break;
    }
    items.push_back(std::move(j));
    last = key;
  }
  std::string id = "projects/" + s_.project + "/zones/" + zone + "/instances";
  json out = {{"kind", "compute#instanceList"}, {"id", id}, {"selfLink", zone_link(zone) + "/instances"}};
  if (!items.empty()) out["items"] = items;
  if (more) out["nextPageToken"] = page_token(last, lp.sig);
  return {200, out, false};
}

ApiAnswer Compute::aggregated(const ApiCall& c) {
  ListParams lp;
  if (auto e = list_params(c, "aggregated/instances", lp)) return *e;
  std::vector<std::string> zones = s_.zones;
  std::sort(zones.begin(), zones.end());
  std::vector<std::pair<std::string, const Instance*>> rows;
  for (const auto& [key, inst] : instances_) {
    size_t zi = std::find(zones.begin(), zones.end(), inst.zone) - zones.begin();
    char prefix[8];
    std::snprintf(prefix, sizeof prefix, "%04zu/", zi);
    rows.push_back({prefix + sort_key(lp, inst.seq, inst.name), &inst});
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<std::string, json> per_zone;
  size_t count = 0;
  std::string last;
  bool more = false;
  for (const auto& [key, inst] : rows) {
    if (!lp.after.empty() && key <= lp.after) continue;
    json j = render(*inst);
    if (!lp.filter->matches(j)) continue;
    if (count == lp.max) {
      more = true;
      break;
    }
    per_zone[inst->zone].push_back(std::move(j));
    ++count;
    last = key;
  }
  json items = json::object();
  for (const auto& z : zones) {
    std::string scope = "zones/" + z;
    if (per_zone.count(z)) {
      items[scope] = {{"instances", per_zone[z]}};
    } else {
      items[scope] = {{"warning",
                       {{"code", "NO_RESULTS_ON_PAGE"},
                        {"message", "There are no results for scope '" + scope + "' on this page."},
                        {"data", json::array({{{"key", "scope"}, {"value", scope}}})}}}};
    }
  }
  json out = {{"kind", "compute#instanceAggregatedList"},
              {"id", "projects/" + s_.project + "/aggregated/instances"},
              {"items", items},
              {"selfLink", link("projects/" + s_.project + "/aggregated/instances")}};
  if (more) out["nextPageToken"] = page_token(last, lp.sig);
  return {200, out, false};
}

// --- operations and disks -----------------------------------------------------

ApiAnswer Compute::operation_get(const std::string& zone, const std::string& name) {
  auto it = ops_.find(name);
  if (it == ops_.end() || it->second.zone != zone)
    return not_found("projects/" + s_.project + "/zones/" + zone + "/operations/" + name);
  return {200, render(it->second), false};
}

ApiAnswer Compute::operation_wait(const std::string& zone, const std::string& name,
                                  std::unique_lock<std::mutex>& lock) {
  // The timeout runs on the real clock; operations on the emulator's (which /__emulator/clock moves).
  auto deadline = Clock::now() + std::chrono::milliseconds(s_.wait_timeout_ms);
  for (;;) {
    advance(now());
    auto it = ops_.find(name);
    if (it == ops_.end() || it->second.zone != zone)
      return not_found("projects/" + s_.project + "/zones/" + zone + "/operations/" + name);
    const Operation& op = it->second;
    if (op.status == "DONE" || Clock::now() >= deadline || stopping_) return {200, render(op), false};
    auto next = (op.status == "PENDING" ? op.start_at : op.done_at) - offset_;
    cv_.wait_until(lock, std::min(next, deadline));
  }
}

ApiAnswer Compute::operation_list(const ApiCall& c, const std::string& zone) {
  ListParams lp;
  if (auto e = list_params(c, "operations/" + zone, lp)) return *e;
  std::vector<std::pair<std::string, const Operation*>> rows;
  for (const auto& [name, op] : ops_)
    if (op.zone == zone) rows.push_back({sort_key(lp, op.seq, op.name), &op});
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  json items = json::array();
  std::string last;
  bool more = false;
  for (const auto& [key, op] : rows) {
    if (!lp.after.empty() && key <= lp.after) continue;
    json j = render(*op);
    if (!lp.filter->matches(j)) continue;
    if (items.size() == lp.max) {
      more = true;
      break;
    }
    items.push_back(std::move(j));
    last = key;
  }
  json out = {{"kind", "compute#operationList"},
              {"id", "projects/" + s_.project + "/zones/" + zone + "/operations"},
              {"selfLink", zone_link(zone) + "/operations"}};
  if (!items.empty()) out["items"] = items;
  if (more) out["nextPageToken"] = page_token(last, lp.sig);
  return {200, out, false};
}

ApiAnswer Compute::disk_get(const std::string& zone, const std::string& name) {
  auto it = disks_.find({zone, name});
  if (it == disks_.end()) return not_found("projects/" + s_.project + "/zones/" + zone + "/disks/" + name);
  return {200, render(it->second), false};
}

ApiAnswer Compute::disk_delete(const ApiCall& c, const std::string& zone, const std::string& name) {
  std::string request_id;
  if (auto r = replay(c, request_id)) return *r;
  auto it = disks_.find({zone, name});
  std::string path = "projects/" + s_.project + "/zones/" + zone + "/disks/" + name;
  if (it == disks_.end()) return not_found(path);
  if (!it->second.user.empty())
    return error_answer(400, "resourceInUseByAnotherResource",
                        "The disk resource '" + path + "' is already being used by 'projects/" + s_.project +
                            "/zones/" + zone + "/instances/" + it->second.user + "'");
  Operation& op = new_operation(zone, "delete", c.caller.email, "disks", name, it->second.id);
  remember(request_id, op.name);
  finish_now_if_instant(op);
  return {200, render(op), true};
}

// --- control --------------------------------------------------------------------

json Compute::dump() {
  std::lock_guard<std::mutex> lock(mu_);
  advance(now());
  json instances = json::array(), ops = json::array(), disks = json::array();
  for (const auto& [k, inst] : instances_) {
    json j = render(inst);
    if (inst.doomed) j["_emulator"] = {{"insertWillFail", true}};
    instances.push_back(j);
  }
  std::vector<const Operation*> sorted;
  for (const auto& [k, op] : ops_) sorted.push_back(&op);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
  for (const auto* op : sorted) ops.push_back(render(*op));
  for (const auto& [k, d] : disks_) disks.push_back(render(d));
  json usage_json = json::object();
  for (const auto& [k, v] : usage()) usage_json[k] = v;
  json cap = json::object();
  for (const auto& [k, v] : s_.capacity) cap[k] = v;
  json quotas = json::object();
  for (const auto& [k, v] : s_.quotas) quotas[k] = v;
  return {{"project", s_.project}, {"instances", instances}, {"operations", ops}, {"disks", disks},
          {"usage", usage_json},   {"capacity", cap},        {"quotas", quotas}};
}

std::string Compute::set_capacity(const std::string& zone, const std::string& machine_type,
                                  std::optional<int> available) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!find_machine_type(machine_type)) return "unknown machine type '" + machine_type + "'";
  if (!zone.empty() && !known_zone(zone)) return "unknown zone '" + zone + "'";
  std::string key = zone.empty() ? machine_type : zone + "/" + machine_type;
  if (available)
    s_.capacity[key] = *available;
  else
    s_.capacity.erase(key);
  return "";
}

std::string Compute::set_quota(const std::string& metric, const std::string& region, std::optional<double> limit) {
  std::lock_guard<std::mutex> lock(mu_);
  if (metric.empty()) return "a quota needs a metric, e.g. NVIDIA_H100_GPUS";
  std::string key = region.empty() ? metric : metric + "@" + region;
  if (limit)
    s_.quotas[key] = *limit;
  else
    s_.quotas.erase(key);
  return "";
}

std::pair<int, json> Compute::preempt(const std::string& zone, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  advance(now());
  auto it = instances_.find({zone, name});
  if (it == instances_.end()) return {404, json{{"error", "no instance '" + name + "' in zone '" + zone + "'"}}};
  Instance& inst = it->second;
  if (!inst.spot)
    return {409, json{{"error", "instance '" + name + "' is not a Spot or preemptible VM; only those are preempted"}}};
  if (inst.status != "RUNNING" || !inst.busy_op.empty())
    return {409, json{{"error", "instance '" + name + "' is " + inst.status + (inst.busy_op.empty() ? "" : " (busy)") +
                                    "; only a RUNNING instance can be preempted"}}};
  Operation& op = new_operation(zone, "compute.instances.preempted", "system", "instances", name, inst.id);
  op.status_message = "Instance was preempted.";
  inst.status = "STOPPING";
  inst.busy_op = op.name;
  std::string action = inst.termination_action;
  finish_now_if_instant(op);  // may delete the instance
  return {200, json{{"operation", render(op)}, {"terminationAction", action}}};
}

Clock::duration Compute::advance_clock(Clock::duration by) {
  std::lock_guard<std::mutex> lock(mu_);
  offset_ += by;
  advance(now());
  cv_.notify_all();
  return offset_;
}

void Compute::shutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  cv_.notify_all();
}

}  // namespace plinth::gcp_emulator
