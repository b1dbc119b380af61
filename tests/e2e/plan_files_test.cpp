// plinth plan -out PLANFILE [--sign-key KEY]: the saved plan's bindings, its
// signature, and planfile::verify refusing a blueprint changed afterwards.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>

#include "engine/core/hash.h"
#include "engine/plan/planfile.h"
#include "engine/state/state.h"
#include "tests/support/git_repo.h"
#include "tests/support/run.h"

namespace plinth::test::e2e_plan_files {

namespace {

/// A repository whose one commit holds regulated.yaml as infra.yaml.
struct RegulatedRepo {
  TempDir dir;
  test::GitRepo repo{dir.path()};
  std::string blueprint = dir.path() + "/infra.yaml";
  std::string commit = repo.commit_file("infra.yaml", slurp("blueprints/examples/regulated.yaml"), "regulated");
  test::RunResult plan(const std::vector<std::string>& extra) const {
    std::vector<std::string> args = {"plan", blueprint, "--state", dir.path() + "/plinth.state.json",
                                     "--refresh=false"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_plinth(args);
  }
};

}  // namespace

TEST_CASE("plan -out writes a plan file bound to the blueprint, policies, state and commit") {
  RegulatedRepo w;
  std::string out = w.dir.path() + "/plan.json";
  auto r = w.plan({"-out", out});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("saved the plan to " + out + "; apply it with: plinth apply " + out + "\n") != std::string::npos);
  struct stat st{};
  REQUIRE(stat(out.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto pf = plan::read_planfile(out);
  REQUIRE(pf.ok());
  CHECK(pf->bindings.blueprints.at(w.blueprint) == sha256_file(w.blueprint));
  // Every policy file of the built-in packs is bound (tests are not policies).
  size_t policy_files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(plinth::test::source_dir() + "/policies")) {
    std::string name = e.path().filename().string();
    if (e.path().extension() == ".lua" && name.find("_test.lua") == std::string::npos) ++policy_files;
  }
  CHECK(policy_files > 0);
  CHECK(pf->bindings.policies.size() == policy_files);
  // They are bound by the names they have inside plinth (docs/plan-files.md).
  CHECK(pf->bindings.policies.count("<builtin>/policies/soc2/encryption.lua") == 1);
  CHECK(pf->bindings.git_commit == w.commit);
  CHECK_FALSE(pf->bindings.git_dirty);
  CHECK(pf->bindings.state_serial == 0);
  CHECK(pf->bindings.state_lineage.size() == 36);  // a new lineage for a plan against no state
  CHECK(pf->plan.has_changes());
  CHECK_FALSE(pf->signature.has_value());
}

TEST_CASE("a signed plan verifies with its key and is refused with another, tampering is detected") {
  RegulatedRepo w;
  std::string key = w.dir.write("plan.key", std::string(64, 'a') + "\n");
  std::string other = w.dir.write("other.key", std::string(64, 'b') + "\n");
  std::string out = w.dir.path() + "/plan.json";
  auto r = w.plan({"-out", out, "--sign-key", key});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("(signed, hmac-sha256 key ") != std::string::npos);
  auto k = plan::PlanKey::load(key);
  REQUIRE(k.ok());
  auto pf = plan::read_planfile(out, &*k);
  REQUIRE(pf.ok());
  auto wrong = plan::PlanKey::load(other);
  REQUIRE(wrong.ok());
  CHECK_FALSE(plan::read_planfile(out, &*wrong).ok());

