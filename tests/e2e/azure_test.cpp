// plinth apply / plan / refresh of Azure burst pools against azure-emulator
// (docs/providers/azure.md): Spot ND-series pools with their NICs,
// create-before-destroy replaces, size/zone fallback, eviction, lost
// answers, LROs honouring Retry-After, 429 throttling, refresh in O(pages),
// Entra client credentials (secret and certificate), secrets.
#include <catch2/catch.hpp>
#include <climits>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "engine/state/state.h"
#include "tests/providers/baremetal/emulator.h"
#include "tests/support/blueprints.h"
#include "tests/support/clouds.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"
#include "tests/support/text.h"
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

std::string decode_base64(const std::string& in) {
  static const std::string chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -8;
  for (char c : in) {
    auto p = chars.find(c);
    if (p == std::string::npos) break;
    val = (val << 6) + static_cast<int>(p);
    bits += 6;
    if (bits >= 0) {
      out += static_cast<char>((val >> bits) & 0xFF);
      bits -= 8;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("azure: a Spot pool of 8 Standard_ND96isr_H100_v5 with NICs, re-plan clean, a stack change replaces "
          "create-before-destroy, 8 -> 3 deletes 5 with their NICs",
          "[e2e][azure]") {
  Azure az;
  AzureWorkspace ws(az);
  BurstPool pool = azure_pool(8, "    zones: [\"1\", \"2\"]\n    os_disk: {size_gb: 512, encryption_at_host: true}\n");
  auto r = ws.applied(burst_blueprint({pool}));
  Json vms = az.vms();
  REQUIRE(vms.size() == 8);
  CHECK(count_by(vms, "size") == std::map<std::string, int>{{kH100, 8}});
  CHECK(count_by(vms, "priority") == std::map<std::string, int>{{"Spot", 8}});
  CHECK(count_by(vms, "zone") == std::map<std::string, int>{{"1", 4}, {"2", 4}});
  CHECK(count_by(vms, "powerState") == std::map<std::string, int>{{"running", 8}});
  for (const auto& vm : vms) {
    const Json& p = vm["model"]["properties"];
    CHECK(p["evictionPolicy"] == "Deallocate");
    CHECK(p["billingProfile"]["maxPrice"] == -1);
    CHECK(p["securityProfile"]["encryptionAtHost"] == true);
    CHECK(p["storageProfile"]["osDisk"]["diskSizeGB"] == 512);
    CHECK(decode_base64(p["osProfile"]["customData"]).rfind("#cloud-config", 0) == 0);
    CHECK(vm["model"]["tags"]["plinth:lineage"] == ws.doc().lineage);
  }
  Json nics = az.nics();
  REQUIRE(nics.size() == 8);
  for (const auto& n : nics) {
    CHECK(n["properties"]["enableAcceleratedNetworking"] == true);
    CHECK(!n["attachedTo"].is_null());
  }
  CHECK(ws.in_state("azure.vm") == 8);
  // One Entra token for the whole run, shared by its parallel creates.
  CHECK(count_of(az.log(), "\"path\":\"/" + kAzureTenant + "/oauth2/v2.0/token\"") == 1);
  CHECK(r.out.find("4 x azure.vm.gpu: instance_type Standard_ND96isr_H100_v5, zone 1") != std::string::npos);

  auto again = ws.plan(burst_blueprint({pool}));
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("No changes.") != std::string::npos);

  // A new driver pin is a new user-data hash: replace, create before destroy.
  auto p = ws.plan(burst_blueprint({pool}, "550.90.07"));
  INFO(p.out << p.err);
  CHECK(p.exit_code == 2);
  CHECK(count_of(p.out, "(replace, create before destroy, forced by: user_data_hash)") == 8);
  std::set<std::string> old_ids;
  for (const auto& vm : vms) old_ids.insert(vm["model"]["properties"]["vmId"].get<std::string>());
  ws.applied(burst_blueprint({pool}, "550.90.07"));
  Json now = az.vms();
  REQUIRE(now.size() == 8);
  for (const auto& vm : now) CHECK(old_ids.count(vm["model"]["properties"]["vmId"].get<std::string>()) == 0);
  CHECK(az.nics().size() == 8);
  CHECK(ws.doc().deposed.empty());
  // Create before destroy, per VM: an old VM is deleted only after its
  // replacement exists, so the pool never has fewer than 8 VMs. (Another
  // VM's delete may come before the last PUT: the replaces run in parallel.)
  int running = 0, fewest = 8;  // the log starts with the first apply's 8 PUTs
  const auto log = az.arm_log();
  bool replacing = false;
  for (const auto& l : log) {
    if (l["method"] == "DELETE" && l["operation"] == "Microsoft.Compute/virtualMachines/delete") {
      replacing = true;
      fewest = std::min(fewest, --running);
    }
    if (l["method"] == "PUT" && l["operation"] == "Microsoft.Compute/virtualMachines/write" && l["status"] == 201)
      ++running;
  }
  CHECK(replacing);
  CHECK(fewest >= 8);
  CHECK(running == 8);
  CHECK(ws.plan(burst_blueprint({pool}, "550.90.07")).exit_code == 0);

  // 8 -> 3 deletes 5 (the highest indexes) and their NICs.
  BurstPool three = pool;
  three.desired = 3;
  auto down = ws.applied(burst_blueprint({three}, "550.90.07"));
  CHECK(down.out.find("0 to create, 0 to update, 0 to replace, 5 to destroy") != std::string::npos);
  CHECK(az.vms().size() == 3);
  CHECK(az.nics().size() == 3);
  CHECK(ws.in_state("azure.vm") == 3);
}

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
  CHECK(r.out.find("Placement:") != std::string::npos);
  for (const auto& vm : vms) {
    const std::string address = vm["model"]["tags"]["plinth:address"];
    INFO(address);
    CHECK(r.out.find("  " + address + ": instance_type " + vm["size"].get<std::string>() + ", zone " +
                     vm["zone"].get<std::string>() + "\n") != std::string::npos);
  }
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

TEST_CASE("azure: an evicted Spot VM shows as evicted by Azure, not as drift, and is restored", "[e2e][azure]") {
  Azure az;
  AzureWorkspace ws(az);
  BurstPool keep = azure_pool(2);
  BurstPool drop = azure_pool(2, "    eviction_policy: Delete\n");
  drop.name = "drop";
  ws.applied(burst_blueprint({keep, drop}));
  const auto doc = ws.doc();
  const std::string kept = doc.find("azure.vm.gpu[1]")->computed["id"];
  const std::string dropped = doc.find("azure.vm.drop[0]")->computed["id"];
  CHECK(az.control("POST", "/__emulator/evict", {{"id", kept}})["powerState"] == "deallocated");
  CHECK(az.control("POST", "/__emulator/evict", {{"id", dropped}})["deleted"] == true);
  auto p = ws.plan(burst_blueprint({keep, drop}));
  INFO(p.out << p.err);
  CHECK(p.exit_code == 2);
  CHECK(p.err.find("Gone: 2 resource(s) removed by their provider, not by a person:") != std::string::npos);
  CHECK(p.err.find("  - azure.vm.gpu[1]: evicted by Azure (Spot VM deallocated, evictionPolicy Deallocate) (the next "
                   "apply creates it again)") != std::string::npos);
  CHECK(p.err.find("  - azure.vm.drop[0]: evicted by Azure or deleted outside Plinth (Spot VM with evictionPolicy "
                   "Delete)") != std::string::npos);
  CHECK(p.err.find("Drift:") == std::string::npos);
  CHECK(p.out.find("+ azure.vm.gpu[1] (create)") != std::string::npos);
  ws.applied(burst_blueprint({keep, drop}));
  Json vms = az.vms();
  REQUIRE(vms.size() == 4);
  CHECK(count_by(vms, "powerState") == std::map<std::string, int>{{"running", 4}});
  // The deallocated VM was started again (same VM), the deleted one made anew.
  CHECK(ws.doc().find("azure.vm.gpu[1]")->computed["id"] == kept);
  CHECK(az.requests("Microsoft.Compute/virtualMachines/start/action") == 1);
  CHECK(ws.plan(burst_blueprint({keep, drop})).exit_code == 0);
}

TEST_CASE("azure: answers lost after ARM carried out the PUT make no duplicate VM or NIC", "[e2e][azure]") {
  Azure az;
  AzureWorkspace ws(az);
  az.control("POST", "/__emulator/faults", {{"loseNextResponses", 4}, {"methods", {"PUT"}}});
  auto r = ws.applied(burst_blueprint({azure_pool(5)}));
  CHECK(az.control("GET", "/__emulator/counters")["faults"].value("lose", 0) == 4);
  Json vms = az.vms();
  CHECK(vms.size() == 5);
  std::set<std::string> addresses;
  for (const auto& vm : vms) addresses.insert(vm["model"]["tags"]["plinth:address"].get<std::string>());
  CHECK(addresses.size() == 5);
  CHECK(az.nics().size() == 5);
  CHECK(ws.plan(burst_blueprint({azure_pool(5)})).exit_code == 0);
}

TEST_CASE("azure: a VM whose answer was lost and whose run crashed is adopted by refresh, never duplicated",
          "[e2e][azure]") {
  Azure az;
  AzureWorkspace ws(az);
  BurstPool pool = azure_pool(3);
  ws.applied(burst_blueprint({pool}));
  auto doc = ws.doc();
  std::erase_if(doc.resources, [](const Resource& r) { return r.address == "azure.vm.gpu[1]"; });
  doc.serial += 1;
  REQUIRE(state::open_local(ws.state())->save(doc).ok());
  auto r = ws.run({"refresh"}, burst_blueprint({pool}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("Adopted: 1 object(s)") != std::string::npos);
  CHECK(ws.doc().find("azure.vm.gpu[1]") != nullptr);
  CHECK(ws.plan(burst_blueprint({pool})).exit_code == 0);
  CHECK(az.vms().size() == 3);
}

TEST_CASE("azure: an unrecorded VM at an address the state holds with another (a replace killed before its journal "
          "write, then the blueprint changed) is deposed and deleted, never left running",
          "[e2e][azure]") {
  Azure az;
  AzureWorkspace ws(az);
  BurstPool pool = azure_pool(3);
  ws.applied(burst_blueprint({pool}));
  // What the killed run made for gpu[1]: a NIC and a VM with this state's
  // lineage and the address, from attributes the blueprint no longer has.
  net::Client http(net::ClientOptions{az.ca()});
  auto send = [&](const std::string& method, const std::string& url, const std::string& body,
                  const net::Headers& headers) {
    net::Request r;
    r.method = method;
    r.url = url;
    r.body = body;
    r.headers = headers;
    auto res = http.send(r);
    REQUIRE(res.ok());
    INFO(method << " " << url << ": " << res->body);
    REQUIRE(res->status < 300);
    return Json::parse(res->body);
  };
  const std::string token =
      send("POST", az.base() + "/" + kAzureTenant + "/oauth2/v2.0/token",
           "grant_type=client_credentials&client_id=" + kAzureClient + "&client_secret=" + kAzureClientSecret +
               "&scope=https%3A%2F%2Fmanagement.azure.com%2F.default",
           {{"Content-Type", "application/x-www-form-urlencoded"}})["access_token"];
  const net::Headers auth = {{"Authorization", "Bearer " + token},
                                                   {"Content-Type", "application/json"}};
  const Json nics = az.nics();
  REQUIRE(!nics.empty());
  const std::string subnet = nics.front()["properties"]["ipConfigurations"][0]["properties"]["subnet"]["id"];
  const std::string group = az.base() + "/subscriptions/" + kAzureSubscription + "/resourceGroups/rg-burst/providers/";
  const Json nic = send("PUT", group + "Microsoft.Network/networkInterfaces/gpu-1-stray-nic?api-version=2024-05-01",
                        Json{{"location", "eastus"},
                             {"properties",
                              {{"ipConfigurations",
                                {{{"name", "ipconfig1"}, {"properties", {{"subnet", {{"id", subnet}}}}}}}}}}}
                            .dump(),
                        auth);
  const Json tags = {{"plinth:lineage", ws.doc().lineage},
                     {"plinth:address", "azure.vm.gpu[1]"},
                     {"plinth:attributes", "0123456789abcdef"}};
  send("PUT", group + "Microsoft.Compute/virtualMachines/gpu-1-stray?api-version=2024-07-01",
       Json{{"location", "eastus"},
            {"tags", tags},
            {"properties",
             {{"hardwareProfile", {{"vmSize", kH100}}},
              {"osProfile", {{"adminUsername", "plinth"}}},
              {"networkProfile",
               {{"networkInterfaces", {{{"id", nic["id"]}, {"properties", {{"deleteOption", "Delete"}}}}}}}}}}}
           .dump(),
       auth);
  // The PUT's operation ends at the next request.
  send("GET", group + "Microsoft.Compute/virtualMachines/gpu-1-stray?api-version=2024-07-01", "", auth);
  REQUIRE(az.vms().size() == 4);

  auto p = ws.plan(burst_blueprint({pool}));
  INFO(p.out << p.err);
  CHECK(p.exit_code == 2);
  CHECK(p.err.find("Superseded: 1 object(s) made for this state at an address it records with another object; "
                   "recorded as deposed, the next apply removes them:\n  - azure.vm.gpu[1] (") != std::string::npos);
  CHECK(p.out.find("- azure.vm.gpu[1] (deposed)") != std::string::npos);
  CHECK(p.out.find("0 to create, 0 to update, 0 to replace, 1 to destroy") != std::string::npos);
  ws.applied(burst_blueprint({pool}));
  const Json vms = az.vms();
  CHECK(vms.size() == 3);
  for (const auto& vm : vms) CHECK(vm.dump().find("gpu-1-stray") == std::string::npos);
  CHECK(az.nics().size() == 3);
  CHECK(ws.doc().deposed.empty());
  CHECK(ws.in_state("azure.vm") == 3);
  CHECK(ws.plan(burst_blueprint({pool})).exit_code == 0);
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

TEST_CASE("azure: 429 SubscriptionRequestsThrottled is retried after Retry-After, and the client-side bucket keeps "
          "an apply under ARM's write limit",
          "[e2e][azure]") {
  {
    Azure az;
    AzureWorkspace ws(az);
    az.control("POST", "/__emulator/faults", {{"throttleNext", 4}});
    auto r = ws.applied(burst_blueprint({azure_pool(3)}));
    CHECK(count_of(r.out, "SubscriptionRequestsThrottled") == 4);
    CHECK(count_of(r.out, " failed, retrying in ") == 4);  // every 429 retried, nothing else failed
    CHECK(az.vms().size() == 3);
  }
  {
    // ARM allows 3 writes, then one every 200 ms; the client sends no faster.
    Azure az({"--writes-bucket", "3:5"});
    AzureWorkspace ws(az);
    ws.env["PLINTH_AZURE_REQUEST_RATES"] = "writes=3:5";
    auto r = ws.applied(burst_blueprint({azure_pool(3)}));
    CHECK(r.out.find("SubscriptionRequestsThrottled") == std::string::npos);
    Json c = az.control("GET", "/__emulator/counters");
    INFO(c.dump(2));
    CHECK(c["events"].value("throttled", 0) == 0);
    CHECK(az.vms().size() == 3);
  }
  {
    // The client's buckets are ARM's defaults, far above this subscription's 4 writes; the
    // x-ms-ratelimit-remaining-subscription-writes header of each answer lowers them.
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
}

TEST_CASE("azure: refresh of 30 VMs takes O(pages) list requests and no request per VM", "[e2e][azure]") {
  Azure az({"--page-size", "7"});
  AzureWorkspace ws(az);
  BurstPool pool = azure_pool(30);
  ws.applied(burst_blueprint({pool}));
  const size_t before = az.arm_log().size();
  auto r = ws.run({"refresh"}, burst_blueprint({pool}));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("No drift") != std::string::npos);
  std::map<std::string, int> ops;
  const auto log = az.arm_log();
  for (size_t i = before; i < log.size(); ++i)
    ++ops[log[i].value("method", "") + " " + log[i].value("operation", "")];
  // ceil(30 / 7) = 5 pages to read them, 5 more to look for VMs the state lacks.
  CHECK(ops == std::map<std::string, int>{{"GET Microsoft.Compute/virtualMachines/read", 10}});
}

TEST_CASE("azure: a wrong secret gives Entra's error and touches nothing, a missing variable is named",
          "[e2e][azure]") {
  Azure az;
  AzureWorkspace ws(az);
  ws.env["AZURE_CLIENT_SECRET"] = "not-the-secret";
  auto r = ws.apply(burst_blueprint({azure_pool(2)}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("azure.vm.gpu[0]: Microsoft Entra refused the token request: invalid_client: AADSTS7000215: Invalid "
                   "client secret provided.") != std::string::npos);
  CHECK(az.arm_log().empty());  // not one Resource Manager request
  CHECK(az.vms().empty());

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

TEST_CASE("azure: secrets never reach the plan file, the state or the output", "[e2e][azure]") {
  Azure az;
  AzureWorkspace ws(az);
  BurstPool pool = azure_pool(2);
  std::string seen;
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
  CHECK(seen.find(kAzureClientSecret) == std::string::npos);
  // No token answer (its "access_token": key); the name alone is an option of
  // the gcp provider that `plinth providers --json` lists.
  CHECK(seen.find("\"access_token\":") == std::string::npos);
  CHECK(seen.find("eyJhbGci") == std::string::npos);  // no bearer token (a JWT) either
  CHECK(seen.find("eyJ0eXAi") == std::string::npos);
  CHECK(az.vms().size() == 2);
}

TEST_CASE("azure: the example cluster blueprint's Azure burst pool applies against the emulator", "[e2e][azure]") {
  Azure az;
  TempDir dir;
  const std::string bp = dir.write("cluster.yaml", slurp(source_dir() + "/blueprints/examples/cluster.yaml"));
  const std::string st = dir.path() + "/plinth.state.json";
  auto r = run_plinth({"apply", bp, "--state", st, "--auto-approve", "-target", "azure.vm.azure-nd"}, dir.path(),
                      azure_env(az));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  Json vms = az.vms();
  REQUIRE(vms.size() == 1);
  CHECK(vms[0]["size"] == kH100);
  CHECK(vms[0]["priority"] == "Spot");
  CHECK(vms[0]["resourceGroup"] == "rg-ml-burst");
  // The resource group and Plinth's VNet were made on first use.
  Json state = az.control("GET", "/__emulator/state");
  CHECK(state["virtualNetworks"].size() == 1);
  CHECK(state["virtualNetworks"][0]["name"] == "plinth-eastus");
  auto again = run_plinth({"plan", bp, "--state", st, "-target", "azure.vm.azure-nd", "--detailed-exitcode"},
                          dir.path(), azure_env(az));
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
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
            "    image: projects/debian-cloud/global/images/family/debian-12\n"
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

TEST_CASE("azure: burst pool settings are checked with file:line:column and did you mean", "[e2e][azure]") {
  TempDir dir;
  const std::string bp =
      dir.write("bp.yaml", burst_blueprint({azure_pool(1, "    eviction_polcy: Delete\n    os_disk: {size_gb: big}\n")}));
  auto r = run_plinth({"validate", bp}, dir.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(bp + ":29:5: error[BP002]: unknown key 'eviction_polcy' in burst pool 'gpu'") != std::string::npos);
  CHECK(r.err.find("did you mean 'eviction_policy'?") != std::string::npos);
  CHECK(r.err.find(bp + ":30:24:") != std::string::npos);
}

TEST_CASE("azure: changing only where new VMs may go updates the pool in place (tags), no VM is made",
          "[e2e][azure]") {
  Azure az;
  AzureWorkspace ws(az);
  ws.applied(burst_blueprint({azure_pool(2, "    zones: [\"1\"]\n")}));
  const BurstPool wider = azure_pool(2, "    zones: [\"1\", \"2\"]\n    instance_types: [" + kH200 + "]\n");
  auto p = ws.plan(burst_blueprint({wider}));
  INFO(p.out << p.err);
  CHECK(p.out.find("~ azure.vm.gpu[0] (update in place)") != std::string::npos);
  CHECK(p.out.find("0 to create, 2 to update, 0 to replace, 0 to destroy") != std::string::npos);
  const int puts = az.requests("Microsoft.Compute/virtualMachines/write", "PUT");
  ws.applied(burst_blueprint({wider}));
  CHECK(az.requests("Microsoft.Compute/virtualMachines/write", "PATCH") == 2);
  CHECK(az.requests("Microsoft.Compute/virtualMachines/write", "PUT") == puts);
  Json vms = az.vms();
  REQUIRE(vms.size() == 2);
  for (const auto& vm : vms) CHECK(vm["zone"] == "1");
  CHECK(ws.plan(burst_blueprint({wider})).exit_code == 0);
}

}  // namespace plinth::test::e2e_azure
