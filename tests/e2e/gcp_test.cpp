// plinth apply / plan / refresh of GCP burst pools against gcp-emulator
// (docs/providers/gcp.md), run the way users run it: the built `plinth` from
// a temporary blueprint directory, authenticated with the emulator's
// service-account key file through GOOGLE_APPLICATION_CREDENTIALS (its
// token_uri is the emulator's). SPOT a3 pools over two zones, create-before-
// destroy replaces, zone and machine-type fallback, quota, preemption, lost
// answers and requestId, throttling, bad keys and tokens, refresh in
// O(pages), secrets.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "engine/state/state.h"
#include "providers/gcp/service_account.h"
#include "tests/support/blueprints.h"
#include "tests/support/clouds.h"
#include "tests/support/run.h"
#include "tests/support/text.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_gcp {

namespace {

using Gce = GceEmulator;

/// A Workspace on `gce`.
struct GceWorkspace : Workspace {
  explicit GceWorkspace(Gce& gce) : Workspace(&gce, "16", gcp_env(gce)) {}
};

std::string last(const std::string& url) { return url.substr(url.rfind('/') + 1); }

std::map<std::string, int> by_zone(const std::vector<Json>& list) {
  std::map<std::string, int> out;
  for (const auto& i : list) ++out[last(i["zone"])];
  return out;
}

std::string metadata(const Json& instance, const std::string& key) {
  for (const auto& item : instance["metadata"].value("items", Json::array()))
    if (item["key"] == key) return item["value"];
  return "";
}

}  // namespace

TEST_CASE(
    "gcp: 16 SPOT a3-highgpu-8g over two zones, re-plan clean, a stack pin change replaces "
    "create-before-destroy, desired 16 -> 4 deletes 12",
    "[e2e][gcp]") {
  Gce gce({"--operation-ms", "20"});  // operations really are PENDING, RUNNING, then DONE: the provider polls
  GceWorkspace ws(gce);
  BurstPool pool = gcp_pool();
  auto r = ws.applied(burst_blueprint({pool}));
  auto active = gce.active();
  REQUIRE(active.size() == 16);
  CHECK(by_zone(active) == std::map<std::string, int>{{"us-central1-a", 8}, {"us-central1-b", 8}});
  std::set<std::string> addresses;
  for (const auto& i : active) {
    CHECK(i["status"] == "RUNNING");
    CHECK(last(i["machineType"]) == "a3-highgpu-8g");
    CHECK(i["scheduling"]["provisioningModel"] == "SPOT");
    CHECK(i["scheduling"]["instanceTerminationAction"] == "DELETE");
    CHECK(i["scheduling"]["onHostMaintenance"] == "TERMINATE");
    CHECK(i["guestAccelerators"][0]["acceleratorCount"] == 8);  // the a3's own H100s
    CHECK(i["labels"]["plinth-lineage"] == ws.doc().lineage);
    CHECK(i["labels"]["plinth-pool"] == "gpu");
    CHECK(metadata(i, "user-data").rfind("#cloud-config", 0) == 0);
    addresses.insert(metadata(i, "plinth-address"));
  }
  CHECK(addresses.size() == 16);
  CHECK(ws.in_state("gcp.instance") == 16);
  CHECK(r.out.find("8 x gcp.instance.gpu: instance_type a3-highgpu-8g, zone us-central1-a") != std::string::npos);
  // Every insert and delete carried a requestId.
  std::istringstream log(gce.log());
  int inserts = 0;
  for (std::string line; std::getline(log, line);) {
    Json j = Json::parse(line);
    if (j["api"] == "compute.instances.insert") {
      ++inserts;
      CHECK(j["query"].contains("requestId"));
    }
  }
  CHECK(inserts == 16);
  CHECK(gce.count("oauth2.token") == 1);  // one token, cached for the whole apply

  auto again = ws.plan(burst_blueprint({pool}));
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("No changes.") != std::string::npos);

  // A new driver pin is a new user-data hash: replace, create before destroy.
  auto p = ws.plan(burst_blueprint({pool}, "550.90.07"));
  INFO(p.out << p.err);
  CHECK(p.exit_code == 2);
  CHECK(count_of(p.out, "(replace, create before destroy, forced by: user_data_hash)") == 16);

  // 16 -> 4 deletes 12 (the highest indexes).
  BurstPool four = pool;
  four.desired = 4;
  auto down = ws.applied(burst_blueprint({four}));
  CHECK(down.out.find("0 to create, 0 to update, 0 to replace, 12 to destroy") != std::string::npos);
  CHECK(gce.active().size() == 4);
  CHECK(gce.all_instances() == 4);
  CHECK(gce.count("compute.instances.delete") == 12);

  // The replace is refused while there is no capacity: the old four stay.
  const std::string four_pinned = burst_blueprint({four}, "550.90.07");
  gce.capacity("", "a3-highgpu-8g", 2);  // per zone: exactly what runs there now
  auto refused = ws.apply(four_pinned);
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 1);
  CHECK(refused.out.find("ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS") != std::string::npos);
  CHECK(refused.out.find("the old object was kept") != std::string::npos);
  CHECK(gce.active().size() == 4);
  CHECK(ws.in_state("gcp.instance") == 4);
  CHECK(ws.doc().deposed.empty());

  // With capacity the replacements come first (other names), then the old four go.
  gce.capacity("", "a3-highgpu-8g", nullptr);
  std::set<std::string> old_names;
  for (const auto& i : gce.active()) old_names.insert(i["name"]);
  auto replaced = ws.applied(four_pinned);
  auto now = gce.active();
  CHECK(now.size() == 4);
  for (const auto& i : now) CHECK(old_names.count(i["name"]) == 0);
  CHECK(ws.doc().deposed.empty());
  CHECK(ws.plan(four_pinned).exit_code == 0);

  auto gone = ws.run({"destroy", "--auto-approve"}, four_pinned);
  INFO(gone.out << gone.err);
  REQUIRE(gone.exit_code == 0);
  CHECK(gce.all_instances() == 0);
  CHECK(gce.state()["disks"].empty());  // boot disks go with their instances
}

