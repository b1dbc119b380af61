// plinth apply of Azure burst pools against azure-emulator (docs/providers/azure.md):
// what only Azure does (SkuNotAvailable, region allocation and Spot quota,
// LROs honouring Retry-After, the rate-limit headers, Entra with a client
// certificate or a missing variable) and the blueprint with all four
// providers. The burst-pool contract's cases (Spot pools over zones with their
// NICs, create-before-destroy, fallback, throttling, lost answers, eviction, a
// wrong secret, refresh in O(pages), secrets) run for Azure in
// burst_pool_conformance_test.cpp (AzureCloud, tests/support/burst_cloud_azure.cpp).
#include <catch2/catch.hpp>
#include <climits>
#include <map>
#include <set>
#include <sstream>

#include "engine/provider/resource.h"
#include "engine/state/state.h"
#include "tests/providers/baremetal/emulator.h"
#include "tests/support/blueprints.h"
#include "tests/support/clouds.h"
#include "tests/support/redfish.h"
#include "tests/support/text.h"
#include "tests/support/run.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_azure {

namespace {

const std::string kH100 = "Standard_ND96isr_H100_v5";
const std::string kH200 = "Standard_ND96isr_H200_v5";

using Azure = AzureEmulator;

/// A Workspace on `az`.
struct AzureWorkspace : Workspace {
  explicit AzureWorkspace(Azure& az) : Workspace(&az, "8", azure_env(az)) {}
};

}  // namespace

TEST_CASE("azure: SkuNotAvailable, ZonalAllocationFailed and AllocationFailed fall back over zones and sizes in one "
          "apply, and the summary says where each VM went",
          "[e2e][azure]") {
  // Zone 1 has room for 2 H100s, zone 2 has none (SKU restricted there), H200 has room.
  Azure az({"--capacity", "eastus/1:" + kH100 + "=2", "--sku-unavailable", "eastus/2:" + kH100});
  AzureWorkspace ws(az);
  BurstPool pool = azure_pool(6, "    instance_types: [" + kH200 + "]\n    zones: [\"1\", \"2\"]\n");
  auto r = ws.applied(burst_blueprint({pool}));
  Json vms = az.vms();
  REQUIRE(vms.size() == 6);
  std::map<std::string, int> placed;
  for (const auto& vm : vms) ++placed[vm["size"].get<std::string>() + " " + vm["zone"].get<std::string>()];
  CHECK(placed[kH100 + " 1"] == 2);
  CHECK(placed[kH100 + " 2"] == 0);
  CHECK(placed[kH200 + " 1"] + placed[kH200 + " 2"] == 4);
  CHECK(count_by(vms, "provisioningState") == std::map<std::string, int>{{"Succeeded", 6}});  // no failed VM left behind
  CHECK(az.nics().size() == 6);
  // The summary says where each VM went, as the emulator has them, each once.
  std::map<std::string, std::vector<int>> where;
  for (const auto& vm : vms) {
    auto parts = parse_address(vm["model"]["tags"]["plinth:address"].get<std::string>());
    REQUIRE(parts);
    where["instance_type " + vm["size"].get<std::string>() + ", zone " + vm["zone"].get<std::string>()].push_back(
        parts->index);
  }
  CHECK(contains(r.out, placement_lines("azure.vm.gpu", where)));
  Json ops = az.control("GET", "/__emulator/operations");
  std::set<std::string> codes;
  for (const auto& o : ops)
    if (o.contains("error")) codes.insert(o["error"].value("code", ""));
  CHECK(codes.count("ZonalAllocationFailed") == 1);
  CHECK(az.requests("Microsoft.Compute/virtualMachines/write") > 6);  // SkuNotAvailable PUTs were refused at once
  CHECK(ws.plan(burst_blueprint({pool})).exit_code == 0);  // the fallback choice is no drift
}

