// gcp.instance over the Compute Engine v1 REST API: what each call sends is
// described in docs/providers/gcp.md.
#include "providers/gcp/gcp_provider.h"

#include <algorithm>
#include <cctype>
#include <random>
#include <set>

#include "engine/core/hash.h"
#include "engine/core/strings.h"
#include "providers/gcp/schema.h"
#include "providers/common/config.h"
#include "providers/common/json_fields.h"

namespace plinth::gcp {

namespace {

using cloud::field;
using cloud::str;
using cloud::strings;
using cloud::at;
using cloud::attributes_hash;

/// The last segment of a URL or partial reference ("zones/us-central1-a" -> "us-central1-a").
std::string last_segment(const std::string& ref) {
  auto slash = ref.rfind('/');
  return slash == std::string::npos ? ref : ref.substr(slash + 1);
}

std::string region_of_zone(const std::string& zone) {
  auto dash = zone.rfind('-');
  return dash == std::string::npos ? zone : zone.substr(0, dash);
}

std::string metadata_item(const Json& instance, const std::string& key) {
  const Json& items = field(field(instance, "metadata"), "items");
  if (items.is_array())
    for (const auto& item : items)
      if (str(item, "key") == key) return str(item, "value");
  return "";
}

std::string label(const Json& instance, const char* key) { return str(field(instance, "labels"), key); }

/// scheduling.provisioningModel (SPOT or STANDARD), "" when the answer has none.
std::string provisioning_model(const Json& instance) { return str(field(instance, "scheduling"), "provisioningModel"); }

/// What Plinth records of an instance (computed).
Json observed(const Json& i) {
  const std::string model = provisioning_model(i);
  Json c = {{"id", str(i, "id")},
            {"name", str(i, "name")},
            {"instance_type", last_segment(str(i, "machineType"))},
            {"zone", last_segment(str(i, "zone"))},
            {"status", str(i, "status")},
            {"provisioning_model", model.empty() ? "STANDARD" : model}};
  for (auto [from, to] :
       {std::pair<const char*, const char*>{"selfLink", "self_link"}, {"creationTimestamp", "creation_timestamp"}})
    if (auto v = str(i, from); !v.empty()) c[to] = v;
  const Json& nics = field(i, "networkInterfaces");
  if (nics.is_array() && !nics.empty())
    if (auto ip = str(nics[0], "networkIP"); !ip.empty()) c["private_ip"] = ip;
  return c;
}

bool alive(const std::string& status) {
  return status == "PROVISIONING" || status == "STAGING" || status == "RUNNING" || status == "REPAIRING";
}

/// "projects/P/regions/R/subnetworks/S" for a bare name; a URL or path as given.
std::string qualify(const std::string& ref, const std::string& prefix) {
  return ref.find('/') == std::string::npos ? prefix + ref : ref;
}

}  // namespace

std::string label_value(const std::string& text) {
  std::string out;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    out += std::isalnum(c) || c == '_' || c == '-' ? static_cast<char>(std::tolower(c)) : '-';
  }
  return out.substr(0, 63);
}

std::string instance_name(const std::string& pool, int index, const std::string& lineage, const std::string& address,
                          const Json& attributes) {
  std::string base;
  for (char ch : pool) {
    const auto c = static_cast<unsigned char>(ch);
    base += std::isalnum(c) ? static_cast<char>(std::tolower(c)) : '-';
  }
  if (base.empty() || !std::isalpha(static_cast<unsigned char>(base[0]))) base = "p" + base;
  const std::string tail = "-" + std::to_string(std::max(index, 0)) + "-" +
                           sha256_hex(lineage + "\n" + address + "\n" + attributes.dump()).substr(0, 8);
  base = base.substr(0, 63 - tail.size());
  while (!base.empty() && base.back() == '-') base.pop_back();
  return base + tail;
}

