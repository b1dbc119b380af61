// Refresh reads what a node claims (issue 16): a provisioned server is On.
// One switched off outside Plinth used to pass a refreshing plan as "No
// changes" (power_state was only a computed value); it is now `power` drift,
// and apply powers the server on again.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "tests/fault/fault.h"

namespace plinth::test::fault_power_drift {

namespace {

constexpr int kNodes = 3;

/// POSTs ComputerSystem.Reset ForceOff to BMC `bmc`, as an operator's script would.
void force_off(const Emulator& emu, int bmc) {
  auto r = redfish_python(
      "c.request('POST','/bmc/%s/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset'%sys.argv[3],"
      "body=json.dumps({'ResetType':'ForceOff'}),"
      "headers={'Authorization':auth,'Content-Type':'application/json'})\n"
      "r=c.getresponse(); r.read(); sys.exit(0 if r.status<300 else 1)\n",
      emu.ca(), emu.base(), {std::to_string(bmc)});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
}

}  // namespace

TEST_CASE("a server switched off outside Plinth is power drift: the plan shows it, apply powers it on",
          "[fault][drift]") {
  Emulator emu({"--bmcs", std::to_string(kNodes), "--gpus", "8", "--memory-gib", "2048", "--power-delay-ms", "30",
                "--power-state", "Off"});
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  const std::string bp = dir.write("bp.yaml", fault::one_pool_blueprint("drift", "gpu", kNodes, emu));
  const std::vector<std::string> fast = {"--provider-option", "baremetal.poll_ms=20"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), fast.begin(), fast.end());
    return run_plinth(args, "", kBmcEnv);
  };
  auto r = with({"apply", bp, "--state", st, "--auto-approve"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  r = with({"plan", bp, "--state", st, "--detailed-exitcode"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);

  force_off(emu, 1);
  // Wait (on the condition, not a time) until the BMC reports Off.
  for (int i = 0; i < 500 && fault::power_states(emu, kNodes)[1] != "Off"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(fault::power_states(emu, kNodes)[1] == "Off");

  r = with({"plan", bp, "--state", st, "--detailed-exitcode"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("~ baremetal.node.gpu[1]") != std::string::npos);
  CHECK(r.out.find("power: \"Off\" -> \"On\"") != std::string::npos);
  CHECK(r.out.find("baremetal.node.gpu[0]") == std::string::npos);

  r = with({"apply", bp, "--state", st, "--auto-approve"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Apply complete: 1 succeeded") != std::string::npos);
  CHECK(fault::power_states(emu, kNodes) == std::vector<std::string>(kNodes, "On"));
  r = with({"plan", bp, "--state", st, "--detailed-exitcode"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
}

}  // namespace plinth::test::fault_power_drift
