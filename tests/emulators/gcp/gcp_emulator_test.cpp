// Drives the built gcp-emulator: with Google's own Python client
// (gcp_client.py: python3-googleapi + python3-google-auth from /usr/bin/python3)
// for everything a provider does, and over plain HTTPS (libcurl, the
// emulator's test CA) with plinth_gcp_auth's assertions for the token
// endpoint, control endpoints, fault determinism and the request log.
#include <curl/curl.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "providers/gcp/jwt.h"
#include "providers/gcp/oauth_token.h"
#include "providers/gcp/service_account.h"
#include "tests/support/emulator_process.h"
#include "tests/support/run.h"

using nlohmann::json;
using namespace plinth;

namespace {

const std::string kProject = "plinth-test";

/// A running gcp-emulator child; its key files are in key_dir().
class Emulator : public test::EmulatorProcess {
 public:
  explicit Emulator(std::vector<std::string> args) : EmulatorProcess(GCP_EMULATOR_BINARY, std::move(args)) {}
  std::string key_dir() const { return dir() + "/tls"; }
  std::string key_file(const std::string& name = "service-account.json") const { return key_dir() + "/" + name; }
  std::string compute(const std::string& rest) const {
    return base() + "/compute/v1/projects/" + kProject + "/" + rest;
  }

  /// Runs one scenario of gcp_client.py (Google's client) against this emulator.
  json client(const std::string& scenario) const {
    auto r = test::run_program({"/usr/bin/python3", GCP_CLIENT_SCRIPT, scenario, base(), key_dir(),
                                test::testdata_dir() + "/gcp-compute/compute.v1.json"});
    INFO("gcp_client.py " << scenario << " stderr:\n" << r.err << "\nemulator stderr:\n" << stderr_text());
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
  }
  std::vector<json> log_lines() const {
    std::vector<json> out;
    std::istringstream in(log());
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
    return out;
  }
};

struct Http {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;
  json js() const { return json::parse(body); }
};

size_t on_body(char* p, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, size * n);
  return size * n;
}

size_t on_header(char* p, size_t size, size_t n, void* out) {
  std::string line(p, size * n);
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string k = line.substr(0, colon), v = line.substr(colon + 1);
    for (auto& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    v.erase(0, v.find_first_not_of(' '));
    while (!v.empty() && (v.back() == '\r' || v.back() == '\n')) v.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(out))[k] = v;
  }
  return size * n;
}

