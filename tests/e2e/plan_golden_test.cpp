// plinth plan's text and --json output, byte for byte, on the example
// blueprints and on a state with updates, replaces and deletes: the speed work
// of the planner (issue 15) must not change a single byte of a plan. The
// expected files were written by the planner before that work
// (tests/e2e/golden/plan/); to accept a deliberate change of the format,
// run this test with PLINTH_UPDATE_GOLDEN=1 and review the diff.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "tests/support/run.h"
#include "tests/support/text.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_plan_golden {

namespace {

const std::string kGolden = "tests/e2e/golden/plan/";

/// Writes a state holding what `blueprint_path` expands to, with a fixed
/// lineage so the --json output does not vary from run to run.
std::string write_fixed_state_of(const TempDir& dir, const std::string& blueprint_path) {
  return write_state_of(dir, blueprint_path, 7, "00000000-0000-4000-8000-000000000000");
}

/// Compares `actual` with the golden file NAME (or writes it when
/// PLINTH_UPDATE_GOLDEN is set).
void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = kGolden + name;
  if (std::getenv("PLINTH_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  auto expected = read_file(path);
  REQUIRE(expected.ok());
  INFO(path << " differs from the plan printed now (PLINTH_UPDATE_GOLDEN=1 rewrites it after review)");
  CHECK(*expected == actual);
}

/// Plans `blueprints` against `state` as text (grouped, the default) and as JSON and checks both;
/// with `full`, also the text of --no-group (NAME-no-group.txt).
void check_plan(const std::string& name, std::vector<std::string> blueprints, const std::string& state,
                const TempDir& dir, bool full = false) {
  for (const std::string form : {"", "--json", "--no-group"}) {
    if (form == "--no-group" && !full) continue;
    std::vector<std::string> args = {"plan"};
    args.insert(args.end(), blueprints.begin(), blueprints.end());
    args.insert(args.end(), {"--state", state, "--refresh=false", "-lock=false"});
    if (!form.empty()) args.push_back(form);
    auto r = run_plinth(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string file = name + (form == "--json" ? ".json" : form == "--no-group" ? "-no-group.txt" : ".txt");
    check_golden(file, replace_all(r.out, dir.path(), "TMP"));
  }
}

/// Checks `actual`'s SHA-256 against line NAME of the digest file
/// fleet.sha256 (rewritten with PLINTH_UPDATE_GOLDEN): the outputs of a large
/// fleet are too big to keep in the repository, their digests are not.
void check_digest(const std::string& name, const std::string& actual) {
  const std::string path = kGolden + "fleet.sha256";
  std::map<std::string, std::string> digests;
  if (auto text = read_file(path); text.ok()) {
    std::istringstream lines(*text);
    for (std::string line; std::getline(lines, line);)
      if (auto sp = line.find(' '); sp != std::string::npos) digests[line.substr(0, sp)] = line.substr(sp + 1);
  }
  const std::string now = sha256_hex(actual);
  if (std::getenv("PLINTH_UPDATE_GOLDEN")) {
    digests[name] = now;
    std::string out;
    for (const auto& [k, v] : digests) out += k + " " + v + "\n";
    std::ofstream(path, std::ios::binary) << out;
    return;
  }
  INFO(name << ": its digest in " << path << " differs from the output now (PLINTH_UPDATE_GOLDEN=1 rewrites it after "
               "review); the output starts: " << actual.substr(0, 400));
  REQUIRE(digests.count(name));
  CHECK(digests[name] == now);
}

/// bench/gen_blueprint.py's fleet of `pools` pools of `per_pool` nodes (the
/// benchmark's), its plan from nothing, its plan against a state recording
/// all of it (no changes) and its audit report (every policy verdict),
/// checked against their digests.
void check_fleet(int pools, int per_pool) {
  TempDir dir;
  const std::string n = std::to_string(pools * per_pool);
  auto g = run_program({"/usr/bin/python3", "bench/gen_blueprint.py", "--pools", std::to_string(pools),
                        "--nodes-per-pool", std::to_string(per_pool)});
  REQUIRE(g.exit_code == 0);
  const std::string bp = dir.write("fleet.yaml", g.out);
  auto plan = [&](const std::string& state) {
    auto r = run_plinth({"plan", bp, "--state", state, "--refresh=false", "-lock=false", "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return replace_all(r.out, dir.path(), "TMP");
  };
  const std::string created = plan(dir.path() + "/none.state.json");
  CHECK(created.find("\"action\":\"create\"") != std::string::npos);
  check_digest("fleet-" + n + "-create.json", created);
  const std::string all = write_fixed_state_of(dir, bp);
  const std::string unchanged = plan(all);
  CHECK(unchanged.find("\"action\":\"create\"") == std::string::npos);
  check_digest("fleet-" + n + "-no-change.json", unchanged);
  auto audit = run_plinth({"audit", bp, "--state", all, "--format", "json"});
  INFO(audit.err);
  REQUIRE(audit.exit_code == 0);
  auto report = nlohmann::json::parse(replace_all(audit.out, dir.path(), "TMP"));
  REQUIRE(report["verdicts"].size() > 0);
  report.erase("generated_at");
  check_digest("fleet-" + n + "-audit.json", report.dump(2));
}

}  // namespace

TEST_CASE("the plan JSON (from nothing and with no changes) and the policy verdicts of the 10k- and 100k-node "
          "bench fleets are unchanged byte for byte") {
  // The digests were written by the planner before the fleet-scale work of
  // issue 32 (state reading, lazy policy views): it must not change a byte.
  check_fleet(500, 20);
  check_fleet(2000, 50);
}

TEST_CASE("plan output of the example blueprints from an empty state is unchanged byte for byte") {
  TempDir dir;
  const std::string state = dir.path() + "/plinth.state.json";
  check_plan("lab", {"blueprints/examples/lab.yaml"}, state, dir);
  check_plan("cluster", {"blueprints/examples/cluster.yaml"}, state, dir, true);
  check_plan("regulated", {"blueprints/examples/regulated.yaml"}, state, dir);
  check_plan("multi-file", {"blueprints/examples/multi-file/base.yaml", "blueprints/examples/multi-file/pools.yaml"},
             state, dir);
}

TEST_CASE("plan output against a state with updates, replaces and deletes is unchanged byte for byte") {
  TempDir dir;
  // The state is the cluster as it was: a BIOS setting (update) and the prep
  // pool's boot method (replace) changed since, and 4 more prep nodes than now
  // (delete).
  const std::string cluster = read_file("blueprints/examples/cluster.yaml").value();
  std::string before = replace_once(cluster, "SriovEnable: Enabled", "SriovEnable: Disabled");
  before = replace_once(before, "boot: {method: pxe, image: \"http://pxe.dc1.example/ubuntu-22.04/\"}",
                        "boot: {method: uefi-http, image: \"http://pxe.dc1.example/ubuntu-22.04/\"}");
  before = replace_once(before, "    count: 4\n    role: preprocessing", "    count: 8\n    role: preprocessing");
  const std::string old_path = dir.write("before.yaml", before);
  const std::string state = write_fixed_state_of(dir, old_path);
  const std::string now_path = dir.write("now.yaml", cluster);
  check_plan("cluster-changes", {now_path}, state, dir, true);
}

TEST_CASE("a node pool grown or shrunk by one plans exactly one create or one delete, and no replace") {
  TempDir dir;
  const std::string cluster = read_file("blueprints/examples/cluster.yaml").value();
  const std::string four = "    count: 4\n    role: preprocessing", three = "    count: 3\n    role: preprocessing";
  struct Case {
    std::string name, before, now, summary;
  };
  for (const Case& c : {Case{"pool-grow", replace_once(cluster, four, three), cluster,
                             "Plan: 1 to create, 0 to update, 0 to replace, 0 to destroy."},
                        Case{"pool-shrink", cluster, replace_once(cluster, four, three),
                             "Plan: 0 to create, 0 to update, 0 to replace, 1 to destroy."}}) {
    INFO(c.name);
    const std::string state = write_fixed_state_of(dir, dir.write(c.name + "-before.yaml", c.before));
    const std::string now = dir.write(c.name + ".yaml", c.now);
    auto r = run_plinth({"plan", now, "--state", state, "--refresh=false", "-lock=false"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find(c.summary) != std::string::npos);
    CHECK(r.out.find("forced by") == std::string::npos);
    check_plan(c.name, {now}, state, dir);
  }
}

TEST_CASE("a replace forced by the rendered user-data says which blueprint change caused it") {
  TempDir dir;
  const std::string cluster = read_file("blueprints/examples/cluster.yaml").value();
  const std::string state =
      write_fixed_state_of(dir, dir.write("before.yaml", replace_once(cluster, "driver: \"580.126.20\"", "driver: \"580.95.05\"")));
  auto r = run_plinth({"plan", "blueprints/examples/cluster.yaml", "--state", state, "--refresh=false", "-lock=false"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("-/+ baremetal.node.train-a[0..31]  32 to replace, forced by: user_data_hash\n"
                   "      # because plinth.stack.train: driver \"580.95.05\" -> \"580.126.20\"\n") != std::string::npos);
  auto j = nlohmann::json::parse(
      run_plinth({"plan", "blueprints/examples/cluster.yaml", "--state", state, "--refresh=false", "-lock=false", "--json"}).out);
  bool said = false;
  for (const auto& c : j["resource_changes"])
    if (c["address"] == "baremetal.node.train-a[0]")
      said = c["reasons"] == nlohmann::json::array({"plinth.stack.train: driver \"580.95.05\" -> \"580.126.20\""});
  CHECK(said);
}

}  // namespace plinth::test::e2e_plan_golden
