// The baremetal provider against the real redfish-emulator (HTTPS, its CA).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "engine/net/http.h"
#include "providers/baremetal/redfish_provider.h"
#include "engine/apply/executor.h"
#include "engine/apply/refresh.h"
#include "providers/registry/registry.h"
#include "tests/engine/apply/fakes.h"
#include "tests/providers/baremetal/configured.h"
#include "tests/providers/baremetal/emulator.h"
#include "tests/support/redfish.h"

using namespace plinth;
using plinth::test::Emulator;
using plinth::test::FileServer;
using plinth::test::IsoContents;
using plinth::test::read_iso;
using plinth::test::slurp;
using plinth::test::TempDir;

namespace {

const std::string kSystem = "/redfish/v1/Systems/437XR1138R2";
const char* kCredsVar = "PLINTH_TEST_BMC_CREDENTIALS";

/// baremetal.node.train-a[i] as the expander makes it, pointing at BMC i.
Resource node(const Emulator& em, int i, Json extra = Json::object()) {
  Resource r;
  r.type = "baremetal.node";
  r.name = "train-a";
  r.index = i;
  r.address = make_address(r.type, r.name, i);
  r.provider = "baremetal";
  r.attributes = {{"gpu", "H100-80GB"},
                  {"gpu_product_names", {"NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe"}},
                  {"gpus_per_node", 8},
                  {"memory_gb", 1536},
                  {"bios", {{"ProcTurboMode", "Enabled"}}},
                  {"boot_method", "pxe"},
                  {"boot_image", ""},
                  {"bmc_endpoint", em.bmc(i)},
                  {"bmc_credentials", std::string("env:") + kCredsVar},
                  {"bmc_ca_bundle", ""}};
  r.attributes.merge_patch(extra);
  return r;
}

std::map<std::string, std::string> options(const Emulator& em) {
  return {{"ca_bundle", em.ca()}, {"poll_ms", "20"}, {"power_timeout_ms", "10000"}, {"timeout_ms", "5000"}};
}

std::unique_ptr<Provider> provider(const Emulator& em, std::map<std::string, std::string> extra = {}) {
  setenv(kCredsVar, "admin:admin", 1);
  auto o = options(em);
  for (auto& [k, v] : extra) o[k] = v;
  auto p = configured(o);
  REQUIRE(p.ok());
  return std::move(p).value();
}

/// GET through the emulator with basic auth: the test's independent view
/// (sent again while the emulator injects a 503).
Json get(const Emulator& em, int bmc, const std::string& path) {
  net::Client c({em.ca(), false, 5000, 5000});
  auto r = c.request({"GET", em.bmc(bmc) + path, {}, "", "admin:admin"});
  for (int i = 0; i < 20 && !r.ok() && r.error().message.find("HTTP 503") != std::string::npos; ++i) r = c.request({"GET", em.bmc(bmc) + path, {}, "", "admin:admin"});
  INFO((r.ok() ? "" : r.error().message));
  REQUIRE(r.ok());
  return Json::parse(r->body);
}

int closed_port() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

std::vector<Json> log_lines(const Emulator& em) {
  std::vector<Json> out;
  std::istringstream in(em.log());
  for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("read: inventory of many BMCs in parallel, with the GPU count check") {
  Emulator em({"--bmcs", "6", "--gpus", "8", "--memory-gib", "2048", "--override", "3:gpus=7", "--latency-ms", "40"});
  std::vector<Resource> nodes;
  for (int i = 0; i < 6; ++i) nodes.push_back(node(em, i));
  {
    auto p = provider(em);
    auto start = std::chrono::steady_clock::now();
    auto results = p->read(nodes, *one_call());
    auto took = std::chrono::steady_clock::now() - start;
    REQUIRE(results.size() == 6);
    for (int i = 0; i < 6; ++i) {
      const auto& r = results[static_cast<size_t>(i)];
      INFO(r.address << (r.error ? ": " + r.error->message : ""));
      REQUIRE_FALSE(r.error);
      REQUIRE(r.current);
      CHECK(r.address == nodes[static_cast<size_t>(i)].address);
      const Json& c = r.current->computed;
      CHECK(c["gpu_count"] == (i == 3 ? 7 : 8));
      CHECK(c["gpu_models"] == Json::array({"NVIDIA H100 80GB HBM3"}));
      CHECK(c["memory_gib"] == 2048);
      CHECK(c["power_state"] == "On");
      CHECK(c["system_uri"] == em.bmc(i) + kSystem);
      CHECK(c["bios"]["AdminPhone"] == "");  // every observed attribute in computed
      CHECK(c["macs"].size() >= 1);
      CHECK(r.current->attributes["bios"] == Json{{"ProcTurboMode", "Enabled"}});  // only the managed keys
      if (i == 3) {
        REQUIRE(r.diagnostics.size() == 1);
        CHECK(r.diagnostics[0].code == "BM002");
        CHECK(r.diagnostics[0].severity == Severity::Error);
        CHECK(r.diagnostics[0].address == "baremetal.node.train-a[3]");
        CHECK(r.diagnostics[0].message == "BMC reports 7 × NVIDIA H100 80GB HBM3, pool declares 8");
        CHECK(format_diagnostic(r.diagnostics[0]).starts_with(
            "baremetal.node.train-a[3]: error[BM002]: BMC reports 7 × NVIDIA H100 80GB HBM3, pool declares 8"));
      } else {
        CHECK(r.diagnostics.empty());
      }
    }
    // ~25 requests per BMC at 40 ms each: one at a time would take 6 s.
    CHECK(took < std::chrono::milliseconds(3500));
  }
  // One session per BMC, deleted when the provider goes away.
  int logins = 0, logouts = 0;
  for (const auto& l : log_lines(em)) {
    const std::string path = l["path"];
    if (l["method"] == "POST" && path.ends_with("/SessionService/Sessions")) ++logins;
    if (l["method"] == "DELETE" && path.find("/SessionService/Sessions/") != std::string::npos && l["status"] == 204)
      ++logouts;
  }
  CHECK(logins == 6);
  CHECK(logouts == 6);
}

TEST_CASE("read: BIOS changed outside Plinth shows as observed attributes") {
  Emulator em({"--gpus", "8", "--memory-gib", "2048", "--power-delay-ms", "20"});
  net::Client c({em.ca(), false, 5000, 5000});
  auto patched = c.request({"PATCH", em.bmc(0) + kSystem + "/Bios/Settings", {{"Content-Type", "application/json"}},
                            R"({"Attributes":{"ProcTurboMode":"Disabled"}})", "admin:admin"});
  REQUIRE(patched.ok());
  auto reset = c.request({"POST", em.bmc(0) + kSystem + "/Actions/ComputerSystem.Reset",
                          {{"Content-Type", "application/json"}}, R"({"ResetType":"ForceRestart"})", "admin:admin"});
  REQUIRE(reset.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto p = provider(em);
  auto r = p->read({node(em, 0)}, *one_call());
  REQUIRE(r[0].current);
  CHECK(r[0].current->attributes["bios"] == Json{{"ProcTurboMode", "Disabled"}});
}

TEST_CASE("read: GPU model and memory mismatches are BM001 and BM003") {
  Emulator em({"--gpus", "8", "--gpu-model", "NVIDIA A100-SXM4-80GB", "--memory-gib", "1024"});
  auto p = provider(em);
  auto r = p->read({node(em, 0)}, *one_call());
  REQUIRE_FALSE(r[0].error);
  REQUIRE(r[0].diagnostics.size() == 2);
  CHECK(r[0].diagnostics[0].code == "BM001");
  CHECK(r[0].diagnostics[0].message ==
        "BMC reports 8 × NVIDIA A100-SXM4-80GB, pool declares H100-80GB (NVIDIA H100 80GB HBM3)");
  CHECK(r[0].diagnostics[1].code == "BM003");
  CHECK(r[0].diagnostics[1].message == "BMC reports 1024 GiB of memory, pool declares 1536 GB");

  // Without the catalog's product names, every word of the catalog name must appear in the model.
  Resource bare = node(em, 0);
  bare.attributes.erase("gpu_product_names");
  bare.attributes["memory_gb"] = 1024;
  auto r2 = p->read({bare}, *one_call());
  REQUIRE(r2[0].diagnostics.size() == 1);
  CHECK(r2[0].diagnostics[0].message == "BMC reports 8 × NVIDIA A100-SXM4-80GB, pool declares H100-80GB");
  bare.attributes["gpu"] = "A100-80GB";
  CHECK(p->read({bare}, *one_call())[0].diagnostics.empty());
}

TEST_CASE("create: boot override, BIOS settings and power on, for each boot method") {
  Emulator em({"--bmcs", "3", "--gpus", "8", "--memory-gib", "2048", "--power-state", "Off", "--power-delay-ms", "50",
               "--override", "2:power-state=On"});
  auto p = provider(em);
  const std::string iso = "https://images.example/ubuntu-24.04.iso";
  std::vector<Resource> nodes = {
      node(em, 0, {{"boot_method", "pxe"}, {"bios", {{"ProcTurboMode", "Disabled"}, {"PowerProfile", "Balanced"}}}}),
      node(em, 1, {{"boot_method", "virtual-media"}, {"boot_image", iso}}),
      node(em, 2, {{"boot_method", "uefi-http"}, {"boot_image", iso}}),  // already On: ForceRestart
  };
  for (const auto& n : nodes) {
    auto created = p->create(n, *one_call());
    INFO(n.address << (created.ok() ? "" : ": " + created.error().message));
    REQUIRE(created.ok());
    CHECK(created->attributes == n.attributes);
    CHECK(created->computed["power_state"] == "On");
    CHECK(created->computed["gpu_count"] == 8);
  }
  Json s0 = get(em, 0, kSystem), s1 = get(em, 1, kSystem), s2 = get(em, 2, kSystem);
  CHECK(s0["PowerState"] == "On");
  CHECK(s0["Oem"]["PlinthEmulator"]["BootCount"] == 1);
  CHECK(s0["Oem"]["PlinthEmulator"]["LastBootSource"] == "Pxe");
  CHECK(s0["Boot"]["BootSourceOverrideEnabled"] == "Disabled");  // the Once override was used by the boot
  Json bios0 = get(em, 0, kSystem + "/Bios")["Attributes"];
  CHECK(bios0["ProcTurboMode"] == "Disabled");
  CHECK(bios0["PowerProfile"] == "Balanced");

  CHECK(s1["PowerState"] == "On");
  CHECK(s1["Oem"]["PlinthEmulator"]["LastBootSource"] == "Cd");
  CHECK(s1["Oem"]["PlinthEmulator"]["LastBootImage"] == iso);

  CHECK(s2["PowerState"] == "On");
  CHECK(s2["Oem"]["PlinthEmulator"]["BootCount"] == 1);
  CHECK(s2["Oem"]["PlinthEmulator"]["LastBootSource"] == "UefiHttp");
  CHECK(s2["Oem"]["PlinthEmulator"]["LastBootImage"] == iso);
  bool force_restart = false;
  for (const auto& l : log_lines(em))
    force_restart = force_restart || (l["bmc"] == 2 && l["method"] == "POST" &&
                                      l["path"].get<std::string>().ends_with("ComputerSystem.Reset"));
  CHECK(force_restart);
}

TEST_CASE("create: task monitors (202 + Location) are followed until done") {
  Emulator em({"--gpus", "8", "--memory-gib", "2048", "--power-state", "Off", "--power-delay-ms", "100",
               "--async-tasks"});
  auto p = provider(em);
  auto created = p->create(node(em, 0, {{"boot_method", "virtual-media"}, {"boot_image", "https://i.example/a.iso"}}), *one_call());
  INFO((created.ok() ? "" : created.error().message));
  REQUIRE(created.ok());
  Json s = get(em, 0, kSystem);
  CHECK(s["PowerState"] == "On");
  CHECK(s["Oem"]["PlinthEmulator"]["LastBootImage"] == "https://i.example/a.iso");
  int monitor_polls = 0;
  for (const auto& l : log_lines(em))
    if (l["path"].get<std::string>().find("/TaskService/TaskMonitors/") != std::string::npos) ++monitor_polls;
  CHECK(monitor_polls >= 3);  // eject, insert, reset
}

TEST_CASE("update: a BIOS change is PATCHed to the settings object and applied by a restart") {
  Emulator em({"--gpus", "8", "--memory-gib", "2048", "--power-delay-ms", "50"});
  auto p = provider(em);
  Resource prior = node(em, 0);
  auto created = p->create(prior, *one_call());
  REQUIRE(created.ok());
  Resource desired = prior;
  desired.attributes["bios"] = {{"ProcTurboMode", "Disabled"}};
  auto updated = p->update(*created, desired, *one_call());
  INFO((updated.ok() ? "" : updated.error().message));
  REQUIRE(updated.ok());
  CHECK(get(em, 0, kSystem + "/Bios")["Attributes"]["ProcTurboMode"] == "Disabled");
  CHECK(get(em, 0, kSystem)["Oem"]["PlinthEmulator"]["BootCount"] == 2);
  CHECK(updated->computed["bios"]["ProcTurboMode"] == "Disabled");
  // Every PATCH carried the resource's ETag.
  for (const auto& l : log_lines(em))
    if (l["method"] == "PATCH") CHECK(l["status"] == 200);

  // Nothing changed: no reset.
  auto again = p->update(*updated, desired, *one_call());
  REQUIRE(again.ok());
  CHECK(get(em, 0, kSystem)["Oem"]["PlinthEmulator"]["BootCount"] == 2);
}

TEST_CASE("remove: powers off and clears the boot override") {
  Emulator em({"--gpus", "8", "--memory-gib", "2048", "--power-delay-ms", "50"});
  auto p = provider(em);
  // The mockup starts On with a Once PXE override pending.
  REQUIRE(get(em, 0, kSystem)["Boot"]["BootSourceOverrideEnabled"] == "Once");
  auto st = p->remove(node(em, 0), *one_call());
  INFO((st.ok() ? "" : st.error().message));
  REQUIRE(st.ok());
  Json s = get(em, 0, kSystem);
  CHECK(s["PowerState"] == "Off");
  CHECK(s["Boot"]["BootSourceOverrideEnabled"] == "Disabled");
  CHECK(p->remove(node(em, 0), *one_call()).ok());  // removing again succeeds
}

TEST_CASE("seed: each created node's NoCloud image is written, fetched by its BMC, and ejected on remove") {
  TempDir dir;
  const std::string seeds = dir.path() + "/seeds", media = dir.path() + "/media";
  std::filesystem::create_directories(seeds);
  FileServer web(seeds);
  Emulator em({"--bmcs", "2", "--gpus", "8", "--memory-gib", "2048", "--power-state", "Off", "--power-delay-ms", "20",
               "--media-dir", media});
  auto p = provider(em, {{"seed_dir", seeds}, {"seed_url", web.base() + "/"}});
  const std::string iso = web.base() + "/installer.iso";  // the BMC fetches the installer too
  dir.write("seeds/installer.iso", "not really an installer");
  auto seeded = [](Resource r, const std::string& network) {
    r.attributes["user_data_hash"] = "ab12cd34ef56ab12cd34ef56";
    r.computed["user_data"] = "#cloud-config\npackages: [nvidia-driver-550]\n";
    if (!network.empty()) r.computed["network_config"] = network;
    return r;
  };
  // Node 0 boots its installer from virtual media (CD1): the seed goes to the other CD.
  // Node 1 boots over PXE: the seed takes the first CD.
  const Resource n0 = seeded(node(em, 0, {{"boot_method", "virtual-media"}, {"boot_image", iso}}), "network:\n  version: 2\n");
  const Resource n1 = seeded(node(em, 1), "");
  for (const auto& n : {n0, n1}) {
    auto created = p->create(n, *one_call());
    INFO(n.address << (created.ok() ? "" : ": " + created.error().message));
    REQUIRE(created.ok());
    CHECK_FALSE(created->computed.contains("user_data"));  // the provider reports what it observed
  }
  CHECK(get(em, 0, kSystem + "/VirtualMedia/CD1")["Image"] == iso);
  CHECK(get(em, 0, kSystem + "/VirtualMedia/CD2")["Image"] == web.base() + "/train-a-0.iso");
  CHECK(get(em, 1, kSystem + "/VirtualMedia/CD1")["Image"] == web.base() + "/train-a-1.iso");
  CHECK(slurp(media + "/0/CD1") == "not really an installer");
  int listed = 0;  // the seed and the installer share one read of the devices
  for (const auto& l : log_lines(em))
    listed += l["bmc"] == 0 && l["method"] == "GET" && l["path"].get<std::string>().ends_with("/VirtualMedia") ? 1 : 0;
  CHECK(listed == 1);

  IsoContents s0 = read_iso(media + "/0/CD2");
  CHECK(s0.volume_id == "cidata");
  CHECK(s0.files["user-data"] == n0.computed["user_data"].get<std::string>());
  CHECK(s0.files["meta-data"] == "instance-id: train-a-0-ab12cd34ef56\nlocal-hostname: train-a-0\n");
  CHECK(s0.files["network-config"] == "network:\n  version: 2\n");
  IsoContents s1 = read_iso(media + "/1/CD1");
  CHECK(s1.files["meta-data"] == "instance-id: train-a-1-ab12cd34ef56\nlocal-hostname: train-a-1\n");
  CHECK_FALSE(s1.files.count("network-config"));
  CHECK(slurp(seeds + "/train-a-1.iso") == slurp(media + "/1/CD1"));  // what was written is what the BMC got

  REQUIRE(p->remove(n1, *one_call()).ok());
  CHECK(get(em, 1, kSystem + "/VirtualMedia/CD1")["Inserted"] == false);
  CHECK_FALSE(std::filesystem::exists(seeds + "/train-a-1.iso"));
  CHECK(std::filesystem::exists(seeds + "/train-a-0.iso"));

  SECTION("a seed the BMC cannot fetch fails the create with the BMC's message") {
    auto q = provider(em, {{"seed_dir", seeds}, {"seed_url", "http://127.0.0.1:" + std::to_string(closed_port())}});
    auto failed = q->create(n1, *one_call());
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.error().message.find("baremetal.node.train-a[1]") != std::string::npos);
    INFO(failed.error().message);
    CHECK(failed.error().message.find("failed to establish a connection with the URI http://127.0.0.1:") != std::string::npos);
  }
  SECTION("no rendered cloud-init: refused before anything is written") {
    Resource bare = node(em, 1);
    auto failed = p->create(bare, *one_call());
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.error().message.find("no rendered cloud-init reached the provider") != std::string::npos);
  }
}

TEST_CASE("seed: VirtualMedia under the manager (a tower server: one CD and a floppy/USB device)") {
  TempDir dir;
  const std::string seeds = dir.path() + "/seeds", media = dir.path() + "/media";
  std::filesystem::create_directories(seeds);
  FileServer web(seeds);
  dir.write("seeds/installer.iso", "installer");
  Emulator em({"--gpus", "8", "--memory-gib", "2048", "--power-state", "Off", "--power-delay-ms", "20", "--media-dir",
               media},
              "public-tower");
  auto p = provider(em, {{"seed_dir", seeds}, {"seed_url", web.base()}});
  Resource n = node(em, 0, {{"boot_method", "virtual-media"}, {"boot_image", web.base() + "/installer.iso"}});
  n.computed["user_data"] = "#cloud-config\n";
  auto created = p->create(n, *one_call());
  INFO((created.ok() ? "" : created.error().message));
  REQUIRE(created.ok());
  CHECK(slurp(media + "/0/CD1") == "installer");
  CHECK(read_iso(media + "/0/Floppy1").volume_id == "cidata");
}

TEST_CASE("seed: preflight warns without seed_dir and refuses a seed_dir it cannot write") {
  Emulator em({"--gpus", "8", "--memory-gib", "2048"});
  auto none = provider(em)->preflight({node(em, 0)}, *one_call());
  REQUIRE(none.size() == 1);
  CHECK(none[0].code == "BM004");
  CHECK(none[0].severity == Severity::Warning);
  CHECK(none[0].message.find("boot without their rendered stack") != std::string::npos);
  auto missing = provider(em, {{"seed_dir", "/nonexistent/seeds"}, {"seed_url", "http://seeds.example"}})
                     ->preflight({node(em, 0)}, *one_call());
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].severity == Severity::Error);
  CHECK(missing[0].message.find("/nonexistent/seeds is not a directory plinth can write") != std::string::npos);
}

