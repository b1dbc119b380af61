// plinth where users run it (issue 9, "Runs from anywhere"): a binary copied
// out of the build tree and run from a blueprint repository of the user's own
// has its policy packs; --policy-dir / PLINTH_POLICY_DIR add packs and are
// never required; `plinth version`; shell completion from the command table;
// `cmake --install` lays out binary, completions, docs, examples and packs.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/support/run.h"
#include "tests/support/text.h"

namespace plinth::test::e2e_anywhere {

namespace fs = std::filesystem;

namespace {

/// The example lab blueprint in a fresh directory outside the source tree.
std::string lab_copy(const TempDir& dir) { return dir.write("infra/lab.yaml", slurp(source_dir() + "/blueprints/examples/lab.yaml")); }

/// plinth copied to `dir`/bin, as a CI image or a release tarball holds it.
std::string copied_binary(const TempDir& dir) {
  fs::create_directories(dir.path() + "/bin");
  const std::string to = dir.path() + "/bin/plinth";
  fs::copy_file(plinth_binary(), to, fs::copy_options::overwrite_existing);
  return to;
}

RunResult run_copy(const std::string& binary, const std::vector<std::string>& args, const std::string& cwd,
                   const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> argv = {binary};
  argv.insert(argv.end(), args.begin(), args.end());
  auto e = env;
  e.emplace("NO_COLOR", "1");
  return run_program(argv, cwd, e);
}

}  // namespace

TEST_CASE("a plinth binary copied out of the build tree plans with its built-in policy packs", "[e2e][anywhere]") {
  TempDir dir;
  const std::string bin = copied_binary(dir);
  const std::string bp = lab_copy(dir);
  auto r = run_copy(bin, {"plan", "infra/lab.yaml", "--detailed-exitcode", "--refresh=false"}, dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "Plan: 6 to create, 0 to update, 0 to replace, 0 to destroy."));
  CHECK_FALSE(contains(r.err, "POL001"));
  CHECK_FALSE(contains(r.err, "does not exist"));
  // The lab selects no framework: the ml pack runs, the framework packs are counted as not selected.
  CHECK(contains(r.err, "policy check: 9 policies run, 0 mandatory failure(s)"));
  CHECK(contains(r.err, "36 not selected by metadata.compliance"));

  auto list = run_copy(bin, {"policy", "list"}, dir.path());
  CHECK(list.exit_code == 0);
  CHECK(contains(list.out, "file: <builtin>/policies/soc2/encryption.lua:"));
  CHECK(contains(list.out, "\n45 policies\n"));

  // The packs' settings travel with them too: a directory holding only
  // soc2/settings.yaml relaxes the built-in soc2 pack, and no other.
  dir.write("relax/soc2/settings.yaml", "transport_baseline: advisory\n");
  auto relaxed = run_copy(bin, {"policy", "list", "--policy-dir", "relax"}, dir.path());
  INFO(relaxed.err);
  CHECK(relaxed.exit_code == 0);
  CHECK(relaxed.err.empty());
  CHECK(contains(relaxed.out, "\nSOC2-TLS-001   high     advisory  "));
  CHECK(contains(relaxed.out, "\nGDPR-TLS-001   medium   mandatory "));
  CHECK(contains(list.out, "\nSOC2-TLS-001   high     mandatory "));

  // The packs' own Lua tests travel with them.
  auto tests = run_copy(bin, {"policy", "test"}, dir.path());
  INFO(tests.out << tests.err);
  CHECK(tests.exit_code == 0);
  CHECK(contains(tests.out, " passed, 0 failed\n"));

  // An audit of a blueprint that selects frameworks sees their control lists.
  dir.write("infra/regulated.yaml", slurp(source_dir() + "/blueprints/examples/regulated.yaml"));
  auto audit = run_copy(bin, {"audit", "infra/regulated.yaml", "--format", "json", "--framework", "hipaa"}, dir.path());
  auto j = nlohmann::json::parse(audit.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  CHECK(j["frameworks"][0]["name"] == "hipaa");
  CHECK(j["frameworks"][0]["controls"].size() > 10);
}

TEST_CASE("extra packs: --policy-dir and PLINTH_POLICY_DIR add to the built-in ones", "[e2e][anywhere]") {
  TempDir dir;
  const std::string bp = lab_copy(dir);
  dir.write("acme/acme/pools.lua", R"(policy {
  id = "ACME-001", title = "always fails", severity = "low", enforcement = "mandatory",
  check = function(ctx) fail(nil, "acme says no") end,
}
)");
  dir.write("more/more/other.lua", R"(policy {
  id = "MORE-001", title = "always passes", severity = "low", enforcement = "advisory",
  check = function(ctx) end,
}
)");
  auto env = run_plinth({"plan", "infra/lab.yaml"}, dir.path(),
                        {{"PLINTH_POLICY_DIR", dir.path() + "/acme:" + dir.path() + "/more"}});
  CHECK(env.exit_code == 1);
  CHECK(contains(env.err, "error[ACME-001]: acme says no\n"));
  CHECK(contains(env.err, "policy check: 11 policies run, 1 mandatory failure(s)"));  // 9 built in + 2

  auto flag = run_plinth({"policy", "list", "--policy-dir", "more"}, dir.path());
  CHECK(flag.exit_code == 0);
  CHECK(contains(flag.out, "MORE-001"));
  CHECK(contains(flag.out, "\n46 policies\n"));
}

