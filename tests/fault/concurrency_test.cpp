// Eight processes plan and apply the same workspace at once, with the state in
// a file and in PostgreSQL (issue 16): one applies at a time (no server is
// provisioned twice), the state is never corrupted, and the others wait up to
// --lock-timeout or fail naming the holder.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <sstream>

#include "engine/state/state.h"
#include "tests/fault/fault.h"
#include "tests/support/postgres.h"
#include "tests/support/run.h"

namespace plinth::test::fault_concurrency {

namespace {

constexpr int kProcesses = 8;
constexpr int kNodes = 6;

void run_eight(const std::string& location, const std::string& shown) {
  Emulator emu({"--bmcs", std::to_string(kNodes), "--gpus", "8", "--memory-gib", "2048", "--power-delay-ms", "0",
                "--power-state", "Off", "--latency-ms", "15"});
  TempDir dir;
  const std::string bp = dir.write("bp.yaml", fault::one_pool_blueprint("concurrency", "shared", kNodes, emu));

  // 1. Everyone waits: 4 applies and 4 plans with --lock-timeout; all succeed.
  std::vector<pid_t> pids;
  std::vector<std::string> outs;
  for (int i = 0; i < kProcesses; ++i) {
    outs.push_back(dir.path() + "/wait-" + std::to_string(i) + ".txt");
    std::vector<std::string> args = {i % 2 ? "plan" : "apply", bp, "--state", location, "--lock-timeout", "120s"};
    if (i % 2 == 0) args.push_back("--auto-approve");
    pids.push_back(fault::start_plinth(args, outs.back()));
  }
  int applied = 0;
  for (int i = 0; i < kProcesses; ++i) {
    int status = 0;
    REQUIRE(waitpid(pids[i], &status, 0) == pids[i]);
    const std::string out = slurp(outs[i]);
    INFO("process " << i << ": " << out);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    if (out.find("Apply complete: " + std::to_string(kNodes + 1) + " succeeded") != std::string::npos) ++applied;
  }
  CHECK(applied == 1);  // the first apply created everything; the others found nothing to do
  for (auto [bmc, n] : resets(emu.log_path())) {
    INFO("BMC " << bmc);
    CHECK(n == 1);  // never provisioned twice
  }
  CHECK(resets(emu.log_path()).size() == static_cast<size_t>(kNodes));
  auto doc = state::open_backend(location)->load();
  REQUIRE(doc.ok());
  REQUIRE(*doc);
  CHECK((*doc)->resources.size() == static_cast<size_t>(kNodes + 1));

  // 2. Nobody waits: while one apply holds the lock the others fail at once,
  // naming the holder. A change (a BIOS setting) makes the apply take a while.
  std::string text = slurp(bp);
  text.replace(text.find("    mig:"), 0, "    bios: {ProcTurboMode: Disabled}\n");
  dir.write("bp.yaml", text);
  pids.clear();
  outs.clear();
  for (int i = 0; i < kProcesses; ++i) {
    outs.push_back(dir.path() + "/nowait-" + std::to_string(i) + ".txt");
    std::vector<std::string> args = {i % 2 ? "plan" : "apply", bp, "--state", location};
    if (i % 2 == 0) args.push_back("--auto-approve");
    pids.push_back(fault::start_plinth(args, outs.back()));
  }
  int ok = 0, refused = 0;
  for (int i = 0; i < kProcesses; ++i) {
    int status = 0;
    REQUIRE(waitpid(pids[i], &status, 0) == pids[i]);
    const std::string out = slurp(outs[i]);
    INFO("process " << i << ": " << out);
    REQUIRE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 0) {
      ++ok;
    } else {
      ++refused;
      CHECK(out.find("state " + shown) != std::string::npos);
      CHECK(out.find(" is locked by PID ") != std::string::npos);
      CHECK(out.find("(plinth ") != std::string::npos);  // the holder's operation
    }
  }
  CHECK(ok >= 1);
  CHECK(ok + refused == kProcesses);
  // Whatever ran, the state is whole, and one more apply converges.
  auto r = run_plinth({"apply", bp, "--state", location, "--auto-approve", "--lock-timeout", "60s"}, "",
                      kBmcEnv);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  r = run_plinth({"plan", bp, "--state", location, "--detailed-exitcode"}, "", kBmcEnv);
  CHECK(r.exit_code == 0);
  for (auto [bmc, n] : resets(emu.log_path())) {
    INFO("BMC " << bmc);
    CHECK(n == 2);  // created once, its BIOS change applied once
  }
}

}  // namespace

TEST_CASE("eight processes plan and apply one local state at once: one applies at a time, no corruption, the others "
          "wait or name the holder",
          "[fault][concurrency]") {
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  run_eight(st, st);
}

TEST_CASE("eight processes plan and apply one PostgreSQL state at once: one applies at a time, no corruption, the "
          "others wait or name the holder",
          "[fault][concurrency][postgres]") {
  const std::string url = postgres_workspace_url("concurrency");
  run_eight(url, state::redact_location(url));
}

}  // namespace plinth::test::fault_concurrency
