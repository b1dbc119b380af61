#include "tests/emulators/azure/arm.h"

#include <algorithm>
#include <cmath>

#include "tests/emulators/azure/arm_util.h"

namespace plinth::azure_emulator {
namespace {

const std::vector<std::string> kResourcesVersions = {
    "2015-11-01", "2016-02-01", "2016-09-01", "2017-05-10", "2018-02-01", "2018-05-01", "2019-05-01",
    "2019-07-01", "2019-08-01", "2019-10-01", "2020-06-01", "2020-10-01", "2021-01-01", "2021-04-01",
    "2022-09-01", "2023-07-01", "2024-03-01", "2024-07-01", "2024-11-01", "2025-03-01", "2025-04-01"};
const std::vector<std::string> kSubscriptionsVersions = {"2016-06-01", "2018-06-01", "2019-06-01",
                                                         "2019-11-01", "2020-01-01", "2021-01-01",
                                                         "2022-01-01", "2022-12-01", "2024-11-01"};
const std::vector<std::string> kComputeVersions = {
    "2020-06-01", "2020-12-01", "2021-03-01", "2021-04-01", "2021-07-01", "2021-11-01", "2022-03-01", "2022-08-01",
    "2022-11-01", "2023-03-01", "2023-07-01", "2023-09-01", "2024-03-01", "2024-07-01", "2024-11-01", "2025-04-01"};
const std::vector<std::string> kSkuVersions = {"2017-03-30", "2017-09-01", "2019-04-01", "2021-07-01"};
const std::vector<std::string> kNetworkVersions = {
    "2018-11-01", "2019-11-01", "2020-05-01", "2020-06-01", "2020-11-01", "2021-02-01", "2021-05-01", "2021-08-01",
    "2022-01-01", "2022-05-01", "2022-07-01", "2022-09-01", "2022-11-01", "2023-02-01", "2023-04-01", "2023-05-01",
    "2023-06-01", "2023-09-01", "2023-11-01", "2024-01-01", "2024-03-01", "2024-05-01", "2024-07-01", "2024-10-01"};

const std::vector<std::string>& versions_of(int family, bool skus) {
  if (skus) return kSkuVersions;
  switch (family) {
    case 1:
      return kResourcesVersions;
    case 2:
      return kSubscriptionsVersions;
    case 3:
      return kComputeVersions;
    default:
      return kNetworkVersions;
  }
}

std::string join(const std::vector<std::string>& v, const std::string& sep, bool reverse = false) {
  std::string out;
  if (reverse) {
    for (auto it = v.rbegin(); it != v.rend(); ++it) out += (out.empty() ? "" : sep) + *it;
  } else {
    for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------- Counters

void Counters::count(const std::string& operation, int status, const std::string& fault) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_;
  ++by_operation_[operation];
  ++by_status_[status > 0 ? std::to_string(status) : "none"];
  if (!fault.empty()) ++faults_[fault];
}

void Counters::count_event(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  ++events_[name];
}

json Counters::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {{"requests", requests_},
          {"byOperation", by_operation_},
          {"byStatus", by_status_},
          {"faults", faults_},
          {"events", events_}};
}

void Counters::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  requests_ = 0;
  by_operation_.clear();
  by_status_.clear();
  faults_.clear();
  events_.clear();
}

// ---------------------------------------------------------------- Arm

Arm::Arm(const Options& options, Entra& entra, Counters& counters)
    : options_(options),
      entra_(entra),
      counters_(counters),
      capacity_(options.capacity),
      sku_unavailable_(options.sku_unavailable.begin(), options.sku_unavailable.end()),
      quota_(options.quota),
      fault_rng_(options.seed),
      id_rng_(options.seed * 1000003u + 7u) {
  for (const auto& s : builtin_sizes()) catalog_[lower(s.name)] = s;
  for (const auto& s : options.extra_sizes) catalog_[lower(s.name)] = s;
}

bool Arm::is_control(const std::string& path) {
  auto s = segments(path);
  return !s.empty() && s[0] == "__emulator";
}

std::string Arm::rg_id(const std::string& sub, const std::string& rg) const {
  return "/subscriptions/" + sub + "/resourceGroups/" + rg;
}

const Arm::ResourceGroup* Arm::find_rg(const std::string& sub, const std::string& rg) const {
  auto it = rgs_.find(lower(rg_id(sub, rg)));
  return it == rgs_.end() ? nullptr : &it->second;
}

Response Arm::rg_not_found(const std::string& rg) const {
  return arm_error(404, "ResourceGroupNotFound", "Resource group '" + rg + "' could not be found.");
}

Response Arm::not_found(const std::string& type, const std::string& name, const std::string& rg) const {
  return arm_error(404, "ResourceNotFound",
                   "The Resource '" + type + "/" + name + "' under resource group '" + rg +
                       "' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix");
}

bool Arm::location_known(const std::string& location) const {
  return std::find(options_.locations.begin(), options_.locations.end(), lower(location)) != options_.locations.end();
}

std::optional<Response> Arm::check_location(const json& body, const std::string& type, const json* existing,
                                            const std::string& name, const std::string& rg, bool list_regions,
                                            std::string& location) const {
  if (!body.contains("location") || !body["location"].is_string())
    return arm_error(400, "LocationRequired", "The location property is required for this definition.");
  location = lower(body["location"].get<std::string>());
  if (!location_known(location)) {
    std::string msg = "The provided location '" + location + "' is not available for resource type '" + type + "'.";
    if (list_regions) {
      std::string all;
      for (const auto& l : options_.locations) all += (all.empty() ? "" : ",") + l;
      msg.pop_back();
      msg += ". List of available regions for the resource type is '" + all + "'.";
    }
    return arm_error(400, "LocationNotAvailableForResourceType", msg);
  }
  if (existing && existing->value("location", "") != location)
    return arm_error(409, "InvalidResourceLocation",
                     "The resource '" + name + "' already exists in location '" + existing->value("location", "") +
                         "' in resource group '" + rg +
                         "'. A resource with the same name cannot be created in location '" + location +
                         "'. Please select a new resource name.");
  return std::nullopt;
}

Arm::Route Arm::route(const Request& r) const {
  Route rt = parse_route(r);
  if (rt.kind == Kind::kUnknown) rt.family = Family::kNone;  // answered 404, whatever the api-version
  return rt;
}

Arm::Route Arm::parse_route(const Request& r) const {
  auto s = segments(r.path);
  auto is = [&](size_t i, const char* w) { return i < s.size() && iequals(s[i], w); };
  size_t n = s.size();
  Route rt;
  if (n == 2 && is(0, "metadata") && is(1, "endpoints")) {
    rt.kind = Kind::kMetadata;
    return rt;
  }
  if (n == 1 && is(0, "tenants")) {
    rt.kind = Kind::kTenants;
    rt.family = Family::kSubscriptions;
    return rt;
  }
  if (!is(0, "subscriptions")) return rt;
  rt.family = Family::kSubscriptions;
  if (n == 1) {
    rt.kind = Kind::kSubscriptions;
    return rt;
  }
  rt.sub = lower(s[1]);
  if (n == 2) {
    rt.kind = Kind::kSubscription;
    return rt;
  }
  if (is(2, "resourcegroups")) {
    rt.family = Family::kResources;
    if (n == 3) rt.kind = Kind::kResourceGroups;
    if (n < 4) return rt;
    rt.rg = s[3];
    if (n == 4) rt.kind = Kind::kResourceGroup;
    if (n == 5 && is(4, "resources")) rt.kind = Kind::kRgResources;
    if (n >= 7 && is(4, "providers")) {
      rt.ns = s[5];
      rt.type = s[6];
      if (is(5, "Microsoft.Compute")) {
        rt.family = Family::kCompute;
        if (is(6, "virtualMachines") && n <= 9) {
          rt.kind = n == 7 ? Kind::kVmList : Kind::kVm;
          if (n >= 8) rt.name = s[7];
          if (n == 9) {
            rt.kind = is(8, "instanceView") ? Kind::kVmInstanceView : Kind::kVmAction;
            rt.action = s[8];
          }
        } else {
          rt.kind = Kind::kBadType;
        }
      } else if (is(5, "Microsoft.Network")) {
        rt.family = Family::kNetwork;
        if (is(6, "networkInterfaces") && n <= 8) {
          rt.kind = n == 7 ? Kind::kNicList : Kind::kNic;
          if (n == 8) rt.name = s[7];
        } else if (is(6, "virtualNetworks") && n <= 10) {
          rt.kind = n == 7 ? Kind::kVnetList : Kind::kVnet;
          if (n >= 8) rt.name = s[7];
          if (n >= 9 && !is(8, "subnets")) {
            rt.kind = Kind::kBadType;
            rt.type = s[6] + "/" + s[8];
          } else if (n == 9) {
            rt.kind = Kind::kSubnetList;
          } else if (n == 10) {
            rt.kind = Kind::kSubnet;
            rt.child = s[9];
          }
        } else {
          rt.kind = Kind::kBadType;
        }
      } else {
        rt.kind = Kind::kBadNamespace;
      }
    }
    return rt;
  }
  if (is(2, "resources") && n == 3) {
    rt.family = Family::kResources;
    rt.kind = Kind::kSubResources;
    return rt;
  }
  if (is(2, "operationresults") && n == 4) {
    rt.family = Family::kResources;
    rt.kind = Kind::kRgOperationResult;
    rt.op = s[3];
    return rt;
  }
  if (is(2, "providers")) {
    rt.family = Family::kResources;
    if (n == 3) rt.kind = Kind::kProviders;
    if (n == 4) {
      rt.kind = Kind::kProvider;
      rt.ns = s[3];
    }
    if (n < 5) return rt;
    rt.ns = s[3];
    rt.type = s[4];
    if (is(3, "Microsoft.Compute")) {
      rt.family = Family::kCompute;
      if (n == 5 && is(4, "virtualMachines"))
        rt.kind = Kind::kVmListAll;
      else if (n == 5 && is(4, "skus"))
        rt.kind = Kind::kSkus;
      else if (n == 7 && is(4, "locations") && is(6, "usages"))
        rt.kind = Kind::kUsages;
      else if (n == 8 && is(4, "locations") && is(6, "operations"))
        rt.kind = Kind::kComputeOperation;
      else
        rt.kind = Kind::kBadType;
      if (n >= 6) rt.location = lower(s[5]);
      if (n == 8) rt.op = lower(s[7]);
    } else if (is(3, "Microsoft.Network")) {
      rt.family = Family::kNetwork;
      if (n == 8 && is(4, "locations") && is(6, "operations"))
        rt.kind = Kind::kNetworkOperation;
      else if (n == 8 && is(4, "locations") && is(6, "operationResults"))
        rt.kind = Kind::kNetworkOperationResult;
      else
        rt.kind = Kind::kBadType;
      if (n >= 6) rt.location = lower(s[5]);
      if (n == 8) rt.op = lower(s[7]);
    } else {
      rt.kind = Kind::kBadNamespace;
    }
  }
  return rt;
}

std::string Arm::check_api_version(const Request& r, const Route& rt, Response& error) const {
  if (r.param("api-version").empty()) {
    error = arm_error(400, "MissingApiVersionParameter",
                      "The api-version query parameter (?api-version=) is required for all requests.");
    return "";
  }
  std::string v = r.param("api-version");
  if (rt.family == Family::kNone) return v;
  const auto& list = versions_of(static_cast<int>(rt.family), rt.kind == Kind::kSkus);
  if (std::find(list.begin(), list.end(), v) != list.end()) return v;
  if (rt.family == Family::kCompute || rt.family == Family::kNetwork) {
    std::string type = rt.type;
    if (rt.kind == Kind::kComputeOperation || rt.kind == Kind::kNetworkOperation) type = "locations/operations";
    if (rt.kind == Kind::kNetworkOperationResult) type = "locations/operationResults";
    if (rt.kind == Kind::kUsages) type = "locations/usages";
    std::string location = rt.location;
    if (location.empty()) {
      json body = json::parse(r.body, nullptr, false);
      if (body.is_object() && body.contains("location") && body["location"].is_string())
        location = lower(body["location"].get<std::string>());
    }
    if (location.empty())
      if (const ResourceGroup* g = find_rg(rt.sub, rt.rg)) location = g->model.value("location", "");
    if (location.empty()) location = options_.locations.front();
    error = arm_error(400, "NoRegisteredProviderFound",
                      "No registered resource provider found for location '" + location + "' and API version '" + v +
                          "' for type '" + type + "'. The supported api-versions are '" + join(list, ", ") +
                          "'. The supported locations are '" + join(options_.locations, ", ") + "'.");
  } else {
    error = arm_error(400, "InvalidApiVersionParameter",
                      "The api-version '" + v + "' is invalid. The supported versions are '" + join(list, ",", true) +
                          "'. Please see https://aka.ms/api-upgrade for more details.");
  }
  return "";
}

std::string Arm::operation_name(const Request& r, const Route& rt) const {
  // The RBAC action names of Azure (Microsoft.Compute/virtualMachines/write, ...).
  std::string verb = r.method == "GET" || r.method == "HEAD" ? "read" : r.method == "DELETE" ? "delete" : "write";
  switch (rt.kind) {
    case Kind::kTenants:
      return "Microsoft.Resources/tenants/read";
    case Kind::kSubscriptions:
    case Kind::kSubscription:
      return "Microsoft.Resources/subscriptions/read";
    case Kind::kProviders:
    case Kind::kProvider:
      return "Microsoft.Resources/subscriptions/providers/read";
    case Kind::kResourceGroups:
    case Kind::kResourceGroup:
      return "Microsoft.Resources/subscriptions/resourceGroups/" + verb;
    case Kind::kRgResources:
      return "Microsoft.Resources/subscriptions/resourceGroups/resources/read";
    case Kind::kSubResources:
      return "Microsoft.Resources/subscriptions/resources/read";
    case Kind::kRgOperationResult:
      return "Microsoft.Resources/subscriptions/operationresults/read";
    case Kind::kVmList:
    case Kind::kVmListAll:
    case Kind::kVm:
      return "Microsoft.Compute/virtualMachines/" + verb;
    case Kind::kVmInstanceView:
      return "Microsoft.Compute/virtualMachines/instanceView/read";
    case Kind::kVmAction:
      return "Microsoft.Compute/virtualMachines/" + lower(rt.action) + "/action";
    case Kind::kComputeOperation:
      return "Microsoft.Compute/locations/operations/read";
    case Kind::kNetworkOperation:
      return "Microsoft.Network/locations/operations/read";
    case Kind::kNetworkOperationResult:
      return "Microsoft.Network/locations/operationResults/read";
    case Kind::kUsages:
      return "Microsoft.Compute/locations/usages/read";
    case Kind::kSkus:
      return "Microsoft.Compute/skus/read";
    case Kind::kNicList:
    case Kind::kNic:
      return "Microsoft.Network/networkInterfaces/" + verb;
    case Kind::kVnetList:
    case Kind::kVnet:
      return "Microsoft.Network/virtualNetworks/" + verb;
    case Kind::kSubnetList:
    case Kind::kSubnet:
      return "Microsoft.Network/virtualNetworks/subnets/" + verb;
    default:
      return "unknown";
  }
}

Response Arm::metadata(const Request& r) {
  if (!r.has_param("api-version"))
    return arm_error(400, "MissingApiVersionParameter",
                     "The api-version query parameter (?api-version=) is required for all requests.");
  json auth = {{"loginEndpoint", r.base + "/"},
               {"audiences", {"https://management.core.windows.net/", "https://management.azure.com/"}},
               {"tenant", "common"},
               {"identityProvider", "AAD"}};
  if (r.param("api-version") < "2019-05-01") {
    return json_response(200, {{"galleryEndpoint", "https://gallery.azure.com/"},
                               {"graphEndpoint", "https://graph.windows.net/"},
                               {"portalEndpoint", "https://portal.azure.com/"},
                               {"authentication", auth}});
  }
  json cloud = {{"portal", "https://portal.azure.com"},
                {"authentication", auth},
                {"media", "https://rest.media.azure.net"},
                {"graphAudience", "https://graph.windows.net/"},
                {"graph", "https://graph.windows.net/"},
                {"name", "AzureCloud"},
                {"suffixes",
                 {{"azureDataLakeStoreFileSystem", "azuredatalakestore.net"},
                  {"acrLoginServer", "azurecr.io"},
                  {"sqlServerHostname", "database.windows.net"},
                  {"keyVaultDns", "vault.azure.net"},
                  {"storage", "core.windows.net"}}},
                {"batch", "https://batch.core.windows.net/"},
                {"resourceManager", r.base + "/"},
                {"vmImageAliasDoc",
                 "https://raw.githubusercontent.com/Azure/azure-rest-api-specs/main/arm-compute/quickstart-templates/"
                 "aliases.json"},
                {"activeDirectoryDataLake", "https://datalake.azure.net/"},
                {"sqlManagement", "https://management.core.windows.net:8443/"},
                {"gallery", "https://gallery.azure.com/"}};
  return json_response(200, json::array({cloud}));
}

Response Arm::handle(const Request& r) {
  Route rt = route(r);
  if (rt.kind == Kind::kMetadata) {
    Response out = metadata(r);
    out.operation = "Microsoft.Resources/metadata/read";
    return out;
  }
  std::lock_guard<std::mutex> lock(mu_);
  advance(Clock::now());
  std::string operation = operation_name(r, rt);
  std::string bucket_kind = r.method == "GET" || r.method == "HEAD" ? "reads"
                            : r.method == "DELETE"                  ? "deletes"
                                                                    : "writes";
  bool write = r.method == "PUT" || r.method == "POST" || r.method == "PATCH" || r.method == "DELETE";

  // Injected faults come first: they stand for the front door failing.
  double roll = 1.0;
  if (options_.drop_rate + options_.rate_429 + options_.rate_500 + options_.rate_503 > 0)
    roll = std::uniform_real_distribution<double>(0, 1)(fault_rng_);
  double edge = options_.drop_rate;
  Response out;
  bool faulted = false;
  if (roll < edge) {
    out.close = true;
    out.fault = "drop";
    out.status = 0;
    out.operation = operation;
    return out;
  }
  TokenCheck who = entra_.check(r.header("authorization"));
  if (throttle_next_ > 0) {
    --throttle_next_;
    out = throttled(rt.sub, bucket_kind, 1, who);
    out.fault = "429";
    faulted = true;
  } else if (roll < (edge += options_.rate_429)) {
    out = throttled(rt.sub, bucket_kind, 1, who);
    out.fault = "429";
    faulted = true;
  } else if (roll < (edge += options_.rate_500)) {
    out = arm_error(500, "InternalServerError",
                    "Encountered internal server error. Diagnostic information: timestamp '" +
                        entra_time(SysClock::now()) + "', subscription id '" + rt.sub + "', tracking id '" +
                        new_guid(id_rng_) + "', request correlation id '" + new_guid(id_rng_) + "'.");
    out.fault = "500";
    faulted = true;
  } else if (roll < (edge += options_.rate_503)) {
    out = arm_error(503, "ServiceUnavailable",
                    "The service is currently unavailable. Please retry the request after some time.");
    out.set_header("Retry-After", "1");
    out.fault = "503";
    faulted = true;
  }

  std::string remaining_header;
  if (!faulted) {
    std::string version;
    if (!who.ok) {
      out = arm_error(401, who.code, who.message);
      out.set_header("WWW-Authenticate", "Bearer authorization_uri=\"" + r.base +
                                             "/\", error=\"invalid_token\", "
                                             "error_description=\"" +
                                             who.description + "\"");
    } else if (version = check_api_version(r, rt, out); version.empty()) {
      // `out` holds the api-version error.
    } else if (!rt.sub.empty() && std::find(options_.subscriptions.begin(), options_.subscriptions.end(), rt.sub) ==
                                      options_.subscriptions.end()) {
      out = arm_error(404, "SubscriptionNotFound", "The subscription '" + rt.sub + "' could not be found.");
    } else if (who.tenant != entra_.tenant()) {
      out = arm_error(401, "InvalidAuthenticationTokenTenant",
                      "The access token is from the wrong issuer 'https://sts.windows.net/" + who.tenant +
                          "/'. It must match the tenant 'https://sts.windows.net/" + entra_.tenant() +
                          "/' associated with this subscription. Please use the authority (URL) '" + r.base + "/" +
                          entra_.tenant() + "' to get the token.");
    } else {
      // Token bucket per subscription (tenant-level requests share one bucket).
      BucketState& b = buckets_[rt.sub];
      auto now = Clock::now();
      if (!b.init) {
        b.reads = options_.reads.size;
        b.writes = options_.writes.size;
        b.deletes = options_.deletes.size;
        b.last = now;
        b.init = true;
      }
      double dt = std::chrono::duration<double>(now - b.last).count();
      b.last = now;
      b.reads = std::min<double>(options_.reads.size, b.reads + dt * options_.reads.per_second);
      b.writes = std::min<double>(options_.writes.size, b.writes + dt * options_.writes.per_second);
      b.deletes = std::min<double>(options_.deletes.size, b.deletes + dt * options_.deletes.per_second);
      double& tokens = bucket_kind == "reads" ? b.reads : bucket_kind == "writes" ? b.writes : b.deletes;
      const Bucket& spec = bucket_kind == "reads"    ? options_.reads
                           : bucket_kind == "writes" ? options_.writes
                                                     : options_.deletes;
      if (tokens < 1) {
        int wait = spec.per_second > 0 ? static_cast<int>(std::ceil((1 - tokens) / spec.per_second)) : 3600;
        out = throttled(rt.sub, bucket_kind, std::max(wait, 1), who);
        counters_.count_event("throttled");
      } else {
        tokens -= 1;
        remaining_header = std::to_string(static_cast<int>(std::floor(tokens)));
        if (who.reader && write) {
          out = arm_error(403, "AuthorizationFailed",
                          "The client '" + who.app_id + "' with object id '" + who.object_id +
                              "' does not have authorization to perform action '" + operation + "' over scope '" +
                              r.path +
                              "' or the scope is invalid. If access was recently granted, please refresh "
                              "your credentials.");
        } else {
          out = dispatch(r, rt, who);
        }
      }
    }
  }

  // Headers Resource Manager puts on every answer.
  std::string scope = rt.sub.empty() ? "tenant" : "subscription";
  if (remaining_header.empty()) {
    auto it = buckets_.find(rt.sub);
    double tokens = 0;
    if (it != buckets_.end())
      tokens = bucket_kind == "reads"    ? it->second.reads
               : bucket_kind == "writes" ? it->second.writes
                                         : it->second.deletes;
    else
      tokens = bucket_kind == "reads"    ? options_.reads.size
               : bucket_kind == "writes" ? options_.writes.size
                                         : options_.deletes.size;
    remaining_header = std::to_string(static_cast<int>(std::floor(std::max(tokens, 0.0))));
  }
  out.set_header("x-ms-ratelimit-remaining-" + scope + "-" + bucket_kind, remaining_header);
  std::string request_id = new_guid(id_rng_);
  std::string correlation = r.header("x-ms-correlation-request-id");
  if (correlation.empty()) correlation = request_id;
  out.set_header("x-ms-request-id", request_id);
  out.set_header("x-ms-correlation-request-id", correlation);
  std::string when = iso_millis(SysClock::now());
  std::string compact;
  for (char c : when.substr(0, 19))
    if (c != '-' && c != ':') compact += c;
  out.set_header("x-ms-routing-request-id", "EASTUS:" + compact + "Z:" + request_id);
  if (!r.header("x-ms-client-request-id").empty())
    out.set_header("x-ms-client-request-id", r.header("x-ms-client-request-id"));
  out.set_header("Cache-Control", "no-cache");
  out.set_header("Pragma", "no-cache");
  out.set_header("Expires", "-1");
  out.set_header("Strict-Transport-Security", "max-age=31536000; includeSubDomains");
  out.set_header("X-Content-Type-Options", "nosniff");
  out.operation = operation;

  // "Lose the answer after the operation was accepted": the work is done, the
  // client never hears about it.
  if (write && !faulted && out.status >= 200 && out.status < 300) {
    bool lose = false;
    if (lose_next_ > 0 && lose_methods_.count(r.method)) {
      --lose_next_;
      lose = true;
    } else if (options_.lose_rate > 0) {
      lose = std::uniform_real_distribution<double>(0, 1)(fault_rng_) < options_.lose_rate;
    }
    if (lose) {
      out.close = true;
      out.fault = "lose";
    }
  }
  if (who.ok) out.token_id = who.token_id;
  return out;
}

Response Arm::throttled(const std::string& sub, const std::string& bucket_kind, int retry_after,
                        const TokenCheck& who) {
  std::string kind = bucket_kind == "reads" ? "read" : bucket_kind == "writes" ? "write" : "delete";
  std::string actor = who.object_id.empty() ? "unknown" : who.object_id;
  Response out =
      sub.empty()
          ? arm_error(429, "TenantRequestsThrottled",
                      "Number of '" + kind + "' requests for tenant '" + entra_.tenant() + "' actor '" + actor +
                          "' exceeded. Please try again after '" + std::to_string(retry_after) +
                          "' seconds after additional tokens are available. Refer to https://aka.ms/arm-throttling "
                          "for additional information.")
          : arm_error(429, "SubscriptionRequestsThrottled",
                      "Number of '" + kind + "' requests for subscription '" + sub + "' actor '" + actor +
                          "' exceeded. Please try again after '" + std::to_string(retry_after) +
                          "' seconds after additional tokens are available. Refer to https://aka.ms/arm-throttling "
                          "for additional information.");
  out.set_header("Retry-After", std::to_string(retry_after));
  return out;
}

Response Arm::dispatch(const Request& r, const Route& rt, const TokenCheck& who) {
  auto method_not_allowed = [&] {
    return arm_error(405, "MethodNotAllowed",
                     "The requested resource does not support http method '" + r.method + "'.");
  };
  switch (rt.kind) {
    case Kind::kTenants: {
      if (r.method != "GET") return method_not_allowed();
      json tenant = {{"id", "/tenants/" + entra_.tenant()},
                     {"tenantId", entra_.tenant()},
                     {"tenantCategory", "Home"},
                     {"country", "US"},
                     {"countryCode", "US"},
                     {"displayName", "Plinth Emulator"},
                     {"domains", {"plinthemulator.onmicrosoft.com"}},
                     {"defaultDomain", "plinthemulator.onmicrosoft.com"},
                     {"tenantType", "AAD"}};
      return json_response(200, {{"value", json::array({tenant})}});
    }
    case Kind::kSubscriptions:
    case Kind::kSubscription:
      return r.method == "GET" ? subscriptions(r, rt) : method_not_allowed();
    case Kind::kProviders:
    case Kind::kProvider:
      return r.method == "GET" ? providers(r, rt) : method_not_allowed();
    case Kind::kResourceGroups:
    case Kind::kResourceGroup:
    case Kind::kRgOperationResult:
      return resource_group(r, rt);
    case Kind::kRgResources:
    case Kind::kSubResources:
      return r.method == "GET" ? rg_resources(r, rt) : method_not_allowed();
    case Kind::kVmList:
    case Kind::kVmListAll:
      return r.method == "GET" ? vm_list(r, rt) : method_not_allowed();
    case Kind::kVm:
      if (r.method == "PUT") return vm_put(r, rt, false);
      if (r.method == "PATCH") return vm_put(r, rt, true);
      if (r.method == "GET") return vm_get(r, rt);
      if (r.method == "DELETE") return vm_delete(r, rt);
      return method_not_allowed();
    case Kind::kVmInstanceView:
      return r.method == "GET" ? vm_get(r, rt) : method_not_allowed();
    case Kind::kVmAction:
      return r.method == "POST" ? vm_action(r, rt) : method_not_allowed();
    case Kind::kComputeOperation:
    case Kind::kNetworkOperation:
    case Kind::kNetworkOperationResult:
      return r.method == "GET" ? operation_status(r, rt) : method_not_allowed();
    case Kind::kUsages:
      return r.method == "GET" ? usages(r, rt) : method_not_allowed();
    case Kind::kSkus:
      return r.method == "GET" ? skus(r, rt) : method_not_allowed();
    case Kind::kNicList:
      return r.method == "GET" ? nic_list(r, rt) : method_not_allowed();
    case Kind::kNic:
      if (r.method == "PUT") return nic_put(r, rt);
      if (r.method == "GET") return nic_get(r, rt);
      if (r.method == "DELETE") return nic_delete(r, rt);
      return method_not_allowed();
    case Kind::kVnetList:
      return r.method == "GET" ? vnet_list(r, rt) : method_not_allowed();
    case Kind::kVnet:
      if (r.method == "PUT") return vnet_put(r, rt);
      if (r.method == "GET") return vnet_get(r, rt);
      if (r.method == "DELETE") return vnet_delete(r, rt);
      return method_not_allowed();
    case Kind::kSubnetList:
    case Kind::kSubnet:
      return subnet(r, rt);
    case Kind::kBadNamespace:
      return arm_error(400, "InvalidResourceNamespace", "The resource namespace '" + rt.ns + "' is invalid.");
    case Kind::kBadType:
      return arm_error(400, "InvalidResourceType",
                       "The resource type '" + rt.type + "' could not be found in the namespace '" + rt.ns +
                           "' for api version '" + r.param("api-version") + "'.");
    default:
      (void)who;
      return arm_error(404, "NotFound",
                       "No HTTP resource was found that matches the request URI '" + r.base + r.path + "'.");
  }
}

// ---------------------------------------------------------------- operations

std::string Arm::start_op(const std::string& sub, const std::string& provider, const std::string& location,
                          const std::string& api_version, const std::string& kind, const std::string& target,
                          int delay_ms, json error, std::function<void()> on_success,
                          std::function<void()> on_failure) {
  preempt(target);
  Operation op;
  op.id = new_guid(id_rng_);
  op.sub = sub;
  op.provider = provider;
  op.location = lower(location);
  op.api_version = api_version;
  op.kind = kind;
  op.target = target;
  op.started = SysClock::now();
  op.due = Clock::now() + std::chrono::milliseconds(delay_ms);
  op.error = std::move(error);
  op.on_success = std::move(on_success);
  op.on_failure = std::move(on_failure);
  op.seq = ++op_seq_;
  std::string id = op.id;
  ops_[id] = std::move(op);
  return id;
}

void Arm::preempt(const std::string& target) {
  for (auto& [id, op] : ops_) {
    if (op.status != "InProgress" || op.target != target) continue;
    op.status = "Canceled";
    op.ended = SysClock::now();
    op.error = {{"code", "OperationPreempted"},
                {"message", "Operation execution has been preempted by a more recent operation."}};
    op.on_success = nullptr;
    op.on_failure = nullptr;
  }
}

void Arm::finish(Operation& op) {
  op.ended = SysClock::now();
  auto success = std::move(op.on_success);
  auto failure = std::move(op.on_failure);
  op.on_success = nullptr;
  op.on_failure = nullptr;
  if (op.error.is_null()) {
    op.status = "Succeeded";
    if (success) success();
  } else {
    op.status = "Failed";
    if (failure) failure();
  }
}

void Arm::advance(Clock::time_point now) {
  std::vector<std::pair<std::pair<Clock::time_point, uint64_t>, std::string>> due;
  for (const auto& [id, op] : ops_)
    if (op.status == "InProgress" && op.due <= now) due.push_back({{op.due, op.seq}, id});
  std::sort(due.begin(), due.end());
  for (const auto& [when, id] : due) {
    auto it = ops_.find(id);
    if (it != ops_.end() && it->second.status == "InProgress") finish(it->second);
  }
}

std::string Arm::op_url(const Request& r, const Operation& op, bool monitor) const {
  std::string base = r.base + "/subscriptions/" + op.sub;
  if (op.provider == "Microsoft.Resources")
    return base + "/operationresults/" + op.id + "?api-version=" + op.api_version;
  if (op.provider == "Microsoft.Network")
    return base + "/providers/Microsoft.Network/locations/" + op.location +
           (monitor ? "/operationResults/" : "/operations/") + op.id + "?api-version=" + op.api_version;
  return base + "/providers/Microsoft.Compute/locations/" + op.location + "/operations/" + op.id +
         (monitor ? "?monitor=true&api-version=" : "?api-version=") + op.api_version;
}

void Arm::lro_headers(const Request& r, Response& out, const std::string& op_id, bool location_header,
                      bool async_header) {
  const Operation& op = ops_.at(op_id);
  if (async_header) {
    out.set_header("Azure-AsyncOperation", op_url(r, op, false));
    if (op.provider == "Microsoft.Compute") out.set_header("Azure-AsyncNotification", "Enabled");
  }
  if (location_header) out.set_header("Location", op_url(r, op, true));
  out.set_header("Retry-After", std::to_string(options_.retry_after_s));
}

Response Arm::operation_status(const Request& r, const Route& rt) {
  auto it = ops_.find(rt.op);
  std::string provider = rt.kind == Kind::kComputeOperation ? "Microsoft.Compute" : "Microsoft.Network";
  if (rt.kind == Kind::kRgOperationResult) provider = "Microsoft.Resources";
  if (it == ops_.end() || it->second.sub != rt.sub || it->second.provider != provider ||
      (!rt.location.empty() && it->second.location != rt.location))
    return arm_error(404, "NotFound", "The operation '" + rt.op + "' could not be found.");
  const Operation& op = it->second;
  bool running = op.status == "InProgress";
  auto in_progress_monitor = [&] {
    Response out;
    out.status = 202;
    out.body = "";
    out.set_header("Location", op_url(r, op, true));
    out.set_header("Retry-After", std::to_string(options_.retry_after_s));
    return out;
  };
  auto failed_monitor = [&] { return json_response(op.status == "Canceled" ? 409 : 400, {{"error", op.error}}); };

  if (rt.kind == Kind::kRgOperationResult || rt.kind == Kind::kNetworkOperationResult ||
      (rt.kind == Kind::kComputeOperation && iequals(r.param("monitor"), "true"))) {
    if (running) return in_progress_monitor();
    if (op.status != "Succeeded") return failed_monitor();
    Response out;
    out.status = rt.kind == Kind::kNetworkOperationResult ? 204 : 200;
    return out;
  }
  json body;
  if (provider == "Microsoft.Compute") {
    body = {{"startTime", arm_time(op.started)}, {"status", op.status}, {"name", op.id}};
    if (op.ended) body["endTime"] = arm_time(*op.ended);
  } else {
    body = {{"status", op.status}};
  }
  if (!op.error.is_null()) {
    body["error"] = op.error;
    if (provider == "Microsoft.Network" && !body["error"].contains("details")) body["error"]["details"] = json::array();
  }
  Response out = json_response(200, body);
  if (running) out.set_header("Retry-After", std::to_string(options_.retry_after_s));
  return out;
}

// ---------------------------------------------------------------- lists

Response Arm::page(const Request& r, const std::vector<json>& items, const std::string&) {
  std::string after;
  if (r.has_param("$skiptoken")) {
    auto decoded = base64url_decode(r.param("$skiptoken"));
    if (!decoded)
      return arm_error(400, "InvalidSkipToken", "The $skiptoken '" + r.param("$skiptoken") + "' is not valid.");
    after = *decoded;
  }
  json value = json::array();
  size_t i = 0;
  while (i < items.size() && !after.empty() && lower(items[i].value("id", "")) <= after) ++i;
  size_t end = std::min(items.size(), i + static_cast<size_t>(options_.page_size));
  for (size_t j = i; j < end; ++j) value.push_back(items[j]);
  json body = {{"value", value}};
  if (end < items.size()) {
    std::string next = r.base + r.path + "?";
    bool first = true;
    for (const auto& [k, v] : r.params) {
      if (iequals(k, "$skiptoken")) continue;
      next += (first ? "" : "&") + url_encode(k) + "=" + url_encode(v);
      first = false;
    }
    next += (first ? "" : "&") + std::string("$skiptoken=") + base64url_encode(lower(items[end - 1].value("id", "")));
    body["nextLink"] = next;
  }
  return json_response(200, body);
}

Response Arm::subscriptions(const Request& r, const Route& rt) {
  auto view = [&](size_t i) {
    const std::string& s = options_.subscriptions[i];
    return json{{"id", "/subscriptions/" + s},
                {"authorizationSource", "RoleBased"},
                {"managedByTenants", json::array()},
                {"subscriptionId", s},
                {"tenantId", entra_.tenant()},
                {"displayName", "Plinth emulator subscription " + std::to_string(i + 1)},
                {"state", "Enabled"},
                {"subscriptionPolicies",
                 {{"locationPlacementId", "Public_2014-09-01"},
                  {"quotaId", "PayAsYouGo_2014-09-01"},
                  {"spendingLimit", "Off"}}}};
  };
  if (rt.kind == Kind::kSubscription) {
    for (size_t i = 0; i < options_.subscriptions.size(); ++i)
      if (options_.subscriptions[i] == rt.sub) return json_response(200, view(i));
    return arm_error(404, "SubscriptionNotFound", "The subscription '" + rt.sub + "' could not be found.");
  }
  json value = json::array();
  for (size_t i = 0; i < options_.subscriptions.size(); ++i) value.push_back(view(i));
  (void)r;
  return json_response(200, {{"value", value}, {"count", {{"type", "Total"}, {"value", value.size()}}}});
}

Response Arm::providers(const Request& r, const Route& rt) {
  std::vector<std::string> display;
  for (const auto& l : options_.locations) display.push_back(location_display_name(l));
  auto type = [&](const std::string& name, const std::vector<std::string>& versions, bool zones) {
    json t = {{"resourceType", name},
              {"locations", display},
              {"apiVersions", json(std::vector<std::string>(versions.rbegin(), versions.rend()))},
              {"defaultApiVersion", versions.back()},
              {"capabilities", "None"}};
    if (zones) {
      json mappings = json::array();
      for (const auto& l : display) mappings.push_back({{"location", l}, {"zones", {"1", "2", "3"}}});
      t["zoneMappings"] = mappings;
    }
    return t;
  };
  auto compute = [&] {
    return json{{"id", "/subscriptions/" + rt.sub + "/providers/Microsoft.Compute"},
                {"namespace", "Microsoft.Compute"},
                {"registrationState", "Registered"},
                {"registrationPolicy", "RegistrationRequired"},
                {"resourceTypes",
                 {type("virtualMachines", kComputeVersions, true), type("locations", kComputeVersions, false),
                  type("locations/operations", kComputeVersions, false),
                  type("locations/usages", kComputeVersions, false), type("skus", kSkuVersions, false)}}};
  };
  auto network = [&] {
    return json{{"id", "/subscriptions/" + rt.sub + "/providers/Microsoft.Network"},
                {"namespace", "Microsoft.Network"},
                {"registrationState", "Registered"},
                {"registrationPolicy", "RegistrationRequired"},
                {"resourceTypes",
                 {type("networkInterfaces", kNetworkVersions, false), type("virtualNetworks", kNetworkVersions, false),
                  type("virtualNetworks/subnets", kNetworkVersions, false),
                  type("locations/operations", kNetworkVersions, false),
                  type("locations/operationResults", kNetworkVersions, false)}}};
  };
  (void)r;
  if (rt.kind == Kind::kProviders) return json_response(200, {{"value", {compute(), network()}}});
  if (iequals(rt.ns, "Microsoft.Compute")) return json_response(200, compute());
  if (iequals(rt.ns, "Microsoft.Network")) return json_response(200, network());
  return arm_error(404, "InvalidResourceNamespace", "The resource namespace '" + rt.ns + "' is invalid.");
}

Response Arm::resource_group(const Request& r, const Route& rt) {
  std::string version = r.param("api-version");
  if (rt.kind == Kind::kRgOperationResult) {
    if (r.method != "GET")
      return arm_error(405, "MethodNotAllowed",
                       "The requested resource does not support http method '" + r.method + "'.");
    return operation_status(r, rt);
  }
  if (rt.kind == Kind::kResourceGroups) {
    if (r.method != "GET")
      return arm_error(405, "MethodNotAllowed",
                       "The requested resource does not support http method '" + r.method + "'.");
    std::vector<json> items;
    std::string prefix = lower("/subscriptions/" + rt.sub + "/resourcegroups/");
    for (const auto& [key, g] : rgs_)
      if (key.rfind(prefix, 0) == 0) items.push_back(g.model);
    return page(r, items);
  }
  std::string key = lower(rg_id(rt.sub, rt.rg));
  auto it = rgs_.find(key);
  if (r.method == "HEAD") {
    Response out;
    out.status = it == rgs_.end() ? 404 : 204;
    return out;
  }
  if (r.method == "GET") {
    if (it == rgs_.end()) return rg_not_found(rt.rg);
    return json_response(200, it->second.model);
  }
  if (r.method == "PUT" || r.method == "PATCH") {
    json body = json::parse(r.body, nullptr, false);
    if (!body.is_object()) return invalid_content(r.body);
    if (it != rgs_.end() && it->second.deleting)
      return arm_error(
          409, "ResourceGroupBeingDeleted",
          "The resource group '" + rt.rg + "' is in deprovisioning state and cannot perform this operation.");
    if (r.method == "PATCH") {
      if (it == rgs_.end()) return rg_not_found(rt.rg);
      if (body.contains("tags")) it->second.model["tags"] = body["tags"];
      return json_response(200, it->second.model);
    }
    if (!body.contains("location") || !body["location"].is_string())
      return arm_error(400, "LocationRequired", "The location property is required for this definition.");
    std::string location = lower(body["location"].get<std::string>());
    if (!location_known(location))
      return arm_error(400, "LocationNotAvailableForResourceGroup",
                       "The provided location '" + location +
                           "' is not available for resource group. List of available regions is '" +
                           join(options_.locations, ",") + "'.");
    if (it != rgs_.end() && it->second.model.value("location", "") != location)
      return arm_error(409, "InvalidResourceGroupLocation",
                       "Invalid resource group location '" + location +
                           "'. The Resource group already exists in "
                           "location '" +
                           it->second.model.value("location", "") + "'.");
    std::string name = it == rgs_.end() ? rt.rg : it->second.model.value("name", rt.rg);
    json model = {{"id", rg_id(rt.sub, name)},
                  {"name", name},
                  {"type", "Microsoft.Resources/resourceGroups"},
                  {"location", location},
                  {"properties", {{"provisioningState", "Succeeded"}}}};
    if (body.contains("tags")) model["tags"] = body["tags"];
    if (body.contains("managedBy")) model["managedBy"] = body["managedBy"];
    bool created = it == rgs_.end();
    rgs_[key] = ResourceGroup{model, rt.sub, false};
    return json_response(created ? 201 : 200, model);
  }
  if (r.method == "DELETE") {
    if (it == rgs_.end()) return rg_not_found(rt.rg);
    it->second.deleting = true;
    it->second.model["properties"]["provisioningState"] = "Deleting";
    std::string prefix = key + "/";
    std::string id = start_op(rt.sub, "Microsoft.Resources", it->second.model.value("location", ""), version,
                              "resourceGroup.delete", key, options_.lro_delay_ms, nullptr, [this, key, prefix] {
                                std::vector<std::string> doomed;
                                for (const auto& [vm_key, vm] : vms_)
                                  if (vm_key.rfind(prefix, 0) == 0) doomed.push_back(vm_key);
                                for (const auto& k : doomed) remove_vm(k);
                                for (auto i = nics_.begin(); i != nics_.end();)
                                  i = i->first.rfind(prefix, 0) == 0 ? nics_.erase(i) : std::next(i);
                                for (auto i = vnets_.begin(); i != vnets_.end();)
                                  i = i->first.rfind(prefix, 0) == 0 ? vnets_.erase(i) : std::next(i);
                                rgs_.erase(key);
                              });
    Response out;
    out.status = 202;
    lro_headers(r, out, id, true, false);
    return out;
  }
  return arm_error(405, "MethodNotAllowed", "The requested resource does not support http method '" + r.method + "'.");
}

Response Arm::rg_resources(const Request& r, const Route& rt) {
  if (rt.kind == Kind::kRgResources && !find_rg(rt.sub, rt.rg)) return rg_not_found(rt.rg);
  Filter filter;
  if (std::string err = parse_filter(r.param("$filter"), filter); !err.empty())
    return arm_error(400, "InvalidFilterInQueryString", err);
  std::string prefix =
      rt.kind == Kind::kRgResources ? lower(rg_id(rt.sub, rt.rg)) + "/" : "/subscriptions/" + rt.sub + "/";
  std::string expand = lower(r.param("$expand"));
  std::vector<std::pair<std::string, json>> all;
  for (const auto& [k, vm] : vms_)
    if (k.rfind(prefix, 0) == 0) all.push_back({k, vm.model});
  for (const auto& [k, nic] : nics_)
    if (k.rfind(prefix, 0) == 0) all.push_back({k, nic.model});
  for (const auto& [k, vnet] : vnets_)
    if (k.rfind(prefix, 0) == 0) all.push_back({k, vnet.model});
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<json> items;
  for (const auto& [k, m] : all) {
    if (!filter.matches(m)) continue;
    json item = {{"id", m["id"]}, {"name", m["name"]}, {"type", m["type"]}, {"location", m["location"]}};
    if (m.contains("zones")) item["zones"] = m["zones"];
    if (m.contains("tags") && !filter.by_tag) item["tags"] = m["tags"];
    const json& props = m.contains("properties") ? m["properties"] : json::object();
    if (expand.find("provisioningstate") != std::string::npos)
      item["provisioningState"] = props.value("provisioningState", "Succeeded");
    if (expand.find("createdtime") != std::string::npos && props.contains("timeCreated"))
      item["createdTime"] = props["timeCreated"];
    if (expand.find("changedtime") != std::string::npos && props.contains("timeCreated"))
      item["changedTime"] = props["timeCreated"];
    items.push_back(item);
  }
  return page(r, items);
}

}  // namespace plinth::azure_emulator