TEST_CASE("azure: without fallbacks a pool without capacity fails at once with ARM's code and message",
          "[e2e][azure]") {
  Azure az({"--capacity", "eastus:" + kH100 + "=0", "--quota", "westus2:lowPriorityCores=96"});
  AzureWorkspace ws(az);
  auto r = ws.apply(burst_blueprint({azure_pool(2)}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("azure.vm.gpu[0]: no capacity for Standard_ND96isr_H100_v5 in eastus: AllocationFailed: Allocation "
                   "failed. We do not have sufficient capacity for the requested VM size in this region.") !=
        std::string::npos);
  CHECK(r.out.find("List fallbacks in the pool") != std::string::npos);
  CHECK(az.vms().empty());  // the failed VMs were removed, their NICs too
  CHECK(az.nics().empty());
  CHECK(ws.in_state("azure.vm") == 0);

  // Quota: the second Spot VM would pass the subscription's low-priority vCPU limit.
  AzureWorkspace quota(az);
  BurstPool west = azure_pool(2);
  west.name = "west";
  quota.dir.write("unused", "");
  std::string bp = burst_blueprint({west});
  bp.replace(bp.find("region: eastus\n    resource_group"), std::string("region: eastus").size(), "region: westus2");
  quota.dir.write("bp.yaml", bp);
  auto q = run_plinth({"apply", quota.dir.path() + "/bp.yaml", "--auto-approve", "--state", quota.state()},
                      quota.dir.path(), quota.env);
  INFO(q.out << q.err);
  CHECK(q.exit_code == 1);
  CHECK(q.out.find("OperationNotAllowed: Operation could not be completed as it results in exceeding approved "
                   "Low Priority Cores quota") != std::string::npos);
  CHECK(az.vms().size() == 1);
}

TEST_CASE("azure: long-running operations are polled at ARM's Retry-After, not faster", "[e2e][azure]") {
  Azure az({"--lro-delay-ms", "1500", "--retry-after", "1"}, false);
  AzureWorkspace ws(az);
  ws.applied(burst_blueprint({azure_pool(1)}));
  // The VM create's operation: its status was asked for 1 or 2 times (every
  // second), not every poll_ms (5 ms), and never before Retry-After passed.
  const auto log = az.arm_log();
  std::string put_time;
  std::vector<std::string> polls;
  for (const auto& l : log) {
    if (l["method"] == "PUT" && l["operation"] == "Microsoft.Compute/virtualMachines/write") put_time = l["time"];
    else if (!put_time.empty() && l["operation"] == "Microsoft.Compute/locations/operations/read" && polls.empty())
      polls.push_back(l["time"]);
    else if (!polls.empty() && l["operation"] == "Microsoft.Compute/locations/operations/read")
      polls.push_back(l["time"]);
  }
  INFO(az.log());
  CHECK(polls.size() >= 1);
  CHECK(polls.size() <= 2);
  // ISO times of the same minute or later: compare seconds.millis.
  auto ms_of = [](const std::string& t) {
    return (std::stoi(t.substr(11, 2)) * 3600 + std::stoi(t.substr(14, 2)) * 60) * 1000 +
           static_cast<int>(std::stod(t.substr(17, 6)) * 1000);
  };
  REQUIRE(!put_time.empty());
  CHECK(ms_of(polls.front()) - ms_of(put_time) >= 1000);
}

TEST_CASE("azure: the x-ms-ratelimit-remaining-subscription-writes header of each answer lowers the client's "
          "buckets from ARM's defaults to the subscription's limit, so no write is throttled",
          "[e2e][azure]") {
  // The client's buckets are ARM's defaults, far above this subscription's 4 writes.
  Azure az({"--writes-bucket", "4:10"});
  AzureWorkspace ws(az);
  auto r = ws.run({"apply", "--auto-approve", "--parallelism", "1"}, burst_blueprint({azure_pool(4)}));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(az.requests("Microsoft.Compute/virtualMachines/write") + az.requests("Microsoft.Network/networkInterfaces/write") == 8);
  Json c = az.control("GET", "/__emulator/counters");
  INFO(c.dump(2));
  CHECK(c["events"].value("throttled", 0) == 0);
}

TEST_CASE("azure: incomplete credentials name the missing variable", "[e2e][azure]") {
  Azure az;
  AzureWorkspace none(az);
  none.env["AZURE_TENANT_ID"] = "";
  auto n = none.apply(burst_blueprint({azure_pool(1)}));
  INFO(n.out << n.err);
  CHECK(n.exit_code == 1);
  CHECK((n.out + n.err).find("Azure credentials are incomplete: set option tenant_id (AZURE_TENANT_ID)") !=
        std::string::npos);
}

TEST_CASE("azure: a client certificate (AZURE_CLIENT_CERTIFICATE_PATH) authenticates instead of a secret",
          "[e2e][azure]") {
  Azure az({"--client-certificate", "--client-secret", ""});
  AzureWorkspace ws(az);
  ws.env["AZURE_CLIENT_SECRET"] = "";
  ws.env["AZURE_CLIENT_CERTIFICATE_PATH"] = az.dir() + "/tls/client.pem";
  ws.applied(burst_blueprint({azure_pool(1)}));
  CHECK(az.vms().size() == 1);
}

namespace {

/// ISO time of a request-log line in milliseconds of the day.
long long ms_of_day(const std::string& t) {
  return (std::stoll(t.substr(11, 2)) * 3600 + std::stoll(t.substr(14, 2)) * 60) * 1000 +
         static_cast<long long>(std::stod(t.substr(17, 6)) * 1000);
}

/// First and last request time of an emulator's log (service `only` when set).
std::pair<long long, long long> span(const std::string& log, const std::string& only = "") {
  std::pair<long long, long long> out{LLONG_MAX, 0};
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("time") || (!only.empty() && j.value("service", "") != only)) continue;
    const long long t = ms_of_day(j["time"].get<std::string>());
    out.first = std::min(out.first, t);
    out.second = std::max(out.second, t);
  }
  return out;
}

}  // namespace

