// Out-of-process provider plugins through the CLI, run from a blueprint
// directory of the user's own: the example promsd plugin (Prometheus file_sd
// targets, checked with promtool) through plan / apply / drift / destroy,
// SHA-256 pinning, discovery on PLINTH_PLUGIN_PATH, and plugins that crash,
// hang, write garbage, return undeclared types or speak another protocol.
#include <catch2/catch.hpp>
#include <filesystem>

#include "engine/state/state.h"
#include "tests/providers/baremetal/emulator.h"
#include "tests/support/blueprints.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"

namespace plinth::test::e2e_plugin {

namespace {

const std::string kPromsd = source_dir() + "/providers/examples/promsd/plinth-provider-promsd";
const std::string kFlaky = source_dir() + "/tests/e2e/fixtures/plinth-provider-flaky";

std::string sha256_of(const std::string& path) {
  auto r = run_program({"sha256sum", path});
  REQUIRE(r.exit_code == 0);
  return r.out.substr(0, 64);
}

/// Two bare-metal nodes on the emulator, and `monitoring` served by `plugin`
/// (declared with `exec` and, when given, `sha256`).
std::string plugin_blueprint(const Emulator& emu, const std::string& plugin, const std::string& exec,
                             const std::string& sha256, const std::string& monitoring_extra) {
  return blueprint_header("e2e-plugin") +
         "providers:\n"
         "  " + plugin + ":\n"
         "    exec: " + exec + "\n" +
         (sha256.empty() ? "" : "    sha256: " + sha256 + "\n") + train_stack_lean() + "node_pools:\n" +
         baremetal_pool({.endpoints = bmc_endpoints(emu.base()), .ca = emu.ca(), .boot = false, .mig = false}) +
         "monitoring: {provider: " + plugin + ", dcgm: true, prometheus: true" + monitoring_extra + "}\n";
}

size_t resources_in_state(const std::string& path, const std::string& type) {
  auto doc = state::parse(slurp(path), path);
  REQUIRE(doc.ok());
  size_t n = 0;
  for (const auto& r : doc->resources) n += r.type == type;
  return n;
}

}  // namespace

TEST_CASE("the example promsd plugin keeps Prometheus file_sd targets through plan, apply, drift and destroy",
          "[e2e][plugin]") {
  Emulator emu(h100_emulator_args(2));
  TempDir dir;  // the user's blueprint repository, outside the source tree
  std::filesystem::copy_file(kPromsd, dir.path() + "/plinth-provider-promsd");
  std::filesystem::permissions(dir.path() + "/plinth-provider-promsd", std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  const std::string bp = dir.write(
      "cluster.yaml", plugin_blueprint(emu, "promsd", "./plinth-provider-promsd", sha256_of(kPromsd),
                                       ", file: targets/plinth.json, host_pattern: \"{pool}-{index}.dc1.example\""));
  dir.write("prometheus.yml",
            "scrape_configs:\n  - job_name: fleet\n    file_sd_configs: [{files: [targets/*.json]}]\n");
  const std::map<std::string, std::string> env = {{"BMC_CREDENTIALS", "admin:admin"}};

  auto plan = run_plinth({"plan", "cluster.yaml"}, dir.path(), env);
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK(plan.out.find("+ promsd.targets.default (create)") != std::string::npos);

  auto apply = run_plinth({"apply", "cluster.yaml", "--auto-approve"}, dir.path(), env);
  INFO(apply.out << apply.err);
  REQUIRE(apply.exit_code == 0);
  CHECK(apply.err.find("[plugin promsd] wrote 4 target group(s) to ./targets/plinth.json") != std::string::npos);
  const std::string targets = slurp(dir.path() + "/targets/plinth.json");
  CHECK(targets.find("\"train-a-1.dc1.example:9400\"") != std::string::npos);
  CHECK(targets.find("\"train-a-0.dc1.example:9100\"") != std::string::npos);
  CHECK(targets.find("\"plinth_address\": \"baremetal.node.train-a[1]\"") != std::string::npos);
  auto check = run_program({"promtool", "check", "config", "prometheus.yml"}, dir.path());
  INFO(check.out << check.err);
  CHECK(check.exit_code == 0);
  CHECK(resources_in_state(dir.path() + "/plinth.state.json", "promsd.targets") == 1);

  auto again = run_plinth({"plan", "cluster.yaml", "--detailed-exitcode"}, dir.path(), env);
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);

  // Someone drops a node from the file by hand: the plan puts it back.
  auto doc = nlohmann::json::parse(targets);
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& g : doc)
    if (g["labels"]["index"] != "1") kept.push_back(g);
  dir.write("targets/plinth.json", kept.dump(2));
  auto drift = run_plinth({"plan", "cluster.yaml", "--detailed-exitcode"}, dir.path(), env);
  INFO(drift.out << drift.err);
  CHECK(drift.exit_code == 2);
  CHECK(drift.out.find("~ promsd.targets.default (update in place)") != std::string::npos);
  REQUIRE(run_plinth({"apply", "cluster.yaml", "--auto-approve"}, dir.path(), env).exit_code == 0);
  CHECK(slurp(dir.path() + "/targets/plinth.json") == targets);

