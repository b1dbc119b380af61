#include "engine/audit/provenance.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/support/git_repo.h"
#include "tests/support/run.h"

using namespace plinth;
using plinth::test::GitRepo;
using plinth::test::TempDir;

namespace {

std::string canonical(const std::string& p) { return std::filesystem::weakly_canonical(p).string(); }

/// A repository with one commit holding blueprints/a.yaml, blueprints/b.yaml and README.md.
struct Fixture {
  TempDir tmp;
  GitRepo repo{tmp.path()};
  std::string a, b, head;
  Fixture() {
    a = repo.write("blueprints/a.yaml", "apiVersion: plinth/v1\n");
    b = repo.write("blueprints/b.yaml", "kind: Blueprint\n");
    repo.write("README.md", "readme\n");
    for (auto f : {"blueprints/a.yaml", "blueprints/b.yaml", "README.md"}) repo.add(f);
    head = repo.commit("first");
  }
  audit::Provenance record() const {
    auto p = audit::record_provenance({a, b});
    REQUIRE(p.ok());
    return p.value();
  }
};

}  // namespace

TEST_CASE("provenance of a clean checkout records root, commit, branch and relative paths") {
  Fixture f;
  audit::Provenance p = f.record();
  CHECK(p.in_repository);
  CHECK(p.repository == canonical(f.tmp.path()));
  CHECK(p.commit == f.repo.id_of("refs/heads/main"));
  CHECK(p.commit == f.head);
  CHECK(p.commit.size() == 40);
  CHECK(p.branch == "main");
  CHECK_FALSE(p.unborn);
  CHECK(p.files == std::vector<std::string>{"blueprints/a.yaml", "blueprints/b.yaml"});
  CHECK(p.dirty_files.empty());
  CHECK_FALSE(p.files_dirty);
  CHECK_FALSE(p.repository_dirty);
  CHECK(audit::describe(p) == "git " + f.head.substr(0, 12) + " on main, blueprint files committed");
}

TEST_CASE("provenance follows the second commit and another branch") {
  Fixture f;
  f.repo.write("blueprints/a.yaml", "apiVersion: plinth/v1\n# second\n");
  f.repo.add("blueprints/a.yaml");
  std::string second = f.repo.commit("second");
  REQUIRE(second != f.head);
  f.repo.set_ref("refs/heads/feature", second);
  REQUIRE(git_repository_set_head(f.repo.get(), "refs/heads/feature") == 0);
  audit::Provenance p = f.record();
  CHECK(p.commit == second);
  CHECK(p.commit == f.repo.id_of("refs/heads/feature"));
  CHECK(p.branch == "feature");
  CHECK_FALSE(p.files_dirty);
}

TEST_CASE("a modified blueprint file is dirty") {
  Fixture f;
  f.repo.write("blueprints/b.yaml", "kind: Blueprint\nmetadata: {name: changed}\n");
  audit::Provenance p = f.record();
  CHECK(p.dirty_files == std::vector<std::string>{"blueprints/b.yaml"});
  CHECK(p.files_dirty);
  CHECK(p.repository_dirty);
  CHECK(audit::describe(p) ==
        "git " + f.head.substr(0, 12) + " on main, uncommitted changes in blueprints/b.yaml");
}

TEST_CASE("an edit of the same size in the same second as the commit is still seen") {
  Fixture f;
  f.repo.write("blueprints/b.yaml", "kind: Blueprinx\n");  // same length, same mtime second
  audit::Provenance p = f.record();
  CHECK(p.dirty_files == std::vector<std::string>{"blueprints/b.yaml"});
}

TEST_CASE("a staged but uncommitted blueprint file is dirty") {
  Fixture f;
  f.repo.write("blueprints/a.yaml", "apiVersion: plinth/v1\nkind: Blueprint\n");
  f.repo.add("blueprints/a.yaml");
  audit::Provenance p = f.record();
  CHECK(p.dirty_files == std::vector<std::string>{"blueprints/a.yaml"});
  CHECK(p.repository_dirty);
}

TEST_CASE("an untracked blueprint file is dirty") {
  Fixture f;
  std::string c = f.repo.write("blueprints/c.yaml", "kind: Blueprint\n");
  auto p = audit::record_provenance({f.a, c});
  REQUIRE(p.ok());
  CHECK(p->files == std::vector<std::string>{"blueprints/a.yaml", "blueprints/c.yaml"});
  CHECK(p->dirty_files == std::vector<std::string>{"blueprints/c.yaml"});
}

