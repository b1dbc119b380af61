// The request budget of the baremetal provider, counted from the emulator's
// request log (deterministic: power transitions are instant, no faults):
// a create of a node is at most 10 requests where the service root offers
// $expand, and falls back to plain GETs (same result) where it does not or
// where $expand is advertised and ignored. Speed itself is measured by
// bench/run.sh, never here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <sstream>

#include "engine/net/http.h"
#include "providers/baremetal/redfish_provider.h"
#include "tests/providers/baremetal/configured.h"
#include "tests/providers/baremetal/emulator.h"

using namespace plinth;
using plinth::test::Emulator;

namespace {

const std::string kSystem = "/redfish/v1/Systems/437XR1138R2";
const char* kCredsVar = "PLINTH_TEST_BMC_CREDENTIALS";

Resource node(const Emulator& em, int i, Json bios) {
  Resource r;
  r.type = "baremetal.node";
  r.name = "train-a";
  r.index = i;
  r.address = make_address(r.type, r.name, i);
  r.provider = "baremetal";
  r.attributes = {{"gpu", "H100-80GB"},
                  {"gpu_product_names", {"NVIDIA H100 80GB HBM3"}},
                  {"gpus_per_node", 8},
                  {"memory_gb", 1536},
                  {"bios", std::move(bios)},
                  {"boot_method", "pxe"},
                  {"boot_image", ""},
                  {"bmc_endpoint", em.bmc(i)},
                  {"bmc_credentials", std::string("env:") + kCredsVar},
                  {"bmc_ca_bundle", ""}};
  return r;
}

std::unique_ptr<Provider> provider(const Emulator& em) {
  setenv(kCredsVar, "admin:admin", 1);
  auto p = configured({{"ca_bundle", em.ca()}, {"poll_ms", "20"}, {"power_timeout_ms", "10000"}});
  REQUIRE(p.ok());
  return std::move(p).value();
}

/// The request log, one "METHOD PATH[?QUERY]" and its status (0: none) per request, by BMC.
std::map<int, std::vector<std::pair<std::string, int>>> answered(const Emulator& em) {
  std::map<int, std::vector<std::pair<std::string, int>>> out;
  std::istringstream in(em.log());
  for (std::string line; std::getline(in, line);) {
    Json l = Json::parse(line);
    std::string path = l["path"];
    path = path.substr(path.find("/redfish"));
    const std::string query = l.value("query", "");
    out[l["bmc"].get<int>()].emplace_back(
        l["method"].get<std::string>() + " " + path + (query.empty() ? "" : "?" + query),
        l["status"].is_number() ? l["status"].get<int>() : 0);
  }
  return out;
}

/// The request log, one "METHOD PATH[?QUERY]" per request, by BMC.
std::map<int, std::vector<std::string>> requests(const Emulator& em) {
  std::map<int, std::vector<std::string>> out;
  for (const auto& [bmc, sent] : answered(em))
    for (const auto& [request, status] : sent) out[bmc].push_back(request);
  return out;
}

/// Creates nodes 0..n-1 (pxe, one BIOS attribute) and closes the provider
/// (which deletes the sessions).
void create_nodes(const Emulator& em, int n) {
  auto p = provider(em);
  for (int i = 0; i < n; ++i) {
    auto created = p->create(node(em, i, {{"ProcTurboMode", "Disabled"}}), *one_call());
    INFO((created.ok() ? "" : created.error().message));
    REQUIRE(created.ok());
    CHECK(created->computed["gpu_count"] == 8);
    CHECK(created->computed["power_state"] == "On");
    CHECK(created->computed["bios"]["ProcTurboMode"] == "Disabled");
    CHECK(created->computed["macs"].size() >= 1);
  }
  p->close();
}

/// Members of a collection of BMC 0, read with basic auth after the counting.
size_t members(const Emulator& em, const std::string& path) {
  net::Client c({em.ca(), false, 5000, 5000});
  auto r = c.request({"GET", em.bmc(0) + path, {}, "", "admin:admin"});
  REQUIRE(r.ok());
  return Json::parse(r->body)["Members"].size();
}

const std::vector<std::string> kEmulator = {"--bmcs", "3", "--gpus", "8", "--memory-gib", "2048", "--power-state",
                                            "Off", "--power-delay-ms", "0"};

std::vector<std::string> with(std::vector<std::string> args, const std::string& expand) {
  args.insert(args.end(), {"--expand", expand});
  return args;
}

}  // namespace