std::string request_id(const std::vector<std::string>& parts) {
  std::string h = sha256_hex(join(parts, "\n")).substr(0, 32);
  h[12] = '5';  // a name-based (version 5 style) UUID
  h[16] = "89ab"[std::stoi(h.substr(16, 1), nullptr, 16) & 3];
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

Json insert_body(const Resource& desired, const InsertTarget& t) {
  const Json& a = desired.attributes;
  const bool spot = a.value("spot", false);
  Json labels = Json::object();
  if (a.contains("labels") && a["labels"].is_object())
    for (const auto& [k, v] : a["labels"].items()) labels[k] = v.is_string() ? v.get<std::string>() : v.dump();
  labels[kLabelLineage] = label_value(t.lineage);
  labels[kLabelPool] = label_value(desired.name);
  labels[kLabelIndex] = std::to_string(desired.index);
  labels[kLabelAttributes] = attributes_hash(a);
  if (!t.blueprint.empty()) labels[kLabelBlueprint] = label_value(t.blueprint);

  Json items = Json::array({{{"key", kMetadataAddress}, {"value", desired.address}}});
  if (auto ud = str(desired.computed, "user_data"); !ud.empty())
    items.push_back({{"key", kMetadataUserData}, {"value", ud}});

  const Json disk = a.value("boot_disk", Json::object());
  Json init = {{"sourceImage", str(a, "image")},
               {"diskType",
                "zones/" + t.zone + "/diskTypes/" + (str(disk, "type").empty() ? "pd-balanced" : str(disk, "type"))}};
  if (disk.is_object() && disk.contains("size_gb")) init["diskSizeGb"] = disk["size_gb"].dump();

  const std::string region = region_of_zone(t.zone);
  Json nic = {{"network", qualify(str(a, "network").empty() ? "default" : str(a, "network"),
                                  "projects/" + t.project + "/global/networks/")}};
  const std::string subnetworks = "projects/" + t.project + "/regions/" + region + "/subnetworks/";
  if (auto sub = str(a, "subnetwork"); !sub.empty()) nic["subnetwork"] = qualify(sub, subnetworks);
  Json nics = Json::array({nic});
  // The GPU NICs of A3 / A4 types: the first gpu_nics subnetworks listed, each
  // a gVNIC (GPUDirect-TCPX/TCPXO) or an MRDMA NIC (GPUDirect RDMA). They can
  // only be attached at creation; the network is the subnetwork's.
  const InstanceType* type = schema().instance_type(t.machine_type);
  const std::vector<std::string> gpu_subnets = strings(a, "gpu_subnetworks");
  if (type && type->gpu_network.rfind("gpudirect-", 0) == 0 && !gpu_subnets.empty()) {
    nics[0]["nicType"] = "GVNIC";
    const char* kind = type->gpu_network == "gpudirect-rdma" ? "MRDMA" : "GVNIC";
    const size_t n = std::min(gpu_subnets.size(), static_cast<size_t>(type->gpu_nics));
    for (size_t i = 0; i < n; ++i)
      nics.push_back({{"subnetwork", qualify(gpu_subnets[i], subnetworks)}, {"nicType", kind}});
  }

  Json scheduling = {{"onHostMaintenance", "TERMINATE"}};  // GPUs cannot live-migrate
  if (spot) {
    scheduling["provisioningModel"] = "SPOT";
    scheduling["automaticRestart"] = false;
    scheduling["instanceTerminationAction"] =
        str(a, "termination_action").empty() ? "DELETE" : str(a, "termination_action");
  } else {
    scheduling["provisioningModel"] = "STANDARD";
    scheduling["automaticRestart"] = true;
  }

  Json body = {{"name", t.name},
               {"machineType", "zones/" + t.zone + "/machineTypes/" + t.machine_type},
               {"labels", labels},
               {"metadata", {{"items", items}}},
               {"disks", Json::array({{{"boot", true}, {"autoDelete", true}, {"initializeParams", init}}})},
               {"networkInterfaces", nics},
               {"scheduling", scheduling}};
  if (const Json sa = a.value("service_account", Json::object()); sa.is_object() && !sa.empty()) {
    Json scopes = Json::array();
    for (const auto& s : strings(sa, "scopes"))
      scopes.push_back(s.find("://") == std::string::npos ? "https://www.googleapis.com/auth/" + s : s);
    if (scopes.empty()) scopes.push_back(kCloudPlatformScope);
    body["serviceAccounts"] =
        Json::array({{{"email", str(sa, "email").empty() ? "default" : str(sa, "email")}, {"scopes", scopes}}});
  }
  return body;
}

const ProviderSchema& GcpProvider::schema() const { return gcp::schema(); }

Status GcpProvider::configure(const ProviderConfig& config) {
  const char* home = std::getenv("HOME");
  auto creds = find_credentials(config, home ? home : "");
  if (!creds) return creds.error();
  options_.project = config.str("project");
  if (options_.project.empty() && creds->key) options_.project = creds->key->project_id;
  if (options_.project.empty())
    return Error::invalid("no GCP project: set GOOGLE_CLOUD_PROJECT (or the gcp option project); only a "
                          "service-account key names its project");
  const bool metadata = creds->kind == CredentialSource::Kind::Metadata;
  options_.endpoint = normalize_root(config.str("endpoint"));
  options_.poll_ms = cloud::clamp_int(config, "poll_ms", 1000, 1, 600000);
  options_.wait = config.has("wait") ? config.flag("wait") : true;
  options_.page_size = cloud::clamp_int(config, "page_size", 500, 1, 500);
  http_ = std::make_unique<net::Client>(cloud::http_options(config));
  ClientSettings cs;
  cs.root = options_.endpoint;
  cs.project = options_.project;
  cs.credentials = std::move(*creds);
  cs.requests_per_second = config.has("requests_per_second") ? config.number("requests_per_second") : 20;
  cs.burst = static_cast<double>(cloud::clamp_int(config, "request_burst", 50, 1, 100000));
  cs.poll_ms = options_.poll_ms;
  cs.max_poll_ms = std::min(10000, options_.poll_ms * 10);
  compute_ = std::make_unique<ComputeClient>(*http_, std::move(cs), &stopped_);
  // Nothing else was set: the metadata server is asked now, so a machine without one stops the run
  // before anything is planned (PLAN001), with what to set.
  if (metadata)
    if (auto st = compute_->first_token(); !st) return st.error();
  std::random_device rd;
  run_id_ = std::to_string(rd()) + "-" + std::to_string(rd());
  return {};
}

void GcpProvider::bind(const StateBinding& binding) {
  binding_.set(binding);
}

Result<std::map<std::string, Json>> GcpProvider::list(const std::string& filter, Call& call) {
  std::map<std::string, Json> out;
  std::string token;
  std::set<std::string> seen;  // a nextPageToken answered twice would page forever
  do {
    if (!token.empty() && !seen.insert(token).second)
      return Error::fatal("Compute answered the same nextPageToken twice (" + token +
                          ") to compute.instances.aggregatedList; refusing to loop");
    std::map<std::string, std::string> q = {{"filter", filter}, {"maxResults", std::to_string(options_.page_size)}};
    if (!token.empty()) q["pageToken"] = token;
    auto page = compute_->send("GET", "aggregated/instances", q, nullptr, "compute.instances.aggregatedList", call);
    if (auto* f = std::get_if<ApiFailure>(&page)) return f->error;
    const Json& j = std::get<Json>(page);
    auto items = j.find("items");
    if (items != j.end() && items->is_object())
      for (const auto& [scope, entry] : items->items()) {
        auto list = entry.find("instances");
        if (list == entry.end() || !list->is_array()) continue;
        for (const auto& i : *list)
          if (i.is_object()) out[last_segment(str(i, "zone")) + "/" + str(i, "name")] = i;
      }
    token = str(j, "nextPageToken");
  } while (!token.empty());
  return out;
}

Result<std::map<std::string, Json>> GcpProvider::preempted(const std::string& zone, Call& call) {
  std::map<std::string, Json> out;
  std::string token;
  std::set<std::string> seen;
  do {
    if (!token.empty() && !seen.insert(token).second)
      return Error::fatal("Compute answered the same nextPageToken twice (" + token +
                          ") to compute.zoneOperations.list in " + zone + "; refusing to loop");
    std::map<std::string, std::string> q = {{"filter", "operationType = \"compute.instances.preempted\""},
                                            {"maxResults", "500"}};
    if (!token.empty()) q["pageToken"] = token;
    auto page = compute_->send("GET", "zones/" + zone + "/operations", q, nullptr,
                               "compute.zoneOperations.list in " + zone, call);
    if (auto* f = std::get_if<ApiFailure>(&page)) return f->error;
    const Json& j = std::get<Json>(page);
    auto items = j.find("items");
    if (items != j.end() && items->is_array())
      for (const auto& op : *items) {
        out["id:" + str(op, "targetId")] = op;
        out["name:" + last_segment(str(op, "targetLink"))] = op;
      }
    token = str(j, "nextPageToken");
  } while (!token.empty());
  return out;
}

std::vector<ReadResult> GcpProvider::read(const std::vector<Resource>& resources, const Call& call) {
  std::vector<ReadResult> results(resources.size());
  for (size_t i = 0; i < resources.size(); ++i) results[i].address = resources[i].address;
  if (!compute_) {
    for (auto& r : results) r.error = Error::fatal("the gcp provider was used before configure()");
    return results;
  }
  const std::string lineage = binding_.get().lineage;
  auto c = call.fork();
  Result<std::map<std::string, Json>> listed = std::map<std::string, Json>{};
  if (!lineage.empty()) {
    listed = list(std::string("labels.") + kLabelLineage + " = \"" + label_value(lineage) + "\"", *c);
  } else {
    // No lineage to filter on: each recorded instance by name.
    for (const auto& r : resources) {
      const std::string zone = str(r.computed, "zone"), name = str(r.computed, "name");
      if (zone.empty() || name.empty()) continue;
      auto got = compute_->send("GET", "zones/" + zone + "/instances/" + name, {}, nullptr,
                                "compute.instances.get " + name + " in " + zone, *c);
      if (auto* f = std::get_if<ApiFailure>(&got)) {
        if (f->error.kind == Error::Kind::NotFound) continue;
        listed = f->error;
        break;
      }
      (*listed)[zone + "/" + name] = std::get<Json>(got);
    }
  }
  // Zones where a SPOT instance is gone or stopping: were they preempted?
  std::set<std::string> zones;
  if (listed)
    for (const auto& r : resources) {
      const std::string zone = str(r.computed, "zone"), name = str(r.computed, "name");
      if (zone.empty() || name.empty() || !r.attributes.value("spot", false)) continue;
      auto it = listed->find(zone + "/" + name);
      if (it == listed->end() || !alive(str(it->second, "status"))) zones.insert(zone);
    }
  std::map<std::string, std::map<std::string, Json>> preemptions;
  for (const auto& zone : zones) {
    auto p = preempted(zone, *c);
    if (p) preemptions[zone] = std::move(*p);  // without it, a gone instance is just gone
  }
  for (size_t i = 0; i < resources.size(); ++i) {
    const Resource& res = resources[i];
    ReadResult& out = results[i];
    if (!listed) {
      out.error = at(res.address, listed.error());
      continue;
    }
    const std::string zone = str(res.computed, "zone"), name = str(res.computed, "name");
    if (zone.empty() || name.empty()) continue;  // never made
    auto it = listed->find(zone + "/" + name);
    const bool present = it != listed->end();
    if (present && str(it->second, "id") != str(res.computed, "id") && !str(res.computed, "id").empty()) continue;
    const std::string status = present ? str(it->second, "status") : "";
    if (present && alive(status)) {
      out.current = cloud::with_computed(res, observed(it->second));
      continue;
    }
    const Json* op = nullptr;
    if (auto z = preemptions.find(zone); z != preemptions.end()) {
      auto by_id = z->second.find("id:" + str(res.computed, "id"));
      auto by_name = z->second.find("name:" + name);
      op = by_id != z->second.end() ? &by_id->second : by_name != z->second.end() ? &by_name->second : nullptr;
    }
    if (op) {
      out.gone_reason = "preempted by GCP (" + str(*op, "operationType") + " at " + str(*op, "insertTime") + ": " +
                        str(*op, "statusMessage") + (present ? " The instance is " + status + "." : "") + ")";
      continue;
    }
    if (present) {  // stopped by someone: still there
      out.current = cloud::with_computed(res, observed(it->second));
    }
  }
  return results;
}

Result<std::vector<Resource>> GcpProvider::discover(const std::vector<Resource>& known,
                                                    const std::vector<Resource>& desired, const Call& call) {
  return cloud::discover(binding_, compute_ != nullptr, schema(), desired,
                         [&](const std::string& lineage) -> Result<std::vector<cloud::Tagged>> {
    std::set<std::string> names;
    for (const auto& r : known) names.insert(str(r.computed, "zone") + "/" + str(r.computed, "name"));
    auto c = call.fork();
    auto listed = list(std::string("labels.") + kLabelLineage + " = \"" + label_value(lineage) +
                           "\" AND (status = PROVISIONING OR status = STAGING OR status = RUNNING)",
                       *c);
    if (!listed) return listed.error();
    std::vector<cloud::Tagged> tagged;
    for (const auto& [key, inst] : *listed) {
      const std::string zone = last_segment(str(inst, "zone"));
      tagged.push_back({metadata_item(inst, kMetadataAddress), label(inst, kLabelAttributes), names.count(key) > 0,
                        {{"instance_type", last_segment(str(inst, "machineType"))},
                         {"region", region_of_zone(zone)},
                         {"zone", zone},
                         {"spot", provisioning_model(inst) == "SPOT"}},
                        observed(inst)});
    }
    return tagged;
  });
}

Status GcpProvider::delete_instance(const std::string& zone, const std::string& name, const std::string& rid,
                                    const std::string& address, Call& call) {
  auto out = compute_->send("DELETE", "zones/" + zone + "/instances/" + name, {{"requestId", rid}}, nullptr,
                            "compute.instances.delete " + name + " in " + zone, call);
  if (auto* f = std::get_if<ApiFailure>(&out)) {
    if (f->error.kind == Error::Kind::NotFound) return {};
    return at(address, f->error);
  }
  if (!options_.wait) return {};
  auto done = compute_->wait(std::get<Json>(out), zone, call);
  if (auto* f = std::get_if<ApiFailure>(&done)) return at(address, f->error);
  const Json& op = std::get<Json>(done);
  if (op.contains("error")) {
    ApiFailure f = operation_failure(op, " (compute.instances.delete " + name + " in " + zone + ")");
    if (f.code == "RESOURCE_NOT_FOUND") return {};
    return at(address, f.error);
  }
  return {};
}

std::variant<Json, ApiFailure> GcpProvider::insert(const Resource& desired, const Json& body, const std::string& zone,
                                                   const std::string& rid_base, Call& call) {
  const std::string name = str(body, "name");
  const std::string where = " (compute.instances.insert " + name + " in " + zone + ")";
  bool cleared = false;  // a stopped (preempted) instance of the same name was removed once
  for (;;) {
    int generation = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      generation = generation_[rid_base];
    }
    const std::string rid = request_id({rid_base, std::to_string(generation)});
    auto out = compute_->send("POST", "zones/" + zone + "/instances", {{"requestId", rid}}, body,
                              "compute.instances.insert " + name + " in " + zone, call);
    if (auto* f = std::get_if<ApiFailure>(&out)) {
      if (f->reason != "alreadyExists") return *f;
      // The name is taken: ours, made from the same attributes (a lost answer
      // of an earlier run) is kept; ours but stopped (a preempted SPOT VM
      // with termination action STOP) is deleted and made again.
      auto got = compute_->send("GET", "zones/" + zone + "/instances/" + name, {}, nullptr,
                                "compute.instances.get " + name + " in " + zone, call);
      if (auto* g = std::get_if<ApiFailure>(&got)) {
        if (g->error.kind == Error::Kind::NotFound && !cleared) {
          cleared = true;
          continue;
        }
        return *g;
      }
      const Json& inst = std::get<Json>(got);
      if (metadata_item(inst, kMetadataAddress) != desired.address)
        return ApiFailure{
            f->code, f->reason,
            Error{Error::Kind::Fatal,
                  f->error.message + "; it was not made by Plinth for " + desired.address + ": rename or delete it", 0},
            nullptr};
      if (alive(str(inst, "status"))) return inst;
      if (cleared) return *f;
      cleared = true;
      if (auto st =
              delete_instance(zone, name, request_id({rid_base, "clear", str(inst, "id")}), desired.address, call);
          !st)
        return ApiFailure{"", "", st.error(), nullptr};
      continue;
    }
    Json op = std::get<Json>(out);
    if (options_.wait || str(op, "status") == "DONE") {
      auto done = compute_->wait(op, zone, call);
      if (auto* f = std::get_if<ApiFailure>(&done)) return *f;
      op = std::get<Json>(done);
      if (op.contains("error")) {
        // A requestId is spent once its operation failed: the next attempt gets a fresh one.
        std::lock_guard<std::mutex> lock(mu_);
        ++generation_[rid_base];
        return operation_failure(op, where);
      }
    }
    auto got = compute_->send("GET", "zones/" + zone + "/instances/" + name, {}, nullptr,
                              "compute.instances.get " + name + " in " + zone, call);
    if (auto* f = std::get_if<ApiFailure>(&got)) {
      if (f->error.kind == Error::Kind::NotFound && str(op, "status") == "DONE") {
        // The requestId answered an earlier operation whose instance is gone since: a fresh id.
        std::lock_guard<std::mutex> lock(mu_);
        if (++generation_[rid_base] < 100) continue;
      }
      return *f;
    }
    return std::get<Json>(got);
  }
}

