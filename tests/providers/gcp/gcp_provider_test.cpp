// The gcp provider's pieces: what it sends and reads checked against the
// compute.v1 discovery document (tests/data/third_party/gcp-compute), names,
// labels and requestIds, credentials as Google's libraries find them, and
// its Compute client against gcp-emulator (a token refused with a 401 is
// fetched again once).
// End to end: tests/e2e/burst_pool_conformance_test.cpp and gcp_test.cpp.
#include "providers/gcp/gcp_provider.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <regex>

#include "providers/gcp/compute_client.h"
#include "providers/gcp/schema.h"
#include "tests/support/emulator_process.h"
#include "tests/support/run.h"

using namespace plinth;
using nlohmann::json;

namespace {

const json& discovery() {
  static const json d = [] {
    std::ifstream in(test::testdata_dir() + "/gcp-compute/compute.v1.json");
    REQUIRE(in);
    return json::parse(in);
  }();
  return d;
}

/// Fields the API gained after the stored discovery document (revision
/// 20211004) that the provider uses; documented in docs/providers/gcp.md.
const std::set<std::string> kNewer = {"Scheduling.provisioningModel", "Scheduling.instanceTerminationAction"};

/// Every key of `value` against schema `schema` of the discovery document
/// (objects by their properties or additionalProperties, arrays by items,
/// scalars by type); mismatches go to `errors` as JSON paths.
void conform(const json& value, const json& schema, const std::string& path, std::vector<std::string>& errors,
             const std::string& schema_name = "") {
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    conform(value, discovery()["schemas"][ref], path, errors, ref);
    return;
  }
  const std::string type = schema.value("type", "");
  if (type == "object") {
    if (!value.is_object()) return errors.push_back(path + ": not an object");
    for (const auto& [k, v] : value.items()) {
      if (schema.contains("properties") && schema["properties"].contains(k))
        conform(v, schema["properties"][k], path + "." + k, errors);
      else if (schema.contains("additionalProperties"))
        conform(v, schema["additionalProperties"], path + "." + k, errors);
      else if (!kNewer.count(schema_name + "." + k))
        errors.push_back(path + "." + k + ": not a field of " + (schema_name.empty() ? "the object" : schema_name));
    }
  } else if (type == "array") {
    if (!value.is_array()) return errors.push_back(path + ": not an array");
    for (size_t i = 0; i < value.size(); ++i)
      conform(value[i], schema["items"], path + "[" + std::to_string(i) + "]", errors);
  } else if (type == "string") {
    if (!value.is_string()) errors.push_back(path + ": not a string (int64 values are strings in Google's JSON)");
  } else if (type == "boolean") {
    if (!value.is_boolean()) errors.push_back(path + ": not a boolean");
  } else if (type == "integer") {
    if (!value.is_number_integer()) errors.push_back(path + ": not an integer");
  }
}

Resource pool_instance(json extra = json::object()) {
  Resource r;
  r.type = "gcp.instance";
  r.name = "gpu";
  r.index = 3;
  r.address = "gcp.instance.gpu[3]";
  r.provider = "gcp";
  r.attributes = {{"instance_type", "a3-highgpu-8g"},
                  {"region", "us-central1"},
                  {"zone", ""},
                  {"spot", true},
                  {"image", "projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts"},
                  {"zones", {"us-central1-a", "us-central1-b"}},
                  {"boot_disk", {{"size_gb", 500}, {"type", "pd-ssd"}}},
                  {"network", "ml-vpc"},
                  {"subnetwork", "gpu-subnet"},
                  {"service_account", {{"email", "burst@p.iam.gserviceaccount.com"}, {"scopes", {"cloud-platform"}}}},
                  {"labels", {{"team", "vision"}}}};
  for (const auto& [k, v] : extra.items()) r.attributes[k] = v;
  r.computed = {{"user_data", "#cloud-config\npackages: [nvidia-driver-550]\n"}};
  return r;
}

Result<ProviderConfig> config(const std::vector<std::string>& env) {
  return parse_provider_config(gcp::schema(), env, {}, {});
}

}  // namespace