TEST_CASE("request budget: a create is 8 requests per node where the service offers $expand") {
  Emulator em(with(kEmulator, "on"));
  create_nodes(em, 3);
  auto log = requests(em);
  REQUIRE(log.size() == 3);
  for (const auto& [bmc, sent] : log) {
    INFO("BMC " << bmc);
    CHECK(sent == std::vector<std::string>{
                      "GET /redfish/v1/",
                      "POST /redfish/v1/SessionService/Sessions",
                      "GET /redfish/v1/Systems?$expand=.($levels=3)",  // the system, its BIOS and inventory
                      "PATCH " + kSystem,                              // boot override (If-Match from the expansion)
                      "PATCH " + kSystem + "/Bios/Settings",
                      "POST " + kSystem + "/Actions/ComputerSystem.Reset",
                      "GET " + kSystem + "?$expand=.($levels=2)",  // On, and the read-back in one
                      "DELETE " + sent.back().substr(7),
                  });
    CHECK(sent.size() <= 10);
    CHECK(sent.back().starts_with("DELETE /redfish/v1/SessionService/Sessions/"));
  }
}

TEST_CASE("request budget: without $expand (not offered, or offered and ignored) every resource is a GET") {
  for (const std::string mode : {"off", "ignored"}) {
    INFO("--expand " << mode);
    Emulator em(with(kEmulator, mode));
    create_nodes(em, 3);
    auto log = requests(em);
    const size_t processors = members(em, kSystem + "/Processors");
    const size_t nics = members(em, kSystem + "/EthernetInterfaces");
    REQUIRE(processors >= 8);  // the 8 GPUs and the mockup's own processors
    REQUIRE(log.size() == 3);
    for (auto [bmc, sent] : log) {
      INFO("BMC " << bmc);
      // Root, session, Systems, system, PATCH, Bios, PATCH settings, Reset,
      // poll (On), then the read-back (sent at once, so in any order): Bios,
      // Processors + each member, EthernetInterfaces + each member; and the
      // session's DELETE.
      CHECK(sent.size() == 9 + 3 + processors + nics + 1);
      const std::string q = mode == "off" ? "" : "?$expand=.($levels=3)";
      const std::string q1 = mode == "off" ? "" : "?$expand=.";  // the create needs no inventory (pxe, no seed)
      const std::string q2 = mode == "off" ? "" : "?$expand=.($levels=2)";
      REQUIRE(sent.size() > 9);
      CHECK(std::vector<std::string>(sent.begin(), sent.begin() + 9) ==
            std::vector<std::string>{"GET /redfish/v1/", "POST /redfish/v1/SessionService/Sessions",
                                     "GET /redfish/v1/Systems" + q, "GET " + kSystem + q1, "PATCH " + kSystem,
                                     "GET " + kSystem + "/Bios", "PATCH " + kSystem + "/Bios/Settings",
                                     "POST " + kSystem + "/Actions/ComputerSystem.Reset", "GET " + kSystem + q2});
      int processor_reads = 0, nic_reads = 0, bios_reads = 0;
      for (const auto& s : sent) {
        processor_reads += s.starts_with("GET " + kSystem + "/Processors");
        nic_reads += s.starts_with("GET " + kSystem + "/EthernetInterfaces");
        bios_reads += s.starts_with("GET " + kSystem + "/Bios");
      }
      CHECK(processor_reads == static_cast<int>(processors) + 1);
      CHECK(nic_reads == static_cast<int>(nics) + 1);
      CHECK(bios_reads == 2);  // its settings link before the PATCH, its attributes after the reset
    }
  }
}

TEST_CASE("request budget: an apply's create does not read the system its refresh read, unless it inserts media") {
  // plinth apply refreshes (read) and then creates with the same provider. For a pxe node the
  // create's first request is the boot override's PATCH, its If-Match the ETag the refresh saw: 8
  // requests in all. A virtual-media installer needs the VirtualMedia devices' members, read with
  // the system two levels deep.
  for (const std::string method : {"pxe", "virtual-media"}) {
    INFO("boot method " << method);
    Emulator em(with(kEmulator, "on"));
    {
      auto p = provider(em);
      Resource r = node(em, 0, {{"ProcTurboMode", "Disabled"}});
      r.attributes["boot_method"] = method;
      if (method == "virtual-media") r.attributes["boot_image"] = "https://images.example/installer.iso";
      auto read = p->read({r}, *one_call());
      REQUIRE_FALSE(read[0].error);
      auto created = p->create(r, *one_call());
      INFO((created.ok() ? "" : created.error().message));
      REQUIRE(created.ok());
      CHECK(created->computed["gpu_count"] == 8);
      CHECK(created->computed["bios"]["ProcTurboMode"] == "Disabled");
      CHECK(created->computed["power_state"] == "On");
      p->close();
    }
    auto sent = requests(em)[0];
    REQUIRE(sent.size() >= 4);
    CHECK(sent[2] == "GET /redfish/v1/Systems?$expand=.($levels=3)");  // the refresh
    if (method == "pxe") {
      CHECK(sent == std::vector<std::string>{
                        "GET /redfish/v1/",
                        "POST /redfish/v1/SessionService/Sessions",
                        "GET /redfish/v1/Systems?$expand=.($levels=3)",
                        "PATCH " + kSystem,  // If-Match: the ETag of the refresh's read
                        "PATCH " + kSystem + "/Bios/Settings",
                        "POST " + kSystem + "/Actions/ComputerSystem.Reset",
                        "GET " + kSystem + "?$expand=.($levels=2)",
                        "DELETE " + sent.back().substr(7),
                    });
    } else {
      CHECK(sent[3] == "GET " + kSystem + "?$expand=.($levels=2)");  // the create's read, with the devices
      CHECK(std::count(sent.begin(), sent.end(), "GET " + kSystem + "?$expand=.($levels=2)") == 2);
    }
    CHECK(sent.back().starts_with("DELETE /redfish/v1/SessionService/Sessions/"));
  }
}