TEST_CASE("errors: wrong credentials name the node, the URL and the reference, never the secret") {
  Emulator em({"--bmcs", "2", "--gpus", "8", "--override", "1:password=other"});
  setenv(kCredsVar, "admin:admin", 1);
  auto p = provider(em);
  auto r = p->read({node(em, 0), node(em, 1)}, *one_call());
  CHECK_FALSE(r[0].error);
  REQUIRE(r[1].error);
  CHECK(r[1].error->kind == Error::Kind::Fatal);
  CHECK(r[1].error->message ==
        "baremetal.node.train-a[1]: POST " + em.bmc(1) +
            "/redfish/v1/SessionService/Sessions: HTTP 401 Unauthorized: While accessing the resource at "
            "/redfish/v1/SessionService/Sessions, the service received an authorization error 401 Unauthorized: "
            "wrong user name or password.; the BMC rejected the credentials from env:PLINTH_TEST_BMC_CREDENTIALS: check the "
            "user:password there");

  setenv(kCredsVar, "admin:Sup3r-Secret!", 1);
  auto p2 = configured(options(em));
  REQUIRE(p2.ok());
  auto r2 = (*p2)->read({node(em, 0)}, *one_call());
  REQUIRE(r2[0].error);
  CHECK(r2[0].error->message.find("Sup3r-Secret") == std::string::npos);
  auto c2 = (*p2)->create(node(em, 0), *one_call());
  REQUIRE_FALSE(c2.ok());
  CHECK(c2.error().message.find("Sup3r-Secret") == std::string::npos);
}