  auto destroy = run_plinth({"destroy", "cluster.yaml", "--auto-approve"}, dir.path(), env);
  INFO(destroy.out << destroy.err);
  CHECK(destroy.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/targets/plinth.json"));
  CHECK(resources_in_state(dir.path() + "/plinth.state.json", "promsd.targets") == 0);
}

TEST_CASE("a plugin pinned by SHA-256 runs only when it is the reviewed file", "[e2e][plugin]") {
  Emulator emu(h100_emulator_args(2));
  TempDir dir;
  const std::string bp = dir.write(
      "cluster.yaml", plugin_blueprint(emu, "promsd", kPromsd, std::string(64, 'a'), ", file: targets/plinth.json"));
  auto r = run_plinth({"plan", "cluster.yaml"}, dir.path(), {{"BMC_CREDENTIALS", "admin:admin"}});
  CHECK(r.exit_code == 1);
  INFO(r.out << r.err);
  CHECK(r.err.find("error[BP011]") != std::string::npos);
  CHECK(r.err.find(kPromsd) != std::string::npos);
  CHECK(r.err.find("aaaaaaaa") != std::string::npos);
  CHECK(r.err.find(sha256_of(kPromsd)) != std::string::npos);
}

TEST_CASE("plinth providers lists built-in providers and plugins found on PLINTH_PLUGIN_PATH", "[e2e][plugin]") {
  TempDir dir;
  const std::string plugins = dir.path() + "/plugins";
  std::filesystem::create_directories(plugins);
  std::filesystem::copy_file(kPromsd, plugins + "/plinth-provider-promsd");
  std::filesystem::permissions(plugins + "/plinth-provider-promsd", std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  auto r = run_plinth({"providers"}, dir.path(), {{"PLINTH_PLUGIN_PATH", plugins}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("baremetal") != std::string::npos);
  CHECK(r.out.find("promsd 1.0.0") != std::string::npos);
  CHECK(r.out.find(plugins + "/plinth-provider-promsd") != std::string::npos);
  CHECK(r.out.find("promsd.targets") != std::string::npos);
  auto json = run_plinth({"providers", "--json"}, dir.path(), {{"PLINTH_PLUGIN_PATH", plugins}});
  REQUIRE(json.exit_code == 0);
  auto j = nlohmann::json::parse(json.out);
  bool found = false;
  for (const auto& p : j["providers"]) found = found || (p["name"] == "promsd" && p["source"] == plugins + "/plinth-provider-promsd");
  CHECK(found);
}

TEST_CASE("plinth providers lock says the blueprint's sha256 pins are the lock, not that a file is missing",
          "[e2e][plugin]") {
  TempDir dir;
  auto r = run_plinth({"providers", "lock"}, dir.path());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("plinth providers: 'lock' is not a subcommand: plinth has no lock file; a plugin is pinned where "
                   "it is declared, providers.NAME.sha256 in the blueprint") == 0);
  CHECK(r.err.find("BP000") == std::string::npos);
}

TEST_CASE("a misspelt provider option gets a did-you-mean", "[e2e][plugin]") {
  TempDir dir;
  auto r = run_plinth({"plan", source_dir() + "/blueprints/examples/lab.yaml", "--state", dir.path() + "/s.json",
                       "--provider-option", "baremetal.timeot_ms=5000"},
                      dir.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("provider baremetal has no option 'timeot_ms' (--provider-option baremetal.timeot_ms)") !=
        std::string::npos);
  CHECK(r.err.find("did you mean 'timeout_ms'?") != std::string::npos);
  auto t = run_plinth({"plan", source_dir() + "/blueprints/examples/lab.yaml", "--state", dir.path() + "/s.json",
                       "--provider-option", "baremetal.timeout_ms=soon"},
                      dir.path());
  CHECK(t.exit_code == 1);
  CHECK(t.err.find("timeout_ms") != std::string::npos);
  CHECK(t.err.find("integer") != std::string::npos);
}

TEST_CASE("a plugin that crashes, hangs, writes garbage or returns an undeclared type fails its operation only",
          "[e2e][plugin]") {
  struct Case {
    const char* mode;
    std::string message;
  };
  const Case cases[] = {
      {"crash", "plugin flaky (" + kFlaky + ") exited with status 3"},
      {"hang", "create did not finish within its deadline of 2s (flaky.create_deadline)"},
      {"garbage", "it wrote a line that is not a JSON object: 'this is not a protocol message'"},
      {"wrongtype", "it returned a resource of type 'other.thing', which its schema does not declare"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.mode) {
      Emulator emu(h100_emulator_args(2));
      TempDir dir;
      dir.write("cluster.yaml", plugin_blueprint(emu, "flaky", kFlaky, sha256_of(kFlaky), ""));
      const std::map<std::string, std::string> env = {
          {"BMC_CREDENTIALS", "admin:admin"}, {"FLAKY_MODE", c.mode}, {"PLINTH_PLUGIN_ENV", "FLAKY_MODE"}};
      auto r = run_plinth({"apply", "cluster.yaml", "--auto-approve", "--provider-option", "flaky.create_deadline=2s"},
                          dir.path(), env);
      INFO(r.out << r.err);
      CHECK(r.exit_code == 1);
      const std::string all = r.out + r.err;
      CHECK(all.find(c.message) != std::string::npos);
      CHECK(all.find("flaky.probe.default") != std::string::npos);
      if (std::string(c.mode) == "crash") {
        CHECK(r.err.find("[plugin flaky] flaky: segmentation fault (pretend)") != std::string::npos);
        CHECK(all.find("exited with status 3") != std::string::npos);
      }
      // The nodes finished and are recorded; the plugin's resource is not.
      CHECK(resources_in_state(dir.path() + "/plinth.state.json", "baremetal.node") == 2);
      CHECK(resources_in_state(dir.path() + "/plinth.state.json", "flaky.probe") == 0);
    }
  }
}

TEST_CASE("a plugin that speaks another protocol version is refused before anything runs", "[e2e][plugin]") {
  Emulator emu(h100_emulator_args(2));
  TempDir dir;
  dir.write("cluster.yaml", plugin_blueprint(emu, "flaky", kFlaky, sha256_of(kFlaky), ""));
  auto r = run_plinth({"plan", "cluster.yaml"}, dir.path(),
                      {{"BMC_CREDENTIALS", "admin:admin"}, {"FLAKY_MODE", "version"}, {"PLINTH_PLUGIN_ENV", "FLAKY_MODE"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("speaks plugin protocol version 99, but this plinth speaks version 1") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/plinth.state.json"));
}

namespace {

/// A plugin that writes the environment it was given, and the path it runs
/// from, to the file its ENV_DUMP names in its own source, then speaks the
/// handshake like the flaky plugin (mode ok).
std::string env_dumping_plugin(const std::string& dump) {
  std::string flaky = slurp(kFlaky);
  const std::string marker = "MODE = os.environ.get(\"FLAKY_MODE\", \"ok\")";
  REQUIRE(flaky.find(marker) != std::string::npos);
  return flaky.replace(flaky.find(marker), marker.size(),
                       marker + "\nwith open(" + nlohmann::json(dump).dump() +
                           ", 'w') as f:\n    f.write(sys.argv[0] + '\\n')\n    f.writelines(k + '\\n' for k in os.environ)");
}

}  // namespace

TEST_CASE("a blueprint's plugin gets none of plinth's secrets: it must be pinned and runs with a scrubbed "
          "environment from the bytes that were hashed", "[e2e][plugin][security]") {
  Emulator emu(h100_emulator_args(2));
  TempDir dir;  // the pull request's checkout
  const std::string dump = dir.path() + "/env.txt";
  const std::string plugin = dir.write("plinth-provider-flaky", env_dumping_plugin(dump));
  std::filesystem::permissions(plugin, std::filesystem::perms::owner_exec, std::filesystem::perm_options::add);
  const std::map<std::string, std::string> env = {{"BMC_CREDENTIALS", "admin:admin"},
                                                  {"AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG"},
                                                  {"PLINTH_STATE_KEY", std::string(64, 'a')},
                                                  {"LAB_BMC_CREDENTIALS", "root:calvin"}};

  SECTION("an exec without a sha256 pin never runs") {
    dir.write("cluster.yaml", plugin_blueprint(emu, "flaky", "./plinth-provider-flaky", "", ""));
    auto r = run_plinth({"validate", "cluster.yaml"}, dir.path(), env);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("has no sha256 pin; a plugin declared in the blueprint runs only when pinned") !=
          std::string::npos);
    CHECK(r.err.find("sha256: " + sha256_of(plugin)) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dump));
  }
  SECTION("a pin without exec is not looked up on PLINTH_PLUGIN_PATH") {
    const std::string path_dir = dir.path() + "/on-path";
    std::filesystem::create_directories(path_dir);
    std::filesystem::copy_file(plugin, path_dir + "/plinth-provider-flaky");
    std::string bp = plugin_blueprint(emu, "flaky", "./plinth-provider-flaky", sha256_of(plugin), "");
    bp.erase(bp.find("    exec: ./plinth-provider-flaky\n"), std::string("    exec: ./plinth-provider-flaky\n").size());
    dir.write("cluster.yaml", bp);
    auto with_path = env;
    with_path["PLINTH_PLUGIN_PATH"] = path_dir;
    auto r = run_plinth({"plan", "cluster.yaml"}, dir.path(), with_path);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("has a sha256 pin but no exec") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dump));
  }
  SECTION("a pinned plugin runs from a sealed copy with only the safe variables") {
    dir.write("cluster.yaml", plugin_blueprint(emu, "flaky", "./plinth-provider-flaky", sha256_of(plugin), ""));
    auto r = run_plinth({"validate", "cluster.yaml"}, dir.path(), env);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    REQUIRE(std::filesystem::exists(dump));
    const std::string seen = slurp(dump);
    INFO(seen);
    CHECK(seen.rfind("/proc/self/fd/3\n", 0) == 0);  // the hashed bytes, not the path that could be swapped
    for (const char* secret : {"BMC_CREDENTIALS", "AWS_SECRET_ACCESS_KEY", "PLINTH_STATE_KEY", "LAB_BMC_CREDENTIALS"})
      CHECK(seen.find(std::string("\n") + secret + "\n") == std::string::npos);
    CHECK(seen.find("\nPATH\n") != std::string::npos);
  }
  SECTION("a file swapped after review is refused") {
    dir.write("cluster.yaml", plugin_blueprint(emu, "flaky", "./plinth-provider-flaky", sha256_of(plugin), ""));
    dir.write("plinth-provider-flaky", env_dumping_plugin(dump) + "\n# swapped\n");
    auto r = run_plinth({"plan", "cluster.yaml"}, dir.path(), env);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("this is not the plugin that was reviewed") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dump));
  }
}