  // The blueprint changes after the plan was made: verify names it.
  w.repo.write("infra.yaml", slurp(w.blueprint) + "\n# edited\n");
  std::vector<std::string> policy_files;
  for (const auto& [path, sha] : pf->bindings.policies) policy_files.push_back(path);
  state::StateDocument doc;
  doc.lineage = pf->bindings.state_lineage;
  auto now = plan::make_bindings({w.blueprint}, policy_files, {pf->bindings.state_location, false, doc}, w.commit,
                                 true);
  REQUIRE(now.ok());
  auto v = plan::verify(*pf, *now);
  REQUIRE_FALSE(v.ok());
  CHECK(v.error().message.find("blueprint " + w.blueprint + " changed since the plan was made") != std::string::npos);
}

TEST_CASE("plan -out refuses to save a plan that fails a mandatory policy") {
  TempDir dir;
  std::string out = dir.path() + "/plan.json";
  auto r = run_plinth({"plan", "blueprints/invalid/policy-hipaa-gaps.yaml", "--state", dir.path() + "/s.json",
                       "--refresh=false", "-out", out});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("plinth plan: not writing " + out + ": the policy check failed (a blocked plan cannot be applied)\n") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("plan -out with an unusable key writes nothing") {
  RegulatedRepo w;
  std::string key = w.dir.write("short.key", "abc\n");
  std::string out = w.dir.path() + "/plan.json";
  auto r = w.plan({"-out", out, "--sign-key", key});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("plinth plan: --sign-key: ") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

namespace {

// A blueprint of logical resources only, so apply needs no provider endpoint.
constexpr const char* kFabricOnly = R"(apiVersion: plinth/v1
kind: Blueprint
metadata: {name: fabric-only, owner: net-team}
networks:
  vlans:
    - {name: ml-fabric, id: 100, cidr: 10.100.0.0/16, vrf: ml, purpose: training, mtu: 9000}
storage:
  tiers:
    - {name: hot, kind: nvme, capacity_tb: 100, classification: internal, encryption: {at_rest: aes-256-xts}}
monitoring: {dcgm: true, prometheus: true, grafana: true}
)";

struct FabricRepo {
  TempDir dir;
  test::GitRepo repo{dir.path()};
  std::string blueprint, state, planfile;
  FabricRepo() {
    blueprint = dir.path() + "/fabric.yaml";
    repo.commit_file("fabric.yaml", kFabricOnly, "fabric");
    state = dir.path() + "/plinth.state.json";
    planfile = dir.path() + "/plan.json";
  }
  test::RunResult plan_out(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {"plan", blueprint, "--state", state, "-out", planfile};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_plinth(args);
  }
  test::RunResult apply(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {"apply", planfile, "--state", state, "--auto-approve"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_plinth(args);
  }
};

}  // namespace

TEST_CASE("apply PLANFILE applies the saved plan once and refuses it a second time") {
  FabricRepo w;
  REQUIRE(w.plan_out().exit_code == 0);
  auto first = w.apply();
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.out.find("Apply complete: 3 succeeded, 0 failed, 0 skipped.") != std::string::npos);
  auto doc = state::parse(slurp(w.state), w.state);
  REQUIRE(doc.ok());
  auto pf = plan::read_planfile(w.planfile);
  REQUIRE(pf.ok());
  CHECK(doc->lineage == pf->bindings.state_lineage);  // the state continues the plan's lineage
  CHECK(doc->resources.size() == 3);

  auto again = w.apply();
  CHECK(again.exit_code == 1);
  CHECK(again.err.find("plinth apply: refusing the saved plan " + w.planfile +
                       ": the plan was made when there was no state at " + w.state + ", and there is one now") !=
        std::string::npos);
  auto after = state::parse(slurp(w.state), w.state);
  REQUIRE(after.ok());
  CHECK(after->serial == doc->serial);
}

TEST_CASE("a plan made against no state is refused by another empty state and after its own state moved away",
          "[security]") {
  FabricRepo w;
  REQUIRE(w.plan_out().exit_code == 0);
  // Another state location, empty too: the plan names the state it was made for.
  const std::string other = w.dir.path() + "/other.state.json";
  auto r = run_plinth({"apply", w.planfile, "--state", other, "--auto-approve"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("the plan was made against the state " + w.state + ", not " + other) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(other));

  // Applied once; then the state file is moved away and its kept versions stay.
  REQUIRE(w.apply().exit_code == 0);
  std::filesystem::rename(w.state, w.dir.path() + "/moved.state.json");
  r = w.apply();
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("it was made when there was no state at " + w.state + ", but that state has ") !=
        std::string::npos);
  CHECK(r.err.find("kept version(s) (it was applied before and moved or removed since)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(w.state));
}

TEST_CASE("apply PLANFILE refuses a plan whose blueprint changed, naming the file") {
  FabricRepo w;
  REQUIRE(w.plan_out().exit_code == 0);
  w.repo.write("fabric.yaml", std::string(kFabricOnly) + "# edited after the plan\n");
  w.repo.add("fabric.yaml");
  w.repo.commit("edit");
  auto r = w.apply();
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("blueprint " + w.blueprint + " changed since the plan was made") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(w.state));
}

namespace {

/// A user's repository driven with the git binary, as CI does: main holds the
/// blueprint, a pull request's branch changes it, and main moves on meanwhile.
struct MergeRepo {
  TempDir dir, outside;  // the state and plan files live outside the checkout
  std::string blueprint = dir.path() + "/fabric.yaml";
  std::string git(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"git", "-C", dir.path(), "-c", "user.name=Plinth Test",
                                     "-c", "user.email=test@plinth.invalid", "-c", "commit.gpgsign=false"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_program(argv);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  }
  MergeRepo() {
    git({"init", "-q", "-b", "main"});
    dir.write("fabric.yaml", kFabricOnly);
    git({"add", "fabric.yaml"});
    git({"commit", "-q", "-m", "fabric"});
    git({"checkout", "-q", "-b", "pr"});
    dir.write("fabric.yaml", std::string(kFabricOnly) + "# reviewed in the pull request\n");
    git({"commit", "-q", "-am", "pr: the change under review"});
    git({"checkout", "-q", "main"});
    dir.write("README.md", "unrelated\n");
    git({"add", "README.md"});
    git({"commit", "-q", "-m", "main moves on"});
    git({"checkout", "-q", "pr"});
  }
  /// plinth plan -out on the pull request's head, against the state `name`.
  std::string plan(const std::string& name) const {
    const std::string planfile = outside.path() + "/" + name + ".plan";
    auto r = run_plinth({"plan", blueprint, "--state", outside.path() + "/" + name + ".state.json", "-out", planfile});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return planfile;
  }
  test::RunResult apply(const std::string& name) const {
    return run_plinth({"apply", outside.path() + "/" + name + ".plan", "--state",
                       outside.path() + "/" + name + ".state.json"});
  }
};

}  // namespace

TEST_CASE("a saved plan applies after a --no-ff merge and after a squash of its pull request, and is refused once "
          "a commit changed the blueprint", "[security]") {
  MergeRepo w;
  w.plan("merged");
  w.plan("squashed");
  const std::string pr_head = w.git({"rev-parse", "HEAD"});

  // A real merge commit on main: another commit than the plan's, the same blueprint.
  w.git({"checkout", "-q", "main"});
  w.git({"merge", "-q", "--no-ff", "pr", "-m", "Merge pull request"});
  CHECK(w.git({"rev-parse", "HEAD"}) != pr_head);
  CHECK(w.git({"rev-list", "--parents", "-n", "1", "HEAD"}).find(' ', 41) != std::string::npos);  // two parents
  auto merged = w.apply("merged");
  INFO(merged.out << merged.err);
  CHECK(merged.exit_code == 0);
  CHECK(merged.out.find("Apply complete: 3 succeeded, 0 failed, 0 skipped.") != std::string::npos);

  // A squash of the same pull request onto main as it was before the merge.
  w.git({"reset", "-q", "--hard", "HEAD~1"});
  w.git({"merge", "-q", "--squash", "pr"});
  w.git({"commit", "-q", "-m", "Squashed pull request"});
  auto squashed = w.apply("squashed");
  INFO(squashed.out << squashed.err);
  CHECK(squashed.exit_code == 0);

  // A commit that changes the blueprint after the plan: refused, naming the file.
  const std::string again = w.plan("changed");
  (void)again;
  w.dir.write("fabric.yaml", std::string(kFabricOnly) + "# changed after the review\n");
  w.git({"commit", "-q", "-am", "an unreviewed change"});
  auto refused = w.apply("changed");
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("blueprint " + w.blueprint + " changed since the plan was made") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(w.outside.path() + "/changed.state.json"));
}

TEST_CASE("apply PLANFILE --verify-key accepts the signing key's plan and refuses others") {
  FabricRepo w;
  std::string key = w.dir.path() + "/plan.key", pub = w.dir.path() + "/plan.pub";
  std::string other = w.dir.path() + "/other.key", other_pub = w.dir.path() + "/other.pub";
  for (auto [k, p] : {std::pair{key, pub}, std::pair{other, other_pub}}) {
    REQUIRE(test::run_program({"openssl", "genpkey", "-algorithm", "ed25519", "-out", k}).exit_code == 0);
    REQUIRE(test::run_program({"openssl", "pkey", "-in", k, "-pubout", "-out", p}).exit_code == 0);
  }
  REQUIRE(w.plan_out({"--sign-key", key}).exit_code == 0);

  auto wrong = w.apply({"--verify-key", other_pub});
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.err.find("plinth apply: ") != std::string::npos);
  CHECK(wrong.err.find("nothing was changed") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(w.state));

  auto ok = w.apply({"--verify-key", pub});
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
}

TEST_CASE("apply PLANFILE refuses a truncated plan file and touches nothing") {
  FabricRepo w;
  REQUIRE(w.plan_out().exit_code == 0);
  std::string text = slurp(w.planfile);
  w.dir.write("plan.json", text.substr(0, text.size() / 2));
  auto r = w.apply();
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("plinth apply: ") != std::string::npos);
  CHECK(r.err.find("; nothing was changed") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(w.state));
}

TEST_CASE("apply refuses blueprints with uncommitted changes unless --allow-dirty") {
  FabricRepo w;
  w.repo.write("fabric.yaml", std::string(kFabricOnly) + "# not committed\n");
  auto r = run_plinth({"apply", w.blueprint, "--state", w.state, "--auto-approve"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("plinth apply: the blueprint has uncommitted changes (fabric.yaml); commit them so what is "
                   "applied can be reproduced from a commit, or pass --allow-dirty") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(w.state));
  auto allowed = run_plinth({"apply", w.blueprint, "--state", w.state, "--auto-approve", "--allow-dirty"});
  INFO(allowed.err);
  CHECK(allowed.exit_code == 0);
}

}  // namespace plinth::test::e2e_plan_files
