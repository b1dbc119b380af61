// The azure provider's handling of Microsoft Entra and Resource Manager JSON:
// a fake Entra + ARM on loopback hands out a token, then answers every ARM
// request with the fuzzed document: GETs (VMs, lists with nextLink, operation
// status) with 200, PUT/PATCH/POST/DELETE with a status taken from the
// input's first byte (201 with Azure-AsyncOperation, 202 with Location, 409,
// 429, 500, 200). The provider reads, discovers, creates, updates and
// removes a VM. Property: whatever ARM answers, the provider returns values
// or errors within its deadline; nothing throws, crashes, loops or leaks.
//
// Seeds: tests/data/third_party/azure-compute (the spec's VM example).
#include <httplib.h>

#include <cstdlib>
#include <mutex>
#include <thread>

#include "engine/provider/options.h"
#include "providers/azure/azure_provider.h"
#include "providers/azure/schema.h"
#include "tests/fuzz/fake_server.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/provider_fuzz.h"

using namespace plinth;

namespace {

struct FakeAzure {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::mutex mu;
  std::string body;  ///< the document every ARM request answers
  int write_status = 201;

  FakeAzure() {
    server.Post(R"(/[^/]+/oauth2/v2\.0/token)", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"token_type":"Bearer","expires_in":3599,"access_token":"fuzz.token.x"})",
                      "application/json");
    });
    auto get = [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> g(mu);
      res.set_content(body, "application/json");
    };
    auto write = [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> g(mu);
      res.status = write_status;
      const std::string op = "http://127.0.0.1:" + std::to_string(port) + "/op?api-version=2024-07-01";
      if (write_status == 201 || write_status == 200) res.set_header("Azure-AsyncOperation", op);
      if (write_status == 202) res.set_header("Location", op);
      if (write_status == 429) res.set_header("Retry-After", "0");
      res.set_content(body, "application/json");
    };
    server.Get(".*", get);
    server.Post(".*", write);
    server.Put(".*", write);
    server.Patch(".*", write);
    server.Delete(".*", write);
    port = fuzz::serve(server, thread, "the fake ARM");
  }
};

FakeAzure& fake() {
  static FakeAzure* f = new FakeAzure();  // lives until exit: the listener thread never stops
  return *f;
}

std::unique_ptr<azure::AzureProvider> provider() {
  const std::string base = "http://127.0.0.1:" + std::to_string(fake().port);
  std::vector<std::string> env = {"AZURE_TENANT_ID=t", "AZURE_CLIENT_ID=c", "AZURE_CLIENT_SECRET=s",
                                  "AZURE_SUBSCRIPTION_ID=sub", "AZURE_AUTHORITY_HOST=" + base,
                                  "AZURE_RESOURCE_MANAGER_ENDPOINT=" + base};
  return fuzz::configured<azure::AzureProvider>(azure::schema(), env, "azure",
                                                {"timeout_ms=2000", "connect_timeout_ms=200", "poll_ms=1",
                                                 "max_poll_ms=1"});
}

Resource vm() {
  Resource r;
  r.address = "azure.vm.fuzz[0]";
  r.type = "azure.vm";
  r.name = "fuzz";
  r.index = 0;
  r.provider = "azure";
  r.attributes = {{"instance_type", "Standard_ND96isr_H100_v5"},
                  {"instance_types", {"Standard_ND96isr_H200_v5"}},
                  {"zones", {"1", "2"}},
                  {"region", "eastus"},
                  {"resource_group", "rg"},
                  {"spot", true},
                  {"image", "Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:latest"},
                  {"ssh_public_key", "ssh-ed25519 AAAA fuzz"}};
  r.computed = {{"id", "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/fuzz-0-x"},
                {"name", "fuzz-0-x"},
                {"nic_id", "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/n"}};
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)fake();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int statuses[] = {201, 202, 409, 429, 500, 200};
  {
    std::lock_guard<std::mutex> g(fake().mu);
    fake().body = fuzz::text(data, size);
    fake().write_status = statuses[size > 0 ? data[0] % 6 : 0];
  }
  const Resource r = vm();
  Resource changed = r;
  changed.attributes["zones"] = {"3"};
  fuzz::drive([] { return provider(); }, r, changed, [] {});
  return 0;
}
