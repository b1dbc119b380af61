// The grouped text plan at fleet scale (docs/plan.md, "Grouped"): a 500-pool,
// 10,000-node blueprint (bench/gen_blueprint.py) planned from an empty state
// and against a state that records it with three nodes changed.
#include <catch2/catch.hpp>

#include <algorithm>

#include "engine/state/state.h"
#include "tests/support/run.h"
#include "tests/support/text.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_plan_grouped {

namespace {

size_t lines_in(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

/// bench/gen_blueprint.py's fleet of `pools` pools of 20 nodes, written to `dir`/fleet.yaml.
std::string fleet(const TempDir& dir, int pools) {
  auto g = run_program({"/usr/bin/python3", source_dir() + "/bench/gen_blueprint.py", "--pools", std::to_string(pools),
                        "--nodes-per-pool", "20"});
  REQUIRE(g.exit_code == 0);
  return dir.write("fleet.yaml", g.out);
}

}  // namespace

TEST_CASE("grouped plan: 10,000 nodes in 500 pools print in under 2,000 lines naming every pool, --no-group in full",
          "[e2e][plan][grouped]") {
  TempDir dir;
  const std::string bp = fleet(dir, 500);
  const std::string st = dir.path() + "/plinth.state.json";
  auto r = run_plinth({"plan", bp, "--state", st, "--refresh=false", "-lock=false"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  INFO(r.out.substr(0, 4000));
  CHECK(lines_in(r.out) < 2000);
  for (int p = 0; p < 500; ++p) {
    char pool[32];
    std::snprintf(pool, sizeof pool, "pool-%05d", p);
    CHECK(contains(r.out, "+ baremetal.node." + std::string(pool) + "[0..19]  20 to create"));
  }
  CHECK(contains(r.out, "\nPlan: 10019 to create, 0 to update, 0 to replace, 0 to destroy.\n"));

  auto full = run_plinth({"plan", bp, "--state", st, "--refresh=false", "-lock=false", "--no-group"});
  REQUIRE(full.exit_code == 0);
  CHECK(lines_in(full.out) > 190000);
  CHECK(contains(full.out, "  + baremetal.node.pool-00499[19] (create)\n"));
  CHECK(contains(full.out, "\nPlan: 10019 to create, 0 to update, 0 to replace, 0 to destroy.\n"));
}

TEST_CASE("grouped plan: a 3-node change in a 10,000-node fleet shows the 3 nodes, their change and the summary",
          "[e2e][plan][grouped]") {
  TempDir dir;
  const std::string bp = fleet(dir, 500);
  state::StateDocument doc = expanded_state({bp});
  int changed = 0;
  for (auto& r : doc.resources)
    if (r.type == "baremetal.node" && r.name == "pool-00007" && (r.index == 1 || r.index == 5 || r.index == 9)) {
      r.attributes["bios"]["SriovEnable"] = "Disabled";  // as a refresh finds it after a change outside Plinth
      ++changed;
    }
  REQUIRE(changed == 3);
  doc.serial = 1;
  const std::string st = dir.write("plinth.state.json", state::to_json_text(doc));
  auto r = run_plinth({"plan", bp, "--state", st, "--refresh=false", "-lock=false"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "Plinth will perform the following actions:\n\n"
                 "  ~ baremetal.node.pool-00007[1, 5, 9]  3 to update in place\n"
                 "      bios.SriovEnable: \"Disabled\" -> \"Enabled\"\n"
                 "\n"
                 "Plan: 0 to create, 3 to update, 0 to replace, 0 to destroy.\n");
}

}  // namespace plinth::test::e2e_plan_grouped