TEST_CASE("gcp: the insert body is an Instance of the discovery document, field by field") {
  for (bool spot : {true, false}) {
    json body = gcp::insert_body(pool_instance({{"spot", spot}}),
                                 {"plinth-test", "us-central1-b", "a3-highgpu-8g", "gpu-3-abc", "lin-eage", "bp"});
    std::vector<std::string> errors;
    conform(body, json{{"$ref", "Instance"}}, "Instance", errors);
    INFO(body.dump(2));
    CHECK(errors == std::vector<std::string>{});
    CHECK(body["machineType"] == "zones/us-central1-b/machineTypes/a3-highgpu-8g");
    CHECK(body["scheduling"]["onHostMaintenance"] == "TERMINATE");
    CHECK(body["scheduling"]["provisioningModel"] == (spot ? "SPOT" : "STANDARD"));
    CHECK(body["scheduling"].contains("instanceTerminationAction") == spot);
    CHECK(body["disks"][0]["initializeParams"]["diskSizeGb"] == "500");
    CHECK(body["disks"][0]["initializeParams"]["diskType"] == "zones/us-central1-b/diskTypes/pd-ssd");
    CHECK(body["networkInterfaces"][0]["network"] == "projects/plinth-test/global/networks/ml-vpc");
    CHECK(body["networkInterfaces"][0]["subnetwork"] ==
          "projects/plinth-test/regions/us-central1/subnetworks/gpu-subnet");
    CHECK(body["serviceAccounts"][0]["scopes"][0] == "https://www.googleapis.com/auth/cloud-platform");
    CHECK(body["labels"]["team"] == "vision");
    CHECK(body["labels"]["plinth-lineage"] == "lin-eage");
    CHECK(body["labels"]["plinth-index"] == "3");
    CHECK(body["metadata"]["items"][0] == json{{"key", "plinth-address"}, {"value", "gcp.instance.gpu[3]"}});
    CHECK(body["metadata"]["items"][1]["key"] == "user-data");
  }
  // The setLabels body too.
  std::vector<std::string> errors;
  conform(json{{"labels", {{"a", "b"}}}, {"labelFingerprint", "42WmSpB8rSM="}},
          json{{"$ref", "InstancesSetLabelsRequest"}}, "InstancesSetLabelsRequest", errors);
  CHECK(errors.empty());
}

TEST_CASE("gcp: GPU NICs, one per listed subnetwork up to the machine type's count, gVNIC or MRDMA") {
  json subnets = json::array();
  for (int i = 1; i <= 8; ++i) subnets.push_back("gpu-" + std::to_string(i));
  subnets.push_back("projects/shared-vpc/regions/us-central1/subnetworks/gpu-9");
  auto nics = [&](const std::string& type, const json& list) {
    json extra = {{"instance_type", type}};
    if (!list.is_null()) extra["gpu_subnetworks"] = list;
    return gcp::insert_body(pool_instance(extra), {"plinth-test", "us-central1-a", type, "gpu-3-abc", "lin", "bp"})
        ["networkInterfaces"];
  };
  const json mega = nics("a3-megagpu-8g", subnets);
  REQUIRE(mega.size() == 9);  // the host's gVNIC and 8 GPU NICs; the ninth subnetwork is not needed
  CHECK(mega[0] == json{{"network", "projects/plinth-test/global/networks/ml-vpc"},
                        {"subnetwork", "projects/plinth-test/regions/us-central1/subnetworks/gpu-subnet"},
                        {"nicType", "GVNIC"}});
  for (size_t i = 1; i < 9; ++i)
    CHECK(mega[i] == json{{"subnetwork", "projects/plinth-test/regions/us-central1/subnetworks/gpu-" + std::to_string(i)},
                          {"nicType", "GVNIC"}});
  CHECK(nics("a3-highgpu-8g", subnets).size() == 5);  // A3 High: 4 GPU NICs (GPUDirect-TCPX)
  const json ultra = nics("a3-ultragpu-8g", subnets);
  REQUIRE(ultra.size() == 9);
  CHECK(ultra[8]["nicType"] == "MRDMA");
  // A type without GPU NICs, or no list: the one interface, as before.
  CHECK(nics("a2-highgpu-8g", subnets) == json::array({{{"network", "projects/plinth-test/global/networks/ml-vpc"},
                                                         {"subnetwork", "projects/plinth-test/regions/us-central1/"
                                                                        "subnetworks/gpu-subnet"}}}));
  CHECK(nics("a3-megagpu-8g", json()).size() == 1);
  CHECK_FALSE(nics("a3-megagpu-8g", json())[0].contains("nicType"));
  // A subnetwork given as a path keeps its project (a Shared VPC host's).
  json hosted = json::array();
  for (int i = 0; i < 4; ++i) hosted.push_back("projects/host/regions/us-central1/subnetworks/tcpx-" + std::to_string(i));
  CHECK(nics("a3-highgpu-8g", hosted)[4]["subnetwork"] == "projects/host/regions/us-central1/subnetworks/tcpx-3");
}

