// The local backend and what sits at the state path (issue 16): links at the
// lock file are never followed, a linked state file is written through its
// link, a directory or a serial that cannot grow is a clear error.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>

#include "engine/state/state.h"
#include "tests/support/run.h"

namespace plinth::test::state_local_files {

using namespace plinth::state;
using std::chrono::milliseconds;
namespace fs = std::filesystem;

namespace {

StateDocument doc_with(uint64_t serial, const std::string& lineage = "11111111-2222-4333-8444-555555555555") {
  StateDocument d;
  d.lineage = lineage;
  d.serial = serial;
  d.plinth_version = "test";
  Resource r;
  r.type = "net.vlan";
  r.name = "ml";
  r.address = "net.vlan.ml";
  r.provider = "plinth";
  r.attributes = Json{{"id", 100}};
  d.resources.push_back(r);
  return d;
}

}  // namespace

TEST_CASE("local backend: a symbolic link at the lock file is refused, and the file it points to is untouched") {
  test::TempDir dir;
  const std::string victim = dir.write("victim.txt", "precious\n");
  const std::string path = dir.path() + "/plinth.state.json";
  REQUIRE(symlink(victim.c_str(), (path + ".lock").c_str()) == 0);
  auto b = open_local(path);
  auto st = b->lock("plinth plan", milliseconds(0));
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message == "the lock file " + path +
                                  ".lock is a symbolic link; plinth never follows it (writing the lock through it "
                                  "would overwrite the file it points to). Remove the link and run again");
  CHECK(test::slurp(victim) == "precious\n");  // it used to be truncated and overwritten with the lock's JSON
  auto save = b->save(doc_with(1));
  CHECK_FALSE(save.ok());
  CHECK(test::slurp(victim) == "precious\n");
  auto unlock = b->break_lock(true);
  CHECK_FALSE(unlock.ok());
  CHECK(fs::is_symlink(path + ".lock"));
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("local backend: a linked state file is read and written through its link, lock and history sit by the target") {
  test::TempDir dir;
  fs::create_directories(dir.path() + "/shared");
  const std::string target = dir.path() + "/shared/prod.json";
  const std::string link = dir.path() + "/plinth.state.json";
  REQUIRE(symlink("shared/prod.json", link.c_str()) == 0);  // relative, and dangling until the first save

  auto b = open_local(link);
  CHECK(b->describe() == "local file " + link + " (a link to " + target + ")");
  auto none = b->load();
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
  REQUIRE(b->lock("plinth apply", milliseconds(0)).ok());
  CHECK(fs::exists(target + ".lock"));
  CHECK_FALSE(fs::exists(link + ".lock"));
  REQUIRE(b->save(doc_with(1)).ok());
  REQUIRE(b->save(doc_with(2)).ok());
  b->unlock();

  CHECK(fs::is_symlink(link));  // it used to be replaced by a regular file, the target left behind
  auto stored = parse(test::slurp(target), target);
  REQUIRE(stored.ok());
  CHECK(stored->serial == 2);
  CHECK(fs::exists(target + ".d/history/2.json"));
  auto again = open_local(link)->load();
  REQUIRE(again.ok());
  REQUIRE(again->has_value());
  CHECK((*again)->serial == 2);

  // Two links to one state share one lock.
  const std::string other = dir.path() + "/other-link.json";
  REQUIRE(symlink(target.c_str(), other.c_str()) == 0);
  auto first = open_local(link);
  REQUIRE(first->lock("plinth apply", milliseconds(0)).ok());
  auto second = open_local(other);
  auto held = second->lock("plinth plan", milliseconds(0));
  REQUIRE_FALSE(held.ok());
  CHECK(held.error().message.find("is locked by PID " + std::to_string(getpid())) != std::string::npos);
}

TEST_CASE("local backend: a link loop at the state path is a clear error") {
  test::TempDir dir;
  const std::string a = dir.path() + "/a.json", b = dir.path() + "/b.json";
  REQUIRE(symlink(b.c_str(), a.c_str()) == 0);
  REQUIRE(symlink(a.c_str(), b.c_str()) == 0);
  auto backend = open_local(a);
  auto loaded = backend->load();
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().message == "the state path " + a +
                                      " is a symbolic link that never reaches a file (more than 40 links, a loop?); "
                                      "point it at the state file, or pass the file's own path with --state");
  CHECK_FALSE(backend->lock("plinth plan", milliseconds(0)).ok());
}

TEST_CASE("local backend: a directory as the state path says so") {
  test::TempDir dir;
  fs::create_directories(dir.path() + "/states");
  const std::string path = dir.path() + "/states";
  auto loaded = open_local(path)->load();
  REQUIRE_FALSE(loaded.ok());
  // It used to say the state file "is empty (0 bytes)".
  CHECK(loaded.error().message == "the state path " + path +
                                      " is a directory, not a state file; pass the file's path with --state (for "
                                      "example " + path + "/plinth.state.json)");
  CHECK_FALSE(open_local(path)->save(doc_with(1)).ok());
  CHECK(fs::is_directory(path));
}

TEST_CASE("local backend: a serial of UINT64_MAX is refused instead of wrapping to 0") {
  test::TempDir dir;
  const std::string path = dir.path() + "/plinth.state.json";
  dir.write("plinth.state.json", to_json_text(doc_with(UINT64_MAX)));
  auto b = open_local(path);
  const std::string refused = "state file " + path +
                              " is at serial 18446744073709551615, the largest a serial can be, so it can never be "
                              "saved again (the next serial would wrap to 0); it was edited by hand or damaged. "
                              "Restore a good version with 'plinth state history' and 'plinth state restore SERIAL'";
  auto loaded = b->load();
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().message == refused);
  // What a caller writing serial + 1 would save: refused, the file unchanged.
  auto saved = b->save(doc_with(0));
  REQUIRE_FALSE(saved.ok());
  CHECK(saved.error().message == "will not overwrite the state: " + refused);
  auto kept = parse(test::slurp(path), path);
  REQUIRE(kept.ok());
  CHECK(kept->serial == UINT64_MAX);
}

TEST_CASE("local backend: restore refuses a history whose newest serial cannot grow") {
  test::TempDir dir;
  const std::string path = dir.path() + "/plinth.state.json";
  auto b = open_local(path);
  REQUIRE(b->save(doc_with(1)).ok());
  fs::create_directories(path + ".d/history");
  dir.write("plinth.state.json.d/history/18446744073709551615.json", to_json_text(doc_with(UINT64_MAX)));
  auto r = b->restore(1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("is at serial 18446744073709551615, the largest a serial can be") != std::string::npos);
  auto still = b->load();
  REQUIRE(still.ok());
  CHECK((*still)->serial == 1);
}

}  // namespace plinth::test::state_local_files