TEST_CASE("errors: missing or malformed credential references") {
  Emulator em({"--gpus", "8"});
  auto p = provider(em);
  unsetenv("PLINTH_TEST_NOT_SET");
  auto r = p->read({node(em, 0, {{"bmc_credentials", "env:PLINTH_TEST_NOT_SET"}})}, *one_call());
  REQUIRE(r[0].error);
  CHECK(r[0].error->kind == Error::Kind::Invalid);
  CHECK(r[0].error->message ==
        "baremetal.node.train-a[0]: BMC credentials env:PLINTH_TEST_NOT_SET: environment variable "
        "PLINTH_TEST_NOT_SET is not set; export it as user:password");

  plinth::test::TempDir dir;
  const std::string bad = dir.write("creds", "only-a-secret-token\n");
  auto r2 = p->read({node(em, 0, {{"bmc_credentials", "file:" + bad}})}, *one_call());
  REQUIRE(r2[0].error);
  CHECK(r2[0].error->message ==
        "baremetal.node.train-a[0]: BMC credentials file:" + bad + " do not have the form user:password");

  auto r3 = p->read({node(em, 0, {{"bmc_credentials", "file:" + dir.path() + "/missing"}})}, *one_call());
  REQUIRE(r3[0].error);
  CHECK(r3[0].error->message == "baremetal.node.train-a[0]: BMC credentials file:" + dir.path() +
                                    "/missing: cannot read " + dir.path() + "/missing; create it holding "
                                    "user:password (mode 0600)");

  auto r4 = p->read({node(em, 0, {{"bmc_credentials", "admin:hunter2"}})}, *one_call());
  REQUIRE(r4[0].error);
  CHECK(r4[0].error->message.find("hunter2") == std::string::npos);

  // A good file works.
  const std::string good = dir.write("good", "admin:admin\n");
  CHECK_FALSE(p->read({node(em, 0, {{"bmc_credentials", "file:" + good}})}, *one_call())[0].error);
}

