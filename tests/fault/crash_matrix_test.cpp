// The crash matrix (issue 16): an apply of 200 bare-metal nodes against the
// Redfish emulator is SIGKILLed at 20 seeded points. After each kill the state
// must parse and pass its integrity checks; apply is re-run until it
// converges; then the emulator must hold exactly the blueprint, the state must
// match it and a final plan must show no changes. The AWS matrix is
// aws_crash_matrix_test.cpp.
//
// Reproduce a run with PLINTH_CRASH_SEED=N (the seed is printed). A kill point
// is "after the emulator has logged R requests of this apply"; the test polls
// the request log, so the exact request the kill lands on can differ by the
// few requests in flight, the set of points does not.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "engine/state/state.h"
#include "tests/fault/fault.h"

namespace plinth::test::fault_crash_matrix {

namespace fs = std::filesystem;

namespace {

constexpr int kNodes = 200;
constexpr int kKills = 20;
constexpr int kParallelism = 10;

constexpr int kPools = 5, kPerPool = kNodes / kPools;

/// The fleet at one step: five pools of 40 nodes (pool j on BMCs 40j ..
/// 40j+39), each present or not, with turbo on or off. Step 0 creates all
/// 200 nodes; each later step changes one pool: its BIOS (40 updates), then its
/// removal (40 deletes), then its return (40 creates), so kills land in every
/// kind of operation while a step stays short.
struct Fleet {
  std::array<bool, kPools> present{true, true, true, true, true};
  std::array<bool, kPools> turbo{true, true, true, true, true};
  int nodes() const { return kPerPool * static_cast<int>(std::count(present.begin(), present.end(), true)); }
};
Fleet fleet_at(int step) {
  Fleet f;
  for (int s = 1; s <= step; ++s) {
    const int j = ((s - 1) / 3) % kPools;  // pool 0 for steps 1-3, pool 1 for 4-6, ...
    switch ((s - 1) % 3) {
      case 0: f.turbo[j] = !f.turbo[j]; break;
      case 1: f.present[j] = false; break;
      default: f.present[j] = true; break;
    }
  }
  return f;
}

/// The blueprint of the fleet `f` on the emulator at `base`.
std::string fleet_blueprint(const std::string& base, const std::string& ca, const Fleet& f) {
  std::string pools;
  for (int j = 0; j < kPools; ++j) {
    if (!f.present[j]) continue;
    std::string endpoints;
    for (int i = 0; i < kPerPool; ++i)
      endpoints += (i ? ", " : "") + base + "/bmc/" + std::to_string(j * kPerPool + i);
    pools += baremetal_pool({.name = "p" + std::to_string(j),
                             .count = kPerPool,
                             .role = "inference",
                             .extra = "    bios: {ProcTurboMode: " + std::string(f.turbo[j] ? "Enabled" : "Disabled") + "}\n",
                             .endpoints = "[" + endpoints + "]",
                             .ca = ca});
  }
  return baremetal_blueprint("crash-matrix", pools);
}

/// Counts the lines of a growing file, reading only what was added since the last call.
class LineCounter {
 public:
  explicit LineCounter(std::string path) : path_(std::move(path)) {}
  size_t count() {
    FILE* f = std::fopen(path_.c_str(), "rb");
    if (!f) return lines_;
    std::fseek(f, static_cast<long>(offset_), SEEK_SET);
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) {
      offset_ += n;
      lines_ += static_cast<size_t>(std::count(buf, buf + n, '\n'));
    }
    std::fclose(f);
    return lines_;
  }

 private:
  std::string path_;
  size_t offset_ = 0, lines_ = 0;
};

}  // namespace

