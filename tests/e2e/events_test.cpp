// What apply, destroy and refresh report as they run, seen from the binary
// against the Redfish emulator: --json writes one event per line (docs/apply.md,
// "Machine-readable output"), and an operation that runs long says so.
#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/providers/baremetal/emulator.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"

using namespace plinth::test;
using Json = nlohmann::json;

namespace {

/// One bare-metal pool of `count` nodes on the emulator's BMCs.
std::string events_blueprint(const Emulator& emu, int count) {
  return "apiVersion: plinth/v1\n"
         "kind: Blueprint\n"
         "metadata: {name: e2e-events, owner: ml-platform}\n"
         "stacks:\n"
         "  train:\n"
         "    driver: \"550.54.15\"\n"
         "    cuda: \"12.4\"\n"
         "    cudnn: \"9.1.0\"\n"
         "    frameworks: {pytorch: \"2.3.1\"}\n"
         "    images: [\"nvcr.io/nvidia/pytorch@sha256:116f54c41d0405dbb10e7b04ebc31e262a5b8c85c1233fcf36eaee344d91ae58\"]\n"
         "node_pools:\n"
         "  - name: train-a\n"
         "    provider: baremetal\n"
         "    count: " + std::to_string(count) + "\n"
         "    role: inference\n"
         "    hardware: {gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96, memory_gb: 2048}\n"
         "    stack: train\n"
         "    boot: {method: pxe, image: \"http://pxe.example/ubuntu-24.04/\"}\n"
         "    bios: {PowerProfile: MaxPerf}\n"
         "    bmc:\n"
         "      endpoints: \"" + emu.base() + "/bmc/{index}\"\n"
         "      credentials: env:BMC_CREDENTIALS\n"
         "      ca_bundle: " + emu.ca() + "\n"
         "    mig: {profile: none}\n";
}

/// Every line of `out` parsed; a line that is not a JSON object fails the test.
std::vector<Json> json_lines(const std::string& out) {
  std::vector<Json> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    INFO(line);
    Json j = Json::parse(line, nullptr, false);
    REQUIRE(j.is_object());
    for (const char* key : {"@level", "@message", "@module", "@timestamp", "type"}) CHECK(j.contains(key));
    lines.push_back(std::move(j));
  }
  return lines;
}

std::vector<Json> of_type(const std::vector<Json>& lines, const std::string& type) {
  std::vector<Json> out;
  for (const auto& j : lines)
    if (j["type"] == type) out.push_back(j);
  return out;
}

}  // namespace