TEST_CASE("errors: an unreachable BMC is a retryable error naming the node and the URL, tried once") {
  Emulator em({"--gpus", "8"});
  auto p = provider(em);
  const std::string endpoint = "https://127.0.0.1:" + std::to_string(closed_port()) + "/bmc/0";
  auto r = p->read({node(em, 0, {{"bmc_endpoint", endpoint}})}, *one_call());
  REQUIRE(r[0].error);
  CHECK(r[0].error->kind == Error::Kind::Retryable);
  CHECK(r[0].error->message.starts_with("baremetal.node.train-a[0]: GET " + endpoint +
                                        "/redfish/v1/: connection refused or host unreachable"));
  // One attempt: retrying is the engine's business (one retry owner).
  CHECK(r[0].error->message.find("gave up") == std::string::npos);
  auto c = p->create(node(em, 0, {{"bmc_endpoint", endpoint}}), *one_call());
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().retryable());
}

TEST_CASE("errors: a BMC that never answers fails at the operation's deadline, whatever the request timeout") {
  Emulator em({"--gpus", "8", "--hang-bmc", "0"});
  auto p = provider(em);  // timeout_ms 5000
  auto c = p->create(node(em, 0), *one_call(Deadline::after(std::chrono::milliseconds(400))));
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().kind == Error::Kind::DeadlineExceeded);
  CHECK(c.error().message == "baremetal.node.train-a[0]: GET " + em.bmc(0) +
                                 "/redfish/v1/: no answer before the operation's deadline of 400 ms passed");
}