TEST_CASE("azure: one blueprint with bare-metal, AWS, GCP and Azure pools applies in one run, the providers in "
          "parallel, and re-plans clean",
          "[e2e][azure][gcp]") {
  // Each emulator answers after 60 ms (EC2 after 300 ms, GCP operations take 600 ms), so every
  // provider's work spans several hundred ms: run one after the other, their request spans
  // could not overlap.
  Emulator redfish(h100_emulator_args(3, {"--latency-ms", "60"}));
  Ec2Emulator ec2({"--latency-ms", "300"});
  EmulatorProcess gce(GCP_EMULATOR_BINARY, {"--operation-ms", "600", "--latency-ms", "60"});
  Azure az({"--latency-ms", "60"});
  TempDir dir, home;
  std::string bp = burst_blueprint({azure_pool(3)});
  bp.insert(bp.find("burst_pools:\n") + std::string("burst_pools:\n").size(),
            "  - name: aws\n"
            "    provider: aws\n"
            "    region: us-east-1\n"
            "    instance_type: p5.48xlarge\n"
            "    desired: 3\n"
            "    max: 8\n"
            "    spot: true\n"
            "    stack: train\n"
            "    checkpointing: {interval_minutes: 30, target: ckpt}\n"
            "    image: ami-0abcdef1234567890\n"
            "  - name: gcp\n"
            "    provider: gcp\n"
            "    region: us-central1\n"
            "    instance_type: a3-highgpu-8g\n"
            "    desired: 3\n"
            "    max: 8\n"
            "    spot: true\n"
            "    stack: train\n"
            "    checkpointing: {interval_minutes: 30, target: ckpt}\n"
            "    image: projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts\n"
            "    zones: [us-central1-a, us-central1-b]\n");
  bp += "node_pools:\n" + baremetal_pool({.count = 3,
                                           .extra = "    bios: {ProcTurboMode: Enabled, PowerProfile: MaxPerf}\n"
                                                    "    storage: [ckpt]\n",
                                           .endpoints = bmc_endpoints(redfish.base()),
                                           .ca = redfish.ca()});
  const std::string file = dir.write("bp.yaml", bp);
  auto env = azure_env(az);
  env.insert(kBmcEnv.begin(), kBmcEnv.end());
  env.merge(aws_env(ec2, home.path()));
  env.merge(gcp_env(gce));
  const std::string st = dir.path() + "/plinth.state.json";
  auto r = run_plinth({"apply", file, "--state", st, "--auto-approve", "--parallelism", "12"}, dir.path(), env);
  INFO(r.out << r.err << az.stderr_text() << ec2.stderr_text() << gce.stderr_text());
  REQUIRE(r.exit_code == 0);
  auto doc = state::parse(slurp(st), st);
  REQUIRE(doc.ok());
  std::map<std::string, int> types;
  for (const auto& res : doc->resources) ++types[res.type];
  CHECK(types["baremetal.node"] == 3);
  CHECK(types["aws.instance"] == 3);
  CHECK(types["gcp.instance"] == 3);
  CHECK(types["azure.vm"] == 3);
  CHECK(az.vms().size() == 3);
  // The providers worked at the same time: each cloud's request span overlaps
  // the bare-metal provider's (its reads and power-on waits are the longest
  // work), which one provider after another could not give. (Not
  // that all four spans share one instant: on a loaded machine a cloud can
  // finish before another one starts while bare metal still works.)
  const auto b = span(redfish.log()), a = span(ec2.log()), g = span(gce.log()), z = span(az.log(), "arm");
  INFO("redfish " << b.first << "-" << b.second << ", ec2 " << a.first << "-" << a.second << ", gce " << g.first
                  << "-" << g.second << ", arm " << z.first << "-" << z.second);
  for (const auto& cloud : {a, g, z}) CHECK((cloud.first < b.second && b.first < cloud.second));
  auto again = run_plinth({"plan", file, "--state", st, "--detailed-exitcode"}, dir.path(), env);
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
}

}  // namespace plinth::test::e2e_azure