Result<Resource> GcpProvider::create(const Resource& desired, Call& call) {
  if (!compute_) return Error::fatal("the gcp provider was used before configure()");
  const Json& a = desired.attributes;
  if (str(a, "image").empty())
    return Error::invalid(desired.address + ": burst pool '" + desired.name +
                          "' sets no image; add `image: projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts` (the "
                          "boot disk image) to the pool (" +
                          desired.source.str() + ")");
  const StateBinding binding = binding_.get();
  const std::vector<std::string> types = cloud::candidate_types(a, "machine_types");
  std::vector<std::string> zones = strings(a, "zones");
  if (zones.empty() && !str(a, "zone").empty()) zones = {str(a, "zone")};
  if (zones.empty())
    return Error::invalid(desired.address + ": burst pool '" + desired.name +
                          "' names no zone; set `zone:` or `zones: [...]` on the pool (" + desired.source.str() + ")");
  cloud::spread(zones, desired.index);

  const std::string name = instance_name(desired.name, desired.index, binding.lineage, desired.address, a);
  auto launch = [&](const std::string& type, size_t place) -> cloud::Launched {
    const std::string& zone = zones[place];
    InsertTarget t{compute_->project(), zone, type, name, binding.lineage, binding.blueprint};
    const Json body = insert_body(desired, t);
    const std::string rid_base = join({run_id_, binding.lineage, desired.address, attributes_hash(a), zone, type}, "|");
    auto out = insert(desired, body, zone, rid_base, call);
    if (auto* f = std::get_if<ApiFailure>(&out)) {
      if (f->error.kind == Error::Kind::Conflict && f->reason.empty() && f->code != "RESOURCE_ALREADY_EXISTS")
        return cloud::NoCapacity{type + " in " + zone, f->error.message};  // no capacity or quota here
      return at(desired.address, f->error);
    }
    Resource r = desired;
    r.computed = observed(std::get<Json>(out));
    return r;
  };
  return cloud::first_with_capacity(desired, types, zones.size(), launch,
                                    ". List fallbacks in the pool (zones, machine_types) to let Plinth try elsewhere");
}