TEST_CASE("errors: a BMC that never answers times out at the request timeout") {
  Emulator em({"--gpus", "8", "--hang-bmc", "0"});
  auto p = provider(em, {{"timeout_ms", "300"}});
  auto r = p->read({node(em, 0)}, *one_call());
  REQUIRE(r[0].error);
  CHECK(r[0].error->kind == Error::Kind::Retryable);
  CHECK(r[0].error->message.starts_with("baremetal.node.train-a[0]: GET " + em.bmc(0) +
                                        "/redfish/v1/: timed out (limit 300 ms)"));
}

TEST_CASE("errors: malformed JSON names the node and the URL") {
  Emulator em({"--gpus", "8", "--override", "0:malformed-json=true"});
  auto p = provider(em);
  auto r = p->read({node(em, 0)}, *one_call());
  REQUIRE(r[0].error);
  CHECK(r[0].error->kind == Error::Kind::Fatal);
  CHECK(r[0].error->message.starts_with("baremetal.node.train-a[0]: GET " + em.bmc(0) +
                                        "/redfish/v1/: the BMC answered malformed JSON (parse error at byte "));
  CHECK(r[0].error->message.ends_with("); check the BMC firmware or its Redfish service"));
}

TEST_CASE("errors: a BMC without a Processors collection") {
  Emulator em({"--gpus", "8", "--override", "0:processors=absent"});
  auto p = provider(em);
  auto r = p->read({node(em, 0)}, *one_call());
  REQUIRE(r[0].error);
  CHECK(r[0].error->message ==
        "baremetal.node.train-a[0]: GET " + em.bmc(0) + kSystem +
            ": the system has no Processors collection, so its GPUs cannot be checked against the pool; check the "
            "BMC firmware (it must list GPUs as Processors with ProcessorType GPU)");
}

