// A hostile policy pack (issue 16) through the built `plinth`: policy list,
// plan, audit and apply each finish, exit 1 naming the policies that broke,
// print nothing raw to the terminal and write well-formed reports. Every run
// is under `timeout -s KILL` so a regression fails here instead of hanging.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "engine/core/strings.h"
#include "tests/providers/baremetal/emulator.h"
#include "tests/support/run.h"
#include "tests/support/text.h"

namespace plinth::test::e2e_hostile_policy {

namespace {

/// The policy sandbox's wall-clock limit for these runs: a stuck check costs
/// this (plus a grace period), not the 10 s default.
const std::map<std::string, std::string> kHostileEnv = {{"PLINTH_POLICY_TIMEOUT", "1s"},
                                                         {"BMC_CREDENTIALS", "admin:admin"}};
constexpr const char* kKill = "120";  // far above what a run takes; only a hang gets there

RunResult plinth_bounded(std::vector<std::string> args, const std::map<std::string, std::string>& env = kHostileEnv) {
  args.insert(args.begin(), {"timeout", "-s", "KILL", kKill, PLINTH_BINARY});
  return run_program(args, "", env);
}

std::string policy_with(const std::string& id, const std::string& body) {
  return "policy {\n  id = \"" + id + "\", title = \"hostile " + id +
         "\", severity = \"high\", enforcement = \"mandatory\",\n  check = function(ctx)\n" + body + "\n  end,\n}\n";
}

/// Every way a check once crashed, hung or forged plinth (issue 16).
std::string hostile_pack(const TempDir& dir) {
  const std::string p = dir.path() + "/hostile";
  dir.write("hostile/next.lua", policy_with("HOSTILE-NEXT", "local k = 'resources' for i = 1, 100 do k = next(ctx, k) end"));
  dir.write("hostile/inner.lua", policy_with("HOSTILE-INNER", R"(
    for i = 1, 50 do policy { id = 'X' .. i, title = 't', severity = 'low', enforcement = 'advisory', check = function() end } end)"));
  dir.write("hostile/gc.lua", policy_with("HOSTILE-GC", R"(
    for i = 1, 1000 do setmetatable({}, { __gc = function() while true do end end }) end
    local t = {} for i = 1, 100000 do t[i] = {} end)"));
  dir.write("hostile/xpcall.lua", policy_with("HOSTILE-XPCALL", R"(
    xpcall(function() while true do end end, function() while true do end end))"));
  dir.write("hostile/stuck.lua", policy_with("HOSTILE-STUCK", R"(
    string.find(string.rep('a', 40), string.rep('a?', 40) .. string.rep('a', 40)))"));
  dir.write("hostile/flood.lua", policy_with("HOSTILE-FLOOD", R"(
    for i = 1, 100 do fail(nil, '\27[2J\27[31mESCAPE\255\254 ' .. string.rep('x', 10000)) end)"));
  return p;
}

void check_terminal_safe(const RunResult& r) {
  CHECK_FALSE(contains(r.out, "\x1b"));
  CHECK_FALSE(contains(r.err, "\x1b"));
  CHECK(valid_utf8(r.out));
  CHECK(valid_utf8(r.err));
}

void check_hostile_reported(const std::string& err) {
  for (const char* id : {"HOSTILE-INNER", "HOSTILE-GC", "HOSTILE-XPCALL", "HOSTILE-STUCK"})
    CHECK(contains(err, std::string("error[") + id + "]: policy " + id + " could not run: "));
  CHECK_FALSE(contains(err, "HOSTILE-NEXT]"));  // next(ctx, k) walks ctx (it crashed plinth with SIGSEGV)
  CHECK(contains(err, "'__gc' metamethods are not available in the policy sandbox"));
  CHECK(contains(err, "policy{} can only be called while its policy file loads, not inside a check"));
  CHECK(contains(err, "instruction limit of 10000000 exceeded"));
  CHECK(contains(err, "did not finish within 1 s (wall clock) and was stopped by killing its sandbox process"));
  CHECK(contains(err, "\\x1b[2J\\x1b[31mESCAPE\xef\xbf\xbd\xef\xbf\xbd xxx"));
  CHECK(contains(err, "[... message cut: "));
}

}  // namespace

TEST_CASE("plinth policy list finishes on a pack that hangs or finalizes while it loads", "[e2e][policy]") {
  TempDir dir;
  dir.write("p/gc.lua", "setmetatable({}, { __gc = function() while true do end end })\n" + policy_with("GC", ""));
  dir.write("p/stuck.lua", "string.find(string.rep('a', 40), string.rep('a?', 40) .. string.rep('a', 40))\n");
  dir.write("p/loop.lua", "while true do end\n");
  dir.write("p/ok.lua", policy_with("STILL-LISTED", ""));
  auto r = plinth_bounded({"policy", "list", "--policy-dir", dir.path() + "/p"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "STILL-LISTED"));
  CHECK_FALSE(contains(r.out, "GC "));
  CHECK(contains(r.err, dir.path() + "/p/gc.lua:1: error[POL001]: policy file failed to load: '__gc' metamethods are "
                                     "not available in the policy sandbox"));
  CHECK(contains(r.err, dir.path() + "/p/stuck.lua: error[POL001]: policy file " + dir.path() +
                            "/p/stuck.lua could not be loaded: it did not finish within 1 s (wall clock)"));
  CHECK(contains(r.err, dir.path() + "/p/loop.lua:1: error[POL001]: policy file failed to load: instruction limit"));
}

TEST_CASE("plinth plan and audit finish on a hostile pack, name every broken policy and stay terminal-safe",
          "[e2e][policy]") {
  TempDir dir;
  const std::string pack = hostile_pack(dir);
  std::vector<std::string> args = {"plan", "blueprints/examples/lab.yaml", "--state", dir.path() + "/s.json",
                                   "--refresh=false", "--policy-dir", pack};
  for (const std::string format : {"json", "sarif", "junit", "markdown", "html"})
    args.insert(args.end(), {"--report", format + ":" + dir.path() + "/report." + format});
  auto plan = plinth_bounded(args);
  INFO(plan.err);
  CHECK(plan.exit_code == 1);
  check_hostile_reported(plan.err);
  check_terminal_safe(plan);
  CHECK(contains(plan.err, "policy check failed"));

  auto audit = plinth_bounded({"audit", "blueprints/examples/lab.yaml", "--state", dir.path() + "/s.json",
                               "--policy-dir", pack, "--format", "json", "--output", dir.path() + "/audit.json"});
  INFO(audit.err);
  CHECK(audit.exit_code == 1);  // mandatory policies errored
  check_terminal_safe(audit);
  CHECK(nlohmann::json::parse(slurp(dir.path() + "/audit.json"))["summary"]["blocked"] == true);

  for (const std::string format : {"json", "sarif", "junit", "markdown", "html"}) {
    const std::string out = dir.path() + "/report." + format;
    INFO(format);
    const std::string text = slurp(out);
    CHECK(valid_utf8(text));
    CHECK_FALSE(contains(text, "\x1b"));
    CHECK(contains(text, "HOSTILE-STUCK"));
    if (format == "json" || format == "sarif") CHECK_NOTHROW(nlohmann::json::parse(text));
    if (format == "junit") {
      auto xml = run_program({"/usr/bin/python3", "-c", "import sys,xml.etree.ElementTree as E; E.parse(sys.argv[1])", out});
      INFO(xml.err);
      CHECK(xml.exit_code == 0);
    }
  }
}

TEST_CASE("plinth apply refuses a hostile pack's plan before any BMC request", "[e2e][policy]") {
  Emulator emu({"--bmcs", "2", "--gpus", "8", "--memory-gib", "2048"});
  TempDir dir;
  const std::string pack = hostile_pack(dir);
  std::string bp = dir.write("bp.yaml", R"(apiVersion: plinth/v1
kind: Blueprint
metadata: {name: hostile, owner: tests}
stacks:
  train:
    driver: "550.54.15"
    cuda: "12.4"
    images: ["nvcr.io/nvidia/pytorch@sha256:116f54c41d0405dbb10e7b04ebc31e262a5b8c85c1233fcf36eaee344d91ae58"]
networks:
  vlans: [{name: ml, id: 100, cidr: 10.100.0.0/16, vrf: ml, purpose: training, mtu: 9000}]
storage:
  tiers: [{name: hot, kind: nvme, capacity_tb: 10, classification: internal, encryption: {at_rest: aes-256-xts}}]
node_pools:
  - name: train-a
    provider: baremetal
    count: 2
    role: training
    hardware: {gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96, memory_gb: 2048}
    stack: train
    networks: [ml]
    storage: [hot]
    bmc: {endpoints: ")" + emu.base() + R"(/bmc/{index}", credentials: env:BMC_CREDENTIALS, ca_bundle: )" +
                                          emu.ca() + R"(}
)");
  const std::string before = emu.log();
  auto r = plinth_bounded({"apply", bp, "--state", dir.path() + "/s.json", "--auto-approve", "--policy-dir", pack});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  check_hostile_reported(r.err);
  check_terminal_safe(r);
  CHECK(emu.log() == before);  // no provider call
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/s.json"));
}

}  // namespace plinth::test::e2e_hostile_policy
