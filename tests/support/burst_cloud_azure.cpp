// AzureCloud: the burst-pool contract's hooks for azure-emulator, with a
// client secret. Its lists answer 7 VMs a page, so every case pages.
#include <catch2/catch.hpp>

#include "tests/support/burst_cloud.h"

namespace plinth::test {

namespace {

const std::string kH100 = "Standard_ND96isr_H100_v5";
const std::string kH200 = "Standard_ND96isr_H200_v5";
const std::string kVmWrite = "Microsoft.Compute/virtualMachines/write";

/// The ARM requests of the contract's calls: METHOD OPERATION.
std::string request_of(Call c) {
  switch (c) {
    case Call::list:
      return "GET Microsoft.Compute/virtualMachines/read";
    case Call::create:
      return "PUT " + kVmWrite;
    case Call::update:
      return "PATCH " + kVmWrite;
    case Call::remove:
      return "DELETE Microsoft.Compute/virtualMachines/delete";
  }
  return "";
}

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

AzureCloud::AzureCloud() = default;
AzureCloud::~AzureCloud() = default;

std::vector<std::string> AzureCloud::zones() const { return {"1", "2"}; }

std::vector<std::string> AzureCloud::instance_types() const { return {kH100, kH200}; }

BurstPool AzureCloud::pool(const PoolShape& shape) const {
  std::string extra;
  if (shape.zones == 1) extra += "    zones: [\"1\"]\n";
  if (shape.zones == 2) extra += "    zones: [\"1\", \"2\"]\n";
  if (shape.fallback) extra += "    instance_types: [" + kH200 + "]\n";  // the sizes after the pool's own
  if (shape.own_settings) extra += "    os_disk: {size_gb: 512, encryption_at_host: true}\n";
  BurstPool p = azure_pool(shape.desired, extra + shape.extra);
  p.spot = shape.spot;
  return p;
}

Misspelling AzureCloud::misspelling() const {
  return {"    eviction_polcy: Delete\n    os_disk: {size_gb: big}\n", "eviction_polcy", "eviction_policy", "big"};
}

void AzureCloud::start(const CloudSetup& setup) {
  std::vector<std::string> flags = {"--page-size", "7"};
  if (setup.operation_ms > 0) flags.insert(flags.end(), {"--lro-delay-ms", std::to_string(setup.operation_ms)});
  // ARM allows 3 writes, then one every 200 ms.
  if (setup.rate_limited) flags.insert(flags.end(), {"--writes-bucket", "3:5"});
  az_ = std::make_unique<AzureEmulator>(flags);
  env_ = azure_env(*az_);
  if (setup.rate_limited) env_["PLINTH_AZURE_REQUEST_RATES"] = "writes=3:5";  // the client sends no faster
  if (setup.throttled) az_->control("POST", "/__emulator/faults", {{"throttleNext", 4}});
}

AzureEmulator& AzureCloud::az() {
  REQUIRE(az_);
  return *az_;
}

CloudEmulator& AzureCloud::emulator() { return az(); }

std::map<std::string, std::string> AzureCloud::env() {
  REQUIRE(az_);
  return env_;
}

std::vector<CloudInstance> AzureCloud::instances() {
  std::vector<CloudInstance> out;
  for (const auto& vm : az().vms()) {
    const Json tags = vm["model"].value("tags", Json::object());
    const Json& p = vm["model"]["properties"];
    out.push_back({.id = vm["id"],
                   .uid = p["vmId"],
                   .address = tags.value("plinth:address", ""),
                   .lineage = tags.value("plinth:lineage", ""),
                   .type = vm["size"],
                   .zone = vm["zone"].is_string() ? vm["zone"].get<std::string>() : "",
                   .spot = vm["priority"] == "Spot",
                   .active = vm["powerState"] != "deallocated" && vm["powerState"] != "stopped",
                   .user_data = decode_base64(p.value("osProfile", Json::object()).value("customData", "")),
                   .raw = vm});
  }
  return out;
}

void AzureCloud::check_companions() {
  // One NIC per VM, attached, and no VM whose creation failed left behind.
  const Json vms = az().vms(), nics = az().nics();
  CHECK(nics.size() == vms.size());
  for (const auto& n : nics) CHECK(!n["attachedTo"].is_null());
  for (const auto& vm : vms) CHECK(vm["provisioningState"] == "Succeeded");
}

void AzureCloud::check_pool(const std::vector<CloudInstance>& active, const Workspace&, const RunResult&) {
  for (const auto& i : active) {
    const Json& p = i.raw["model"]["properties"];
    CHECK(p["evictionPolicy"] == "Deallocate");
    CHECK(p["billingProfile"]["maxPrice"] == -1);
    CHECK(p["securityProfile"]["encryptionAtHost"] == true);
    CHECK(p["storageProfile"]["osDisk"]["diskSizeGB"] == 512);
    CHECK(i.raw["powerState"] == "running");
  }
  for (const auto& n : az().nics()) CHECK(n["properties"]["enableAcceleratedNetworking"] == true);
}

std::string AzureCloud::call(Call c) const { return request_of(c); }

std::string AzureCloud::call_of(const Json& line) const {
  const std::string service = line.value("service", "");
  if (service == "arm") return line.value("method", "") + " " + line.value("operation", "");
  if (service == "entra") return line.value("operation", "");
  return "";
}

int AzureCloud::launched(const Json& line) const {
  const std::string c = call_of(line);
  if (c == request_of(Call::create) && line["status"] == 201) return 1;
  if (c == request_of(Call::remove) && line["status"].is_number() && line["status"].get<int>() < 300) return -1;
  return 0;
}

std::string AzureCloud::token_call() const { return "Entra/oauth2/v2.0/token"; }

int AzureCloud::throttled() {
  // Answers throttled on request (faults) and by the subscription's buckets (events).
  Json c = az().control("GET", "/__emulator/counters");
  return c["faults"].value("429", 0) + c["events"].value("throttled", 0);
}

int AzureCloud::throttled(Call c) {
  int n = 0;
  for (const auto& l : az().arm_log()) n += call_of(l) == request_of(c) && l["status"] == 429 ? 1 : 0;
  return n;
}

int AzureCloud::lost() { return az().control("GET", "/__emulator/counters")["faults"].value("lose", 0); }

void AzureCloud::capacity(const std::string& type, const std::string& zone, Json limit) {
  for (const std::string z : {"1", "2", "3"})
    if (zone.empty() || zone == z)
      az().control("POST", "/__emulator/capacity", {{"location", "eastus"}, {"zone", z}, {"size", type}, {"count", limit}});
}

void AzureCloud::lose_answers(Call c, int n) {
  const std::string method = request_of(c).substr(0, request_of(c).find(' '));
  az().control("POST", "/__emulator/faults", {{"loseNextResponses", n}, {"methods", {method}}});
}

std::string AzureCloud::reclaim_setting(const std::string& kind) const { return "    eviction_policy: " + kind + "\n"; }

Reclaimed AzureCloud::reclaim(const Resource& victim, const std::string& kind) {
  Json e = az().control("POST", "/__emulator/evict", {{"id", victim.computed["id"]}});
  if (kind == "Delete") {
    CHECK(e["deleted"] == true);
    return {{"evicted by Azure or deleted outside Plinth (Spot VM with evictionPolicy Delete)"}, ""};
  }
  CHECK(e["powerState"] == "deallocated");
  // The deallocated VM is started again: the same VM.
  return {{"evicted by Azure (Spot VM deallocated, evictionPolicy Deallocate) (the next apply creates it again)"},
          "POST Microsoft.Compute/virtualMachines/start/action"};
}

Refusal AzureCloud::spoil_credentials(Workspace& ws) {
  ws.env["AZURE_CLIENT_SECRET"] = "not-the-secret";
  // One token request an instance: Entra's refusal is not remembered (GCP's is).
  return {"Microsoft Entra refused the token request: invalid_client: AADSTS7000215: Invalid client secret provided.",
          false, 2};
}

std::vector<std::string> AzureCloud::secrets() {
  // No token answer (its "access_token": key; the name alone is an option of the gcp provider that
  // `plinth providers --json` lists) and no bearer token (a JWT).
  return {kAzureClientSecret, "\"access_token\":", "eyJhbGci", "eyJ0eXAi"};
}

Population AzureCloud::populate(Workspace& ws) {
  ws.applied(burst_blueprint({pool({.desired = 30})}));
  return {30, 7};
}

std::string AzureCloud::make_stray(Workspace& ws, const std::string& address) {
  // What a killed run made for `address`: a NIC and a VM with the lineage and the address, from attributes the
  // blueprint no longer has.
  const std::string token = az().control("POST", "/__emulator/token")["access_token"];
  auto send = [&](const std::string& method, const std::string& url, const Json& body) {
    net::Request r;
    r.method = method;
    r.url = url;
    r.body = body.is_null() ? "" : body.dump();
    r.headers = {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}};
    auto res = az().http().send(r);
    REQUIRE(res.ok());
    INFO(method << " " << url << ": " << res->body);
    REQUIRE(res->status < 300);
    return Json::parse(res->body);
  };
  const Json nics = az().nics();
  REQUIRE(!nics.empty());
  const std::string subnet = nics.front()["properties"]["ipConfigurations"][0]["properties"]["subnet"]["id"];
  const std::string group = az().base() + "/subscriptions/" + kAzureSubscription + "/resourceGroups/rg-burst/providers/";
  const Json nic = send("PUT", group + "Microsoft.Network/networkInterfaces/gpu-1-stray-nic?api-version=2024-05-01",
                        {{"location", "eastus"},
                         {"properties",
                          {{"ipConfigurations", {{{"name", "ipconfig1"}, {"properties", {{"subnet", {{"id", subnet}}}}}}}}}}});
  const Json tags = {
      {"plinth:lineage", ws.doc().lineage}, {"plinth:address", address}, {"plinth:attributes", "0123456789abcdef"}};
  const Json vm =
      send("PUT", group + "Microsoft.Compute/virtualMachines/gpu-1-stray?api-version=2024-07-01",
           {{"location", "eastus"},
            {"tags", tags},
            {"properties",
             {{"hardwareProfile", {{"vmSize", kH100}}},
              {"osProfile", {{"adminUsername", "plinth"}}},
              {"networkProfile",
               {{"networkInterfaces", {{{"id", nic["id"]}, {"properties", {{"deleteOption", "Delete"}}}}}}}}}}});
  // The PUT's operation ends at the next request.
  send("GET", group + "Microsoft.Compute/virtualMachines/gpu-1-stray?api-version=2024-07-01", nullptr);
  return vm["id"];
}

ExampleBlueprint AzureCloud::example() {
  return {"blueprints/examples/cluster.yaml",
          {"-target", "azure.vm.azure-nd"},
          1,
          {},
          [this](const std::vector<CloudInstance>& active) {
            for (const auto& i : active) {
              CHECK(i.type == kH100);
              CHECK(i.raw["resourceGroup"] == "rg-ml-burst");
            }
            // The resource group and Plinth's VNet were made on first use.
            Json state = az().control("GET", "/__emulator/state");
            CHECK(state["virtualNetworks"].size() == 1);
            CHECK(state["virtualNetworks"][0]["name"] == "plinth-eastus");
          }};
}

std::string AzureCloud::no_capacity(const std::string& type, const std::string& zone) const {
  return "no capacity for " + type + " in eastus zone " + zone + ": ZonalAllocationFailed: Allocation failed. We do " +
         "not have sufficient capacity for the requested VM size in this zone. Read more about improving likelihood " +
         "of allocation success at http://aka.ms/allocation-guidance";
}

std::string AzureCloud::fallback_hint() const {
  return "List fallbacks in the pool (instance_types or zones) to let Plinth try elsewhere";
}

}  // namespace plinth::test