TEST_CASE("a plugin's stderr reaches the terminal without escape sequences", "[e2e][plugin][security]") {
  Emulator emu(h100_emulator_args(2));
  TempDir dir;
  dir.write("cluster.yaml", plugin_blueprint(emu, "flaky", kFlaky, sha256_of(kFlaky), ""));
  auto r = run_plinth({"validate", "cluster.yaml"}, dir.path(),
                      {{"BMC_CREDENTIALS", "admin:admin"}, {"FLAKY_MODE", "escape"}, {"PLINTH_PLUGIN_ENV", "FLAKY_MODE"}});
  INFO(r.out << r.err);
  CHECK(r.err.find("[plugin flaky] \\x1b[31mApply complete! Resources: 99 added.\\x1b[0m") != std::string::npos);
  CHECK(r.err.find("\x1b") == std::string::npos);
}


namespace {

const std::string kLabcloud = source_dir() + "/providers/examples/labcloud/plinth-provider-labcloud";

/// The example labcloud plugin beside the blueprint, serving one burst pool of `desired`
/// `type` machines (falling back to `fallbacks`) with stack `driver` / `cuda`.
std::string labcloud_blueprint(const std::string& sha256, const std::string& type, const std::string& fallbacks,
                               int desired, const std::string& driver, const std::string& cuda) {
  return blueprint_header("e2e-labcloud") +
         "providers:\n"
         "  labcloud:\n"
         "    exec: ./plinth-provider-labcloud\n"
         "    sha256: " + sha256 + "\n"
         "    options: {capacity: \"lab.h100x8=2\"}\n"
         "stacks:\n"
         "  train: {driver: \"" + driver + "\", cuda: \"" + cuda + "\"}\n"
         "burst_pools:\n"
         "  - name: lab-burst\n"
         "    provider: labcloud\n"
         "    region: lab-1\n"
         "    instance_type: " + type + "\n" +
         (fallbacks.empty() ? "" : "    instance_types: [" + fallbacks + "]\n") +
         "    desired: " + std::to_string(desired) + "\n"
         "    max: 4\n"
         "    stack: train\n";
}

size_t lab_instances(const std::string& dir, const std::string& type) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/labcloud/instances", ec))
    n += slurp(e.path().string()).find("\"instance_type\": \"" + type + "\"") != std::string::npos;
  return n;
}

}  // namespace

