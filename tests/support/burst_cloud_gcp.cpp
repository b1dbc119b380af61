// GcpCloud: the burst-pool contract's hooks for gcp-emulator, authenticated
// with the emulator's service-account key file (its token_uri is the
// emulator's). Instances made outside plinth are inserted through the
// Compute API with an access token, as a client library would.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <thread>

#include "engine/state/state.h"
#include "providers/gcp/service_account.h"
#include "tests/support/burst_cloud.h"

namespace plinth::test {

// File-local, in a namespace of its own (plinth_test_support is built in unity batches).
namespace burst_cloud_gcp {

// What the keyless credential sources hold (credential_kinds): each must stay out of everything Plinth writes.
const std::string kSubjectToken = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjb25mb3JtYW5jZSJ9.R0NQLUNPTkZPUk1BTkNF";
const std::string kRefreshToken = "1//0gConformanceRefreshToken";
const std::string kClientSecret = "d-FL95Q19q7MQmFpd7hHD0Ty";  // gcloud's, which the emulator trusts

std::string last(const std::string& url) { return url.substr(url.rfind('/') + 1); }

std::string metadata(const Json& instance, const std::string& key) {
  for (const auto& item : instance["metadata"].value("items", Json::array()))
    if (item["key"] == key) return item["value"];
  return "";
}

/// Answers with `outcome` of `method` ("" = every method) in the emulator's counters.
int outcomes(GceEmulator& gce, const std::string& method, const std::string& outcome) {
  int n = 0;
  const Json counters = gce.control("GET", "/__emulator/counters");
  for (const auto& [api, o] : counters["methods"].items())
    if (method.empty() || api == method) n += o.value(outcome, 0);
  return n;
}

/// POSTs an instance `body` into `zone` with `token` through `client`: the answer's status (0: no answer) and
/// body. No Catch2 macro here: populate() calls it from several threads, and Catch2's INFO and assertions are
/// not thread-safe.
std::pair<int, std::string> insert(net::Client& client, GceEmulator& gce, const std::string& token,
                                   const std::string& zone, const Json& body) {
  net::Request r;
  r.method = "POST";
  r.url = gce.compute_root() + "projects/plinth-test/zones/" + zone + "/instances";
  r.headers = {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}};
  r.body = body.dump();
  auto res = client.send(r);
  if (!res.ok()) return {0, res.error().message};
  return {res->status, res->body};
}

class Gcp final : public CloudUnderTest {
 public:
  std::string provider() const override { return "gcp"; }
  std::string resource_type() const override { return "gcp.instance"; }
  std::vector<std::string> zones() const override { return {"us-central1-a", "us-central1-b"}; }
  std::vector<std::string> instance_types() const override { return {"a3-highgpu-8g", "a3-megagpu-8g"}; }

  BurstPool pool(const PoolShape& shape) const override {
    // A GCP pool names its zones; the usual ones are both.
    std::string extra =
        shape.zones == 1 ? "    zones: [us-central1-a]\n" : "    zones: [us-central1-a, us-central1-b]\n";
    if (shape.fallback) extra += "    machine_types: [a3-highgpu-8g, a3-megagpu-8g]\n";
    return gcp_pool(shape.desired, extra + shape.extra, shape.spot);
  }

  Misspelling misspelling() const override {
    return {"    termination_acton: STOP\n    boot_disk: {size_gb: big}\n", "termination_acton", "termination_action",
            "big"};
  }

  void start(const CloudSetup& setup) override {
    // --extra-keys: service-account-revoked.json, a key the emulator does not trust (spoil_credentials).
    std::vector<std::string> flags = {"--operation-ms", std::to_string(setup.operation_ms), "--extra-keys"};
    if (setup.throttled) flags.insert(flags.end(), {"--rate-limit", "40:4"});
    // 20 a second with a burst of 5: the client's 15 a second (burst 1) stays under it even when a loaded
    // machine delays some requests and the next ones catch up with them (a CI run saw three land at once).
    if (setup.rate_limited) flags.insert(flags.end(), {"--rate-limit", "20:5"});
    if (setup.temporary_credentials)
      flags.insert(flags.end(), {"--subject-token", kSubjectToken, "--refresh-token", kRefreshToken,
                                 "--metadata-port", "0"});
    gce_ = std::make_unique<GceEmulator>(flags);
    env_ = gcp_env(*gce_);
    if (setup.throttled) {
      env_["PLINTH_GCP_REQUESTS_PER_SECOND"] = "0";  // let the server throttle
      env_["PLINTH_GCP_RETRY_ATTEMPTS"] = "12";
      env_["PLINTH_GCP_RETRY_BASE_MS"] = "20";
      env_["PLINTH_GCP_RETRY_MAX_MS"] = "500";
      env_["PLINTH_GCP_RETRY_THROTTLE_BASE_MS"] = "20";  // GCE-like quota waits (1 s to 60 s) made short
      env_["PLINTH_GCP_RETRY_THROTTLE_MAX_MS"] = "500";
    }
    if (setup.rate_limited) {
      env_["PLINTH_GCP_REQUESTS_PER_SECOND"] = "15";  // slower than the server's bucket: no 429 ever
      env_["PLINTH_GCP_REQUEST_BURST"] = "1";
    }
  }

