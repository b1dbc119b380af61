// The defects a new user hit (issue 9, "Defects found"; issue 16's loader
// items), each driven through the built CLI from a directory outside the
// source tree, as the user ran it.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/core/hash.h"
#include "engine/state/state.h"
#include "tests/support/blueprints.h"
#include "tests/support/run.h"
#include "tests/support/text.h"

namespace plinth::test::e2e_defects {

namespace fs = std::filesystem;

namespace {

/// A blueprint with one bare-metal pool whose `bmc:` block is `bmc` (flow map text).
std::string gpu_pool_with_bmc(const std::string& bmc, const std::string& count = "2") {
  return l40s_blueprint("gpu", count, "    bmc: " + bmc + "\n");
}

}  // namespace

TEST_CASE("apply PLANFILE applies a saved plan without a terminal and without --auto-approve",
          "[e2e][defects][planfile]") {
  TempDir dir;
  dir.write("bp.yaml", logical_blueprint(3));
  auto plan = run_plinth({"plan", "bp.yaml", "-out", "release.plan"}, dir.path());
  INFO(plan.err);
  REQUIRE(plan.exit_code == 0);
  // stdin is a pipe here, as in CI: the saved plan is the approval.
  auto apply = run_plinth({"apply", "release.plan"}, dir.path());
  INFO(apply.out << apply.err);
  CHECK(apply.exit_code == 0);
  CHECK(contains(apply.out, "Apply complete: 4 succeeded, 0 failed, 0 skipped."));
  CHECK_FALSE(contains(apply.out, "Do you want to perform these actions?"));

  // Applying blueprints still asks, and without a terminal says what to do.
  dir.write("bp.yaml", logical_blueprint(4));
  auto path = run_plinth({"apply", "bp.yaml"}, dir.path());
  CHECK(path.exit_code == 1);
  CHECK(contains(path.err, "stdin is not a terminal, so there is no one to confirm the changes; review them with "
                           "'plinth plan -out PLANFILE' and apply that file"));
}

TEST_CASE("a BMC endpoint without TLS, without a scheme, or with a password in it fails validate",
          "[e2e][defects][bmc]") {
  TempDir dir;
  struct Case {
    std::string endpoints, expect;
  };
  for (const Case& c : {
           Case{"\"http://bmc-{index}.lab.example\"",
                "bp.yaml:12:22: error[BP011]: BMC endpoint 'http://bmc-{index}.lab.example' in node pool 'gpu' uses "
                "plain http: the BMC user and password would be sent in clear text\n"},
           Case{"\"bmc-{index}.lab.example\"",
                "bp.yaml:12:22: error[BP011]: BMC endpoint 'bmc-{index}.lab.example' in node pool 'gpu' has no "
                "scheme\n"},
           Case{"[\"https://10.0.0.1\", \"ftp://10.0.0.2\"]",
                "bp.yaml:12:43: error[BP011]: BMC endpoint 'ftp://10.0.0.2' in node pool 'gpu' uses scheme 'ftp'\n"},
           Case{"\"https://admin:hunter2@bmc-{index}.lab.example\"",
                "bp.yaml:12:22: error[BP008]: 'bmc.endpoints' in node pool 'gpu' holds a user name or password in "
                "the URL (USER:PASSWORD@HOST); it would be shown in plans and stored in state\n"
                "  hint: remove it from the URL; the BMC user and password come from bmc.credentials (env:NAME or "
                "file:PATH)\n"},
       }) {
    dir.write("bp.yaml", gpu_pool_with_bmc("{endpoints: " + c.endpoints + ", credentials: env:BMC}"));
    auto r = run_plinth({"validate", "bp.yaml"}, dir.path());
    INFO(c.endpoints << "\n" << r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, c.expect));
    CHECK_FALSE(contains(r.err + r.out, "hunter2"));
  }
}