TEST_CASE("crash matrix: 200 bare-metal nodes, apply SIGKILLed at 20 seeded points, state intact, re-run converges "
          "to exactly the blueprint",
          "[fault][crash]") {
  const uint64_t seed = fault::crash_seed("crash matrix");
  std::mt19937_64 rng(seed);

  Emulator emu({"--bmcs", std::to_string(kNodes), "--gpus", "8", "--memory-gib", "2048", "--power-delay-ms", "0",
                "--power-state", "Off", "--latency-ms", "0"});
  TempDir dir;
  const std::string st = dir.path() + "/plinth.state.json";
  const std::string log = emu.log_path();
  LineCounter log_lines(log);

  size_t kills = 0, not_reached = 0, corrupt = 0, reruns = 0, resources_checked = 0, duplicates = 0, orphans = 0,
         redone = 0;

  for (int step = 0; step < kKills; ++step) {
    const Fleet v = fleet_at(step);
    const std::string bp = dir.write("bp.yaml", fleet_blueprint(emu.base(), emu.ca(), v));
    const auto t0 = std::chrono::steady_clock::now();
    const size_t log_start = log_lines.count();
    // How many operations this step's apply makes.
    auto planned = run_plinth({"plan", bp, "--state", st, "--refresh=false", "--json"}, "", kBmcEnv);
    REQUIRE(planned.exit_code == 0);
    auto summary = nlohmann::json::parse(planned.out)["summary"];
    const size_t ops = summary.value("create", 0) + summary.value("update", 0) + summary.value("delete", 0) +
                       2 * summary.value("replace", 0);
    REQUIRE(ops > 0);
    // The kill point: once K state saves are written, after R more requests
    // (so it lands inside the next operations, not between them). A save
    // holds every operation that completed while the one before it was being
    // written (group commit), so an apply writes between ops / parallelism
    // and ops saves: K is drawn below the smaller bound, so it is reached.
    const size_t k = std::uniform_int_distribution<size_t>(0, std::max<size_t>(ops / kParallelism, 1) - 1)(rng);
    const size_t r = std::uniform_int_distribution<size_t>(0, 40)(rng);
    const uint64_t serial0 = fault::saved_serial(st);
    const std::string out = dir.path() + "/apply-" + std::to_string(step) + ".txt";
    pid_t pid = fault::start_plinth({"apply", bp, "--state", st, "--auto-approve", "--parallelism",
                                     std::to_string(kParallelism), "--refresh=false"},
                                    out);
    int status = 0;
    size_t mark = 0;  // log lines when K saves were written
    const bool exited = fault::exited_before_kill(pid, status, [&] {
      if (mark == 0 && fault::saved_serial(st) >= serial0 + k) mark = std::max<size_t>(log_lines.count(), 1);
      return mark && log_lines.count() >= mark + r;
    });
    if (!exited) {
      ++kills;
    } else {
      ++not_reached;  // the apply finished first
    }
    const uint64_t killed_at = fault::saved_serial(st);
    std::printf("  step %2d: %3d nodes, %3zu operations, kill after %3zu saves + %2zu requests: %s "
                "(%llu saves written)",
                step, v.nodes(), ops, k, r, exited ? "apply finished first" : "SIGKILL",
                static_cast<unsigned long long>(killed_at - serial0));
    std::fflush(stdout);

    // The state after the kill (the file and its change log) parses and
    // passes its own checks.
    if (fs::exists(st)) {
      auto doc = fault::state_after_kill(st);
      if (!doc) {
        ++corrupt;
        FAIL("state after kill at step " << step << ": " << doc.error().message);
      }
      std::set<std::string> addresses;
      for (const auto& res : doc->resources) CHECK(addresses.insert(res.address).second);
    }

    // Re-run until it converges (it must in one run: nothing is failing).
    int attempts = 0;
    for (;; ++attempts) {
      REQUIRE(attempts < 3);
      auto a = run_plinth({"apply", bp, "--state", st, "--auto-approve", "--parallelism", std::to_string(kParallelism),
                           "--refresh=false"},
                          "", kBmcEnv);
      ++reruns;
      INFO("step " << step << " re-run: " << a.out << a.err);
      REQUIRE(a.exit_code == 0);
      auto p = run_plinth({"plan", bp, "--state", st, "--detailed-exitcode", "--refresh=false"}, "", kBmcEnv);
      INFO(p.out << p.err);
      if (p.exit_code == 0) break;
      REQUIRE(p.exit_code == 2);
    }

    // The state: exactly the blueprint's nodes, each once.
    auto doc = state::parse(slurp(st), st);
    REQUIRE(doc.ok());
    std::set<std::string> endpoints;
    for (const auto& res : doc->resources) {
      if (res.type != "baremetal.node") continue;
      if (!endpoints.insert(res.attributes.value("bmc_endpoint", "")).second) ++duplicates;
      const int pool = std::stoi(res.name.substr(1));
      CHECK(v.present[pool]);
      CHECK(res.attributes.value("bios", nlohmann::json::object()).value("ProcTurboMode", "") ==
            (v.turbo[pool] ? "Enabled" : "Disabled"));
      CHECK(res.computed.value("power_state", "") == "On");
    }
    CHECK(endpoints.size() == static_cast<size_t>(v.nodes()));
    resources_checked += doc->resources.size();

    // The emulator: the blueprint's nodes On, the rest Off (an orphan is a
    // server left On that no state entry manages).
    const auto power = fault::power_states(emu, kNodes);
    REQUIRE(power.size() == static_cast<size_t>(kNodes));
    for (int i = 0; i < kNodes; ++i) {
      if (v.present[i / kPerPool]) CHECK(power[i] == "On");
      else if (power[i] != "Off") ++orphans;  // powered on, but no pool declares it
    }

    // No server was powered (reset) more than needed: once per operation,
    // twice only for the few operations in flight when the kill landed.
    size_t twice = 0;
    for (auto [bmc, n] : resets(log, log_start)) {
      INFO("step " << step << ": BMC " << bmc << " was reset " << n << " times");
      CHECK(n <= 2);
      if (n == 2) ++twice;
    }
    CHECK(twice <= static_cast<size_t>(kParallelism));
    redone += twice;
    std::printf(" %.1fs\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::fflush(stdout);
  }

  // Finally the state is compared with the servers themselves: a plan that
  // reads every node (refresh and inventory) shows no changes and no drift.
  {
    auto p = run_plinth({"plan", dir.path() + "/bp.yaml", "--state", st, "--detailed-exitcode"}, "", kBmcEnv);
    INFO(p.out << p.err);
    CHECK(p.exit_code == 0);
    CHECK(p.err.find("Drift") == std::string::npos);
  }

  std::printf(
      "crash matrix: seed %llu, %zu kill points (%zu SIGKILLs, %zu applies finished before their point), %zu re-runs, "
      "%zu resources checked, %zu operations redone after a kill, duplicates %zu, orphans %zu, corrupt states %zu\n",
      static_cast<unsigned long long>(seed), static_cast<size_t>(kKills), kills, not_reached, reruns,
      resources_checked, redone, duplicates, orphans, corrupt);
  CHECK(duplicates == 0);
  CHECK(orphans == 0);
  CHECK(corrupt == 0);
  CHECK(kills >= kKills / 2);
}

}  // namespace plinth::test::fault_crash_matrix