Result<Resource> GcpProvider::update(const Resource& prior, const Resource& desired, Call& call) {
  if (!compute_) return Error::fatal("the gcp provider was used before configure()");
  const std::string zone = str(prior.computed, "zone"), name = str(prior.computed, "name");
  Resource r = desired;
  r.computed = prior.computed;
  if (zone.empty() || name.empty()) return r;
  const StateBinding binding = binding_.get();
  const Json labels = insert_body(
      desired, InsertTarget{compute_->project(), zone, "", name, binding.lineage, binding.blueprint})["labels"];
  for (int attempt = 0;; ++attempt) {
    auto got = compute_->send("GET", "zones/" + zone + "/instances/" + name, {}, nullptr,
                              "compute.instances.get " + name + " in " + zone, call);
    if (auto* f = std::get_if<ApiFailure>(&got)) return at(desired.address, f->error);
    const Json& inst = std::get<Json>(got);
    auto out = compute_->send("POST", "zones/" + zone + "/instances/" + name + "/setLabels",
                              {{"requestId", request_id({run_id_, desired.address, attributes_hash(desired.attributes),
                                                         std::to_string(attempt)})}},
                              {{"labels", labels}, {"labelFingerprint", str(inst, "labelFingerprint")}},
                              "compute.instances.setLabels " + name + " in " + zone, call);
    if (auto* f = std::get_if<ApiFailure>(&out)) {
      if (f->reason == "conditionNotMet" && attempt < 3) continue;  // labels changed since the get
      return at(desired.address, f->error);
    }
    if (options_.wait) {
      auto done = compute_->wait(std::get<Json>(out), zone, call);
      if (auto* f = std::get_if<ApiFailure>(&done)) return at(desired.address, f->error);
      if (std::get<Json>(done).contains("error"))
        return at(desired.address, operation_failure(std::get<Json>(done), " (compute.instances.setLabels)").error);
    }
    return r;
  }
}

Status GcpProvider::remove(const Resource& prior, Call& call) {
  if (!compute_) return Error::fatal("the gcp provider was used before configure()");
  const std::string zone = str(prior.computed, "zone"), name = str(prior.computed, "name");
  if (zone.empty() || name.empty()) return {};
  return delete_instance(zone, name, request_id({run_id_, "delete", prior.address, str(prior.computed, "id")}),
                         prior.address, call);
}

}  // namespace plinth::gcp