TEST_CASE("a plugin cloud that declares its own instance types has its burst pool validated with the GPU rules, "
          "planned, applied over its fallback and destroyed", "[e2e][plugin]") {
  TempDir dir;
  std::filesystem::copy_file(kLabcloud, dir.path() + "/plinth-provider-labcloud");
  std::filesystem::permissions(dir.path() + "/plinth-provider-labcloud", std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  const std::string sha = sha256_of(kLabcloud);

  // A type the plugin does not sell: GPU002 with the plugin's own closest names.
  dir.write("lab.yaml", labcloud_blueprint(sha, "lab.h100x4", "", 1, kDriver, "12.4"));
  auto unknown = run_plinth({"validate", "lab.yaml"}, dir.path());
  INFO(unknown.out << unknown.err);
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("lab.yaml:15:20: error[GPU002]: unknown labcloud instance type 'lab.h100x4' in burst pool "
                         "'lab-burst'") != std::string::npos);
  CHECK(unknown.err.find("hint: did you mean 'lab.h100x8'? (the types are listed by plinth providers --json and in "
                         "providers/examples/labcloud/README.md)") != std::string::npos);

  // Its H100 type with a stack too old for Hopper: the GPU rules apply to the plugin's type, and to the
  // fallback the pool lists.
  dir.write("lab.yaml", labcloud_blueprint(sha, "lab.h100x8", "lab.h200x8", 1, "470.256.02", "11.4"));
  auto old = run_plinth({"validate", "lab.yaml"}, dir.path());
  INFO(old.out << old.err);
  CHECK(old.exit_code == 1);
  CHECK(old.err.find("error[DRV002]: burst pool 'lab-burst' (lab.h100x8) runs H100-80GB, which needs driver "
                     "520.61.05 or newer") != std::string::npos);
  CHECK(old.err.find("error[CUDA004]: burst pool 'lab-burst' (lab.h100x8)") != std::string::npos);
  CHECK(old.err.find("lab.yaml:16:21: error[CUDA004]: burst pool 'lab-burst' (lab.h200x8)") != std::string::npos);

  // A valid pool of 3 where the lab has room for 2 H100 machines: planned with the type's facts, applied with
  // the third on the H200 fallback.
  dir.write("lab.yaml", labcloud_blueprint(sha, "lab.h100x8", "lab.h200x8", 3, kDriver, "12.4"));
  auto valid = run_plinth({"validate", "lab.yaml"}, dir.path());
  INFO(valid.out << valid.err);
  CHECK(valid.exit_code == 0);
  auto plan = run_plinth({"plan", "lab.yaml", "--no-color"}, dir.path());
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 0);
  CHECK(plan.out.find("+ labcloud.instance.lab-burst[0..2]  3 to create\n") != std::string::npos);
  CHECK(plan.out.find("ib_ports") != std::string::npos);
  auto apply = run_plinth({"apply", "lab.yaml", "--auto-approve", "--no-color"}, dir.path());
  INFO(apply.out << apply.err);
  CHECK(apply.exit_code == 0);
  CHECK(lab_instances(dir.path(), "lab.h100x8") == 2);
  CHECK(lab_instances(dir.path(), "lab.h200x8") == 1);
  CHECK(resources_in_state(dir.path() + "/plinth.state.json", "labcloud.instance") == 3);
  auto again = run_plinth({"plan", "lab.yaml", "--detailed-exitcode"}, dir.path());
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);

  auto destroy = run_plinth({"destroy", "lab.yaml", "--auto-approve"}, dir.path());
  INFO(destroy.out << destroy.err);
  CHECK(destroy.exit_code == 0);
  CHECK(lab_instances(dir.path(), "lab.h100x8") + lab_instances(dir.path(), "lab.h200x8") == 0);
}

}  // namespace plinth::test::e2e_plugin