TEST_CASE(
    "gcp: with room for 5 a3-highgpu-8g in zone a and 6 in b, the fallback zone and machine type fill the "
    "pool of 16 in one apply and the summary says where each went",
    "[e2e][gcp]") {
  Gce gce({"--capacity", "us-central1-a/a3-highgpu-8g=5", "--capacity", "us-central1-b/a3-highgpu-8g=6"});
  GceWorkspace ws(gce);
  BurstPool pool = gcp_pool();
  pool.extra = "    zones: [us-central1-a, us-central1-b]\n    machine_types: [a3-highgpu-8g, a3-megagpu-8g]\n";
  auto r = ws.applied(burst_blueprint({pool}));
  auto active = gce.active();
  REQUIRE(active.size() == 16);
  std::map<std::string, int> placed;
  for (const auto& i : active) ++placed[last(i["machineType"]) + " " + last(i["zone"])];
  CHECK(placed["a3-highgpu-8g us-central1-a"] == 5);
  CHECK(placed["a3-highgpu-8g us-central1-b"] == 6);
  CHECK(placed["a3-megagpu-8g us-central1-a"] + placed["a3-megagpu-8g us-central1-b"] == 5);
  CHECK(r.out.find("Placement:") != std::string::npos);
  for (const auto& i : active) {
    const std::string address = metadata(i, "plinth-address");
    INFO(address);
    CHECK(r.out.find("  " + address + ": instance_type " + last(i["machineType"]) + ", zone " + last(i["zone"]) +
                     "\n") != std::string::npos);
  }
  CHECK(r.out.find("5 x gcp.instance.gpu: instance_type a3-highgpu-8g, zone us-central1-a") != std::string::npos);
  CHECK(r.out.find("6 x gcp.instance.gpu: instance_type a3-highgpu-8g, zone us-central1-b") != std::string::npos);
  CHECK(ws.plan(burst_blueprint({pool})).exit_code == 0);  // the fallback choice is no drift
}