TEST_CASE("gcp: the methods, paths and query parameters the provider uses are the discovery document's") {
  const json& r = discovery()["resources"];
  struct Use {
    const char* resource;
    const char* method;
    const char* http;
    const char* path;
    std::vector<std::string> params;
  };
  for (const Use& u : std::vector<Use>{
           {"instances", "insert", "POST", "projects/{project}/zones/{zone}/instances", {"requestId"}},
           {"instances", "get", "GET", "projects/{project}/zones/{zone}/instances/{instance}", {}},
           {"instances", "delete", "DELETE", "projects/{project}/zones/{zone}/instances/{instance}", {"requestId"}},
           {"instances",
            "setLabels",
            "POST",
            "projects/{project}/zones/{zone}/instances/{instance}/setLabels",
            {"requestId"}},
           {"instances",
            "aggregatedList",
            "GET",
            "projects/{project}/aggregated/instances",
            {"filter", "maxResults", "pageToken"}},
           {"zoneOperations", "get", "GET", "projects/{project}/zones/{zone}/operations/{operation}", {}},
           {"zoneOperations",
            "list",
            "GET",
            "projects/{project}/zones/{zone}/operations",
            {"filter", "maxResults", "pageToken"}},
       }) {
    INFO(u.resource << "." << u.method);
    const json& m = r[u.resource]["methods"][u.method];
    CHECK(m["httpMethod"] == u.http);
    CHECK(m["path"] == u.path);
    for (const auto& p : u.params) CHECK(m["parameters"].contains(p));
  }
  CHECK(discovery()["rootUrl"].get<std::string>() + discovery()["servicePath"].get<std::string>() ==
        gcp::normalize_root(""));
  // Every field the provider reads from answers.
  const json& s = discovery()["schemas"];
  for (const char* f : {"id", "name", "machineType", "zone", "status", "scheduling", "selfLink", "creationTimestamp",
                        "networkInterfaces", "metadata", "labels", "labelFingerprint"})
    CHECK(s["Instance"]["properties"].contains(f));
  CHECK(s["NetworkInterface"]["properties"].contains("networkIP"));
  for (const char* f : {"name", "status", "error", "httpErrorStatusCode", "httpErrorMessage", "operationType",
                        "targetId", "targetLink", "insertTime", "statusMessage"})
    CHECK(s["Operation"]["properties"].contains(f));
  CHECK(s["Operation"]["properties"]["error"]["properties"]["errors"]["items"]["properties"].contains("code"));
  CHECK(s["InstanceAggregatedList"]["properties"].contains("nextPageToken"));
  CHECK(s["InstancesScopedList"]["properties"].contains("instances"));
  CHECK(s["OperationList"]["properties"].contains("nextPageToken"));
}

TEST_CASE("gcp: instance names are RFC 1035, differ by state, address and attributes, and labels are GCP's form") {
  const std::regex rfc1035("[a-z]([-a-z0-9]{0,61}[a-z0-9])?");
  json a = {{"instance_type", "a3-highgpu-8g"}};
  const std::string n = gcp::instance_name("gpu", 3, "lin", "gcp.instance.gpu[3]", a);
  CHECK(std::regex_match(n, rfc1035));
  CHECK(n.rfind("gpu-3-", 0) == 0);
  CHECK(n == gcp::instance_name("gpu", 3, "lin", "gcp.instance.gpu[3]", a));
  CHECK(n != gcp::instance_name("gpu", 3, "other", "gcp.instance.gpu[3]", a));
  CHECK(n != gcp::instance_name("gpu", 3, "lin", "gcp.instance.gpu[3]", {{"instance_type", "a3-megagpu-8g"}}));
  const std::string odd = gcp::instance_name(std::string(80, 'X') + "_pool", 12, "lin", "a", a);
  CHECK(std::regex_match(odd, rfc1035));
  CHECK(std::regex_match(gcp::instance_name("9lives", 0, "l", "a", a), rfc1035));
  CHECK(gcp::label_value("Team Vision.1") == "team-vision-1");
  CHECK(gcp::label_value(std::string(70, 'a')).size() == 63);
}