/// One HTTPS request verified against the emulator's CA, on a fresh
/// connection (libcurl would silently resend on a dropped reused one).
Http request(const Emulator& em, const std::string& method, const std::string& url, const std::string& body = "",
             const std::vector<std::string>& headers = {}) {
  std::unique_ptr<CURL, void (*)(CURL*)> h(curl_easy_init(), curl_easy_cleanup);
  Http r;
  curl_slist* hdrs = nullptr;
  for (const auto& x : headers) hdrs = curl_slist_append(hdrs, x.c_str());
  curl_easy_setopt(h.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(h.get(), CURLOPT_CAINFO, em.ca().c_str());
  curl_easy_setopt(h.get(), CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "POST" || !body.empty()) curl_easy_setopt(h.get(), CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(h.get(), CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h.get(), CURLOPT_TIMEOUT_MS, 20000L);
  curl_easy_setopt(h.get(), CURLOPT_FRESH_CONNECT, 1L);
  curl_easy_setopt(h.get(), CURLOPT_FORBID_REUSE, 1L);
  curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(h.get(), CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h.get(), CURLOPT_HEADERDATA, &r.headers);
  r.code = curl_easy_perform(h.get());
  curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(hdrs);
  return r;
}

Http control(const Emulator& em, const std::string& what, const json& body = nullptr) {
  if (body.is_null()) return request(em, "GET", em.base() + "/__emulator/" + what);
  return request(em, "POST", em.base() + "/__emulator/" + what, body.dump(), {"Content-Type: application/json"});
}

/// POSTs an assertion to the token endpoint the way a client library does.
Http post_token(const Emulator& em, const std::string& assertion) {
  return request(em, "POST", em.base() + "/token", gcp::token_request_body(assertion),
                 {"Content-Type: application/x-www-form-urlencoded"});
}

/// An access token for the emulator's service account, fetched with plinth_gcp_auth.
std::string access_token(const Emulator& em) {
  auto key = gcp::load_service_account_key(em.key_file());
  REQUIRE(key.ok());
  auto assertion = gcp::make_assertion(*key, {gcp::kCloudPlatformScope}, std::chrono::system_clock::now());
  REQUIRE(assertion.ok());
  Http r = post_token(em, *assertion);
  auto token =
      gcp::parse_token_response(r.status, r.body, key->token_uri, key->client_email, std::chrono::system_clock::now());
  INFO(r.body);
  REQUIRE(token.ok());
  return token->access_token;
}

Http api(const Emulator& em, const std::string& token, const std::string& method, const std::string& rest,
         const json& body = nullptr) {
  std::vector<std::string> headers = {"Authorization: Bearer " + token};
  if (!body.is_null()) headers.push_back("Content-Type: application/json");
  return request(em, method, em.compute(rest), body.is_null() ? "" : body.dump(), headers);
}

json small_instance(const std::string& name, const std::string& zone, const std::string& type = "e2-standard-2") {
  return {{"name", name},
          {"machineType", "zones/" + zone + "/machineTypes/" + type},
          {"disks", json::array({{{"boot", true},
                                  {"initializeParams",
                                   {{"sourceImage",
                                     "projects/debian-cloud/global/images/family/"
                                     "debian-12"}}}}})},
          {"networkInterfaces", json::array({{{"network", "global/networks/default"}}})}};
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// A JWT for `claims` signed with the private key of `key_file`.
std::string signed_with(const std::string& key_file, const gcp::AssertionClaims& claims) {
  auto key = gcp::load_service_account_key(key_file);
  REQUIRE(key.ok());
  auto signer = gcp::RsaSigner::from_pem(key->private_key_pem, "key");
  REQUIRE(signer.ok());
  return *gcp::sign_jwt(claims, key->private_key_id, *signer);
}

json oauth_error(const Http& r) {
  INFO(r.body);
  REQUIRE(r.status >= 400);
  return r.js();
}

}  // namespace

TEST_CASE("gcp-emulator starts, writes the test CA and service-account key files, and stops on SIGTERM") {
  Emulator em({"--project", "plinth-test", "--extra-keys"});
  REQUIRE(em.lines()[0] == "listening " + em.base() + " token_uri=" + em.base() + "/token compute=" + em.base() +
                               "/compute/v1/ project=plinth-test key=" + em.key_file());
  auto key = gcp::load_service_account_key(em.key_file());
  REQUIRE(key.ok());
  CHECK(key->token_uri == em.base() + "/token");
  CHECK(key->project_id == "plinth-test");
  CHECK(key->client_email == "plinth-emulator@plinth-test.iam.gserviceaccount.com");
  CHECK(key->private_key_id.size() == 40);
  auto revoked = gcp::load_service_account_key(em.key_file("service-account-revoked.json"));
  REQUIRE(revoked.ok());
  CHECK(revoked->client_email == key->client_email);
  CHECK(revoked->private_key_id != key->private_key_id);
  CHECK(revoked->private_key_pem != key->private_key_pem);
  auto noperm = gcp::load_service_account_key(em.key_file("service-account-noperm.json"));
  REQUIRE(noperm.ok());
  CHECK(noperm->client_email == "plinth-noperm@plinth-test.iam.gserviceaccount.com");
  CHECK(std::filesystem::exists(em.key_dir() + "/ca.pem"));
  CHECK((std::filesystem::status(em.key_file()).permissions() & std::filesystem::perms::others_read) ==
        std::filesystem::perms::none);

  CHECK(em.stop() == 0);
  CHECK_THAT(em.stderr_text(), Catch::Contains("gcp-emulator: stopped by signal 15"));
}

TEST_CASE("gcp-emulator refuses bad flags with exit status 2 and says which") {
  auto run = [](std::vector<std::string> args) {
    args.insert(args.begin(), GCP_EMULATOR_BINARY);
    return test::run_program(args);
  };
  auto r = run({"--capacity", "us-central1-a/a3-highgpu-8g"});
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "gcp-emulator: --capacity needs [ZONE/]MACHINE_TYPE=N, e.g. us-central1-a/a3-highgpu-8g=4; got "
        "'us-central1-a/a3-highgpu-8g'\n");
  r = run({"--capacity", "us-central1-a/a9-nope=1"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("gcp-emulator: --capacity names machine type 'a9-nope'"));
  r = run({"--capacity", "mars-north1-a/a3-highgpu-8g=1"});
  CHECK(r.err == "gcp-emulator: --capacity names zone 'mars-north1-a', which is not in --zones\n");
  r = run({"--rate-503", "2"});
  CHECK(r.err == "gcp-emulator: --rate-503 needs a fraction from 0 to 1, got '2'\n");
  r = run({"--rate-limit-reason", "slowDown"});
  CHECK(r.err == "gcp-emulator: --rate-limit-reason is rateLimitExceeded or userRateLimitExceeded, got 'slowDown'\n");
  r = run({"--frobnicate"});
  CHECK(r.err == "gcp-emulator: unknown flag '--frobnicate'; run gcp-emulator --help for the list\n");
  r = run({"--help"});
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("--lose-response-rate F"));
}

TEST_CASE("google-api-python-client: insert -> operation PENDING/RUNNING/DONE, get, list by label, delete, requestId") {
  Emulator em({"--operation-ms", "60000"});
  json out = em.client("lifecycle");
  const json& first = out["first"];
  CHECK(first["kind"] == "compute#operation");
  CHECK(first["operationType"] == "insert");
  CHECK(first["status"] == "PENDING");
  CHECK(first["progress"] == 0);
  CHECK(first["user"] == "plinth-emulator@plinth-test.iam.gserviceaccount.com");
  CHECK(first["targetLink"] == em.compute("zones/us-central1-a/instances/gpu-0"));
  CHECK(first["selfLink"] == em.compute("zones/us-central1-a/operations/") + first["name"].get<std::string>());
  CHECK_THAT(first["name"].get<std::string>(),
             Catch::Matches("operation-[0-9]{13}-[0-9a-f]{13}-[0-9a-f]{8}-[0-9a-f]{8}"));
  // The same requestId answers the same operation, before and after it is done.
  CHECK(out["again"]["name"] == first["name"]);
  CHECK(out["replay"]["name"] == first["name"]);
  CHECK(out["replay"]["status"] == "DONE");
  CHECK(out["running"]["status"] == "RUNNING");
  CHECK(out["running"].contains("startTime"));
  CHECK(out["done"]["status"] == "DONE");
  CHECK(out["done"]["progress"] == 100);
  CHECK_FALSE(out["done"].contains("error"));
  CHECK(out["statuses"] == json::array({"PROVISIONING", "STAGING", "RUNNING", "STOPPING"}));

  const json& inst = out["instance"];
  CHECK(inst["kind"] == "compute#instance");
  CHECK(inst["id"] == first["targetId"]);
  CHECK(inst["machineType"] == em.compute("zones/us-central1-a/machineTypes/a3-highgpu-8g"));
  CHECK(inst["guestAccelerators"] ==
        json::array({{{"acceleratorCount", 8},
                      {"acceleratorType", em.compute("zones/us-central1-a/acceleratorTypes/nvidia-h100-80gb")}}}));
  CHECK(inst["scheduling"] == json{{"automaticRestart", false},
                                   {"instanceTerminationAction", "STOP"},
                                   {"onHostMaintenance", "TERMINATE"},
                                   {"preemptible", false},
                                   {"provisioningModel", "SPOT"}});
  CHECK(inst["labels"] == json{{"plinth-lineage", "l-1234"}, {"plinth-pool", "gcp-a3"}});
  CHECK(inst["metadata"]["items"] ==
        json::array({{{"key", "user-data"}, {"value", "#cloud-config\nruncmd: [nvidia-smi]\n"}}}));
  CHECK(inst["disks"][0]["boot"] == true);
  CHECK(inst["disks"][0]["diskSizeGb"] == "200");
  CHECK(inst["disks"][0]["source"] == em.compute("zones/us-central1-a/disks/gpu-0"));
  CHECK(inst["serviceAccounts"][0]["email"] == "123456789012-compute@developer.gserviceaccount.com");
  CHECK(inst["networkInterfaces"][0]["subnetwork"] == em.compute("regions/us-central1/subnetworks/default"));
  CHECK(inst["networkInterfaces"][0]["accessConfigs"][0]["natIP"].is_string());
  CHECK(inst["cpuPlatform"] == "Intel Sapphire Rapids");
  CHECK(out["listed"] == json::array({"gpu-0"}));
  CHECK_FALSE(out["other"].contains("items"));

  CHECK(out["deleting"]["operationType"] == "delete");
  CHECK(out["deleted"]["status"] == "DONE");
  CHECK(out["delete_replay"] == out["deleting"]["name"]);
  CHECK(out["gone"]["status"] == 404);
  CHECK(out["gone"]["reason"] == "notFound");
  CHECK(out["gone"]["message"] ==
        "The resource 'projects/plinth-test/zones/us-central1-a/instances/gpu-0' was not found");

  // Three insert calls and two delete calls made one instance and one of each operation.
  json state = control(em, "state").js();
  CHECK(state["instances"].empty());
  int inserts = 0, deletes = 0;
  for (const auto& op : state["operations"]) {
    inserts += op["operationType"] == "insert";
    deletes += op["operationType"] == "delete";
  }
  CHECK(inserts == 1);
  CHECK(deletes == 1);
  json counters = control(em, "counters").js()["methods"];
  CHECK(counters["compute.instances.insert"]["200"] == 3);
  CHECK(counters["compute.instances.delete"]["200"] == 2);
}

TEST_CASE("google-api-python-client: list and aggregatedList page with list_next and filter by label") {
  Emulator em({"--operation-ms", "0"});
  json out = em.client("paging");
  CHECK(out["pages"] == 2);
  CHECK(out["seen"] == json::array({"node-0", "node-2", "node-4", "node-6"}));
  CHECK(out["agg_pages"] == 3);
  CHECK(out["agg_seen"] == json::array({{"zones/us-central1-a", "node-0"},
                                        {"zones/us-central1-a", "node-2"},
                                        {"zones/us-central1-a", "node-4"},
                                        {"zones/us-central1-b", "node-1"},
                                        {"zones/us-central1-b", "node-3"}}));
  CHECK(out["scopes"].size() == 8);  // every zone, with a NO_RESULTS_ON_PAGE warning when empty
  const json& f = out["filters"];
  CHECK(f["labels.plinth-pool = \"serve\""] == json::array({"node-5", "node-6"}));
  CHECK(f["labels.plinth-pool != \"serve\""] == json::array({"node-0", "node-1", "node-2", "node-3", "node-4"}));
  CHECK(f["labels.plinth-pool:*"].size() == 7);
  CHECK(f["labels.nope:*"].empty());
  CHECK(f["name = \"node-1*\""] == json::array({"node-1"}));
  CHECK(f["(labels.plinth-pool = train) (labels.plinth-lineage = l-1)"].size() == 5);
  CHECK(f["labels.plinth-pool = \"serve\" OR name = \"node-0\""] == json::array({"node-0", "node-5", "node-6"}));
  CHECK(f["name eq 'node-[0-2]'"] == json::array({"node-0", "node-1", "node-2"}));
  CHECK(f["status = RUNNING"].size() == 7);
  CHECK(f["machineType = \"*/g2-standard-4\""].size() == 7);
  CHECK(f["scheduling.provisioningModel = STANDARD"].size() == 7);
  CHECK(f["NOT name = node-0"].size() == 6);
  CHECK(out["bad_filter"]["status"] == 400);
  CHECK(out["bad_filter"]["message"] ==
        "Invalid value for field 'filter': 'name = \"gpu-0'. Invalid list filter expression.");
  CHECK(out["too_many"]["message"] == "Invalid value for field 'maxResults': '501'. Must be less than or equal to 500");
  CHECK(out["empty"] == json{{"kind", "compute#instanceList"},
                             {"id", "projects/plinth-test/zones/europe-west4-b/instances"},
                             {"selfLink", em.compute("zones/europe-west4-b/instances")}});
  CHECK(out["newest_first"] == json::array({"node-6", "node-4", "node-2", "node-0"}));

  // A refresh costs one request per page: the log has 2 list and 3 aggregatedList pages (+ 12 filter calls).
  int list = 0, aggregated = 0;
  for (const auto& line : em.log_lines()) {
    list += line["api"] == "compute.instances.list" && line["query"].value("maxResults", "") == "3";
    aggregated += line["api"] == "compute.instances.aggregatedList" && line["query"].value("maxResults", "") == "2";
  }
  CHECK(list == 2);
  CHECK(aggregated == 3);
}

TEST_CASE("google-api-python-client: validation errors raise HttpError with Google's reason and message") {
  Emulator em({"--operation-ms", "0", "--extra-keys"});
  json out = em.client("errors");
  auto check = [&](const char* key, int status, const std::string& reason, const std::string& message) {
    INFO(key << ": " << out[key].dump());
    CHECK(out[key]["status"] == status);
    CHECK(out[key]["reason"] == reason);
    CHECK(out[key]["message"] == message);
  };
  check("gpu_migrate", 400, "badRequest", "Instances with guest accelerators do not support live migration.");
  check(
      "unknown_type", 400, "invalid",
      "Invalid value for field 'resource.machineType': 'zones/us-central1-a/machineTypes/a3-nopegpu-8g'. Machine type "
      "with name 'a3-nopegpu-8g' does not exist in zone 'us-central1-a'.");
  check("bad_name", 400, "invalid",
        "Invalid value for field 'resource.name': 'Bad_Name'. Must be a match of regex "
        "'(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?|[1-9][0-9]{0,19})'");
  check("bad_label", 400, "invalid",
        "Invalid value for field 'resource.labels': ''. Label key 'Env' violates format constraints. The key must "
        "start with a lowercase character, can only contain lowercase letters, numeric characters, underscores and "
        "dashes. The key can be at most 63 characters long. International characters are allowed.");
  check("t4_count", 400, "invalid",
        "Invalid value for field 'resource.guestAccelerators[0].acceleratorCount': '3'. Accelerator type "
        "'nvidia-tesla-t4' can be attached in counts of 1, 2, 4.");
  check("unknown_field", 400, "invalid",
        "Invalid JSON payload received. Unknown name \"guestAccelerator\" at 'resource': Cannot find field.");
  check("small_disk", 400, "invalid",
        "Invalid value for field 'resource.disks[0].initializeParams.diskSizeGb': '5'. Requested disk size cannot be "
        "smaller than the image size (10 GB)");
  check("bad_request_id", 400, "invalid",
        "Invalid value for field 'requestId': 'abc'. The request id must be a valid UUID with the exception that zero "
        "UUID is not supported (00000000-0000-0000-0000-000000000000).");
  check("missing", 404, "notFound",
        "The resource 'projects/plinth-test/zones/us-central1-a/instances/nope' was not found");
  check("unknown_zone", 404, "notFound", "The resource 'projects/plinth-test/zones/mars-north1-a' was not found");
  check("other_project", 403, "forbidden", "Required 'compute.instances.list' permission for 'projects/someone-else'");
  check("duplicate", 409, "alreadyExists",
        "The resource 'projects/plinth-test/zones/us-central1-a/instances/gpu-dup' already exists");
  check("anonymous", 401, "required",
        "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other "
        "valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.");
  check("noperm", 403, "forbidden", "Required 'compute.instances.list' permission for 'projects/plinth-test'");
  check("readonly_insert", 403, "insufficientPermissions", "Request had insufficient authentication scopes.");
  CHECK(out["readonly_list"] == true);
  CHECK(out["machine_type"] == json{{"name", "a3-megagpu-8g"},
                                    {"guestCpus", 208},
                                    {"memoryMb", 1916928},
                                    {"accelerators", json::array({{{"guestAcceleratorType", "nvidia-h100-mega-80gb"},
                                                                   {"guestAcceleratorCount", 8}}})}});
  CHECK(out["accelerators"] ==
        json::array({"nvidia-a100-80gb", "nvidia-b200", "nvidia-h100-80gb", "nvidia-h100-mega-80gb", "nvidia-h200-141gb",
                     "nvidia-l4", "nvidia-tesla-a100", "nvidia-tesla-t4", "nvidia-tesla-v100"}));
  // Nothing refused made an instance; only gpu-dup exists.
  json state = control(em, "state").js();
  REQUIRE(state["instances"].size() == 1);
  CHECK(state["instances"][0]["name"] == "gpu-dup");
}

TEST_CASE("google-api-python-client: zone capacity and quotas fail the operation in GCP's words") {
  Emulator em({"--operation-ms", "0", "--capacity", "us-central1-a/a3-highgpu-8g=1", "--quota",
               "NVIDIA_H100_GPUS@us-central1=8", "--quota", "PREEMPTIBLE_NVIDIA_H100_GPUS@us-central1=16"});
  json out = em.client("capacity");
  CHECK(out["first"].is_null());
  const json& full = out["full"];
  CHECK(full["status"] == "DONE");
  CHECK(full["httpErrorStatusCode"] == 503);
  CHECK(full["httpErrorMessage"] == "SERVICE UNAVAILABLE");
  const json& e = full["error"]["errors"][0];
  CHECK(e["code"] == "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS");
  CHECK(e["message"] ==
        "The zone 'projects/plinth-test/zones/us-central1-a' does not have enough resources available "
        "to fulfill the request.  '(resource type:compute)'.");
  CHECK(e["errorDetails"][0]["errorInfo"]["reason"] == "resource_availability");
  CHECK(e["errorDetails"][0]["errorInfo"]["metadatas"] == json{{"attachment", "nvidia-h100-80gb:8"},
                                                               {"vmType", "a3-highgpu-8g"},
                                                               {"zone", "us-central1-a"},
                                                               {"zonesAvailable", "us-central1-b,us-central1-c"}});
  CHECK_THAT(e["errorDetails"][2]["localizedMessage"]["message"].get<std::string>(),
             Catch::StartsWith("A a3-highgpu-8g VM instance with 8 nvidia-h100-80gb accelerator(s) is currently "
                               "unavailable in the us-central1-a zone. Consider trying your request in the "
                               "us-central1-b, us-central1-c zone(s)"));
  CHECK(out["full_instance"]["status"] == 404);  // the failed insert leaves no instance behind
  CHECK(out["fallback"].is_null());
  CHECK(out["standard_h100"].is_null());
  const json& q = out["standard_h100_again"];
  CHECK(q["httpErrorStatusCode"] == 403);
  CHECK(q["error"]["errors"][0]["code"] == "QUOTA_EXCEEDED");
  CHECK(q["error"]["errors"][0]["message"] == "Quota 'NVIDIA_H100_GPUS' exceeded.  Limit: 8.0 in region us-central1.");
  CHECK(q["error"]["errors"][0]["errorDetails"][0]["quotaInfo"] ==
        json{{"metricName", "compute.googleapis.com/nvidia_h100_gpus"},
             {"limitName", "NVIDIA-H100-GPUS-per-project-region"},
             {"dimensions", {{"region", "us-central1"}}},
             {"limit", 8.0}});
  CHECK(out["region_quotas"] == json{{"NVIDIA_H100_GPUS", {8.0, 8.0}}, {"PREEMPTIBLE_NVIDIA_H100_GPUS", {16.0, 16.0}}});
}

TEST_CASE("google-api-python-client: a preempted Spot VM is TERMINATED or deleted as its termination action says") {
  Emulator em({"--operation-ms", "0"});
  json out = em.client("preempt");
  for (const char* k : {"stop_op", "delete_op"}) {
    INFO(k);
    CHECK(out[k]["operationType"] == "compute.instances.preempted");
    CHECK(out[k]["user"] == "system");
    CHECK(out[k]["statusMessage"] == "Instance was preempted.");
    CHECK(out[k]["status"] == "DONE");
  }
  CHECK(out["stopped"]["status"] == "TERMINATED");
  CHECK(out["stopped"].contains("lastStopTimestamp"));
  CHECK(out["deleted"]["status"] == 404);
  CHECK(out["preempted_targets"] == json::array({"spot-del", "spot-stop"}));
  CHECK(out["start"]["status"] == "DONE");
  CHECK(out["restarted"] == "RUNNING");

  // Only Spot or preemptible VMs that are RUNNING can be preempted.
  std::string token = access_token(em);
  REQUIRE(api(em, token, "POST", "zones/us-east4-a/instances", small_instance("std-0", "us-east4-a")).status == 200);
  Http r = control(em, "preempt", {{"zone", "us-east4-a"}, {"instance", "std-0"}});
  CHECK(r.status == 409);
  CHECK(r.js()["error"] == "instance 'std-0' is not a Spot or preemptible VM; only those are preempted");
  CHECK(control(em, "preempt", {{"zone", "us-east4-a"}, {"instance", "nope"}}).status == 404);
}

TEST_CASE("google-api-python-client: lost insert answers, throttling and 503s, requestId keeps it to one instance") {
  Emulator em({"--operation-ms", "0"});
  json out = em.client("faults");
  CHECK(out["retried_op"] == "DONE");
  CHECK(out["lost_raised"] == "RemoteDisconnected");
  CHECK(out["again"] == "DONE");
  CHECK(out["names"] == json::array({"lost-0", "lost-1"}));
  CHECK(out["throttled"]["status"] == 429);
  CHECK(out["throttled"]["reason"] == "userRateLimitExceeded");
  CHECK(out["throttled"]["domain"] == "usageLimits");
  CHECK(out["throttled"]["message"] ==
        "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of service "
        "'compute.googleapis.com' for consumer 'project_number:123456789012'.");
  CHECK(out["unavailable"]["status"] == 503);
  CHECK(out["unavailable"]["reason"] == "backendError");
  const json& inserts = out["counters"]["methods"]["compute.instances.insert"];
  CHECK(inserts["lost"] == 3);
  CHECK(inserts["200"] == 2);

  json state = control(em, "state").js();
  CHECK(state["instances"].size() == 2);
  int insert_ops = 0;
  for (const auto& op : state["operations"]) insert_ops += op["operationType"] == "insert";
  CHECK(insert_ops == 2);
  int lost_lines = 0;
  for (const auto& line : em.log_lines())
    if (line["fault"] == "lose") {
      ++lost_lines;
      CHECK(line["api"] == "compute.instances.insert");
      CHECK(line["status"].is_null());
    }
  CHECK(lost_lines == 3);
}

/// gcloud with the settings docs/emulators.md ("gcloud") gives, its config in `home`; must succeed.
auto gcloud_result(const Emulator& em, const test::TempDir& home, std::vector<std::string> args) {
  const std::map<std::string, std::string> env = {
      {"CLOUDSDK_CONFIG", home.path() + "/gcloud"},
      {"CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", em.base() + "/compute/v1/"},
      {"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", em.key_dir() + "/ca.pem"},
      {"REQUESTS_CA_BUNDLE", em.key_dir() + "/ca.pem"},
      {"CLOUDSDK_CORE_PROJECT", kProject},
      {"CLOUDSDK_CORE_DISABLE_PROMPTS", "1"},
      {"CLOUDSDK_CORE_DISABLE_USAGE_REPORTING", "1"},
      {"CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK", "1"}};
  args.insert(args.begin(), "gcloud");
  return test::run_program(args, home.path(), env);
}

std::string run_gcloud(const Emulator& em, const test::TempDir& home, std::vector<std::string> args) {
  auto r = gcloud_result(em, home, args);
  INFO("gcloud " << args[0] << " " << args[1] << ":\n" << r.out << r.err << "\nemulator stderr:\n" << em.stderr_text());
  REQUIRE(r.exit_code == 0);
  return r.out;
}

TEST_CASE("gcloud: an external_account file (STS, IAM Credentials impersonation), the metadata server") {
  // gcloud's bundled google-auth (Debian's python3-google-auth predates workload identity federation).
  Emulator em({"--operation-ms", "50", "--subject-token", "oidc-from-ci", "--metadata-port", "0"});
  test::TempDir home;
  home.write("oidc-token", "oidc-from-ci\n");
  const std::string audience =
      "//iam.googleapis.com/projects/123456789/locations/global/workloadIdentityPools/ci/providers/github";
  home.write("wif.json", json{{"type", "external_account"},
                              {"audience", audience},
                              {"subject_token_type", "urn:ietf:params:oauth:token-type:jwt"},
                              {"token_url", em.base() + "/v1/token"},
                              {"service_account_impersonation_url",
                               em.base() + "/v1/projects/-/serviceAccounts/plinth-emulator@" + std::string(kProject) +
                                   ".iam.gserviceaccount.com:generateAccessToken"},
                              {"credential_source", {{"file", home.path() + "/oidc-token"}}}}
                             .dump());
  auto gcloud = [&](std::vector<std::string> args) { return run_gcloud(em, home, std::move(args)); };
  gcloud({"auth", "login", "--cred-file=" + home.path() + "/wif.json"});
  CHECK(gcloud({"compute", "instances", "list", "--format=value(name)"}).empty());
  std::map<std::string, std::string> principal;  // by api
  std::istringstream log(em.log());
  for (std::string line; std::getline(log, line);) {
    json l = json::parse(line);
    if (l["status"] == 200 && l["principal"].is_string()) principal[l["api"]] = l["principal"];
  }
  CHECK(principal["sts.token"] == "principal:" + audience);
  CHECK(principal["iamcredentials.generateAccessToken"] == "plinth-emulator@" + std::string(kProject) +
                                                                ".iam.gserviceaccount.com");
  CHECK(principal["compute.instances.aggregatedList"] == principal["iamcredentials.generateAccessToken"]);

  // google.auth.default() itself, from gcloud's bundled google-auth: it finds the external_account file through
  // GOOGLE_APPLICATION_CREDENTIALS, exchanges the subject token at STS and impersonates the account.
  const std::string script = R"(
import json, sys
sys.path.insert(0, "/usr/lib/google-cloud-sdk/lib/third_party")
import google.auth, google.auth.transport.requests
creds, project = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
creds.refresh(google.auth.transport.requests.Request())  # trusting REQUESTS_CA_BUNDLE
print(json.dumps({"type": type(creds).__module__ + "." + type(creds).__name__, "token": creds.token[:5],
                  "expired": creds.expired}))
)";
  // -S: without site-packages, whose .pth files import Debian's older google package first.
  auto adc = test::run_program({"/usr/bin/python3", "-S", "-c", script}, home.path(),
                               {{"GOOGLE_APPLICATION_CREDENTIALS", home.path() + "/wif.json"},
                                {"REQUESTS_CA_BUNDLE", em.ca()},
                                {"HOME", home.path()},
                                {"GOOGLE_CLOUD_PROJECT", kProject}});
  INFO(adc.out << adc.err);
  REQUIRE(adc.exit_code == 0);
  json a = json::parse(adc.out);
  CHECK(a["type"] == "google.auth.identity_pool.Credentials");
  CHECK(a["token"] == "ya29.");
  CHECK(a["expired"] == false);

  // The metadata server as google-auth's compute_engine credentials ask it (Metadata-Flavor: Google).
  std::string meta;
  for (const auto& l : em.lines())
    if (l.rfind("metadata ", 0) == 0) meta = l.substr(9);
  REQUIRE_FALSE(meta.empty());
  auto token = test::run_program({"/usr/bin/curl", "-s", "-H", "Metadata-Flavor: Google",
                                  meta + "/computeMetadata/v1/instance/service-accounts/default/token"});
  json t = json::parse(token.out);
  CHECK(t["token_type"] == "Bearer");
  CHECK(t["expires_in"].get<int>() > 0);
  auto bare = test::run_program({"/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                 meta + "/computeMetadata/v1/instance/service-accounts/default/token"});
  CHECK(bare.out == "403");
}

TEST_CASE("gcloud: activates the service account, creates a GPU VM from an image family, lists, describes, deletes") {
  // docs/emulators.md, "gcloud": the settings as written there.
  Emulator em({"--operation-ms", "50"});
  test::TempDir home;
  auto gcloud = [&](std::vector<std::string> args) { return run_gcloud(em, home, std::move(args)); };
  gcloud({"auth", "activate-service-account", "--key-file=" + em.key_file()});
  gcloud({"compute", "instances", "create", "gc-1", "--zone=us-central1-a", "--machine-type=a3-highgpu-8g",
          "--maintenance-policy=TERMINATE", "--image-project=debian-cloud", "--image-family=debian-12",
          "--labels=plinth-pool=gcp-a3"});
  CHECK(gcloud({"compute", "instances", "list", "--filter=labels.plinth-pool=gcp-a3", "--format=value(name,zone.basename())"}) ==
        "gc-1\tus-central1-a\n");
  CHECK(gcloud({"compute", "instances", "describe", "gc-1", "--zone=us-central1-a",
                "--format=value(status,machineType.basename())"}) == "RUNNING\ta3-highgpu-8g\n");
  gcloud({"compute", "instances", "delete", "gc-1", "--zone=us-central1-a", "--quiet"});
  CHECK(gcloud({"compute", "instances", "list", "--format=value(name)"}) == "");
  // Every Compute call carried the token the emulator issued for the key file.
  CHECK(em.log().find("compute.instances.insert") != std::string::npos);
}

TEST_CASE("gcloud: an A3 Mega VM with its 8 GPU NICs, and shared networks, MRDMA off A3 Ultra or A4 and a tenth NIC refused") {
  // Google's layout (docs/providers/gcp.md, "GPU NICs"): one gVNIC for the host, one per GPU NIC,
  // each on a subnetwork (and network) of its own; the network is inferred from the subnetwork.
  Emulator em({"--operation-ms", "50"});
  test::TempDir home;
  auto gcloud = [&](std::vector<std::string> args) { return run_gcloud(em, home, std::move(args)); };
  gcloud({"auth", "activate-service-account", "--key-file=" + em.key_file()});
  auto create = [&](const std::string& name, const std::string& type, std::vector<std::string> nics) {
    std::vector<std::string> args = {"compute", "instances", "create", name, "--zone=us-central1-a",
                                     "--machine-type=" + type, "--maintenance-policy=TERMINATE",
                                     "--image-project=ubuntu-os-cloud", "--image-family=ubuntu-2204-lts"};
    for (auto& n : nics) args.push_back("--network-interface=" + n);
    return gcloud_result(em, home, args);
  };
  std::vector<std::string> mega = {"nic-type=GVNIC,network=default"};
  for (int i = 1; i <= 8; ++i) mega.push_back("nic-type=GVNIC,subnet=gpu-" + std::to_string(i) + ",no-address");
  auto ok = create("mega-1", "a3-megagpu-8g", mega);
  INFO(ok.out << ok.err << em.stderr_text());
  REQUIRE(ok.exit_code == 0);
  const std::string nics = gcloud({"compute", "instances", "describe", "mega-1", "--zone=us-central1-a",
                                   "--format=json(networkInterfaces)"});
  const json described = json::parse(nics)["networkInterfaces"];
  REQUIRE(described.size() == 9);
  CHECK(described[0]["network"] == em.compute("global/networks/default"));
  for (size_t i = 1; i < 9; ++i) {
    CHECK(described[i]["nicType"] == "GVNIC");
    CHECK(described[i]["subnetwork"] == em.compute("regions/us-central1/subnetworks/gpu-" + std::to_string(i)));
    CHECK(described[i]["network"] ==
          em.compute("global/networks/gpu-" + std::to_string(i)));
    CHECK_FALSE(described[i].contains("accessConfigs"));
  }
  // Two gVNICs on one network, MRDMA on an A3 Mega, ten NICs on an A3 Mega: Compute's 400s.
  auto shared = create("shared", "a3-highgpu-8g", {"nic-type=GVNIC,network=default", "nic-type=GVNIC,network=default"});
  CHECK(shared.exit_code != 0);
  CHECK(shared.err.find("Networks must be distinct for NICs attached to a VM") != std::string::npos);
  auto mrdma = create("mrdma", "a3-megagpu-8g", {"nic-type=GVNIC,network=default", "nic-type=MRDMA,subnet=roce-1"});
  CHECK(mrdma.exit_code != 0);
  CHECK(mrdma.err.find("MRDMA network interfaces are supported only on A3 Ultra and A4") != std::string::npos);
  mega.push_back("nic-type=GVNIC,subnet=gpu-9,no-address");
  auto ten = create("ten", "a3-megagpu-8g", mega);
  CHECK(ten.exit_code != 0);
  CHECK(ten.err.find("supports at most 9 network interfaces, not 10") != std::string::npos);
  // A3 Ultra: 8 MRDMA NICs share the RDMA network; a gVNIC there is refused.
  std::vector<std::string> ultra = {"nic-type=GVNIC,network=default"};
  for (int i = 0; i < 8; ++i) ultra.push_back("nic-type=MRDMA,network=roce,subnet=roce-" + std::to_string(i) + ",no-address");
  auto u = create("ultra-1", "a3-ultragpu-8g", ultra);
  INFO(u.out << u.err);
  CHECK(u.exit_code == 0);
  auto mixed = create("mixed", "a3-ultragpu-8g",
                      {"nic-type=GVNIC,network=default", "nic-type=MRDMA,network=roce,subnet=roce-0,no-address",
                       "nic-type=GVNIC,network=roce,subnet=roce-1,no-address"});
  CHECK(mixed.exit_code != 0);
  CHECK(mixed.err.find("accepts only MRDMA") != std::string::npos);
}

TEST_CASE("google-auth: a deleted key, an expired assertion and no scope are refused, an expired token is refreshed") {
  Emulator em({"--operation-ms", "0", "--extra-keys"});
  json out = em.client("oauth");
  CHECK(out["revoked"] == "invalid_grant: Invalid JWT Signature.");
  CHECK(out["expired_assertion"] ==
        "invalid_grant: Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
        "Check your iat and exp values and use a clock with skew to account for clock differences between systems.");
  CHECK(out["no_scope"] == "invalid_scope: Invalid OAuth scope or ID token audience provided.");
  CHECK(out["expires_in_s"].get<int>() >= 3590);
  CHECK(out["expired_tokens"] == 1);
  CHECK(out["refreshed"] == true);
  CHECK(out["kinds"] == json::array({"compute#instanceList", "compute#instanceList"}));
  CHECK(out["old_token"]["status"] == 401);
  CHECK(out["old_token"]["www_authenticate"] ==
        "Bearer realm=\"https://accounts.google.com/\", error=\"invalid_token\"");
  CHECK(out["old_token"]["body"]["error"]["errors"][0]["reason"] == "authError");
  CHECK(out["old_token"]["body"]["error"]["status"] == "UNAUTHENTICATED");
  // Two good token requests, three refused; the 401 after expiry was followed by a refresh and a retry.
  CHECK(out["counters"]["oauth2.token"] == json{{"200", 2}, {"400", 3}, {"total", 5}});
  CHECK(out["counters"]["compute.instances.list"] == json{{"200", 2}, {"401", 2}, {"total", 4}});
}

TEST_CASE("the token endpoint verifies plinth_gcp_auth's assertions and answers Google's OAuth errors") {
  Emulator em({"--token-lifetime-s", "120", "--extra-keys"});
  auto key = *gcp::load_service_account_key(em.key_file());
  auto now = std::chrono::system_clock::now();

  // A good assertion: a Bearer token with the configured lifetime that Compute accepts.
  Http good = post_token(em, *gcp::make_assertion(key, {gcp::kCloudPlatformScope}, now));
  REQUIRE(good.status == 200);
  CHECK(good.js()["token_type"] == "Bearer");
  CHECK(good.js()["expires_in"] == 120);
  auto token = gcp::parse_token_response(good.status, good.body, key.token_uri, "test", now);
  REQUIRE(token.ok());
  CHECK_THAT(token->access_token, Catch::StartsWith("ya29."));
  CHECK(api(em, token->access_token, "GET", "zones/us-central1-a/instances").status == 200);

  gcp::AssertionClaims c;
  c.iss = key.client_email;
  c.scope = gcp::kCloudPlatformScope;
  c.aud = key.token_uri;
  c.iat = unix_now();
  c.exp = c.iat + 3600;
  auto refused = [&](const gcp::AssertionClaims& claims, const std::string& file = "service-account.json") {
    return oauth_error(post_token(em, signed_with(em.key_file(file), claims)));
  };
  CHECK(refused(c, "service-account-revoked.json") ==
        json{{"error", "invalid_grant"}, {"error_description", "Invalid JWT Signature."}});
  auto other = c;
  other.iss = "nobody@plinth-test.iam.gserviceaccount.com";
  CHECK(refused(other) == json{{"error", "invalid_grant"}, {"error_description", "Invalid grant: account not found"}});
  other = c;
  other.aud = "https://example.com/token";
  CHECK(refused(other)["error_description"] == "Invalid JWT: Failed audience check. The expected value was " +
                                                   key.token_uri + " but got https://example.com/token.");
  other = c;
  other.aud = "https://oauth2.googleapis.com/token";  // Google's own endpoint is an accepted audience
  CHECK(post_token(em, signed_with(em.key_file(), other)).status == 200);
  for (auto [iat, exp] : {std::pair{c.iat + 3600, c.iat + 7200}, {c.iat - 7200, c.iat - 3600}, {c.iat, c.iat + 7200}}) {
    other = c;
    other.iat = iat;
    other.exp = exp;
    CHECK(refused(other)["error_description"] ==
          "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat "
          "and exp values and use a clock with skew to account for clock differences between systems.");
  }
  other = c;
  other.sub = "admin@example.com";
  Http dwd = post_token(em, signed_with(em.key_file(), other));
  CHECK(dwd.status == 401);
  CHECK(dwd.js()["error"] == "unauthorized_client");
  other = c;
  other.scope = "";
  CHECK(refused(other)["error"] == "invalid_scope");

  auto form = [&](const std::string& body) {
    return oauth_error(
        request(em, "POST", em.base() + "/token", body, {"Content-Type: application/x-www-form-urlencoded"}));
  };
  CHECK(form("assertion=x") ==
        json{{"error", "invalid_request"}, {"error_description", "Required parameter is missing: grant_type"}});
  CHECK(form("grant_type=password&username=a") ==
        json{{"error", "unsupported_grant_type"}, {"error_description", "Invalid grant_type: password"}});
  CHECK(form("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer") ==
        json{{"error", "invalid_request"}, {"error_description", "Required parameter is missing: assertion"}});
  CHECK(form("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=abc") ==
        json{{"error", "invalid_request"},
             {"error_description",
              "Invalid assertion: the JWT does not have three '.'-separated segments (header.payload.signature)"}});

  // plinth_gcp_auth reads the emulator's refusal as Google's and says what to do.
  Http sig = post_token(em, signed_with(em.key_file("service-account-revoked.json"), c));
  auto err = gcp::parse_token_response(sig.status, sig.body, key.token_uri, key.client_email, now);
  REQUIRE_FALSE(err.ok());
  CHECK_THAT(err.error().message, Catch::Contains("with invalid_grant: Invalid JWT Signature.; the key is not (or no "
                                                  "longer) a valid key of this service account"));
}

TEST_CASE("Compute calls need a live bearer token: Google's 401 when missing, unknown or expired") {
  Emulator em({});
  std::string token = access_token(em);
  CHECK(api(em, token, "GET", "zones/us-central1-a/instances").status == 200);
  Http none = request(em, "GET", em.compute("zones/us-central1-a/instances"));
  CHECK(none.status == 401);
  CHECK(none.js()["error"]["errors"][0]["reason"] == "required");
  CHECK(none.headers["www-authenticate"] == "Bearer realm=\"https://accounts.google.com/\"");
  Http unknown = api(em, "ya29.not-a-token", "GET", "zones/us-central1-a/instances");
  CHECK(unknown.status == 401);
  CHECK(unknown.js()["error"]["errors"][0]["reason"] == "authError");
  // ?access_token= works as the discovery document's global parameter says.
  CHECK(request(em, "GET", em.compute("zones/us-central1-a/instances?access_token=" + token)).status == 200);
  CHECK(control(em, "tokens/expire", json::object()).js()["expired"] == 1);
  Http expired = api(em, token, "GET", "zones/us-central1-a/instances");
  CHECK(expired.status == 401);
  CHECK(expired.js()["error"]["message"] ==
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid "
        "authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.");
}

TEST_CASE("zoneOperations.wait blocks until DONE, or until --wait-timeout-ms like GCP's two minutes") {
  SECTION("done") {
    Emulator em({"--operation-ms", "200"});
    std::string token = access_token(em);
    Http op = api(em, token, "POST", "zones/us-central1-a/instances", small_instance("vm-0", "us-central1-a"));
    REQUIRE(op.status == 200);
    CHECK(op.js()["status"] == "PENDING");
    Http done =
        api(em, token, "POST", "zones/us-central1-a/operations/" + op.js()["name"].get<std::string>() + "/wait");
    CHECK(done.js()["status"] == "DONE");
    CHECK(api(em, token, "GET", "zones/us-central1-a/instances/vm-0").js()["status"] == "RUNNING");
  }
  SECTION("timeout") {
    Emulator em({"--operation-ms", "3600000", "--wait-timeout-ms", "50"});
    std::string token = access_token(em);
    Http op = api(em, token, "POST", "zones/us-central1-a/instances", small_instance("vm-0", "us-central1-a"));
    Http waited =
        api(em, token, "POST", "zones/us-central1-a/operations/" + op.js()["name"].get<std::string>() + "/wait");
    CHECK(waited.status == 200);
    CHECK(waited.js()["status"] == "PENDING");
  }
}

TEST_CASE("capacity set at run time, the plain ZONE_RESOURCE_POOL_EXHAUSTED code, and a stopped VM frees its slot") {
  Emulator em({"--operation-ms", "0", "--stockout-code", "ZONE_RESOURCE_POOL_EXHAUSTED"});
  std::string token = access_token(em);
  REQUIRE(
      control(em, "capacity", {{"zone", "us-east4-b"}, {"machineType", "e2-standard-2"}, {"available", 1}}).status ==
      200);
  auto insert = [&](const std::string& name) {
    return api(em, token, "POST", "zones/us-east4-b/instances", small_instance(name, "us-east4-b")).js();
  };
  CHECK_FALSE(insert("vm-0").contains("error"));
  json full = insert("vm-1");
  CHECK(full["error"]["errors"] ==
        json::array({{{"code", "ZONE_RESOURCE_POOL_EXHAUSTED"},
                      {"message",
                       "The zone 'projects/plinth-test/zones/us-east4-b' does not have enough resources "
                       "available to fulfill the request.  Try a different zone, or try again later."}}}));
  CHECK(api(em, token, "POST", "zones/us-east4-b/instances/vm-0/stop").js()["status"] == "DONE");
  CHECK_FALSE(insert("vm-1").contains("error"));
  // vm-0 cannot start again while vm-1 holds the only slot.
  json start = api(em, token, "POST", "zones/us-east4-b/instances/vm-0/start").js();
  CHECK(start["error"]["errors"][0]["code"] == "ZONE_RESOURCE_POOL_EXHAUSTED");
  CHECK(api(em, token, "GET", "zones/us-east4-b/instances/vm-0").js()["status"] == "TERMINATED");
  REQUIRE(control(em, "capacity", {{"zone", "us-east4-b"}, {"machineType", "e2-standard-2"}, {"available", nullptr}})
              .status == 200);
  CHECK_FALSE(api(em, token, "POST", "zones/us-east4-b/instances/vm-0/start").js().contains("error"));

  Http bad = control(em, "capacity", {{"machineType", "a9-nope"}, {"available", 1}});
  CHECK(bad.status == 400);
  CHECK(bad.js()["error"] == "unknown machine type 'a9-nope'");
}

TEST_CASE("faults are deterministic for a seed: the same flags give the same answers in the same order") {
  auto run = [](const std::string& seed) {
    Emulator em({"--rate-503", "0.25", "--rate-500", "0.15", "--drop-rate", "0.1", "--seed", seed});
    std::string token = access_token(em);
    std::string outcomes;
    for (int i = 0; i < 30; ++i) {
      Http r = api(em, token, "GET", "zones/us-central1-a/instances");
      outcomes += r.code != CURLE_OK ? 'x'
                  : r.status == 200  ? '.'
                  : r.status == 503  ? 'u'
                  : r.status == 500  ? 'e'
                                     : '?';
    }
    return outcomes;
  };
  std::string a = run("7"), b = run("7"), c = run("8");
  INFO(a << "\n" << b << "\n" << c);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a.find('?') == std::string::npos);
  for (char k : {'.', 'u', 'e', 'x'}) CHECK(a.find(k) != std::string::npos);
}

TEST_CASE("the request log has one line per request with the API method, and control endpoints say what is wrong") {
  Emulator em({"--operation-ms", "0"});
  std::string token = access_token(em);
  api(em, token, "POST", "zones/us-central1-a/instances?requestId=5b2a8c3e-9d4f-4f1e-8a6b-1c2d3e4f5a6b",
      small_instance("vm-0", "us-central1-a"));
  api(em, token, "GET", "zones/us-central1-a/instances/vm-0");
  api(em, token, "GET", "aggregated/instances?maxResults=10");
  request(em, "GET", em.base() + "/nowhere");
  auto lines = em.log_lines();
  REQUIRE(lines.size() == 5);
  CHECK(lines[0]["api"] == "oauth2.token");
  CHECK(lines[0]["query"] == json::object());
  CHECK(lines[1]["api"] == "compute.instances.insert");
  CHECK(lines[1]["method"] == "POST");
  CHECK(lines[1]["path"] == "/compute/v1/projects/plinth-test/zones/us-central1-a/instances");
  CHECK(lines[1]["query"] == json{{"requestId", "5b2a8c3e-9d4f-4f1e-8a6b-1c2d3e4f5a6b"}});
  CHECK(lines[1]["status"] == 200);
  CHECK(lines[1]["project"] == "plinth-test");
  CHECK(lines[1]["zone"] == "us-central1-a");
  CHECK(lines[1]["fault"].is_null());
  CHECK(lines[2]["api"] == "compute.instances.get");
  CHECK(lines[3]["api"] == "compute.instances.aggregatedList");
  CHECK(lines[3]["zone"].is_null());
  CHECK(lines[4]["api"] == "unknown");
  CHECK(lines[4]["status"] == 404);

  CHECK(control(em, "").js()["endpoints"].size() == 8);
  CHECK(control(em, "quota", {{"metric", "CPUS"}}).js()["error"] ==
        "quota needs {\"metric\": METRIC, \"region\": REGION (omit for a global metric), \"limit\": N or null}");
  CHECK(control(em, "faults", {{"rate500", 3}}).js()["error"] == "rate500 must be a fraction from 0 to 1");
  CHECK(control(em, "clock", {{"advanceMs", -1}}).status == 400);
  CHECK(control(em, "nope").status == 404);
  CHECK(control(em, "quota", {{"metric", "CPUS"}, {"region", "us-central1"}, {"limit", 2}}).js() ==
        json{{"CPUS@us-central1", 2.0}});
  json quota = api(em, token, "POST", "zones/us-central1-a/instances", small_instance("vm-1", "us-central1-a")).js();
  CHECK(quota["error"]["errors"][0]["message"] == "Quota 'CPUS' exceeded.  Limit: 2.0 in region us-central1.");

  // A field of the wrong JSON type is a 400, not a crash.
  json typed = small_instance("vm-2", "us-central1-a");
  typed["scheduling"] = {{"provisioningModel", 42}};
  Http wrong = api(em, token, "POST", "zones/us-central1-a/instances", typed);
  CHECK(wrong.status == 400);
  CHECK_THAT(wrong.js()["error"]["message"].get<std::string>(),
             Catch::StartsWith("Invalid JSON payload received. [json.exception.type_error.302] type must be string"));
  CHECK(control(em, "capacity", {{"machineType", 7}, {"available", 1}}).status == 400);
}