TEST_CASE("a missing --policy-dir is an error without the waiver hint", "[e2e][anywhere]") {
  TempDir dir;
  lab_copy(dir);
  auto r = run_plinth({"plan", "infra/lab.yaml", "--policy-dir", "nope"}, dir.path());
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "error[POL001]: policy directory 'nope' does not exist\n"));
  CHECK(contains(r.err, "policy check failed: fix the errors above (docs/policy-authoring.md)\n"));
  CHECK_FALSE(contains(r.err, "waiver"));
}

TEST_CASE("plinth version names the version, the commit and the catalog and policy pack versions",
          "[e2e][anywhere]") {
  TempDir dir;
  auto r = run_plinth({"version"}, dir.path());
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("plinth 0.1.0\n", 0) == 0);
  CHECK(contains(r.out, "\n  catalog:  2026.12.7 (built in)\n"));
  CHECK(contains(r.out, "\n  policies: 2026.12.1 (built in: gdpr "));
  CHECK(contains(r.out, ", soc2 "));
  CHECK(run_plinth({"--version"}, dir.path()).out == r.out);

  auto j = nlohmann::json::parse(run_plinth({"version", "--json"}, dir.path()).out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  CHECK(j["version"] == "0.1.0");
  CHECK(j["catalog"]["version"] == "2026.12.7");
  CHECK(j["policies"]["packs"].contains("hipaa"));
  CHECK(j["policies"]["packs"]["hipaa"]["digest"].get<std::string>().size() == 12);
  // The commit is the source tree's HEAD (when this test runs in a git checkout).
  auto head = run_program({"git", "-C", source_dir(), "rev-parse", "HEAD"});
  if (head.exit_code == 0 && !std::getenv("PLINTH_TEST_BINARY")) {
    CHECK(j["commit"] == head.out.substr(0, 40));
    CHECK(contains(r.out, "  commit:   " + head.out.substr(0, 40)));
  }
}

TEST_CASE("bash completion is generated from the command table", "[e2e][anywhere][completion]") {
  TempDir dir;
  auto script = run_plinth({"completion", "bash"}, dir.path());
  REQUIRE(script.exit_code == 0);
  const std::string file = dir.write("plinth.bash", script.out);
  // Sources the script and asks it to complete, as bash does on <Tab>.
  auto complete = [&](const std::string& words) {
    std::string prog = "source " + file + "\nCOMP_WORDS=(" + words +
                       ")\nCOMP_CWORD=$((${#COMP_WORDS[@]}-1))\n_plinth\necho \"${COMPREPLY[*]}\"\n";
    auto r = run_program({"/bin/bash", "-c", prog}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    return r.out;
  };
  CHECK(complete("plinth pl") == "plan\n");
  CHECK(complete("plinth v") == "validate verify version\n");
  CHECK(complete("plinth plan --sta") == "--state --state-key-file\n");
  CHECK(complete("plinth plan --ta") == "--target\n");
  CHECK(complete("plinth audit --format s") == "sarif\n");
  CHECK(complete("plinth state r") == "restore rm rekey\n");
  CHECK(complete("plinth help imp") == "import\n");
  CHECK(contains(complete("plinth validate --"), "--json"));
}

TEST_CASE("zsh completion is generated from the command table", "[e2e][anywhere][completion]") {
  TempDir dir;
  auto script = run_plinth({"completion", "zsh"}, dir.path());
  REQUIRE(script.exit_code == 0);
  CHECK(script.out.rfind("#compdef plinth\n", 0) == 0);
  CHECK(contains(script.out, "'import:Adopt an existing server or instance into state, read through its provider.'"));
  CHECK(contains(script.out, "'*--target[Plan only ADDRESS"));
  const std::string file = dir.write("_plinth", script.out);
  if (access("/usr/bin/zsh", X_OK) != 0) {
    WARN("zsh is not installed (.ci/setup installs it): the script's syntax is not checked");
    return;
  }
  auto r = run_program({"/usr/bin/zsh", "-n", file}, dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("cmake --install puts the binary, completions, docs, examples and packs under the prefix",
          "[e2e][anywhere][install]") {
  const fs::path build = fs::path(PLINTH_BINARY).parent_path().parent_path();
  REQUIRE(fs::exists(build / "completions" / "plinth"));  // test_e2e depends on plinth_completions
  TempDir dir;
  auto r = run_program({"cmake", "--install", build.string(), "--prefix", dir.path() + "/usr"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* f : {"bin/plinth", "share/bash-completion/completions/plinth", "share/zsh/vendor-completions/_plinth",
                        "share/doc/plinth/README.md", "share/doc/plinth/docs/state.md",
                        "share/plinth/blueprints/examples/lab.yaml", "share/plinth/policies/soc2/encryption.lua"})
    CHECK(fs::exists(dir.path() + "/usr/" + f));
  // The installed binary validates the installed examples from anywhere.
  auto v = run_copy(dir.path() + "/usr/bin/plinth", {"validate", dir.path() + "/usr/share/plinth/blueprints/examples/cluster.yaml"}, "/");
  INFO(v.err);
  CHECK(v.exit_code == 0);
}

TEST_CASE("the README's examples run as written from a directory outside the source tree", "[e2e][anywhere][readme]") {
  // .ci/installed-examples runs the README's example block line by line
  // (CI runs it again with the installed /usr/bin/plinth).
  auto r = run_program({"/bin/bash", source_dir() + "/.ci/installed-examples", plinth_binary()}, "/",
                       {{"REDFISH_EMULATOR", REDFISH_EMULATOR_BINARY}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "installed-examples: all "));
  CHECK(contains(r.out, "$ plinth apply lab.plan --verify-key plan.pub"));
}

}  // namespace plinth::test::e2e_anywhere