TEST_CASE("BMC credentials written as a map fail validate without printing the password", "[e2e][defects][bmc]") {
  TempDir dir;
  for (const std::string& creds : {std::string("{user: admin, password: hunter2}"),
                                   std::string("\n      credentials:\n        user: admin\n        password: hunter2")}) {
    std::string bmc = creds[0] == '{' ? "{endpoints: \"https://bmc-{index}.ex\", credentials: " + creds + "}"
                                      : "\n      endpoints: \"https://bmc-{index}.ex\"" + creds;
    dir.write("bp.yaml", gpu_pool_with_bmc(bmc));
    for (const char* cmd : {"validate", "plan"}) {
      auto r = run_plinth({cmd, "bp.yaml"}, dir.path());
      INFO(r.err);
      CHECK(r.exit_code == 1);
      CHECK(contains(r.err, "error[BP003]: 'bmc.credentials' in node pool 'gpu' must be a string, not a map\n"));
      CHECK_FALSE(contains(r.err + r.out, "hunter2"));
    }
  }
}

TEST_CASE("the state before every apply stays restorable, however many operations later applies journal",
          "[e2e][defects][history]") {
  TempDir dir;
  dir.write("bp.yaml", logical_blueprint(24));
  // One operation at a time: one save per operation (in parallel, the
  // operations completing during a save share the next one).
  auto first = run_plinth({"apply", "bp.yaml", "--auto-approve", "--parallelism", "1"}, dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  auto st = state::parse(slurp(dir.path() + "/plinth.state.json"), "state");
  REQUIRE(st.ok());
  const uint64_t before_second = st->serial;  // 25: one save per created resource
  CHECK(before_second == 25);

  // A second apply changes all 24 tiers: 24 more journal saves.
  std::string bigger = logical_blueprint(24);
  for (size_t at = bigger.find("capacity_tb: 1,"); at != std::string::npos; at = bigger.find("capacity_tb: 1,", at))
    bigger.replace(at, 15, "capacity_tb: 2,");
  dir.write("bp.yaml", bigger);
  auto second = run_plinth({"apply", "bp.yaml", "--auto-approve", "--parallelism", "1"}, dir.path());
  REQUIRE(second.exit_code == 0);

  auto history = run_plinth({"state", "history"}, dir.path());
  INFO(history.out);
  CHECK(contains(history.out, std::to_string(before_second) + "  "));
  CHECK(contains(history.out, "(before a run; kept)"));
  auto restore = run_plinth({"state", "restore", std::to_string(before_second)}, dir.path());
  INFO(restore.err);
  CHECK(restore.exit_code == 0);
  CHECK(contains(restore.out, "restored serial 25 of state plinth.state.json as serial 50 (25 resources)"));
  auto plan = run_plinth({"plan", "bp.yaml", "--detailed-exitcode"}, dir.path());
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "Plan: 0 to create, 24 to update, 0 to replace, 0 to destroy."));
}

TEST_CASE("counts beyond the limit fail validate with the limit named", "[e2e][defects][limits]") {
  TempDir dir;
  for (const char* n : {"2000000000", "3000000000", "100001"}) {
    dir.write("bp.yaml", gpu_pool_with_bmc("{endpoints: \"https://bmc-{index}.ex\", credentials: env:BMC}", n));
    auto r = run_plinth({"plan", "bp.yaml"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, std::string("bp.yaml:8:12: error[BP005]: 'count' in node pool 'gpu' is ") + n +
                              ", more than the limit of 100000\n"));
    CHECK_FALSE(contains(r.err, "internal error"));
  }
}