TEST_CASE("request budget: a system changed since the refresh is read again before the create goes on") {
  // The refresh sees the host Off; someone powers it on before the create. The boot PATCH's
  // If-Match (the refresh's ETag) answers 412, so the create reads the system and restarts the
  // host (ForceRestart) instead of sending On to a host already on, which would leave the PXE
  // override unused. A replace (remove, then create) reads afresh as well.
  Emulator em(with(kEmulator, "on"));
  net::Client admin({em.ca(), false, 5000, 5000});
  auto power_on = [&] {
    auto r = admin.request({"POST", em.bmc(0) + kSystem + "/Actions/ComputerSystem.Reset", {{"Content-Type", "application/json"}},
                            R"({"ResetType":"On"})", "admin:admin"});
    REQUIRE(r.ok());
    REQUIRE(r->status < 300);
  };
  {
    auto p = provider(em);
    Resource r = node(em, 0, {{"ProcTurboMode", "Disabled"}});
    auto read = p->read({r}, *one_call());
    REQUIRE_FALSE(read[0].error);
    CHECK(read[0].current->computed["power_state"] == "Off");
    power_on();
    auto created = p->create(r, *one_call());
    INFO((created.ok() ? "" : created.error().message));
    REQUIRE(created.ok());
    CHECK(created->computed["power_state"] == "On");
    // The host booted again, so the one-time override was used (the emulator clears it at power on).
    CHECK(created->computed["boot_override_enabled"] == "Disabled");

    auto again = p->read({r}, *one_call());
    REQUIRE_FALSE(again[0].error);
    REQUIRE(p->remove(r, *one_call()).ok());
    REQUIRE(p->create(r, *one_call()).ok());
    p->close();
  }
  const std::vector<std::pair<std::string, int>> sent = answered(em)[0];
  auto at = [&](size_t i) { return i < sent.size() ? sent[i] : std::pair<std::string, int>{"", 0}; };
  // root, session, refresh, [the admin's Reset On], PATCH 412, GET, PATCH, ...
  size_t i = 0;
  while (i < sent.size() && !(sent[i].first == "PATCH " + kSystem)) ++i;
  CHECK(at(i) == std::pair<std::string, int>{"PATCH " + kSystem, 412});
  CHECK(at(i + 1).first == "GET " + kSystem + "?$expand=.");
  CHECK(at(i + 2) == std::pair<std::string, int>{"PATCH " + kSystem, 200});
  // The replace: the refresh, the remove's own read (ForceOff), ..., then the create's read before its PATCH.
  size_t last_patch = sent.size();
  for (size_t k = 0; k < sent.size(); ++k)
    if (sent[k].first == "PATCH " + kSystem && sent[k].second == 200) last_patch = k;
  REQUIRE(last_patch < sent.size());
  REQUIRE(last_patch > 0);
  CHECK(at(last_patch - 1).first == "GET " + kSystem + "?$expand=.");
  int stale = 0;
  for (const auto& [req, status] : sent) stale += status == 412;
  CHECK(stale == 1);
}

TEST_CASE("request budget: a read is 3 requests with $expand, and no BIOS read when the pool manages none") {
  for (const std::string mode : {"on", "off"}) {
    INFO("--expand " << mode);
    Emulator em(with(kEmulator, mode));
    {
      auto p = provider(em);
      std::vector<Resource> nodes = {node(em, 0, Json::object()), node(em, 1, Json::object()),
                                     node(em, 2, {{"ProcTurboMode", "Enabled"}})};
      auto results = p->read(nodes, *one_call());
      for (const auto& r : results) {
        INFO(r.address << (r.error ? ": " + r.error->message : ""));
        REQUIRE_FALSE(r.error);
        CHECK(r.current->computed["gpu_count"] == 8);
      }
      CHECK_FALSE(results[0].current->computed.contains("bios"));
      CHECK(results[0].current->attributes["bios"] == Json::object());
      CHECK(results[2].current->computed["bios"]["ProcTurboMode"] == "Enabled");
      p->close();
    }
    auto log = requests(em);
    for (auto [bmc, sent] : log) {
      INFO("BMC " << bmc);
      int bios_reads = 0;
      for (const auto& s : sent) bios_reads += s.starts_with("GET " + kSystem + "/Bios");
      CHECK(bios_reads == (mode == "off" && bmc == 2 ? 1 : 0));
      if (mode == "on") CHECK(sent.size() == 4);  // root, session, Systems expanded, DELETE
    }
  }
}
