// Renaming a pool that keeps its BMCs (issue 16): the plan deletes the old
// addresses and creates the new ones on the same servers. They used to run at
// once, and both could end Off while the state said On. The executor now
// finishes the delete of an object (same type and import_id value: the BMC
// endpoint) before it starts the create on it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>

#include "engine/state/state.h"
#include "tests/fault/fault.h"

namespace plinth::test::fault_rename_pool {

namespace {

constexpr int kNodes = 6;

}  // namespace

TEST_CASE("renaming a pool that keeps its BMCs: each server's delete finishes before its create, every server ends On",
          "[fault][rename]") {
  Emulator emu({"--bmcs", std::to_string(kNodes), "--gpus", "8", "--memory-gib", "2048", "--power-delay-ms", "60",
                "--power-state", "Off", "--latency-ms", "5"});
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  auto r = run_plinth({"apply", dir.write("bp.yaml", fault::one_pool_blueprint("rename", "old", kNodes, emu)), "--state",
                       st, "--auto-approve", "--provider-option", "baremetal.poll_ms=20"},
                      "", kBmcEnv);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string before = emu.log();
  const size_t log_start = static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));

  const std::string bp = dir.write("bp.yaml", fault::one_pool_blueprint("rename", "new", kNodes, emu));
  r = run_plinth({"apply", bp, "--state", st, "--auto-approve", "--provider-option", "baremetal.poll_ms=20",
                  "--provider-option", "baremetal.power_timeout_ms=20000"},
                 "", kBmcEnv);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Apply complete: " + std::to_string(2 * kNodes) + " succeeded") != std::string::npos);

  // Every server was reset by the delete of old[i] and the create of new[i].
  const auto resets = test::resets(emu.log_path(), log_start);
  CHECK(resets.size() == static_cast<size_t>(kNodes));
  for (auto [bmc, n] : resets) CHECK(n == 2);

  // Every server is On, as the state says, and a refreshing plan finds nothing to do.
  CHECK(fault::power_states(emu, kNodes) == std::vector<std::string>(kNodes, "On"));
  auto doc = state::open_local(st)->load();
  REQUIRE(doc.ok());
  for (const auto& res : (*doc)->resources)
    if (res.type == "baremetal.node") {
      CHECK(res.name == "new");
      CHECK(res.computed.value("power_state", "") == "On");
    }
  r = run_plinth({"plan", bp, "--state", st, "--detailed-exitcode"}, "", kBmcEnv);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
}

}  // namespace plinth::test::fault_rename_pool
