// plinth apply of GCP burst pools against gcp-emulator (docs/providers/gcp.md),
// the built `plinth` authenticated with the emulator's service-account key file
// (its token_uri is the emulator's): what only Compute Engine does. The
// burst-pool contract's cases (SPOT pools over zones, create-before-destroy,
// fallback, throttling, lost answers, preemption with both termination actions,
// a revoked key, refresh in O(pages), secrets) run for GCP in
// burst_pool_conformance_test.cpp (GcpCloud, tests/support/burst_cloud_gcp.cpp).
#include <catch2/catch.hpp>

#include "tests/support/blueprints.h"
#include "tests/support/clouds.h"
#include "tests/support/run.h"
#include "tests/support/text.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_gcp {

namespace {

/// A Workspace on `gce`.
struct GceWorkspace : Workspace {
  explicit GceWorkspace(GceEmulator& gce) : Workspace(&gce, "16", gcp_env(gce)) {}
};

/// How many operations of `type` (insert, delete) gcp-emulator made.
int operations(GceEmulator& gce, const std::string& type) {
  int n = 0;
  const Json state = gce.state();
  for (const auto& op : state["operations"]) n += op["operationType"] == type ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("gcp: ZONE_RESOURCE_POOL_EXHAUSTED, the stockout without details, fails a pool without fallbacks at once, "
          "and QUOTA_EXCEEDED names its metric",
          "[e2e][gcp]") {
  GceEmulator gce({"--capacity", "us-central1-a/a3-highgpu-8g=0", "--stockout-code", "ZONE_RESOURCE_POOL_EXHAUSTED"});
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

TEST_CASE("gcp: an insert or delete sent again after its answer was lost carries the same requestId, and GCP "
          "answers it with the first operation",
          "[e2e][gcp]") {
  GceEmulator gce;
  GceWorkspace ws(gce);
  gce.control("POST", "/__emulator/faults",
              {{"loseNext", 3}, {"loseMethods", {"compute.instances.insert", "compute.instances.delete"}}});
  ws.applied(burst_blueprint({gcp_pool(5)}));
  CHECK(gce.count("compute.instances.insert", "lost") == 3);
  CHECK(gce.count("compute.instances.insert") == 8);  // 5 + the 3 sent again, answered by requestId
  CHECK(operations(gce, "insert") == 5);

  gce.control("POST", "/__emulator/faults", {{"loseNext", 2}, {"loseMethods", {"compute.instances.delete"}}});
  ws.applied(burst_blueprint({gcp_pool(2)}));
  CHECK(gce.count("compute.instances.delete", "lost") == 2);
  CHECK(gce.all_instances() == 2);
  CHECK(operations(gce, "delete") == 3);
}

TEST_CASE("gcp: a 6-instance apply against Compute throttling at 3 requests/s without Retry-After succeeds on its "
          "first run, with the default settings",
          "[e2e][gcp][throttle]") {
  // GCE's quotas are per minute and its 429s name no wait: plinth backs off from about 1 s up to
  // about 60 s within the operation's deadline, as Google's clients do (retry_throttle_*_ms).
  GceEmulator gce({"--rate-limit", "3:3", "--operation-ms", "20"});
  GceWorkspace ws(gce);
  auto r = ws.apply(burst_blueprint({gcp_pool(6, "    zones: [us-central1-a]\n")}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(gce.active().size() == 6);
  CHECK(ws.in_state("gcp.instance") == 6);
  int throttled = 0;
  for (const char* method : {"compute.instances.insert", "compute.zoneOperations.wait", "compute.zoneOperations.get",
                             "compute.instances.get", "compute.instances.list", "compute.instances.aggregatedList"})
    throttled += gce.count(method, "429");
  CHECK(throttled > 0);  // the emulator did say slow down
  CHECK(count_of(r.out, " failed, retrying in ") >= 1);
}

TEST_CASE("gcp: an expired access token gives Google's 401 and what to do, and touches nothing", "[e2e][gcp]") {
  GceEmulator gce;
  GceWorkspace ws(gce);
  const std::string token = gce.access_token();
  gce.control("POST", "/__emulator/tokens/expire");
  ws.env["GOOGLE_OAUTH_ACCESS_TOKEN"] = token;
  ws.env["GOOGLE_CLOUD_PROJECT"] = "plinth-test";
  auto r = ws.apply(burst_blueprint({gcp_pool(2)}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("HTTP 401 authError: Request had invalid authentication credentials.") != std::string::npos);
  CHECK(r.out.find("set GOOGLE_OAUTH_ACCESS_TOKEN to a fresh token") != std::string::npos);
  CHECK(r.out.find(token) == std::string::npos);
  CHECK(gce.all_instances() == 0);
}

TEST_CASE("gcp: an A3 Mega pool with gpu_subnetworks gets its 8 GPU NICs as gVNICs, and too few is BURST005 before any "
          "call",
          "[e2e][gcp]") {
  GceEmulator gce;
  GceWorkspace ws(gce);
  std::string subnets;
  for (int i = 1; i <= 8; ++i) subnets += std::string(i == 1 ? "" : ", ") + "a3-gpu-" + std::to_string(i);
  BurstPool pool = gcp_pool(2, "    zones: [us-central1-a]\n    gpu_subnetworks: [" + subnets + "]\n");
  pool.instance_type = "a3-megagpu-8g";
  auto r = ws.applied(burst_blueprint({pool}));
  CHECK(r.out.find("BURST004") == std::string::npos);
  const auto instances = gce.active();
  REQUIRE(instances.size() == 2);
  for (const auto& i : instances) {
    const Json& nics = i["networkInterfaces"];
    REQUIRE(nics.size() == 9);
    CHECK(nics[0]["nicType"] == "GVNIC");
    for (size_t n = 1; n < 9; ++n) {
      CHECK(nics[n]["nicType"] == "GVNIC");
      CHECK(nics[n]["subnetwork"].get<std::string>().ends_with("/regions/us-central1/subnetworks/a3-gpu-" +
                                                               std::to_string(n)));
    }
  }
  // Four subnetworks for eight NICs: the plan stops at the blueprint, with where and what to do.
  pool.extra = "    zones: [us-central1-a]\n    gpu_subnetworks: [a3-gpu-1, a3-gpu-2, a3-gpu-3, a3-gpu-4]\n";
  const int inserts = gce.count("compute.instances.insert");
  auto p = ws.plan(burst_blueprint({pool}));
  INFO(p.out << p.err);
  CHECK(p.exit_code == 1);
  CHECK(p.err.find("error[BURST005]: burst pool 'gpu' (a3-megagpu-8g) has 8 GPU NICs (gpudirect-tcpxo), but "
                   "gpu_subnetworks lists 4 subnetworks (gcp.instance.gpu)") != std::string::npos);
  CHECK(p.err.find("bp.yaml:") != std::string::npos);
  CHECK(gce.count("compute.instances.insert") == inserts);
}

}  // namespace plinth::test::e2e_gcp
