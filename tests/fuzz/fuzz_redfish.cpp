// The bare-metal provider's handling of Redfish JSON: a fake BMC on loopback
// answers every GET with the fuzzed document (so one document plays service
// root, collection, system, BIOS, processor, NIC and virtual media at once),
// sessions with a token, PATCH/POST/DELETE with success. The provider reads
// a node, provisions it (virtual-media boot, BIOS, reset) and removes it.
// Property: whatever the BMC answers, the provider returns values or errors;
// nothing throws, crashes or leaks.
//
// Seeds: the DMTF Redfish mockups in tests/data/third_party/redfish (every
// index.json is a valid document). Cloud providers' JSON/XML readers get
// their own fuzz_<provider>.cpp beside this file (see docs/fuzzing.md).
#include <httplib.h>

#include <cstdlib>
#include <mutex>
#include <thread>

#include "engine/provider/options.h"
#include "providers/baremetal/redfish_provider.h"
#include "tests/fuzz/fake_server.h"
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
    port = fuzz::serve(server, thread, "the fake BMC");
  }
};

FakeBmc& bmc() {
  static FakeBmc* b = new FakeBmc();  // lives until exit: the listener thread never stops
  return *b;
}

std::unique_ptr<baremetal::RedfishProvider> provider() {
  std::vector<std::string> flags;
  for (const char* kv : {"timeout_ms=2000", "connect_timeout_ms=200", "power_timeout_ms=5", "poll_ms=1", "parallelism=1"})
    flags.push_back(std::string("baremetal.") + kv);
  auto config = parse_provider_config(baremetal::schema(), {}, {}, flags);
  if (!config) fuzz::violated("provider options: " + config.error().message);
  auto p = std::make_unique<baremetal::RedfishProvider>();
  if (auto st = p->configure(*config); !st) fuzz::violated("provider configure: " + st.error().message);
  return p;
}

/// One attempt per request: retrying is the engine's, not what is fuzzed here.
Call once() { return Call(Deadline::never(), RetryPolicy{1}); }

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
    Call call = once();
    for (const auto& res : p->read({r}, call))
      if (!res.error && !res.current) fuzz::violated("read returned neither a resource nor an error");
  }
  {
    auto p = provider();
    Call call = once();
    (void)p->create(r, call);
  }
  {
    auto p = provider();
    Resource changed = r;
    changed.attributes["bios"]["SriovEnable"] = "Disabled";
    changed.attributes["boot_method"] = "uefi-http";
    Call call = once();
    (void)p->update(r, changed, call);
  }
  {
    auto p = provider();
    Call call = once();
    (void)p->remove(r, call);
  }
  return 0;
}