  CloudEmulator& emulator() override { return gce(); }

  std::map<std::string, std::string> env() override {
    REQUIRE(gce_);
    return env_;
  }

  std::string parallelism() const override { return "16"; }

  std::vector<CloudInstance> instances() override {
    std::vector<CloudInstance> out;
    const Json state = gce().state();
    for (const auto& i : state["instances"])
      out.push_back({.id = i["id"],
                     .uid = i["id"],
                     .name = i["name"],
                     .address = metadata(i, "plinth-address"),
                     .lineage = i["labels"].value("plinth-lineage", ""),
                     .type = last(i["machineType"]),
                     .zone = last(i["zone"]),
                     .spot = i["scheduling"].value("provisioningModel", "") == "SPOT",
                     .active = i["status"] != "TERMINATED",
                     .user_data = metadata(i, "user-data"),
                     .raw = i});
    return out;
  }

  bool keeps_removed() const override { return false; }

  void check_companions() override {
    const Json s = gce().state();
    CHECK(s["disks"].size() == s["instances"].size());  // boot disks go with their instances
  }

  void check_pool(const std::vector<CloudInstance>& active, const Workspace&, const RunResult&) override {
    for (const auto& c : active) {
      const Json& i = c.raw;
      CHECK(i["status"] == "RUNNING");
      CHECK(i["scheduling"]["instanceTerminationAction"] == "DELETE");
      CHECK(i["scheduling"]["onHostMaintenance"] == "TERMINATE");
      CHECK(i["guestAccelerators"][0]["acceleratorCount"] == 8);  // the a3's own H100s
      CHECK(i["labels"]["plinth-pool"] == "gpu");
    }
    // Every insert carried a requestId.
    std::istringstream log(gce().log());
    for (std::string line; std::getline(log, line);)
      if (Json j = Json::parse(line); j["api"] == call(Call::create)) CHECK(j["query"].contains("requestId"));
  }

  std::vector<std::string> calls() const override {
    return {"compute.instances.aggregatedList", "compute.instances.insert", "compute.instances.setLabels",
            "compute.instances.delete"};
  }

  std::string call_of(const Json& line) const override {
    const std::string api = line.value("api", "");
    return api.rfind("emulator.", 0) == 0 || api == "internal" ? "" : api;
  }

  int launched(const Json& line) const override {
    if (line["status"] != 200 || !line["fault"].is_null()) return 0;
    return call_of(line) == call(Call::create) ? 1 : call_of(line) == call(Call::remove) ? -1 : 0;
  }

  int tokens_per_run() const override { return 1; }  // one token, cached for the whole run
  std::string token_call() const override { return "oauth2.token"; }
  int throttled() override { return outcomes(gce(), "", "429"); }
  int throttled(Call c) override { return outcomes(gce(), call(c), "429"); }
  int lost() override { return outcomes(gce(), "", "lost"); }
  std::vector<Call> throttled_calls() const override { return {}; }

  void capacity(const std::string& type, const std::string& zone, Json limit) override {
    gce().capacity(zone, type, std::move(limit));
  }

  void lose_answers(Call c, int n) override {
    gce().control("POST", "/__emulator/faults", {{"loseNext", n}, {"loseMethods", {call(c)}}});
  }

  std::vector<std::string> reclaim_kinds() const override { return {"DELETE", "STOP"}; }

  std::string reclaim_setting(const std::string& kind) const override {
    return "    termination_action: " + kind + "\n";
  }

  Reclaimed reclaim(const Resource& victim, const std::string& kind) override {
    Json pre = gce().control("POST", "/__emulator/preempt",
                             {{"zone", victim.computed["zone"]}, {"instance", victim.computed["name"]}});
    CHECK(pre["terminationAction"] == kind);
    return {{"preempted by GCP (compute.instances.preempted at ", ": Instance was preempted."}, ""};
  }