TEST_CASE(
    "gcp: without a fallback a pool without capacity fails at once with GCP's reason, and QUOTA_EXCEEDED "
    "names its metric",
    "[e2e][gcp]") {
  Gce gce({"--capacity", "us-central1-a/a3-highgpu-8g=0", "--stockout-code", "ZONE_RESOURCE_POOL_EXHAUSTED"});
  GceWorkspace ws(gce);
  BurstPool pool = gcp_pool(3, "    zones: [us-central1-a]\n", false);
  auto r = ws.apply(burst_blueprint({pool}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("gcp.instance.gpu[0]: no capacity for a3-highgpu-8g in us-central1-a: ZONE_RESOURCE_POOL_EXHAUSTED: "
                   "The zone 'projects/plinth-test/zones/us-central1-a' does not have enough resources available to "
                   "fulfill the request.  Try a different zone, or try again later.") != std::string::npos);
  CHECK(r.out.find("List fallbacks in the pool (zones, machine_types)") != std::string::npos);
  CHECK(gce.count("compute.instances.insert") == 3);  // never retried as a blip
  CHECK(gce.all_instances() == 0);

  // Quota: the limit and the metric, with what to do.
  gce.capacity("us-central1-a", "a3-highgpu-8g", nullptr);
  gce.control("POST", "/__emulator/quota", {{"metric", "NVIDIA_H100_GPUS"}, {"region", "us-central1"}, {"limit", 8}});
  auto q = ws.apply(burst_blueprint({pool}));
  INFO(q.out << q.err);
  CHECK(q.exit_code == 1);
  CHECK(q.out.find("QUOTA_EXCEEDED: Quota 'NVIDIA_H100_GPUS' exceeded.  Limit: 8.0 in region us-central1. [metric "
                   "compute.googleapis.com/nvidia_h100_gpus; request a quota increase or use another region]") !=
        std::string::npos);
  CHECK(gce.active().size() == 1);  // one fits in the quota
  CHECK(ws.in_state("gcp.instance") == 1);
}

TEST_CASE(
    "gcp: a SPOT instance preempted by GCP shows as preempted, not as drift, and is created again "
    "(termination action DELETE and STOP)",
    "[e2e][gcp]") {
  for (const std::string action : {"DELETE", "STOP"}) {
    DYNAMIC_SECTION(action) {
      Gce gce;
      GceWorkspace ws(gce);
      BurstPool pool = gcp_pool(3, "    zones: [us-central1-a]\n    termination_action: " + action + "\n");
      ws.applied(burst_blueprint({pool}));
      const Resource victim = ws.recorded("gcp.instance.gpu[2]");
      const std::string name = victim.computed["name"];
      Json pre = gce.control("POST", "/__emulator/preempt", {{"zone", "us-central1-a"}, {"instance", name}});
      CHECK(pre["terminationAction"] == action);
      auto p = ws.plan(burst_blueprint({pool}));
      INFO(p.out << p.err);
      CHECK(p.exit_code == 2);
      CHECK(p.err.find("Gone: 1 resource(s) removed by their provider, not by a person:\n"
                       "  - gcp.instance.gpu[2]: preempted by GCP (compute.instances.preempted at ") !=
            std::string::npos);
      CHECK(p.err.find(": Instance was preempted.") != std::string::npos);
      CHECK(p.err.find("Drift:") == std::string::npos);
      CHECK(p.out.find("+ gcp.instance.gpu[2] (create)") != std::string::npos);
      ws.applied(burst_blueprint({pool}));
      auto active = gce.active();
      CHECK(active.size() == 3);
      CHECK(gce.all_instances() == 3);  // a stopped one was deleted before its name was used again
      CHECK(ws.recorded("gcp.instance.gpu[2]").computed["id"] != victim.computed["id"]);
      CHECK(ws.plan(burst_blueprint({pool})).exit_code == 0);
    }
  }
}

TEST_CASE("gcp: lost insert and delete answers create no duplicate and delete once (requestId)", "[e2e][gcp]") {
  Gce gce;
  GceWorkspace ws(gce);
  gce.control("POST", "/__emulator/faults",
              {{"loseNext", 3}, {"loseMethods", {"compute.instances.insert", "compute.instances.delete"}}});
  BurstPool pool = gcp_pool(5);
  ws.applied(burst_blueprint({pool}));
  CHECK(gce.count("compute.instances.insert", "lost") == 3);
  CHECK(gce.count("compute.instances.insert") == 8);  // 5 + the 3 sent again, answered by requestId
  auto all = gce.state()["instances"];
  CHECK(all.size() == 5);
  std::set<std::string> addresses;
  for (const auto& i : all) addresses.insert(metadata(i, "plinth-address"));
  CHECK(addresses.size() == 5);
  int insert_ops = 0;
  const Json after_apply = gce.state();
  for (const auto& op : after_apply["operations"]) insert_ops += op["operationType"] == "insert" ? 1 : 0;
  CHECK(insert_ops == 5);
  CHECK(ws.plan(burst_blueprint({pool})).exit_code == 0);

  gce.control("POST", "/__emulator/faults", {{"loseNext", 2}, {"loseMethods", {"compute.instances.delete"}}});
  ws.applied(burst_blueprint({gcp_pool(2)}));
  CHECK(gce.count("compute.instances.delete", "lost") == 2);
  CHECK(gce.all_instances() == 2);
  int delete_ops = 0;
  const Json after_shrink = gce.state();
  for (const auto& op : after_shrink["operations"]) delete_ops += op["operationType"] == "delete" ? 1 : 0;
  CHECK(delete_ops == 3);
}

TEST_CASE("gcp: an instance whose answer was lost and whose run crashed is adopted by refresh, never duplicated",
          "[e2e][gcp]") {
  Gce gce;
  GceWorkspace ws(gce);
  BurstPool pool = gcp_pool(3);
  ws.applied(burst_blueprint({pool}));
  auto doc = ws.doc();
  std::erase_if(doc.resources, [](const Resource& r) { return r.address == "gcp.instance.gpu[1]"; });
  doc.serial += 1;
  REQUIRE(state::open_local(ws.state())->save(doc).ok());
  auto r = ws.run({"refresh"}, burst_blueprint({pool}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("Adopted: 1 object(s)") != std::string::npos);
  CHECK(ws.doc().find("gcp.instance.gpu[1]") != nullptr);
  CHECK(ws.plan(burst_blueprint({pool})).exit_code == 0);
  CHECK(gce.all_instances() == 3);
}

TEST_CASE("gcp: an unrecorded instance at an address the state holds with another (a replace killed before its "
          "journal write, then the blueprint changed) is deposed and deleted, never left running",
          "[e2e][gcp]") {
  Gce gce;
  GceWorkspace ws(gce);
  BurstPool pool = gcp_pool(3);
  ws.applied(burst_blueprint({pool}));
  // What the killed run inserted for gpu[1]: this state's lineage and the
  // address, from attributes the blueprint no longer has.
  const std::string zone = "us-central1-a", stray = "gpu-1-stray";
  Json body = {{"name", stray},
               {"machineType", "zones/" + zone + "/machineTypes/a3-highgpu-8g"},
               {"labels", {{"plinth-lineage", ws.doc().lineage}, {"plinth-attributes", "0123456789abcdef"}}},
               {"metadata", {{"items", {{{"key", "plinth-address"}, {"value", "gcp.instance.gpu[1]"}}}}}},
               {"scheduling", {{"onHostMaintenance", "TERMINATE"}}},
               {"disks", {{{"boot", true}, {"autoDelete", true}, {"initializeParams", {{"sourceImage", kGcpImage}}}}}},
               {"networkInterfaces", {{{"network", "global/networks/default"}}}}};
  net::Request r;
  r.method = "POST";
  r.url = gce.compute_root() + "projects/plinth-test/zones/" + zone + "/instances";
  r.headers = {{"Authorization", "Bearer " + gce.access_token()}, {"Content-Type", "application/json"}};
  r.body = body.dump();
  auto res = gce.http().send(r);
  REQUIRE(res.ok());
  INFO(res->body);
  REQUIRE(res->status == 200);
  REQUIRE(gce.active().size() == 4);

  auto p = ws.plan(burst_blueprint({pool}));
  INFO(p.out << p.err);
  CHECK(p.exit_code == 2);
  CHECK(p.err.find("Superseded: 1 object(s) made for this state at an address it records with another object; "
                   "recorded as deposed, the next apply removes them:\n  - gcp.instance.gpu[1] (") != std::string::npos);
  CHECK(p.out.find("- gcp.instance.gpu[1] (deposed)") != std::string::npos);
  CHECK(p.out.find("0 to create, 0 to update, 0 to replace, 1 to destroy") != std::string::npos);
  ws.applied(burst_blueprint({pool}));
  auto active = gce.active();
  CHECK(active.size() == 3);
  for (const auto& i : active) CHECK(i["name"] != stray);
  CHECK(ws.doc().deposed.empty());
  CHECK(ws.in_state("gcp.instance") == 3);
  CHECK(ws.plan(burst_blueprint({pool})).exit_code == 0);
}

TEST_CASE("gcp: with throttling on, the apply finishes and every 429 rateLimitExceeded was retried", "[e2e][gcp]") {
  Gce gce({"--rate-limit", "40:4"});
  GceWorkspace ws(gce);
  ws.env["PLINTH_GCP_REQUESTS_PER_SECOND"] = "0";  // let the server throttle
  ws.env["PLINTH_GCP_RETRY_ATTEMPTS"] = "12";
  ws.env["PLINTH_GCP_RETRY_BASE_MS"] = "20";
  ws.env["PLINTH_GCP_RETRY_MAX_MS"] = "500";
  auto r = ws.applied(burst_blueprint({gcp_pool(12)}));
  int throttled = 0;
  Json m = gce.control("GET", "/__emulator/counters")["methods"];
  for (const auto& [api, outcomes] : m.items()) throttled += outcomes.value("429", 0);
  INFO(m.dump(2));
  CHECK(throttled > 0);
  CHECK(count_of(r.out, " failed, retrying in ") == static_cast<size_t>(throttled));
  CHECK(count_of(r.out, "HTTP 429 rateLimitExceeded: Quota exceeded for quota metric 'Queries'") ==
        static_cast<size_t>(throttled));
  CHECK(gce.active().size() == 12);
}

TEST_CASE("gcp: the client-side token bucket keeps an apply under the project's request rate", "[e2e][gcp]") {
  Gce gce({"--rate-limit", "20:2"});
  GceWorkspace ws(gce);
  ws.env["PLINTH_GCP_REQUESTS_PER_SECOND"] = "15";  // slower than the server's bucket: no 429 ever
  ws.env["PLINTH_GCP_REQUEST_BURST"] = "1";
  ws.applied(burst_blueprint({gcp_pool(6)}));
  Json m = gce.control("GET", "/__emulator/counters")["methods"];
  INFO(m.dump(2));
  for (const auto& [api, outcomes] : m.items()) CHECK(outcomes.value("429", 0) == 0);
  CHECK(gce.active().size() == 6);
}

TEST_CASE("gcp: a revoked key and an expired access token give Google's error and touch nothing", "[e2e][gcp]") {
  Gce gce({"--extra-keys"});
  BurstPool pool = gcp_pool(2);
  {
    GceWorkspace ws(gce);
    ws.env["GOOGLE_APPLICATION_CREDENTIALS"] = gce.key_file("service-account-revoked.json");
    auto r = ws.apply(burst_blueprint({pool}));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("refused the assertion (HTTP 400) with invalid_grant: Invalid JWT Signature.") !=
          std::string::npos);
    CHECK(gce.count("oauth2.token") == 1);  // the refusal is remembered: one request, not one per instance
    CHECK(gce.count("compute.instances.insert") == 0);
  }
  {
    // A token that expired: Google's 401 and what to do, nothing else sent.
    GceWorkspace ws(gce);
    const std::string token = gce.access_token();
    gce.control("POST", "/__emulator/tokens/expire");
    ws.env["GOOGLE_OAUTH_ACCESS_TOKEN"] = token;
    ws.env["GOOGLE_CLOUD_PROJECT"] = "plinth-test";
    auto r = ws.apply(burst_blueprint({pool}));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("HTTP 401 authError: Request had invalid authentication credentials.") != std::string::npos);
    CHECK(r.out.find("set GOOGLE_OAUTH_ACCESS_TOKEN to a fresh token") != std::string::npos);
    CHECK(r.out.find(token) == std::string::npos);
    CHECK(gce.all_instances() == 0);
  }
}