TEST_CASE("errors: TLS is verified, insecure only for loopback") {
  Emulator em({"--gpus", "8"});
  setenv(kCredsVar, "admin:admin", 1);
  auto o = options(em);
  o.erase("ca_bundle");
  auto p = configured(o);
  REQUIRE(p.ok());
  auto r = (*p)->read({node(em, 0)}, *one_call());
  REQUIRE(r[0].error);
  CHECK(r[0].error->kind == Error::Kind::Fatal);
  CHECK(r[0].error->message.find("TLS certificate could not be verified") != std::string::npos);

  // The node's own bmc_ca_bundle is used.
  CHECK_FALSE((*p)->read({node(em, 0, {{"bmc_ca_bundle", em.ca()}})}, *one_call())[0].error);

  o["insecure"] = "true";
  auto insecure = configured(o);
  REQUIRE(insecure.ok());
  CHECK_FALSE((*insecure)->read({node(em, 0)}, *one_call())[0].error);
  auto far = (*insecure)->read({node(em, 0, {{"bmc_endpoint", "https://bmc-0.dc1.example"}})}, *one_call());
  REQUIRE(far[0].error);
  CHECK(far[0].error->message.starts_with(
      "baremetal.node.train-a[0]: GET https://bmc-0.dc1.example/redfish/v1/: refusing to turn TLS verification off"));
}