TEST_CASE("apply --json writes one event per line: version, planned changes, each operation, the outcome",
          "[e2e][events][anywhere]") {
  Emulator emu(h100_emulator_args(2));
  TempDir dir;
  const std::string bp = dir.write("bp.yaml", events_blueprint(emu, 2));
  const std::string st = dir.path() + "/plinth.state.json";

  auto refused = run_plinth({"apply", bp, "--state", st, "--json"}, dir.path(), kBmcEnv);
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("--json prints events for a program to read") != std::string::npos);

  auto r = run_plinth({"apply", bp, "--state", st, "--json", "--auto-approve"}, dir.path(), kBmcEnv);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto lines = json_lines(r.out);
  REQUIRE(lines.size() > 4);
  CHECK(lines.front()["type"] == "version");
  CHECK(lines.front()["ui"] == "1.0");
  CHECK(lines.back()["type"] == "apply_summary");
  CHECK(lines.back()["complete"] == true);
  CHECK(lines.back()["failed"] == 0);
  CHECK(lines.back()["state"]["serial"].get<int>() >= 1);

  auto planned = of_type(lines, "planned_change");
  auto started = of_type(lines, "apply_start"), completed = of_type(lines, "apply_complete");
  CHECK(started.size() == planned.size());
  CHECK(completed.size() == planned.size());
  CHECK(lines.back()["succeeded"] == planned.size());
  bool node_seen = false;
  for (const auto& c : completed)
    if (c["hook"]["resource"]["addr"] == "baremetal.node.train-a[1]") {
      node_seen = true;
      CHECK(c["hook"]["action"] == "create");
      CHECK(c["hook"]["elapsed_seconds"].is_number());
    }
  CHECK(node_seen);
  REQUIRE(of_type(lines, "change_summary").size() == 1);
  CHECK(of_type(lines, "change_summary")[0]["changes"]["add"] == planned.size());
  REQUIRE(of_type(lines, "policy_summary").size() == 1);
  CHECK(of_type(lines, "policy_summary")[0]["blocked"] == false);

  // Drift (BMC 0's BIOS changed by hand and rebooted), then refresh --json
  // reports it and the serial it saved.
  const std::string sys = emu.bmc(0) + "/redfish/v1/Systems/437XR1138R2";
  auto patch = run_program({"curl", "-sS", "--fail", "--cacert", emu.ca(), "-u", "admin:admin", "-X", "PATCH", "-H",
                            "Content-Type: application/json", "-d", R"({"Attributes": {"PowerProfile": "Balanced"}})",
                            sys + "/Bios/Settings"});
  REQUIRE(patch.exit_code == 0);
  auto reset = run_program({"curl", "-sS", "--fail", "--cacert", emu.ca(), "-u", "admin:admin", "-X", "POST", "-H",
                            "Content-Type: application/json", "-d", R"({"ResetType": "ForceRestart"})",
                            sys + "/Actions/ComputerSystem.Reset"});
  REQUIRE(reset.exit_code == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // plan --json carries the same drift in its document (a drift check reads it, not stderr).
  auto plan = run_plinth({"plan", bp, "--state", st, "--json"}, dir.path(), kBmcEnv);
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  const Json plan_doc = Json::parse(plan.out);
  CHECK(plan_doc["format_version"] == "1.2");
  REQUIRE(plan_doc["resource_drift"].size() == 1);
  CHECK(plan_doc["resource_drift"][0]["resource"]["addr"] == "baremetal.node.train-a[0]");
  CHECK(plan_doc["resource_drift"][0]["action"] == "update");
  CHECK(plan_doc["resource_drift"][0]["by_provider"] == false);
  CHECK(plan_doc["resource_drift"][0]["changes"][0]["path"] == "bios.PowerProfile");
  CHECK(plan_doc["resource_drift"][0]["changes"][0]["after"] == "Balanced");
  auto refresh = run_plinth({"refresh", bp, "--state", st, "--json"}, dir.path(), kBmcEnv);
  INFO(refresh.out << refresh.err);
  REQUIRE(refresh.exit_code == 0);
  auto refreshed = json_lines(refresh.out);
  REQUIRE(of_type(refreshed, "refresh_complete").size() == 1);
  const Json done = of_type(refreshed, "refresh_complete")[0];
  CHECK(done["resources"] == planned.size());
  CHECK(done["drifted"] == 1);
  CHECK(done["state"]["serial"].get<int>() > lines.back()["state"]["serial"].get<int>());
  auto drift = of_type(refreshed, "resource_drift");
  REQUIRE(drift.size() == 1);
  CHECK(drift[0]["change"]["resource"]["addr"] == "baremetal.node.train-a[0]");
  CHECK(drift[0]["change"]["changes"][0]["path"] == "bios.PowerProfile");
  CHECK(drift[0]["change"]["changes"][0]["after"] == "Balanced");

  // destroy --json ends with its own summary.
  auto destroy = run_plinth({"destroy", bp, "--state", st, "--json", "--auto-approve"}, dir.path(), kBmcEnv);
  INFO(destroy.out << destroy.err);
  CHECK(destroy.exit_code == 0);
  auto destroyed = json_lines(destroy.out);
  CHECK(destroyed.back()["type"] == "apply_summary");
  CHECK(destroyed.back()["operation"] == "destroy");
  CHECK(destroyed.back()["succeeded"] == planned.size());
}

TEST_CASE("apply: an operation that runs long says it is still running, in text and in --json",
          "[e2e][events][anywhere]") {
  Emulator emu(h100_emulator_args(1, {"--latency-ms", "250"}));
  TempDir dir;
  const std::string bp = dir.write("bp.yaml", events_blueprint(emu, 1));
  std::map<std::string, std::string> env = kBmcEnv;
  env["PLINTH_PROGRESS_INTERVAL"] = "300ms";

  auto r = run_plinth({"apply", bp, "--state", dir.path() + "/a.json", "--auto-approve"}, dir.path(), env);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("apply: baremetal.node.train-a[0]: still creating... [") != std::string::npos);
  CHECK(r.out.find("apply: baremetal.node.train-a[0]: created (") != std::string::npos);

  auto j = run_plinth({"apply", bp, "--state", dir.path() + "/b.json", "--auto-approve", "--json"}, dir.path(), env);
  INFO(j.out << j.err);
  REQUIRE(j.exit_code == 0);
  auto progress = of_type(json_lines(j.out), "apply_progress");
  REQUIRE_FALSE(progress.empty());
  CHECK(progress[0]["hook"]["resource"]["addr"] == "baremetal.node.train-a[0]");
  CHECK(progress[0]["hook"]["elapsed_seconds"].get<double>() >= 0.3);

  env["PLINTH_PROGRESS_INTERVAL"] = "soon";
  auto bad = run_plinth({"apply", bp, "--state", dir.path() + "/c.json", "--auto-approve"}, dir.path(), env);
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("PLINTH_PROGRESS_INTERVAL='soon' must be a duration") != std::string::npos);
}