TEST_CASE("audit of an invalid blueprint still writes its report, with the errors as findings, and exits 1",
          "[e2e][defects][reports]") {
  TempDir dir;
  // On a supported driver branch, so that the BMC error is the only finding (no DRV008).
  dir.write("bp.yaml", repinned(gpu_pool_with_bmc("{endpoints: \"http://bmc-{index}.ex\", credentials: env:BMC}"), "580.126.20"));
  auto sarif = run_plinth({"audit", "bp.yaml", "--format", "sarif", "--output", "x.sarif"}, dir.path());
  CHECK(sarif.exit_code == 1);
  auto j = nlohmann::json::parse(slurp(dir.path() + "/x.sarif"), nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  const auto& results = j["runs"][0]["results"];
  REQUIRE(results.size() == 1);
  CHECK(results[0]["ruleId"] == "BP011");
  CHECK(results[0]["level"] == "error");
  CHECK(results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bp.yaml");
  CHECK(results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 12);
  CHECK(results[0]["locations"][0]["physicalLocation"]["region"]["startColumn"] == 22);

  auto junit = run_plinth({"audit", "bp.yaml", "--format", "junit", "--output", "x.xml"}, dir.path());
  CHECK(junit.exit_code == 1);
  const std::string xml = slurp(dir.path() + "/x.xml");
  CHECK(contains(xml, "<testsuite id=\"0\" name=\"validation\" tests=\"1\" failures=\"1\""));
  CHECK(contains(xml, "<failure message=\"BMC endpoint &#39;http://bmc-{index}.ex&#39; in node pool &#39;gpu&#39; uses"));

  auto json = run_plinth({"audit", "bp.yaml", "--format", "json", "--output", "x.json"}, dir.path());
  CHECK(json.exit_code == 1);
  auto rep = nlohmann::json::parse(slurp(dir.path() + "/x.json"), nullptr, false);
  REQUIRE_FALSE(rep.is_discarded());
  CHECK(rep["validation"]["valid"] == false);
  CHECK(rep["validation"]["errors"] == 1);
  CHECK(rep["validation"]["diagnostics"][0]["code"] == "BP011");
  CHECK(rep["summary"]["blocked"] == true);

  // plan --report does the same, for the CI flow of docs/ci.md.
  auto plan = run_plinth({"plan", "bp.yaml", "--report", "sarif:p.sarif", "--report", "markdown:p.md"}, dir.path());
  CHECK(plan.exit_code == 1);
  CHECK(contains(slurp(dir.path() + "/p.sarif"), "\"ruleId\": \"BP011\""));
  CHECK(contains(slurp(dir.path() + "/p.md"), "### Blueprint validation: invalid, no policy was evaluated"));
}

TEST_CASE("validation warnings are findings in the SARIF and JSON reports", "[e2e][defects][reports]") {
  TempDir dir;
  // A two-node training pool without an RDMA fabric: NET007, a warning.
  std::string bp = gpu_pool_with_bmc("{endpoints: \"https://bmc-{index}.ex\", credentials: env:BMC}");
  bp.replace(bp.find("role: inference"), 15, "role: training");
  dir.write("bp.yaml", bp);
  auto r = run_plinth({"audit", "bp.yaml", "--format", "sarif"}, dir.path());
  CHECK(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  bool found = false;
  for (const auto& res : j["runs"][0]["results"])
    if (res["ruleId"] == "NET007") found = res["level"] == "warning";
  CHECK(found);
  auto js = nlohmann::json::parse(run_plinth({"audit", "bp.yaml"}, dir.path()).out, nullptr, false);
  CHECK(js["validation"]["valid"] == true);
  CHECK(js["validation"]["errors"] == 0);
  bool net007 = false;
  for (const auto& d : js["validation"]["diagnostics"]) net007 = net007 || (d["code"] == "NET007" && d["severity"] == "warning");
  CHECK(net007);
}

TEST_CASE("plan -lock=false plans from a read-only directory, without it the error names the lock file",
          "[e2e][defects][lock]") {
  TempDir dir;
  dir.write("ro/bp.yaml", logical_blueprint(2));
  // Root writes anywhere: run plinth as nobody then, in a directory nobody cannot write.
  chmod(dir.path().c_str(), 0755);
  chmod((dir.path() + "/ro").c_str(), 0555);
  chmod((dir.path() + "/ro/bp.yaml").c_str(), 0644);
  std::vector<std::string> as_user;
  if (geteuid() == 0) as_user = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
  auto run = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = as_user;
    argv.push_back(plinth_binary());
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, dir.path() + "/ro", {{"NO_COLOR", "1"}});
  };
  auto locked = run({"plan", "bp.yaml"});
  INFO(locked.err);
  CHECK(locked.exit_code == 1);
  CHECK(contains(locked.err, "plinth plan: state plinth.state.json: cannot open the lock file plinth.state.json.lock: "
                             "Permission denied; check that its directory exists and is writable; to plan without "
                             "writing anything, pass -lock=false\n"));
  auto r = run({"plan", "bp.yaml", "-lock=false", "--detailed-exitcode"});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "Plan: 3 to create, 0 to update, 0 to replace, 0 to destroy."));
  chmod((dir.path() + "/ro").c_str(), 0755);
}