TEST_CASE("gcp: refresh of 1,000 instances takes O(pages) aggregatedList requests", "[e2e][gcp]") {
  Gce gce;
  GceWorkspace ws(gce);
  const std::string lineage = "0e2e0000-0000-4000-8000-000000001000";
  const std::string token = gce.access_token();
  // 1,000 instances inserted straight through the API, labelled with a
  // state's lineage, over two zones, from four threads.
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      net::Client client(net::ClientOptions{gce.ca()});
      for (int i = t; i < 1000; i += 4) {
        const std::string zone = i % 2 ? "us-central1-b" : "us-central1-a";
        Json body = {
            {"name", "gpu-" + std::to_string(i)},
            {"machineType", "zones/" + zone + "/machineTypes/e2-medium"},
            {"labels", {{"plinth-lineage", lineage}}},
            {"metadata", {{"items", {{{"key", "plinth-address"}, {"value", make_address("gcp.instance", "gpu", i)}}}}}},
            {"disks", {{{"boot", true}, {"autoDelete", true}, {"initializeParams", {{"sourceImage", kGcpImage}}}}}},
            {"networkInterfaces", {{{"network", "global/networks/default"}}}}};
        net::Request r;
        r.method = "POST";
        r.url = gce.compute_root() + "projects/plinth-test/zones/" + zone + "/instances";
        r.headers = {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}};
        r.body = body.dump();
        auto res = client.send(r);
        if (!res.ok() || res->status != 200) ++failures;
      }
    });
  for (auto& t : threads) t.join();
  REQUIRE(failures == 0);
  state::StateDocument doc;
  doc.lineage = lineage;
  doc.serial = 1;
  doc.plinth_version = "0.1.0";
  std::map<std::string, std::string> ids;
  const Json inserted = gce.state();
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
  const size_t before = count_of(gce.log(), "\n");
  ws.env["PLINTH_GCP_PAGE_SIZE"] = "200";
  auto r = run_plinth({"refresh", "--state", ws.state()}, ws.dir.path(), ws.env);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("No drift: all 1000 resource(s)") != std::string::npos);
  // 1,000 / 200 = 5 pages to read them, 5 more to look for instances of the
  // state it does not record, one token; nothing else.
  std::istringstream log(gce.log());
  std::map<std::string, int> apis;
  std::string line;
  for (size_t n = 0; std::getline(log, line); ++n)
    if (n >= before) ++apis[Json::parse(line)["api"].get<std::string>()];
  CHECK(apis == std::map<std::string, int>{{"compute.instances.aggregatedList", 10}, {"oauth2.token", 1}});
}

