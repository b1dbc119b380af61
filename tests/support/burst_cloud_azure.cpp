// AzureCloud: the burst-pool contract's hooks for azure-emulator, with a
// client secret. Its lists answer 7 VMs a page, so every case pages.
#include <catch2/catch.hpp>

#include "tests/support/burst_cloud.h"

namespace plinth::test {

// File-local, in a namespace of its own (plinth_test_support is built in unity batches).
namespace burst_cloud_azure {

const std::string kH100 = "Standard_ND96isr_H100_v5";
const std::string kH200 = "Standard_ND96isr_H200_v5";
const std::string kVmWrite = "Microsoft.Compute/virtualMachines/write";

// What the keyless credential sources hold (credential_kinds): each must stay out of everything Plinth writes.
const std::string kSubject = "repo:example/fleet:environment:conformance";
const std::string kIdentityHeader = "Y29uZm9ybWFuY2UtaWRlbnRpdHktaGVhZGVy";

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

class Azure final : public CloudUnderTest {
 public:
  std::string provider() const override { return "azure"; }
  std::string resource_type() const override { return "azure.vm"; }

  std::vector<std::string> zones() const override { return {"1", "2"}; }

  std::vector<std::string> instance_types() const override { return {kH100, kH200}; }

  BurstPool pool(const PoolShape& shape) const override {
    std::string extra;
    if (shape.zones == 1) extra += "    zones: [\"1\"]\n";
    if (shape.zones == 2) extra += "    zones: [\"1\", \"2\"]\n";
    if (shape.fallback) extra += "    instance_types: [" + kH200 + "]\n";  // the sizes after the pool's own
    if (shape.own_settings) extra += "    os_disk: {size_gb: 512, encryption_at_host: true}\n";
    BurstPool p = azure_pool(shape.desired, extra + shape.extra);
    p.spot = shape.spot;
    return p;
  }

  Misspelling misspelling() const override {
    return {"    eviction_polcy: Delete\n    os_disk: {size_gb: big}\n", "eviction_polcy", "eviction_policy", "big"};
  }

  void start(const CloudSetup& setup) override {
    std::vector<std::string> flags = {"--page-size", "7"};
    if (setup.operation_ms > 0) flags.insert(flags.end(), {"--lro-delay-ms", std::to_string(setup.operation_ms)});
    // ARM allows 3 writes, then one every 200 ms.
    if (setup.rate_limited) flags.insert(flags.end(), {"--writes-bucket", "3:5"});
    if (setup.temporary_credentials)
      flags.insert(flags.end(), {"--federated-credential", kGithubIssuer + "," + kSubject, "--metadata-port", "0",
                                 "--identity-header", kIdentityHeader});
    az_ = std::make_unique<AzureEmulator>(flags);
    env_ = azure_env(*az_);
    if (setup.rate_limited) env_["PLINTH_AZURE_REQUEST_RATES"] = "writes=3:5";  // the client sends no faster
    if (setup.throttled) az_->control("POST", "/__emulator/faults", {{"throttleNext", 4}});
  }

  CloudEmulator& emulator() override { return az(); }

  std::map<std::string, std::string> env() override {
    REQUIRE(az_);
    return env_;
  }

  std::string parallelism() const override { return "8"; }

  std::vector<CloudInstance> instances() override {
    std::vector<CloudInstance> out;
    for (const auto& vm : az().vms()) {
      const Json tags = vm["model"].value("tags", Json::object());
      const Json& p = vm["model"]["properties"];
      out.push_back({.id = vm["id"],
                     .uid = p["vmId"],
                     .name = vm["name"],
                     .address = tags.value("plinth:address", ""),
                     .lineage = tags.value("plinth:lineage", ""),
                     .type = vm["size"],
                     .zone = vm["zone"].is_string() ? vm["zone"].get<std::string>() : "",
                     .spot = vm["priority"] == "Spot",
                     .active = vm["powerState"] == "running",
                     .user_data = decode_base64(p.value("osProfile", Json::object()).value("customData", "")),
                     .raw = vm});
    }
    return out;
  }

  bool keeps_removed() const override { return false; }

  void check_companions() override {
    // One NIC per VM, attached, and no VM whose creation failed left behind.
    const Json vms = az().vms(), nics = az().nics();
    CHECK(nics.size() == vms.size());
    for (const auto& n : nics) CHECK(!n["attachedTo"].is_null());
    for (const auto& vm : vms) CHECK(vm["provisioningState"] == "Succeeded");
  }