TEST_CASE("YAML merge keys share a pool's settings, a bad merge says why", "[e2e][defects][yaml]") {
  TempDir dir;
  dir.write("bp.yaml", R"(apiVersion: plinth/v1
kind: Blueprint
metadata: {name: merged}
x-pool: &pool          # an extension field: ignored, a home for anchors
  provider: baremetal
  role: inference
  hardware: {gpu: L40S, gpus_per_node: 4}
  stack: train
  bmc: {endpoints: "https://bmc-{index}.a.example", credentials: env:BMC}
stacks:
  train: {driver: "580.126.20", cuda: "12.4"}
node_pools:
  - <<: *pool
    name: a
    count: 2
  - <<: *pool
    name: b
    count: 1
    role: preprocessing
    bmc: {endpoints: ["https://bmc.b.example"], credentials: env:BMC}
)");
  auto r = run_plinth({"plan", "bp.yaml", "--json", "--refresh=false"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  std::map<std::string, nlohmann::json> after;
  for (const auto& c : j["resource_changes"])
    for (const auto& ch : c["changes"]) after[c["address"].get<std::string>() + " " + ch["path"].get<std::string>()] = ch["after"];
  CHECK(after["baremetal.node.a[1] role"] == "inference");
  CHECK(after["baremetal.node.a[1] bmc_endpoint"] == "https://bmc-1.a.example");
  CHECK(after["baremetal.node.b[0] role"] == "preprocessing");  // its own value wins over the merged one
  CHECK(after["baremetal.node.b[0] bmc_endpoint"] == "https://bmc.b.example");
  CHECK(after["baremetal.node.b[0] gpus_per_node"] == 4);

  dir.write("bad.yaml", "apiVersion: plinth/v1\nkind: Blueprint\nmetadata:\n  <<: not-a-map\n  name: x\n");
  auto bad = run_plinth({"validate", "bad.yaml"}, dir.path());
  CHECK(bad.exit_code == 1);
  CHECK(contains(bad.err, "bad.yaml:4:3: error[BP003]: the YAML merge key '<<' in metadata must name a map, not "
                          "\"not-a-map\"\n"));
}

TEST_CASE("control characters and ANSI escapes from a blueprint are escaped in every message",
          "[e2e][defects][escape]") {
  TempDir dir;
  // A double-quoted YAML string may hold any character: ESC, BEL, a C1 CSI.
  dir.write("bp.yaml", "apiVersion: plinth/v1\nkind: Blueprint\nmetadata: {name: esc}\n"
                       "stacks:\n  train: {driver: \"580.126.20\", cuda: \"12.4\"}\n"
                       "node_pools:\n  - {name: p, count: 1, role: \"\\e[31mred\\a\\u009b2J\", stack: train,\n"
                       "     hardware: {gpu: L40S, gpus_per_node: 4}}\n"
                       "\x1b[2Jbroken: 1\n");
  for (const char* cmd : {"validate", "plan"}) {
    auto r = run_plinth({cmd, "bp.yaml"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find('\x1b') == std::string::npos);
    CHECK(r.err.find('\a') == std::string::npos);
    CHECK(r.err.find("\xc2\x9b") == std::string::npos);
    CHECK(contains(r.err, "unknown key '\\x1b[2Jbroken' in the blueprint"));
    CHECK(contains(r.err, " 9 | \\x1b[2Jbroken: 1\n"));  // the source excerpt, escaped
  }
  dir.write("bp.yaml", "apiVersion: plinth/v1\nkind: Blueprint\nmetadata: {name: esc}\n"
                       "stacks:\n  train: {driver: \"580.126.20\", cuda: \"12.4\"}\n"
                       "node_pools:\n  - {name: p, count: 1, role: \"\\e[31mred\\a\\u009b2J\", stack: train,\n"
                       "     hardware: {gpu: L40S, gpus_per_node: 4}}\n");
  auto r = run_plinth({"validate", "bp.yaml"}, dir.path());
  CHECK(contains(r.err, "invalid role '\\x1b[31mred\\x07\\u009b2J' in node pool 'p'"));
  CHECK(r.err.find('\x1b') == std::string::npos);
}

TEST_CASE("invalid UTF-8 in a blueprint is refused at load with file:line:column", "[e2e][defects][utf8]") {
  TempDir dir;
  dir.write("bp.yaml", logical_blueprint(1, "access:\n  namespaces: [{name: team, service_accounts: [\"caf\xe9\"]}]\n"));
  for (const char* cmd : {"validate", "plan", "audit"}) {
    auto r = run_plinth({cmd, "bp.yaml"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "bp.yaml:10:52: error[BP001]: the file is not valid UTF-8: byte 0xe9 is not part of a "
                          "valid UTF-8 sequence\n"));
    CHECK_FALSE(contains(r.err, "type_error"));
    CHECK_FALSE(contains(r.err, "internal error"));
  }
}

TEST_CASE("messages say things once", "[e2e][defects][messages]") {
  TempDir dir;
  dir.write("bp.yaml", logical_blueprint(1));

  SECTION("a locked state is named once") {
    const std::string lock = dir.path() + "/plinth.state.json.lock";
    int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(flock(fd, LOCK_EX | LOCK_NB) == 0);
    std::string info = "{\"host\":\"ci-7\",\"operation\":\"plinth apply\",\"pid\":4242,\"time\":\"2026-12-02T13:04:05Z\"}\n";
    REQUIRE(write(fd, info.data(), info.size()) == static_cast<ssize_t>(info.size()));
    auto r = run_plinth({"plan", "bp.yaml"}, dir.path());
    close(fd);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "plinth plan: state plinth.state.json is locked by PID 4242 on ci-7 since "
                          "2026-12-02T13:04:05Z (plinth apply); wait for it to finish"));
    CHECK(count_of(r.err, "plinth.state.json") == 1);
  }

  SECTION("a resource that cannot be refreshed is named once") {
    // A node recorded in state whose BMC does not answer (port 9 is discard; nothing listens).
    state::StateDocument doc = state::new_document();
    doc.serial = 1;
    Resource n;
    n.address = "baremetal.node.gpu[0]";
    n.type = "baremetal.node";
    n.name = "gpu";
    n.index = 0;
    n.provider = "baremetal";
    n.attributes = {{"bmc_endpoint", "https://127.0.0.1:9"}, {"bmc_credentials", "env:BMC"}};
    doc.resources.push_back(n);
    auto backend = state::open_local(dir.path() + "/plinth.state.json");
    REQUIRE(backend->save(doc).ok());
    auto r = run_plinth({"plan", "bp.yaml"}, dir.path(), {{"BMC", "admin:admin"}});
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "plinth plan: refresh baremetal.node.gpu[0]: "));
    CHECK(count_of(r.err, "baremetal.node.gpu[0]") == 1);
  }

  SECTION("help says (repeatable) once") {
    for (const char* cmd : {"plan", "apply", "audit", "policy", "destroy"}) {
      auto r = run_plinth({"help", cmd}, dir.path());
      CHECK_FALSE(contains(r.out, "(repeatable). (repeatable)"));
      CHECK_FALSE(contains(r.out, "(repeatable) (repeatable)"));
      CHECK(contains(r.out, "(repeatable)"));
    }
  }

  SECTION("render --output gives the file's sha256, and the user_data_hash as such") {
    dir.write("pool.yaml", gpu_pool_with_bmc("{endpoints: \"https://bmc-{index}.ex\", credentials: env:BMC}"));
    auto r = run_plinth({"render", "pool.yaml", "--pool", "gpu", "--output", "user-data"}, dir.path());
    REQUIRE(r.exit_code == 0);
    const std::string sha = sha256_hex(slurp(dir.path() + "/user-data"));
    CHECK(contains(r.err, "Wrote user-data for pool gpu to user-data (sha256 " + sha + "); the pool's user_data_hash is "));
  }

  SECTION("a misspelt waiver field gets a did-you-mean in the reports too, and no second error") {
    dir.write("waivers.yaml", "waivers:\n  - policy: ML-IMG-001\n    resource: \"*\"\n    justification: lab\n"
                              "    approvr: alice\n    expires: 2099-01-01\n");
    auto r = run_plinth({"plan", "bp.yaml", "--report", "markdown:r.md"}, dir.path());
    INFO(r.err);
    CHECK(contains(r.err, "waivers.yaml:5:5: error[POL020]: unknown waiver field 'approvr'\n"));
    CHECK(contains(r.err, "  hint: did you mean 'approver'?\n"));
    CHECK_FALSE(contains(r.err, "waiver is missing 'approver'"));
    CHECK(contains(slurp(dir.path() + "/r.md"), "unknown waiver field 'approvr' (`waivers.yaml:5`) — did you mean 'approver'?"));
  }
}

}  // namespace plinth::test::e2e_defects