TEST_CASE("gcp: secrets never reach the plan file, the state or the output", "[e2e][gcp]") {
  Gce gce;
  BurstPool pool = gcp_pool(2);
  std::string seen;
  auto key = gcp::load_service_account_key(gce.key_file());
  REQUIRE(key.ok());
  // A line from the middle of the private key: never anywhere.
  std::istringstream pem(key->private_key_pem);
  std::string key_line;
  for (int i = 0; i < 5; ++i) std::getline(pem, key_line);
  REQUIRE(key_line.size() > 40);
  const std::string token = gce.access_token();
  for (bool with_token : {false, true}) {
    GceWorkspace ws(gce);
    if (with_token) {
      ws.env["GOOGLE_OAUTH_ACCESS_TOKEN"] = token;
      ws.env["GOOGLE_CLOUD_PROJECT"] = "plinth-test";  // a bare token names no project
    }
    auto plan = ws.run({"plan", "-out", ws.dir.path() + "/plan.bin"}, burst_blueprint({pool}));
    seen += plan.out + plan.err;
    auto apply = ws.apply(burst_blueprint({pool}));
    INFO(apply.out << apply.err);
    REQUIRE(apply.exit_code == 0);
    seen += apply.out + apply.err;
    for (const auto& cmd : std::vector<std::vector<std::string>>{{"refresh"}, {"plan", "--json"}}) {
      auto x = ws.run(cmd, burst_blueprint({pool}));
      seen += x.out + x.err;
    }
    auto providers = run_plinth({"providers", ws.dir.path() + "/bp.yaml", "--json"}, ws.dir.path(), ws.env);
    seen += providers.out + providers.err;
    seen += slurp(ws.state()) + slurp(ws.dir.path() + "/plan.bin");
    for (const auto& f : std::filesystem::recursive_directory_iterator(ws.dir.path() + "/plinth.state.json.d"))
      if (f.is_regular_file()) seen += slurp(f.path().string());
    auto d = ws.run({"destroy", "--auto-approve"}, burst_blueprint({pool}));
    seen += d.out + d.err;
  }
  CHECK(seen.find(key_line) == std::string::npos);
  CHECK(seen.find(token) == std::string::npos);
  CHECK(seen.find("ya29.") == std::string::npos);
}