  Refusal spoil_credentials(Workspace& ws) override {
    ws.env["GOOGLE_APPLICATION_CREDENTIALS"] = gce().key_file("service-account-revoked.json");
    // The refusal is remembered: one token request, not one per instance.
    return {"refused the assertion (HTTP 400) with invalid_grant: Invalid JWT Signature.", false, 1};
  }

  std::vector<std::string> credential_kinds() const override {
    return {"key file", "access token", "external_account", "authorized_user", "metadata server"};
  }

  void use_credentials(Workspace& ws, const std::string& kind) override {
    if (kind == "key file") return;
    ws.env["GOOGLE_CLOUD_PROJECT"] = "plinth-test";  // none of these names a project
    if (kind == "access token") {
      ws.env["GOOGLE_OAUTH_ACCESS_TOKEN"] = token();
      return;
    }
    ws.env["HOME"] = home_.path();
    ws.env["CLOUDSDK_CONFIG"] = "";
    ws.env["GOOGLE_APPLICATION_CREDENTIALS"] = "";
    if (kind == "external_account") {
      // Workload identity federation with a service account impersonated, as GitHub Actions' google-github-actions/auth.
      home_.write("oidc-token", kSubjectToken);
      home_.write("wif.json",
                  gcp_external_account(gce(), Json{{"file", home_.path() + "/oidc-token"}}, true).dump());
      ws.env["GOOGLE_APPLICATION_CREDENTIALS"] = home_.path() + "/wif.json";
    } else if (kind == "authorized_user") {
      home_.write(".config/gcloud/application_default_credentials.json",
                  Json{{"type", "authorized_user"},
                       {"client_id", "764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com"},
                       {"client_secret", kClientSecret},
                       {"refresh_token", kRefreshToken},
                       {"token_uri", gce().base() + "/token"}}
                      .dump());
    } else {
      REQUIRE(kind == "metadata server");
      std::filesystem::remove(home_.path() + "/.config/gcloud/application_default_credentials.json");
      ws.env["GCE_METADATA_HOST"] = gce().metadata_base().substr(7);
    }
  }

  std::vector<std::string> secrets() override {
    auto key = gcp::load_service_account_key(gce().key_file());
    REQUIRE(key.ok());
    // A line from the middle of the private key.
    std::istringstream pem(key->private_key_pem);
    std::string key_line;
    for (int i = 0; i < 5; ++i) std::getline(pem, key_line);
    REQUIRE(key_line.size() > 40);
    // Every access token the emulator issues (OAuth, STS, IAM Credentials, metadata) starts with ya29.
    return {key_line, token(), "ya29.", kSubjectToken, kRefreshToken, kClientSecret};
  }

