// The local journal an apply keeps when its state backend fails
// (engine/state/journal.h): pushed only onto the state it continues.
#include "engine/state/journal.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/engine/state/fixtures.h"
#include "tests/support/run.h"

namespace plinth::test::state_journal {

using namespace plinth::state;
namespace fs = std::filesystem;

namespace {

/// A state at serial 3 and the journal an apply would have left from it:
/// the state as last saved, then two operations.
struct Setup {
  test::TempDir dir;
  std::string state_path = dir.path() + "/plinth.state.json";
  std::string journal = dir.path() + "/j/x.state.json";
  StateDocument base;
  StateDocument last;
  Setup() {
    fs::create_directories(dir.path() + "/j");
    base = new_document();
    base.serial = 3;
    base.resources = {vlan("a", 1)};
    REQUIRE(open_local(state_path)->save(base).ok());
    auto j = open_local(journal);
    REQUIRE(j->save(base).ok());
    last = base;
    last.serial = 4;
    last.resources.push_back(vlan("b", 2));
    REQUIRE(j->save(last).ok());
    last.serial = 5;
    last.resources.push_back(vlan("c", 3));
    REQUIRE(j->save(last).ok());
  }
};

}  // namespace

TEST_CASE("journal: the path is per state location and leaves the password out") {
  ::unsetenv("PLINTH_JOURNAL_DIR");
  const char* home = std::getenv("HOME");
  const std::string saved_home = home ? home : "";
  ::unsetenv("XDG_STATE_HOME");
  ::setenv("HOME", "/home/ci", 1);
  const std::string a = journal_path("postgres://u:secret@db/plinth?workspace=x");
  CHECK(a.rfind("/home/ci/.local/state/plinth/journal/", 0) == 0);  // never the (untrusted) working directory
  ::setenv("XDG_STATE_HOME", "/var/lib/ci-state", 1);
  CHECK(journal_path("postgres://db/p").rfind("/var/lib/ci-state/plinth/journal/", 0) == 0);
  ::unsetenv("XDG_STATE_HOME");
  CHECK(a.ends_with(".state.json"));
  CHECK(a == journal_path("postgres://u:other@db/plinth?workspace=x"));
  CHECK(a != journal_path("postgres://u:secret@db/plinth?workspace=y"));
  CHECK(a.find("secret") == std::string::npos);
  ::setenv("PLINTH_JOURNAL_DIR", "/var/tmp/j", 1);
  CHECK(journal_path("postgres://db/p").rfind("/var/tmp/j/", 0) == 0);
  ::unsetenv("PLINTH_JOURNAL_DIR");
  if (saved_home.empty())
    ::unsetenv("HOME");
  else
    ::setenv("HOME", saved_home.c_str(), 1);
}

TEST_CASE("journal: only a file of the user's own, in a directory only they can write, is read") {
  plinth::test::TempDir tmp;
  const std::string dir = tmp.path() + "/journal";
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  const std::string j = dir + "/0123456789abcdef.state.json";
  { std::ofstream(j) << "{}"; }
  CHECK(check_journal_owner(j).ok());
  std::filesystem::permissions(dir, std::filesystem::perms::group_write, std::filesystem::perm_options::add);
  auto st = check_journal_owner(j);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message == "refusing the local journal " + j + ": its directory " + dir +
                                  " can be written by other users (run 'chmod go-w " + dir +
                                  "'); a journal is read only from a directory of your own (PLINTH_JOURNAL_DIR, "
                                  "docs/state.md)");
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  const std::string link = dir + "/fedcba9876543210.state.json";
  std::filesystem::create_symlink(j, link);
  st = check_journal_owner(link);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message.find("it is not a regular file (a symbolic link?)") != std::string::npos);
}

TEST_CASE("journal: pushed onto the state it continues, then removed") {
  Setup s;
  auto target = open_local(s.state_path);
  auto r = push_journal(*open_local(s.journal), s.journal, *target);
  REQUIRE(r.ok());
  CHECK(*r == "wrote the local journal " + s.journal + " (2 operation(s) completed after the state could not be "
                                                       "written; serial 3 -> 5) to state local file " +
                  s.state_path + " and removed it");
  auto doc = target->load();
  REQUIRE(doc.ok());
  CHECK((**doc).serial == 5);
  CHECK((**doc).resources.size() == 3);
  CHECK_FALSE(journal_exists(s.journal));
  CHECK_FALSE(fs::exists(s.journal + ".d"));
}

TEST_CASE("journal: refused when the state moved on or is another lineage, and kept for the user") {
  Setup s;
  SECTION("another run saved since") {
    StateDocument other = s.base;
    other.serial = 4;
    other.resources = {vlan("z", 9)};
    REQUIRE(open_local(s.state_path)->save(other).ok());
    auto r = push_journal(*open_local(s.journal), s.journal, *open_local(s.state_path));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == Error::Kind::Conflict);
    CHECK(r.error().message.find("is at serial 4, but the local journal " + s.journal +
                                 " continues serial 3: another run changed the state since") != std::string::npos);
  }
  SECTION("another lineage") {
    fs::remove(s.state_path);
    fs::remove_all(s.state_path + ".d");
    StateDocument other = new_document();
    other.serial = 3;
    REQUIRE(open_local(s.state_path)->save(other).ok());
    auto r = push_journal(*open_local(s.journal), s.journal, *open_local(s.state_path));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("it belongs to another state") != std::string::npos);
  }
  CHECK(journal_exists(s.journal));
}

TEST_CASE("journal: a save the state committed though its answer was lost is continued from") {
  // The backend committed serial 4 and went away before answering: the
  // apply journaled serial 4 as well, then 5.
  Setup s;
  StateDocument committed = s.last;
  committed.serial = 4;
  committed.resources.pop_back();
  REQUIRE(open_local(s.state_path)->save(committed).ok());
  auto r = push_journal(*open_local(s.journal), s.journal, *open_local(s.state_path));
  REQUIRE(r.ok());
  INFO(*r);
  CHECK(r->find("serial 4 -> 5") != std::string::npos);
  auto now = open_local(s.state_path)->load();
  REQUIRE(now.ok());
  CHECK((**now).serial == 5);
  CHECK((**now).resources == s.last.resources);
  CHECK_FALSE(journal_exists(s.journal));
}

TEST_CASE("journal: one the state already holds is only removed") {
  Setup s;
  REQUIRE(open_local(s.state_path)->save(s.last).ok());
  auto r = push_journal(*open_local(s.journal), s.journal, *open_local(s.state_path));
  REQUIRE(r.ok());
  CHECK(r->find("already holds the local journal") != std::string::npos);
  CHECK_FALSE(journal_exists(s.journal));
}

}  // namespace plinth::test::state_journal