TEST_CASE("faults: 20% of answers are 503 with Retry-After, the engine's retries make create and read succeed") {
  Emulator em({"--bmcs", "4", "--gpus", "8", "--memory-gib", "2048", "--power-state", "Off", "--power-delay-ms",
               "50", "--rate-503", "0.2"});
  auto p = provider(em);
  std::vector<Resource> nodes;
  for (int i = 0; i < 4; ++i) nodes.push_back(node(em, i));
  apply::Options opts;
  opts.parallelism = 4;
  opts.default_limits.retry.max_attempts = 20;
  opts.default_limits.retry.base = std::chrono::milliseconds(10);
  test::MemoryBackend backend;
  state::StateDocument start;
  start.lineage = "l";
  apply::ProviderLookup lookup = [&](const std::string&) { return p.get(); };
  apply::Report report = apply::execute(plan::diff(nodes, {}), start, backend, lookup, opts);
  for (const auto& o : report.outcomes) {
    INFO(o.address << ": " << o.error);
    CHECK(o.status == apply::OutcomeStatus::Succeeded);
  }
  auto r = apply::refresh(nodes, lookup, [&](const std::string&) { return opts.default_limits; });
  CHECK(r.failures.empty());

  // 503s happened, and the request was sent again only after the Retry-After
  // second (other requests to that BMC, e.g. the inventory reads sent at
  // once, may go on meanwhile).
  auto ms_of_day = [](const Json& l) {  // "2026-12-02T13:20:00.123Z"
    const std::string t = l["time"];
    return ((std::stol(t.substr(11, 2)) * 60 + std::stol(t.substr(14, 2))) * 60 + std::stol(t.substr(17, 2))) * 1000 +
           std::stol(t.substr(20, 3));
  };
  int faults = 0;
  auto lines = log_lines(em);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i]["fault"] != "503") continue;
    ++faults;
    for (size_t j = i + 1; j < lines.size(); ++j)
      if (lines[j]["bmc"] == lines[i]["bmc"] && lines[j]["method"] == lines[i]["method"] &&
          lines[j]["path"] == lines[i]["path"]) {
        INFO(lines[i].dump() << " then " << lines[j].dump());
        CHECK(ms_of_day(lines[j]) - ms_of_day(lines[i]) >= 900);
        break;
      }
  }
  CHECK(faults > 5);
  // (read after the log: these GETs send again at once on an injected 503)
  for (int i = 0; i < 4; ++i) CHECK(get(em, i, kSystem)["PowerState"] == "On");
}

