// What an apply's state saves cost (docs/state.md, "Change log"): an apply
// of many operations, run as users run it, writes at most 3x the final
// state's size in bytes of state, not a whole document per save.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "engine/state/state.h"
#include "tests/providers/baremetal/emulator.h"
#include "tests/support/blueprints.h"
#include "tests/support/postgres.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"

namespace plinth::test::e2e_state_bytes {

namespace fs = std::filesystem;

namespace {

constexpr int kPools = 2, kPerPool = 20, kNodes = kPools * kPerPool;

/// Two pools of 20 nodes on the emulator at `base`, BIOS turbo `turbo` (small enough for
/// the sanitizer build; whole-document saves wrote over 10x here).
std::string fleet(const std::string& base, const std::string& ca, const std::string& turbo) {
  std::string pools;
  for (int j = 0; j < kPools; ++j) {
    std::string endpoints;
    for (int i = 0; i < kPerPool; ++i) endpoints += (i ? ", " : "") + base + "/bmc/" + std::to_string(j * kPerPool + i);
    pools += baremetal_pool({.name = "p" + std::to_string(j),
                             .count = kPerPool,
                             .role = "inference",
                             .extra = "    bios: {ProcTurboMode: " + turbo + "}\n",
                             .endpoints = "[" + endpoints + "]",
                             .ca = ca});
  }
  return baremetal_blueprint("state-bytes", pools);
}

/// The apply_summary event of `apply --json` output.
Json summary_of(const std::string& out) {
  Json last;
  size_t pos = 0;
  for (size_t nl; (nl = out.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    Json j = Json::parse(out.substr(pos, nl - pos), nullptr, false);
    if (j.is_object() && j.value("type", "") == "apply_summary") last = j;
  }
  return last;
}

}  // namespace

TEST_CASE("e2e: an apply of 40 creates and then one of 40 updates each write at most 3x the final state in bytes",
          "[e2e][state]") {
  Emulator emu({"--bmcs", std::to_string(kNodes), "--gpus", "8", "--memory-gib", "2048", "--power-delay-ms", "0",
                "--power-state", "Off", "--latency-ms", "0"});
  TempDir dir;  // the user's blueprint directory; the state beside the blueprint
  const std::string st = dir.path() + "/plinth.state.json";
  for (const char* turbo : {"Enabled", "Disabled"}) {
    dir.write("fleet.yaml", fleet(emu.base(), emu.ca(), turbo));
    auto r = run_plinth({"apply", "fleet.yaml", "--auto-approve", "--json", "--parallelism", "8"}, dir.path(), kBmcEnv);
    INFO(turbo << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    const Json summary = summary_of(r.out);
    REQUIRE(summary.is_object());
    CHECK(summary["succeeded"].get<int>() >= kNodes);  // the nodes and the stack they run
    const Json& state = summary["state"];
    const auto saves = state["saves"].get<size_t>();
    const auto written = state["bytes_written"].get<uint64_t>();
    const auto final_size = fs::file_size(st);
    std::printf("state bytes (%s): %zu saves wrote %llu bytes for a final state of %llu bytes (%.2fx)\n", turbo,
                saves, static_cast<unsigned long long>(written), static_cast<unsigned long long>(final_size),
                static_cast<double>(written) / static_cast<double>(final_size));
    CHECK(saves > 1);  // group commit: several saves, each of what changed
    CHECK(written > 0);
    CHECK(written <= 3 * final_size);
    // The apply ended: its changes are folded into the file, the log is gone,
    // and the state it started from stays restorable.
    CHECK_FALSE(fs::exists(st + ".d/changes.log"));
    auto doc = state::parse(slurp(st), st);
    REQUIRE(doc.ok());
    CHECK(doc->serial == state["serial"].get<uint64_t>());
    CHECK(doc->resources.size() >= static_cast<size_t>(kNodes));
    auto history = run_plinth({"state", "history"}, dir.path());
    CHECK(history.exit_code == 0);
    CHECK(history.out.find("(current)") != std::string::npos);
  }
  auto plan = run_plinth({"plan", "fleet.yaml", "--detailed-exitcode", "--refresh=false"}, dir.path(), kBmcEnv);
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 0);
}

TEST_CASE("e2e: with the state in PostgreSQL an apply of 40 creates and one of 40 updates each write at most 3x "
          "the final state in bytes",
          "[e2e][state][postgres]") {
  Emulator emu({"--bmcs", std::to_string(kNodes), "--gpus", "8", "--memory-gib", "2048", "--power-delay-ms", "0",
                "--power-state", "Off", "--latency-ms", "0"});
  TempDir dir;
  const std::string url = postgres_workspace_url("state-bytes");
  auto env = kBmcEnv;
  env["PLINTH_STATE"] = url;
  for (const char* turbo : {"Enabled", "Disabled"}) {
    dir.write("fleet.yaml", fleet(emu.base(), emu.ca(), turbo));
    auto r = run_plinth({"apply", "fleet.yaml", "--auto-approve", "--json", "--parallelism", "8"}, dir.path(), env);
    INFO(turbo << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    const Json summary = summary_of(r.out);
    REQUIRE(summary.is_object());
    const auto written = summary["state"]["bytes_written"].get<uint64_t>();
    auto loaded = state::open_backend(url)->load();
    REQUIRE(loaded.ok());
    REQUIRE(loaded->has_value());
    const size_t final_size = state::to_json_text(**loaded).size();
    std::printf("state bytes in PostgreSQL (%s): %zu saves wrote %llu bytes for a final state of %zu bytes (%.2fx)\n",
                turbo, summary["state"]["saves"].get<size_t>(), static_cast<unsigned long long>(written), final_size,
                static_cast<double>(written) / static_cast<double>(final_size));
    CHECK(summary["state"]["saves"].get<size_t>() > 1);
    CHECK(written > 0);
    CHECK(written <= 3 * final_size);
    CHECK((*loaded)->serial == summary["state"]["serial"].get<uint64_t>());
  }
  auto plan = run_plinth({"plan", "fleet.yaml", "--detailed-exitcode", "--refresh=false"}, dir.path(), env);
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 0);
}

}  // namespace plinth::test::e2e_state_bytes