TEST_CASE("gcp: the example blueprint of README and docs/providers/gcp.md applies against the emulator", "[e2e][gcp]") {
  Gce gce;
  TempDir dir;
  const std::string bp = dir.write("gcp-burst.yaml", slurp(source_dir() + "/blueprints/examples/gcp/gcp-burst.yaml"));
  const std::string st = dir.path() + "/plinth.state.json";
  auto r = run_plinth({"apply", bp, "--state", st, "--auto-approve"}, dir.path(), gcp_env(gce));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto active = gce.active();
  REQUIRE(active.size() == 2);
  for (const auto& i : active) {
    CHECK(i["scheduling"]["provisioningModel"] == "SPOT");
    CHECK(i["labels"]["team"] == "research");
    CHECK(i["disks"][0]["diskSizeGb"] == "500");
  }
  CHECK(by_zone(active) == std::map<std::string, int>{{"us-central1-a", 1}, {"us-central1-b", 1}});
  auto again = run_plinth({"plan", bp, "--state", st, "--detailed-exitcode"}, dir.path(), gcp_env(gce));
  CHECK(again.exit_code == 0);
}

TEST_CASE("gcp: changing only where new instances may go, or the labels, updates the pool in place with setLabels",
          "[e2e][gcp]") {
  Gce gce;
  GceWorkspace ws(gce);
  ws.applied(burst_blueprint({gcp_pool(2, "    zones: [us-central1-a]\n")}));
  BurstPool wider = gcp_pool(2,
                       "    zones: [us-central1-a, us-central1-b]\n    machine_types: [a3-highgpu-8g, a3-megagpu-8g]\n"
                       "    labels: {team: vision}\n");
  auto p = ws.plan(burst_blueprint({wider}));
  INFO(p.out << p.err);
  CHECK(p.out.find("~ gcp.instance.gpu[0] (update in place)") != std::string::npos);
  CHECK(p.out.find("0 to create, 2 to update, 0 to replace, 0 to destroy") != std::string::npos);
  ws.applied(burst_blueprint({wider}));
  CHECK(gce.count("compute.instances.setLabels", "200") == 2);  // the new labels, nothing inserted
  CHECK(gce.count("compute.instances.insert") == 2);
  for (const auto& i : gce.active()) {
    CHECK(i["labels"]["team"] == "vision");
    CHECK(i["labels"]["plinth-lineage"] == ws.doc().lineage);
  }
  CHECK(ws.plan(burst_blueprint({wider})).exit_code == 0);
}

}  // namespace plinth::test::e2e_gcp