  void check_pool(const std::vector<CloudInstance>& active, const Workspace&, const RunResult&) override {
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

  std::vector<std::string> calls() const override {
    return {"GET Microsoft.Compute/virtualMachines/read", "PUT " + kVmWrite, "PATCH " + kVmWrite,
            "DELETE Microsoft.Compute/virtualMachines/delete"};
  }

  std::string call_of(const Json& line) const override {
    const std::string service = line.value("service", "");
    if (service == "arm") return line.value("method", "") + " " + line.value("operation", "");
    if (service == "entra") return line.value("operation", "");
    return "";
  }

  int launched(const Json& line) const override {
    const std::string c = call_of(line);
    if (c == call(Call::create) && line["status"] == 201) return 1;
    if (c == call(Call::remove) && line["status"].is_number() && line["status"].get<int>() < 300) return -1;
    return 0;
  }

  int tokens_per_run() const override { return 1; }  // one Entra token, shared by the run's calls

  std::string token_call() const override { return "Entra/oauth2/v2.0/token"; }

  int throttled() override {
    // Answers throttled on request (faults) and by the subscription's buckets (events).
    Json c = az().control("GET", "/__emulator/counters");
    return c["faults"].value("429", 0) + c["events"].value("throttled", 0);
  }

  int throttled(Call c) override {
    int n = 0;
    for (const auto& l : az().arm_log()) n += call_of(l) == call(c) && l["status"] == 429 ? 1 : 0;
    return n;
  }

  int lost() override { return az().control("GET", "/__emulator/counters")["faults"].value("lose", 0); }

  std::vector<Call> throttled_calls() const override { return {}; }

  void capacity(const std::string& type, const std::string& zone, Json limit) override {
    for (const std::string z : {"1", "2", "3"})
      if (zone.empty() || zone == z)
        az().control("POST", "/__emulator/capacity", {{"location", "eastus"}, {"zone", z}, {"size", type}, {"count", limit}});
  }

  void lose_answers(Call c, int n) override {
    const std::string method = call(c).substr(0, call(c).find(' '));
    az().control("POST", "/__emulator/faults", {{"loseNextResponses", n}, {"methods", {method}}});
  }

  std::vector<std::string> reclaim_kinds() const override { return {"Deallocate", "Delete"}; }

  std::string reclaim_setting(const std::string& kind) const override { return "    eviction_policy: " + kind + "\n"; }

  Reclaimed reclaim(const Resource& victim, const std::string& kind) override {
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

  Refusal spoil_credentials(Workspace& ws) override {
    ws.env["AZURE_CLIENT_SECRET"] = "not-the-secret";
    // One token request for the run: Entra's refusal is remembered, as GCP's is.
    return {"Microsoft Entra refused the token request: invalid_client: AADSTS7000215: Invalid client secret provided.",
            false, 1};
  }

  std::vector<std::string> credential_kinds() const override {
    return {"client secret", "workload identity (federated token)", "managed identity (IMDS)",
            "managed identity (App Service)"};
  }

  void use_credentials(Workspace& ws, const std::string& kind) override {
    if (kind == "client secret") return;
    ws.env["AZURE_CLIENT_SECRET"] = "";
    if (kind == "workload identity (federated token)") {
      home_.write("azure-identity-token", github_oidc_token(kSubject));
      ws.env["AZURE_FEDERATED_TOKEN_FILE"] = home_.path() + "/azure-identity-token";
      return;
    }
    ws.env["AZURE_TENANT_ID"] = "";
    ws.env["AZURE_CLIENT_ID"] = "";
    if (kind == "managed identity (IMDS)") {
      ws.env["AZURE_POD_IDENTITY_AUTHORITY_HOST"] = az().metadata_base();
    } else {
      REQUIRE(kind == "managed identity (App Service)");
      ws.env["IDENTITY_ENDPOINT"] = az().metadata_base() + "/msi/token";
      ws.env["IDENTITY_HEADER"] = kIdentityHeader;
    }
  }

  std::vector<std::string> secrets() override {
    // No token answer (its "access_token": key; the name alone is an option of the gcp provider that
    // `plinth providers --json` lists) and no bearer token or federated token (JWTs).
    return {kAzureClientSecret, "\"access_token\":", "eyJhbGci", "eyJ0eXAi", github_oidc_token(kSubject).substr(0, 60),
            kIdentityHeader};
  }

  Population populate(Workspace& ws) override {
    ws.applied(burst_blueprint({pool({.desired = 30})}));
    return {30, 7};
  }

  std::string make_stray(Workspace& ws, const std::string& address) override {
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

  ExampleBlueprint example() override {
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

  InPlaceSetting in_place_setting() const override { return {}; }

  std::string capacity_code() const override { return "ZonalAllocationFailed"; }

  std::string no_capacity(const std::string& type, const std::string& zone) const override {
    return "no capacity for " + type + " in eastus zone " + zone + ": ZonalAllocationFailed: Allocation failed. We do " +
           "not have sufficient capacity for the requested VM size in this zone. Read more about improving likelihood " +
           "of allocation success at http://aka.ms/allocation-guidance";
  }

  std::string fallback_hint() const override {
    return "List fallbacks in the pool (instance_types or zones) to let Plinth try elsewhere";
  }

  std::string throttle_words() const override { return "SubscriptionRequestsThrottled"; }

 private:

  AzureEmulator& az() {
    REQUIRE(az_);
    return *az_;
  }

  std::map<std::string, std::string> env_;
  std::unique_ptr<AzureEmulator> az_;
  TempDir home_;  ///< the federated token file
};

}  // namespace burst_cloud_azure

std::unique_ptr<CloudUnderTest> AzureCloud::make() { return std::make_unique<burst_cloud_azure::Azure>(); }

}  // namespace plinth::test