  Population populate(Workspace& ws) override {
    const std::string lineage = "0e2e0000-0000-4000-8000-000000001000";
    const std::string token = this->token();
    // 1,000 instances inserted straight through the API, labelled with the state's lineage, over two zones,
    // from four threads.
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        net::Client client(net::ClientOptions{gce_->ca()});
        for (int i = t; i < 1000; i += 4) {
          const std::string zone = i % 2 ? "us-central1-b" : "us-central1-a";
          Json body = {
              {"name", "gpu-" + std::to_string(i)},
              {"machineType", "zones/" + zone + "/machineTypes/e2-medium"},
              {"labels", {{"plinth-lineage", lineage}}},
              {"metadata",
               {{"items", {{{"key", "plinth-address"}, {"value", make_address("gcp.instance", "gpu", i)}}}}}},
              {"disks", {{{"boot", true}, {"autoDelete", true}, {"initializeParams", {{"sourceImage", kGcpImage}}}}}},
              {"networkInterfaces", {{{"network", "global/networks/default"}}}}};
          if (insert(client, *gce_, token, zone, body).first != 200) ++failures;
        }
      });
    for (auto& t : threads) t.join();
    REQUIRE(failures == 0);
    state::StateDocument doc;
    doc.lineage = lineage;
    doc.serial = 1;
    doc.plinth_version = "0.1.0";
    std::map<std::string, std::string> ids;
    const Json inserted = gce().state();
    for (const auto& i : inserted["instances"]) ids[i["name"]] = i["id"];
    REQUIRE(ids.size() == 1000);
    for (int i = 0; i < 1000; ++i) {
      Resource r = make_resource("gcp.instance", "gpu", i, "gcp",
                                 {{"instance_type", "e2-medium"}, {"region", "us-central1"}, {"spot", false}});
      const std::string name = "gpu-" + std::to_string(i);
      r.computed = {{"id", ids[name]}, {"name", name}, {"zone", i % 2 ? "us-central1-b" : "us-central1-a"}};
      doc.resources.push_back(r);
    }
    std::sort(doc.resources.begin(), doc.resources.end(),
              [](const Resource& a, const Resource& b) { return a.address < b.address; });
    REQUIRE(state::open_local(ws.state())->save(doc).ok());
    ws.env["PLINTH_GCP_PAGE_SIZE"] = "200";
    return {1000, 200};
  }

  std::string make_stray(Workspace& ws, const std::string& address) override {
    const std::string zone = "us-central1-a", name = "gpu-1-stray";
    Json body = {
        {"name", name},
        {"machineType", "zones/" + zone + "/machineTypes/a3-highgpu-8g"},
        {"labels", {{"plinth-lineage", ws.doc().lineage}, {"plinth-attributes", "0123456789abcdef"}}},
        {"metadata", {{"items", {{{"key", "plinth-address"}, {"value", address}}}}}},
        {"scheduling", {{"onHostMaintenance", "TERMINATE"}}},
        {"disks", {{{"boot", true}, {"autoDelete", true}, {"initializeParams", {{"sourceImage", kGcpImage}}}}}},
        {"networkInterfaces", {{{"network", "global/networks/default"}}}}};
    const auto [status, answer] = insert(gce().http(), gce(), token(), zone, body);
    INFO(answer);
    REQUIRE(status == 200);
    for (const auto& i : instances())
      if (i.name == name) return i.id;
    FAIL("gcp-emulator shows no instance " << name);
    return "";
  }

  ExampleBlueprint example() override {
    // The example of README and docs/providers/gcp.md.
    return {"blueprints/examples/gcp/gcp-burst.yaml",
            {},
            2,
            {{"us-central1-a", 1}, {"us-central1-b", 1}},
            [](const std::vector<CloudInstance>& active) {
              for (const auto& i : active) {
                CHECK(i.raw["scheduling"]["provisioningModel"] == "SPOT");
                CHECK(i.raw["labels"]["team"] == "research");
                CHECK(i.raw["disks"][0]["diskSizeGb"] == "500");
              }
            }};
  }

  InPlaceSetting in_place_setting() const override {
    // Labels change in place too, with the same setLabels.
    return {"    labels: {team: vision}\n", [](const std::vector<CloudInstance>& active, const std::string& lineage) {
              for (const auto& i : active) {
                CHECK(i.raw["labels"]["team"] == "vision");
                CHECK(i.raw["labels"]["plinth-lineage"] == lineage);
              }
            }};
  }

  std::string capacity_code() const override { return "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"; }

  std::string no_capacity(const std::string& type, const std::string& zone) const override {
    // The stockout with details (GCP's usual one), naming the region's other zones as having room.
    std::string room;
    for (const std::string z : {"us-central1-a", "us-central1-b", "us-central1-c"})
      if (z != zone) room += (room.empty() ? "" : ",") + z;
    return "no capacity for " + type + " in " + zone + ": ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS: The zone " +
           "'projects/plinth-test/zones/" + zone + "' does not have enough resources available to fulfill the " +
           "request.  '(resource type:compute)'. [GCP says these zones have room: " + room + "]";
  }

  std::string fallback_hint() const override {
    return "List fallbacks in the pool (zones, machine_types) to let Plinth try elsewhere";
  }

  std::string throttle_words() const override {
    return "HTTP 429 rateLimitExceeded: Quota exceeded for quota metric 'Queries'";
  }

 private:
  GceEmulator& gce() {
    REQUIRE(gce_);
    return *gce_;
  }

  /// One access token for the emulator's service account, the same every call.
  const std::string& token() {
    if (token_.empty()) token_ = gce().access_token();
    return token_;
  }

  std::string token_;
  std::map<std::string, std::string> env_;
  std::unique_ptr<GceEmulator> gce_;
  TempDir home_;  ///< HOME and the credential files of the keyless kinds
};

}  // namespace burst_cloud_gcp

std::unique_ptr<CloudUnderTest> GcpCloud::make() { return std::make_unique<burst_cloud_gcp::Gcp>(); }

}  // namespace plinth::test