TEST_CASE("gcp: requestIds are UUIDs, the same for the same parts and different otherwise") {
  const std::regex uuid("[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  const std::string id = gcp::request_id({"run", "lineage", "gcp.instance.gpu[0]", "us-central1-a"});
  CHECK(std::regex_match(id, uuid));
  CHECK(id == gcp::request_id({"run", "lineage", "gcp.instance.gpu[0]", "us-central1-a"}));
  CHECK(id != gcp::request_id({"run", "lineage", "gcp.instance.gpu[0]", "us-central1-b"}));
}

TEST_CASE(
    "gcp: credentials are an access token when one is set, else the key file, with a message saying what to set") {
  test::TempDir home;
  auto none = config({"PLINTH_GCP_METADATA=false"});
  REQUIRE(none.ok());
  auto missing = gcp::find_credentials(*none, home.path());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("set GOOGLE_APPLICATION_CREDENTIALS") != std::string::npos);
  CHECK(missing.error().message.find(home.path() + "/.config/gcloud/application_default_credentials.json") !=
        std::string::npos);
  // With the metadata server on (the default), it is the last resort.
  auto metadata = gcp::find_credentials(*config({}), home.path());
  REQUIRE(metadata.ok());
  CHECK(metadata->who == "the metadata server at metadata.google.internal");
  // gcloud's well-known file comes before it.
  home.write(".config/gcloud/application_default_credentials.json",
             R"({"type": "authorized_user", "client_id": "764086051850.apps.googleusercontent.com",
                 "client_secret": "d-FL95Q19q7MQmFpd7hHD0Ty", "refresh_token": "1//0gRefresh"})");
  auto user = gcp::find_credentials(*config({}), home.path());
  REQUIRE(user.ok());
  CHECK(user->kind == gcp::CredentialSource::Kind::AuthorizedUser);
  CHECK(user->who.find("d-FL95") == std::string::npos);

  auto tok = config({"GOOGLE_OAUTH_ACCESS_TOKEN=ya29.secret", "GOOGLE_APPLICATION_CREDENTIALS=/nonexistent.json"});
  REQUIRE(tok.ok());
  auto t = gcp::find_credentials(*tok, home.path());
  REQUIRE(t.ok());
  CHECK(t->access_token == "ya29.secret");
  CHECK(t->who.find("ya29") == std::string::npos);
  CHECK(t->who == "the access token of environment GOOGLE_OAUTH_ACCESS_TOKEN");

  auto bad = gcp::find_credentials(*config({"GOOGLE_APPLICATION_CREDENTIALS=/nonexistent.json"}), home.path());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("/nonexistent.json") != std::string::npos);
  // The access token is a secret option: refused in a blueprint, never printed.
  CHECK(gcp::schema().option("access_token")->secret);
}

