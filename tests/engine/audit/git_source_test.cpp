#include "engine/audit/git_source.h"

#include <catch2/catch.hpp>

#include "tests/support/git_repo.h"
#include "tests/support/run.h"

using namespace plinth;
using plinth::test::GitRepo;
using plinth::test::TempDir;

namespace {

using Docs = std::vector<std::pair<std::string, std::string>>;

/// Two commits: the first holds a.yaml (v1); the second changes a.yaml (v2)
/// and adds b.yaml. The work tree then changes a.yaml again (v3, uncommitted).
struct History {
  TempDir tmp;
  GitRepo repo{tmp.path()};
  std::string first, second;
  History() {
    repo.write("blueprints/a.yaml", "a: v1\n");
    repo.add("blueprints/a.yaml");
    first = repo.commit("first");
    repo.write("blueprints/a.yaml", "a: v2\n");
    repo.write("blueprints/b.yaml", "b: v2\n");
    repo.add("blueprints/a.yaml");
    repo.add("blueprints/b.yaml");
    second = repo.commit("second");
    repo.write("blueprints/a.yaml", "a: v3 (work tree)\n");
  }
  audit::Snapshot read(const std::string& ref) const {
    auto s = audit::read_at_ref(tmp.path(), ref, {"blueprints/a.yaml", "blueprints/b.yaml"});
    INFO((s.ok() ? "" : s.error().message));
    REQUIRE(s.ok());
    return s.value();
  }
};

}  // namespace

TEST_CASE("read_at_ref HEAD~1 returns the old content and reports an added file as absent") {
  History h;
  audit::Snapshot s = h.read("HEAD~1");
  CHECK(s.ref == "HEAD~1");
  CHECK(s.commit == h.first);
  CHECK(s.docs == Docs{{"blueprints/a.yaml", "a: v1\n"}});
  CHECK(s.absent == std::vector<std::string>{"blueprints/b.yaml"});
}

TEST_CASE("read_at_ref HEAD and a branch return the committed content, not the work tree") {
  History h;
  for (const char* ref : {"HEAD", "main"}) {
    audit::Snapshot s = h.read(ref);
    CHECK(s.commit == h.second);
    CHECK(s.docs == Docs{{"blueprints/a.yaml", "a: v2\n"}, {"blueprints/b.yaml", "b: v2\n"}});
    CHECK(s.absent.empty());
  }
}

TEST_CASE("read_at_ref resolves remote-tracking branches, tags and commit ids") {
  History h;
  h.repo.set_ref("refs/remotes/origin/main", h.first);
  h.repo.set_ref("refs/tags/v1", h.first);
  for (const std::string& ref : {std::string("origin/main"), std::string("v1"), h.first, h.first.substr(0, 10)}) {
    INFO(ref);
    audit::Snapshot s = h.read(ref);
    CHECK(s.commit == h.first);
    CHECK(s.commit == h.repo.id_of("refs/remotes/origin/main"));
    CHECK(s.docs == Docs{{"blueprints/a.yaml", "a: v1\n"}});
  }
}

TEST_CASE("read_at_ref accepts absolute paths inside the work tree") {
  History h;
  auto s = audit::read_at_ref(h.tmp.path() + "/blueprints", "HEAD", {h.tmp.path() + "/blueprints/b.yaml"});
  REQUIRE(s.ok());
  CHECK(s->docs == Docs{{h.tmp.path() + "/blueprints/b.yaml", "b: v2\n"}});
}

TEST_CASE("an unknown ref is an error that names branches that exist") {
  History h;
  h.repo.set_ref("refs/heads/feature", h.first);
  h.repo.set_ref("refs/remotes/origin/main", h.first);
  auto s = audit::read_at_ref(h.tmp.path(), "orgin/main", {"blueprints/a.yaml"});
  REQUIRE_FALSE(s.ok());
  const std::string& m = s.error().message;
  CHECK(m.rfind("git ref 'orgin/main' not found in " + h.tmp.path() + "/ (", 0) == 0);
  CHECK(m.find("; did you mean 'origin/main'?; branches: feature, main, origin/main") != std::string::npos);
}

TEST_CASE("read_at_ref refuses directories, paths outside the tree and non-repositories") {
  History h;
  auto dir = audit::read_at_ref(h.tmp.path(), "HEAD", {"blueprints"});
  REQUIRE_FALSE(dir.ok());
  CHECK(dir.error().message == "blueprints is not a file at HEAD; give blueprint files, not directories");

  auto outside = audit::read_at_ref(h.tmp.path(), "HEAD", {"../x.yaml"});
  REQUIRE_FALSE(outside.ok());
  CHECK(outside.error().message == "../x.yaml is not inside the git work tree " + h.tmp.path() + "/");

  TempDir plain;
  auto none = audit::read_at_ref(plain.path(), "origin/main", {"a.yaml"});
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message ==
        plain.path() + " is not inside a git repository, so there is no ref 'origin/main' to compare with");
}

TEST_CASE("a repository without commits has no refs to read") {
  TempDir tmp;
  GitRepo repo(tmp.path());
  auto s = audit::read_at_ref(tmp.path(), "HEAD", {"a.yaml"});
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("; the repository has no branches yet") != std::string::npos);
}