TEST_CASE("an ignored blueprint file that HEAD does not hold is dirty") {
  Fixture f;
  f.repo.write(".gitignore", "blueprints/local.yaml\n");
  f.repo.add(".gitignore");
  f.repo.commit("ignore local");
  std::string local = f.repo.write("blueprints/local.yaml", "kind: Blueprint\n");
  auto p = audit::record_provenance({local});
  REQUIRE(p.ok());
  CHECK(p->dirty_files == std::vector<std::string>{"blueprints/local.yaml"});
  CHECK_FALSE(p->repository_dirty);  // git status shows nothing
}

TEST_CASE("changes outside the blueprint files make only the repository dirty") {
  Fixture f;
  f.repo.write("README.md", "readme, edited\n");
  f.repo.write("notes/todo.txt", "untracked\n");
  audit::Provenance p = f.record();
  CHECK_FALSE(p.files_dirty);
  CHECK(p.dirty_files.empty());
  CHECK(p.repository_dirty);
}

TEST_CASE("a detached HEAD is recorded as branch 'detached'") {
  Fixture f;
  f.repo.write("README.md", "second\n");
  f.repo.add("README.md");
  std::string second = f.repo.commit("second");
  f.repo.detach(f.head);
  audit::Provenance p = f.record();
  CHECK(p.branch == "detached");
  CHECK(p.commit == f.head);
  CHECK(p.commit == f.repo.id_of("HEAD"));
  CHECK(p.commit != second);
  CHECK(audit::describe(p) == "git " + f.head.substr(0, 12) + " on a detached HEAD, blueprint files committed");
}

TEST_CASE("a repository with no commit yet records an unborn HEAD") {
  TempDir tmp;
  GitRepo repo(tmp.path(), "trunk");
  std::string a = repo.write("a.yaml", "kind: Blueprint\n");
  repo.add("a.yaml");
  auto p = audit::record_provenance({a});
  REQUIRE(p.ok());
  CHECK(p->in_repository);
  CHECK(p->unborn);
  CHECK(p->commit.empty());
  CHECK(p->branch == "trunk");
  CHECK(p->dirty_files == std::vector<std::string>{"a.yaml"});
  CHECK(p->repository_dirty);
  CHECK(audit::describe(*p) == "git (no commit yet) on trunk, uncommitted changes in a.yaml");
}

TEST_CASE("outside a repository provenance says so and is not an error") {
  TempDir tmp;
  std::string a = tmp.write("a.yaml", "kind: Blueprint\n");
  auto p = audit::record_provenance({a});
  REQUIRE(p.ok());
  CHECK_FALSE(p->in_repository);
  CHECK(p->files == std::vector<std::string>{a});
  CHECK(p->commit.empty());
  CHECK(audit::describe(*p) == "not in a git repository");
  CHECK(audit::to_json(*p)["in_repository"] == false);
}

TEST_CASE("a blueprint file outside the repository of the first file is dirty") {
  Fixture f;
  TempDir elsewhere;
  std::string outside = elsewhere.write("x.yaml", "kind: Blueprint\n");
  auto p = audit::record_provenance({f.a, outside});
  REQUIRE(p.ok());
  CHECK(p->files == std::vector<std::string>{"blueprints/a.yaml", outside});
  CHECK(p->dirty_files == std::vector<std::string>{outside});
}

TEST_CASE("provenance JSON carries every field") {
  Fixture f;
  f.repo.write("blueprints/a.yaml", "changed\n");
  nlohmann::json j = audit::to_json(f.record());
  CHECK(j == nlohmann::json{{"in_repository", true},
                            {"repository", canonical(f.tmp.path())},
                            {"commit", f.head},
                            {"branch", "main"},
                            {"unborn", false},
                            {"files", {"blueprints/a.yaml", "blueprints/b.yaml"}},
                            {"dirty_files", {"blueprints/a.yaml"}},
                            {"files_dirty", true},
                            {"repository_dirty", true}});
}

TEST_CASE("no blueprint files is an error") {
  auto p = audit::record_provenance({});
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().message == "no blueprint files to record the provenance of");
}