TEST_CASE("gcp: operation errors: capacity and quota are Conflict with GCP's code, message and metric") {
  json stockout = {{"name", "operation-1"},
                   {"status", "DONE"},
                   {"httpErrorStatusCode", 503},
                   {"error",
                    {{"errors",
                      {{{"code", "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"},
                        {"message", "The zone 'projects/p/zones/us-central1-a' does not have enough resources."},
                        {"errorDetails",
                         {{{"errorInfo", {{"metadatas", {{"zonesAvailable", "us-central1-b,us-central1-c"}}}}}}}}}}}}}};
  auto f = gcp::operation_failure(stockout, " (compute.instances.insert x in us-central1-a)");
  CHECK(f.error.kind == Error::Kind::Conflict);
  CHECK(f.code == "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS");
  CHECK(f.error.message ==
        "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS: The zone 'projects/p/zones/us-central1-a' does not have enough "
        "resources. [GCP says these zones have room: us-central1-b,us-central1-c] (compute.instances.insert x in "
        "us-central1-a) [operation operation-1]");
  json quota = {
      {"name", "operation-2"},
      {"httpErrorStatusCode", 403},
      {"error",
       {{"errors",
         {{{"code", "QUOTA_EXCEEDED"},
           {"message", "Quota 'NVIDIA_H100_GPUS' exceeded.  Limit: 8.0 in region us-central1."},
           {"errorDetails", {{{"quotaInfo", {{"metricName", "compute.googleapis.com/nvidia_h100_gpus"}}}}}}}}}}}};
  auto q = gcp::operation_failure(quota, "");
  CHECK(q.error.kind == Error::Kind::Conflict);
  CHECK(q.error.message.find("[metric compute.googleapis.com/nvidia_h100_gpus;") != std::string::npos);
  json other = {{"name", "operation-3"},
                {"httpErrorStatusCode", 400},
                {"error", {{"errors", {{{"code", "INVALID_FIELD_VALUE"}, {"message", "bad"}}}}}}};
  CHECK(gcp::operation_failure(other, "").error.kind == Error::Kind::Fatal);
  // An operation of any shape is read, never thrown on (tests/fuzz/regressions/fuzz_gcp/).
  for (const json& odd :
       {json{{"name", "op"}, {"error", "ZONE_RESOURCE_POOL_EXHAUSTED"}},
        json{{"name", "op"}, {"error", {{"errors", json::array({"QUOTA_EXCEEDED"})}}}},
        json{{"name", "op"}, {"error", {{"errors", json::array()}}}, {"httpErrorStatusCode", "503"}},
        json{{"name", "op"}, {"error", {{"errors", json::array()}}}, {"httpErrorStatusCode", 1e300}}}) {
    auto o = gcp::operation_failure(odd, "");
    CHECK(o.code == "HTTP0");
    CHECK(o.error.kind == Error::Kind::Fatal);
  }
  CHECK(gcp::kind_of_http(403, "rateLimitExceeded") == Error::Kind::Throttled);
  CHECK(gcp::kind_of_http(403, "userRateLimitExceeded") == Error::Kind::Throttled);
  CHECK(gcp::kind_of_http(429, "") == Error::Kind::Throttled);
  CHECK(gcp::kind_of_http(403, "forbidden") == Error::Kind::Fatal);
  CHECK(gcp::kind_of_http(500, "backendError") == Error::Kind::Retryable);
}

TEST_CASE("gcp: the Compute client caches its token and, after a 401, fetches one new token and sends again") {
  test::EmulatorProcess em(GCP_EMULATOR_BINARY, {"--operation-ms", "0"});
  ProviderConfig c = *config({"GOOGLE_APPLICATION_CREDENTIALS=" + em.dir() + "/tls/service-account.json"});
  auto creds = gcp::find_credentials(c, "/nonexistent-home");
  REQUIRE(creds.ok());
  net::Client http(net::ClientOptions{em.ca()});
  gcp::ClientSettings cs;
  cs.root = gcp::normalize_root(em.base());
  cs.project = creds->key->project_id;
  cs.credentials = *creds;
  std::atomic<bool> cancel{false};
  gcp::ComputeClient client(http, cs, &cancel);
  Call call;
  auto list = [&] {
    return client.send("GET", "zones/us-central1-a/instances", {{"maxResults", "5"}}, nullptr, "list", call);
  };
  for (int i = 0; i < 3; ++i) REQUIRE(std::holds_alternative<json>(list()));
  net::Request expire;
  expire.method = "POST";
  expire.url = em.base() + "/__emulator/tokens/expire";
  REQUIRE(http.send(expire)->status == 200);
  REQUIRE(std::holds_alternative<json>(list()));
  REQUIRE(std::holds_alternative<json>(list()));
  net::Request counters;
  counters.url = em.base() + "/__emulator/counters";
  json m = json::parse(http.send(counters)->body)["methods"];
  CHECK(m["oauth2.token"]["total"] == 2);
  CHECK(m["compute.instances.list"]["401"] == 1);
  CHECK(m["compute.instances.list"]["200"] == 5);
}
