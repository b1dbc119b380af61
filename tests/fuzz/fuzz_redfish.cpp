// The bare-metal provider's handling of Redfish JSON: a fake BMC on loopback
// answers every GET with the fuzzed document (so one document plays service
// root, collection, system, BIOS, processor, NIC and virtual media at once),
// sessions with a token, PATCH/POST/DELETE with success. The provider reads
// a node, provisions it (virtual-media boot, BIOS, reset) and removes it.
// Property: whatever the BMC answers, the provider returns values or errors;
// nothing throws, crashes or leaks.
//
// Seeds: the DMTF Redfish mockups in ../shared/testdata/redfish (every
// index.json is a valid document). Cloud providers' JSON/XML readers get
// their own fuzz_<provider>.cpp beside this file (see docs/fuzzing.md).
#include <httplib.h>

#include <cstdlib>
#include <mutex>
#include <thread>

#include "providers/baremetal/redfish_provider.h"
#include "tests/fuzz/fuzz.h"

using namespace plinth;

namespace {

struct FakeBmc {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::mutex mu;
  std::string body;  ///< the document every GET answers

  FakeBmc() {
    auto doc = [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> g(mu);
      res.set_content(body, "application/json");
    };
    server.Get(".*", doc);
    server.Post(".*/Sessions/?", [](const httplib::Request&, httplib::Response& res) {
      res.status = 201;
      res.set_header("X-Auth-Token", "fuzz-token");
      res.set_header("Location", "/redfish/v1/SessionService/Sessions/1");
      res.set_content("{}", "application/json");
    });
    server.Post(".*", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
    server.Patch(".*", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
    server.Delete(".*", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
    port = server.bind_to_any_port("127.0.0.1");
    if (port <= 0) fuzz::violated("the fake BMC cannot listen on loopback");
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running()) std::this_thread::yield();
  }
};

FakeBmc& bmc() {
  static FakeBmc* b = new FakeBmc();  // lives until exit: the listener thread never stops
  return *b;
}

std::unique_ptr<baremetal::RedfishProvider> provider() {
  auto opts = baremetal::parse_options({{"retry_attempts", "1"},
                                        {"retry_base_ms", "0"},
                                        {"retry_max_ms", "0"},
                                        {"timeout_ms", "2000"},
                                        {"connect_timeout_ms", "200"},
                                        {"power_timeout_ms", "5"},
                                        {"poll_ms", "1"},
                                        {"parallelism", "1"}});
  if (!opts) fuzz::violated("provider options: " + opts.error().message);
  return std::make_unique<baremetal::RedfishProvider>(*opts);
}

Resource node() {
  Resource r;
  r.address = "baremetal.node.fuzz[0]";
  r.type = "baremetal.node";
  r.name = "fuzz";
  r.index = 0;
  r.provider = "baremetal";
  r.attributes = {{"bmc_endpoint", "http://127.0.0.1:" + std::to_string(bmc().port)},
                  {"bmc_credentials", "env:PLINTH_FUZZ_BMC"},
                  {"gpu", "H100-80GB"},
                  {"gpu_names", {"NVIDIA H100 80GB HBM3"}},
                  {"gpus_per_node", 8},
                  {"memory_gb", 1024},
                  {"boot_method", "virtual-media"},
                  {"boot_image", "https://images.example/ubuntu.iso"},
                  {"bios", {{"SriovEnable", "Enabled"}, {"ProcTurboMode", "Enabled"}}}};
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("PLINTH_FUZZ_BMC", "admin:fuzz-password", 1);
  (void)bmc();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::lock_guard<std::mutex> g(bmc().mu);
    bmc().body = fuzz::text(data, size);
  }
  Resource r = node();
  {
    auto p = provider();  // a fresh provider: sessions and the service root are cached per provider
    for (const auto& res : p->read({r}))
      if (!res.error && !res.current) fuzz::violated("read returned neither a resource nor an error");
  }
  {
    auto p = provider();
    (void)p->create(r);
  }
  {
    auto p = provider();
    Resource changed = r;
    changed.attributes["bios"]["SriovEnable"] = "Disabled";
    changed.attributes["boot_method"] = "uefi-http";
    (void)p->update(r, changed);
  }
  {
    auto p = provider();
    (void)p->remove(r);
  }
  return 0;
}