TEST_CASE("sessions: an expired session is renewed once") {
  Emulator em({"--gpus", "8", "--session-timeout", "1"});
  auto p = provider(em);
  auto logins = [&] {
    int n = 0;
    for (const auto& l : log_lines(em))
      n += l["method"] == "POST" && l["path"].get<std::string>().ends_with("/SessionService/Sessions");
    return n;
  };
  CHECK_FALSE(p->read({node(em, 0)}, *one_call())[0].error);
  // Usually 1; on a loaded machine the first read's new connections (its
  // inventory reads go in parallel) may outlast the 1 s session already.
  const int before = logins();
  CHECK(before >= 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  CHECK_FALSE(p->read({node(em, 0)}, *one_call())[0].error);
  CHECK(logins() == before + 1);
}

TEST_CASE("registry: unknown providers and bad options") {
  auto p = make_builtin_provider("baremetl");
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().message == "unknown provider 'baremetl'; did you mean 'baremetal'?");
  auto bad = configured({{"poll_ms", "soon"}});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message ==
        "provider baremetal option poll_ms = 'soon' (--provider-option) is not an integer (a whole number >= 0)");
  auto ok = make_builtin_provider("baremetal");
  REQUIRE(ok.ok());
  CHECK((*ok)->name() == "baremetal");
}
