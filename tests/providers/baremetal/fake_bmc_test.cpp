// The provider against a tiny in-test Redfish service (cpp-httplib, plain
// HTTP) for behaviour the emulator does not show: a service without
// sessions (basic auth fallback) and a PATCH losing an ETag race (412).
#include <httplib.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "providers/registry/registry.h"

using namespace plinth;

namespace {

struct FakeBmc {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::mutex mu;
  int etag = 1;
  std::string power = "On";
  std::string override_enabled = "Once";
  std::vector<std::string> if_match;        ///< If-Match of every PATCH
  std::vector<std::string> authorization;   ///< Authorization of every authenticated request
  int session_posts = 0;
  int races = 1;  ///< PATCHes answered 412 (after bumping the ETag) before one succeeds

  Json system() const {
    return {{"@odata.id", "/redfish/v1/Systems/1"},
            {"PowerState", power},
            {"Boot", {{"BootSourceOverrideTarget", "Pxe"}, {"BootSourceOverrideEnabled", override_enabled}}},
            {"Actions", {{"#ComputerSystem.Reset", {{"target", "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset"}}}}}};
  }
  std::string tag() const { return "W/\"" + std::to_string(etag) + "\""; }

  FakeBmc() {
    server.Get("/redfish/v1/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"Systems":{"@odata.id":"/redfish/v1/Systems"},
                          "SessionService":{"@odata.id":"/redfish/v1/SessionService"}})",
                      "application/json");
    });
    server.Post("/redfish/v1/SessionService/Sessions", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> g(mu);
      ++session_posts;
      res.status = 405;  // no sessions here
    });
    server.Get("/redfish/v1/Systems", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> g(mu);
      authorization.push_back(req.get_header_value("Authorization") + req.get_header_value("X-Auth-Token"));
      res.set_content(R"({"Members":[{"@odata.id":"/redfish/v1/Systems/1"}]})", "application/json");
    });
    server.Get("/redfish/v1/Systems/1", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> g(mu);
      authorization.push_back(req.get_header_value("Authorization") + req.get_header_value("X-Auth-Token"));
      res.set_header("ETag", tag());
      res.set_content(system().dump(), "application/json");
    });
    server.Patch("/redfish/v1/Systems/1", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> g(mu);
      authorization.push_back(req.get_header_value("Authorization") + req.get_header_value("X-Auth-Token"));
      if_match.push_back(req.get_header_value("If-Match"));
      if (req.get_header_value("If-Match") != tag()) {
        res.status = 412;
        return;
      }
      if (races > 0) {  // someone else changes the system just before us
        --races;
        ++etag;
        res.status = 412;
        return;
      }
      auto body = Json::parse(req.body);
      override_enabled = body["Boot"]["BootSourceOverrideEnabled"];
      ++etag;
      res.set_content(system().dump(), "application/json");
    });
    server.Post("/redfish/v1/Systems/1/Actions/ComputerSystem.Reset",
                [this](const httplib::Request& req, httplib::Response& res) {
                  std::lock_guard<std::mutex> g(mu);
                  authorization.push_back(req.get_header_value("Authorization") + req.get_header_value("X-Auth-Token"));
                  if (Json::parse(req.body)["ResetType"] == "ForceOff") power = "Off";
                  ++etag;
                  res.status = 204;
                });
    port = server.bind_to_any_port("127.0.0.1");
    REQUIRE(port > 0);
    thread = std::thread([this] { server.listen_after_bind(); });
    for (int i = 0; i < 200 && !server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~FakeBmc() {
    server.stop();
    thread.join();
  }
};

Resource node(const FakeBmc& bmc) {
  Resource r;
  r.type = "baremetal.node";
  r.name = "lab";
  r.index = 0;
  r.address = "baremetal.node.lab[0]";
  r.provider = "baremetal";
  r.attributes = {{"bmc_endpoint", "http://127.0.0.1:" + std::to_string(bmc.port)},
                  {"bmc_credentials", "env:PLINTH_TEST_FAKE_BMC"}};
  return r;
}

}  // namespace

TEST_CASE("fake BMC: basic auth when sessions are not supported, If-Match re-read once after a 412") {
  FakeBmc bmc;
  setenv("PLINTH_TEST_FAKE_BMC", "admin:admin", 1);
  {
    auto p = make_provider({"baremetal", {{"poll_ms", "10"}, {"power_timeout_ms", "2000"}}});
    REQUIRE(p.ok());
    auto st = (*p)->remove(node(bmc));
    INFO((st.ok() ? "" : st.error().message));
    REQUIRE(st.ok());
  }
  std::lock_guard<std::mutex> g(bmc.mu);
  CHECK(bmc.power == "Off");
  CHECK(bmc.override_enabled == "Disabled");
  CHECK(bmc.session_posts == 1);
  // The first PATCH lost the race (412 with a new ETag); the retry used the re-read ETag.
  REQUIRE(bmc.if_match.size() == 2);
  CHECK(bmc.if_match[0] == "W/\"2\"");
  CHECK(bmc.if_match[1] == "W/\"3\"");
  REQUIRE_FALSE(bmc.authorization.empty());
  for (const auto& a : bmc.authorization) CHECK(a == "Basic YWRtaW46YWRtaW4=");
}

TEST_CASE("fake BMC: a second 412 is a Conflict error naming the node and URL") {
  FakeBmc bmc;
  bmc.races = 2;
  setenv("PLINTH_TEST_FAKE_BMC", "admin:admin", 1);
  auto p = make_provider({"baremetal", {{"poll_ms", "10"}, {"power_timeout_ms", "2000"}}});
  REQUIRE(p.ok());
  auto st = (*p)->remove(node(bmc));
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().kind == Error::Kind::Conflict);
  CHECK(st.error().message == "baremetal.node.lab[0]: PATCH http://127.0.0.1:" + std::to_string(bmc.port) +
                                  "/redfish/v1/Systems/1: HTTP 412 Precondition Failed");
}
