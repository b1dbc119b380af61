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

using namespace plinth;
using plinth::test::run_plinth;
using plinth::test::slurp;
using plinth::test::TempDir;

namespace {

struct Workspace {
  TempDir dir;
  test::GitRepo repo{dir.path()};
  std::string blueprint, commit;
  Workspace() {
    blueprint = repo.write("infra.yaml", slurp("blueprints/examples/regulated.yaml"));
    repo.add("infra.yaml");
    commit = repo.commit("regulated");
  }
  test::RunResult plan(const std::vector<std::string>& extra) const {
    std::vector<std::string> args = {"plan", blueprint, "--state", dir.path() + "/plinth.state.json",
                                     "--refresh=false"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_plinth(args);
  }
};

}  // namespace

TEST_CASE("plan -out writes a plan file bound to the blueprint, policies, state and commit") {
  Workspace w;
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
  CHECK(pf->bindings.policies.size() >= 20);
  CHECK(pf->bindings.git_commit == w.commit);
  CHECK_FALSE(pf->bindings.git_dirty);
  CHECK(pf->bindings.state_serial == 0);
  CHECK(pf->bindings.state_lineage.size() == 36);  // a new lineage for a plan against no state
  CHECK(pf->plan.has_changes());
  CHECK_FALSE(pf->signature.has_value());
}

TEST_CASE("a signed plan verifies with its key and is refused with another; tampering is detected") {
  Workspace w;
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
  auto now = plan::make_bindings({w.blueprint}, policy_files, doc, w.commit, true);
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
  Workspace w;
  std::string key = w.dir.write("short.key", "abc\n");
  std::string out = w.dir.path() + "/plan.json";
  auto r = w.plan({"-out", out, "--sign-key", key});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("plinth plan: --sign-key: ") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}
