// Renaming a pool that keeps its BMCs (issue 16): the plan deletes the old
// addresses and creates the new ones on the same servers. They used to run at
// once, and both could end Off while the state said On. The executor now
// finishes the delete of an object (same type and import_id value: the BMC
// endpoint) before it starts the create on it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>

#include "engine/state/state.h"
#include "tests/providers/baremetal/emulator.h"
#include "tests/support/run.h"

using namespace plinth;
using namespace plinth::test;

namespace {

constexpr int kNodes = 6;

std::string blueprint(const std::string& pool, const std::string& base, const std::string& ca) {
  return "apiVersion: plinth/v1\n"
         "kind: Blueprint\n"
         "metadata: {name: rename, owner: ml-platform}\n"
         "stacks:\n"
         "  train:\n"
         "    driver: \"550.54.15\"\n"
         "    cuda: \"12.4\"\n"
         "    cudnn: \"9.1.0\"\n"
         "    frameworks: {pytorch: \"2.3.1\"}\n"
         "    images: [\"nvcr.io/nvidia/pytorch@sha256:116f54c41d0405dbb10e7b04ebc31e262a5b8c85c1233fcf36eaee344d91ae58\"]\n"
         "node_pools:\n"
         "  - name: " + pool + "\n"
         "    provider: baremetal\n"
         "    count: " + std::to_string(kNodes) + "\n"
         "    role: inference\n"
         "    hardware: {gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96, memory_gb: 2048}\n"
         "    stack: train\n"
         "    boot: {method: pxe, image: \"http://pxe.example/ubuntu-24.04/\"}\n"
         "    bmc:\n"
         "      endpoints: \"" + base + "/bmc/{index}\"\n"
         "      credentials: env:BMC_CREDENTIALS\n"
         "      ca_bundle: " + ca + "\n"
         "    mig: {profile: none}\n";
}

const std::map<std::string, std::string> kEnv = {{"BMC_CREDENTIALS", "admin:admin"}};

}  // namespace

TEST_CASE("renaming a pool that keeps its BMCs: each server's delete finishes before its create, every server ends On",
          "[fault][rename]") {
  Emulator emu({"--bmcs", std::to_string(kNodes), "--gpus", "8", "--memory-gib", "2048", "--power-delay-ms", "60",
                "--power-state", "Off", "--latency-ms", "5"});
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  auto r = run_plinth({"apply", dir.write("bp.yaml", blueprint("old", emu.base(), emu.ca())), "--state", st,
                       "--auto-approve", "--provider-option", "baremetal.poll_ms=20"},
                      "", kEnv);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string before = emu.log();
  const size_t log_start = static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));

  const std::string bp = dir.write("bp.yaml", blueprint("new", emu.base(), emu.ca()));
  r = run_plinth({"apply", bp, "--state", st, "--auto-approve", "--provider-option", "baremetal.poll_ms=20"}, "", kEnv);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Apply complete: " + std::to_string(2 * kNodes) + " succeeded") != std::string::npos);

  // Every server was reset by the delete of old[i] and the create of new[i].
  std::map<int, int> resets;
  std::istringstream in(emu.log());
  size_t i = 0;
  for (std::string line; std::getline(in, line); ++i) {
    if (i < log_start) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j["bmc"].is_number() || j["method"] != "POST") continue;
    if (j["path"].get<std::string>().find("ComputerSystem.Reset") == std::string::npos) continue;
    if (j["status"].is_number() && j["status"].get<int>() < 300) ++resets[j["bmc"].get<int>()];
  }
  CHECK(resets.size() == static_cast<size_t>(kNodes));
  for (auto [bmc, n] : resets) CHECK(n == 2);

  // Every server is On, as the state says, and a refreshing plan finds nothing to do.
  auto pw = run_program({"/usr/bin/python3", "-c",
                         "import json,ssl,sys,http.client,base64,urllib.parse\n"
                         "ctx=ssl.create_default_context(cafile=sys.argv[1])\n"
                         "auth='Basic '+base64.b64encode(b'admin:admin').decode()\n"
                         "u=urllib.parse.urlparse(sys.argv[2])\n"
                         "c=http.client.HTTPSConnection(u.hostname,u.port,context=ctx)\n"
                         "for i in range(int(sys.argv[3])):\n"
                         "  c.request('GET','/bmc/%d/redfish/v1/Systems/437XR1138R2'%i,headers={'Authorization':auth})\n"
                         "  print(json.loads(c.getresponse().read())['PowerState'])\n",
                         emu.ca(), emu.base(), std::to_string(kNodes)});
  REQUIRE(pw.exit_code == 0);
  CHECK(pw.out == "On\nOn\nOn\nOn\nOn\nOn\n");
  auto doc = state::open_local(st)->load();
  REQUIRE(doc.ok());
  for (const auto& res : (*doc)->resources)
    if (res.type == "baremetal.node") {
      CHECK(res.name == "new");
      CHECK(res.computed.value("power_state", "") == "On");
    }
  r = run_plinth({"plan", bp, "--state", st, "--detailed-exitcode"}, "", kEnv);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
}
