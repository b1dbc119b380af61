// The local backend's change log (docs/state.md, "Change log"): an apply's
// saves appended as changes, read back by every load, folded into the state
// file when the run ends or by the next run after a crash.
#include <catch2/catch.hpp>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <functional>
#include <memory>
#include <fstream>

#include "engine/core/files.h"
#include "engine/state/state.h"
#include "tests/engine/state/fixtures.h"
#include "tests/support/run.h"

namespace plinth::test::state_change_log {

using namespace plinth::state;
using std::chrono::milliseconds;
namespace fs = std::filesystem;

namespace {

std::optional<StateDocument> load_of(const std::string& path) {
  auto loaded = open_local(path)->load();
  INFO((loaded ? "" : loaded.error().message));
  REQUIRE(loaded.ok());
  return *loaded;
}

/// Runs `body` in a child process that then dies without unlocking or
/// folding (as after SIGKILL: the kernel releases its lock); true when
/// `body` returned true.
bool in_dying_run(const std::function<bool()>& body) {
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) _exit(body() ? 0 : 1);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// Two saves appended by a run that dies: the document as they leave it.
StateDocument two_saves_then_die(const std::string& path, StateDocument doc) {
  auto c1 = next_changes(doc, {vlan("v7", 107)});
  StateDocument mid = doc;
  advance(mid, c1);
  auto c2 = next_changes(mid, {vlan("v8", 108)});
  REQUIRE(in_dying_run([&] {
    Backend* b = open_local(path).release();  // never destroyed: no unlock, no fold
    return b->lock("plinth apply", milliseconds(0)) && b->save_changes(c1) && b->save_changes(c2);
  }));
  advance(doc, c1);
  advance(doc, c2);
  return doc;
}

/// A run on the state at `path` (which holds `doc`) that holds the lock and
/// has appended one save; `doc` becomes what it saved.
std::unique_ptr<Backend> run_with_one_save(const std::string& path, StateDocument& doc) {
  auto b = open_local(path);
  REQUIRE(b->lock("plinth apply", milliseconds(0)).ok());
  auto c = next_changes(doc, {vlan("v1", 101)});
  REQUIRE(b->save_changes(c).ok());
  advance(doc, c);
  return b;
}

size_t lines_of(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

}  // namespace

TEST_CASE("change log: an apply's saves are appended and read back by every load and folded when the run ends") {
  TempDir dir;
  const std::string path = dir.path() + "/s.json", log = path + ".d/changes.log";
  auto b = open_local(path);
  StateDocument doc = save_version(*b, new_document(), 1, 3);  // v0..v2 at serial 1
  const std::string before = slurp(path);
  REQUIRE(b->stores_changes());

  REQUIRE(b->lock("plinth apply", milliseconds(0)).ok());
  const uint64_t bytes0 = b->bytes_written();
  auto c1 = next_changes(doc, {vlan("v3", 103), vlan("v0", 200)});
  REQUIRE(b->save_changes(c1).ok());
  advance(doc, c1);
  auto c2 = next_changes(doc, {}, {"net.vlan.v1"});
  REQUIRE(b->save_changes(c2).ok());
  advance(doc, c2);

  // The state file is the version the run started from; the log holds the rest.
  CHECK(slurp(path) == before);
  CHECK(lines_of(log) == 2);
  CHECK(b->bytes_written() - bytes0 == fs::file_size(log));
  auto seen = load_of(path);  // another reader, as plan would read it
  REQUIRE(seen);
  CHECK(*seen == doc);
  CHECK(seen->serial == 3);
  CHECK(seen->find("net.vlan.v0")->attributes["id"] == 200);
  CHECK(seen->find("net.vlan.v1") == nullptr);

  // The end of the run: one document written, the log gone, the result kept in history.
  REQUIRE(b->settle().ok());
  CHECK_FALSE(fs::exists(log));
  auto folded = parse(slurp(path), path);
  REQUIRE(folded.ok());
  CHECK(*folded == doc);
  CHECK(fs::exists(path + ".d/history/3.json"));
  CHECK(fs::exists(path + ".d/history/1.run-start"));  // what the run started from, kept for good
  struct stat a {}, h {};
  REQUIRE(::stat(path.c_str(), &a) == 0);
  REQUIRE(::stat((path + ".d/history/3.json").c_str(), &h) == 0);
  CHECK(a.st_ino == h.st_ino);  // the history copy is a link: no second write
  b->unlock();

  // A whole save after that continues from the folded serial.
  doc.serial = 4;
  CHECK(b->save(doc).ok());
  CHECK(load_of(path)->serial == 4);
}

TEST_CASE("change log: unlocking folds what the run appended") {
  TempDir dir;
  const std::string path = dir.path() + "/s.json";
  auto b = open_local(path);
  StateDocument doc = save_version(*b, new_document(), 1, 1);
  REQUIRE(b->lock("plinth apply", milliseconds(0)).ok());
  REQUIRE(b->save_changes(next_changes(doc, {vlan("v9", 109)})).ok());
  b->unlock();
  CHECK_FALSE(fs::exists(path + ".d/changes.log"));
  auto folded = parse(slurp(path), path);
  REQUIRE(folded.ok());
  CHECK(folded->serial == 2);
  CHECK(folded->find("net.vlan.v9") != nullptr);
}

TEST_CASE("change log: a run that died leaves the log - readers apply it and the next run folds it first") {
  TempDir dir;
  const std::string path = dir.path() + "/s.json", log = path + ".d/changes.log";
  StateDocument doc = save_version(*open_local(path), new_document(), 5, 2);
  doc = two_saves_then_die(path, doc);
  // Half of a third record: the save the kill interrupted.
  std::ofstream(log, std::ios::app) << "0123456789abcdef";
  REQUIRE(fs::exists(log));
  auto seen = load_of(path);
  REQUIRE(seen);
  CHECK(*seen == doc);  // both saves, the torn third ignored

  // The next run's first save folds the leftover first, marks it as its start, then appends.
  auto b = open_local(path);
  REQUIRE(b->lock("plinth apply", milliseconds(0)).ok());
  auto loaded = b->load();
  REQUIRE(loaded.ok());
  REQUIRE(**loaded == doc);
  auto c = next_changes(doc, {}, {"net.vlan.v0"});
  REQUIRE(b->save_changes(c).ok());
  advance(doc, c);
  CHECK(parse(slurp(path), path)->serial == 7);  // folded: the leftover's serial
  CHECK(fs::exists(path + ".d/history/7.run-start"));
  CHECK(lines_of(log) == 1);
  b->unlock();
  CHECK(*load_of(path) == doc);
  CHECK_FALSE(fs::exists(log));
}

TEST_CASE("change log: damage other than a torn last record is refused naming the line and nothing is rewritten") {
  TempDir dir;
  const std::string path = dir.path() + "/s.json", log = path + ".d/changes.log";
  StateDocument doc = save_version(*open_local(path), new_document(), 1, 1);
  doc = two_saves_then_die(path, doc);
  std::string text = slurp(log);
  REQUIRE(text.size() > 200);
  SECTION("a changed byte in the first of two records") {
    text[70] = text[70] == 'a' ? 'b' : 'a';
    std::ofstream(log, std::ios::trunc) << text;
    auto r = open_local(path)->load();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find(log + ":1 is damaged (it fails its checksum)") != std::string::npos);
    CHECK(r.error().message.find("serial 1") != std::string::npos);
    CHECK(slurp(log) == text);
  }
  SECTION("the last record damaged but complete is a save that never returned: ignored") {
    text[text.size() - 10] = text[text.size() - 10] == '1' ? '2' : '1';
    std::ofstream(log, std::ios::trunc) << text;
    auto r = load_of(path);
    CHECK(r->serial == 2);
    CHECK(r->find("net.vlan.v7") != nullptr);
    CHECK(r->find("net.vlan.v8") == nullptr);
  }
  SECTION("a record that skips a serial") {
    const size_t second = text.find('\n') + 1;
    std::ofstream(log, std::ios::trunc) << text.substr(second) << text.substr(0, second);
    auto r = open_local(path)->load();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find(log + ":1 continues serial 2, but the state is at serial 1") != std::string::npos);
    CHECK(slurp(log) == text.substr(second) + text.substr(0, second));
  }
  SECTION("records the state file already holds (a crash between the fold and removing the log) are skipped") {
    REQUIRE(write_file_atomic(path, to_json_text(doc), 0600).ok());  // the fold wrote serial 3, then died
    auto r = load_of(path);
    CHECK(*r == doc);
    CHECK(slurp(log) == text);
  }
}

TEST_CASE("change log: another writer between two saves is a conflict and nothing is appended") {
  TempDir dir;
  const std::string path = dir.path() + "/s.json", log = path + ".d/changes.log";
  StateDocument doc = save_version(*open_local(path), new_document(), 1, 1);
  auto b = run_with_one_save(path, doc);
  // Someone (an editor, a restore that ignored the lock) replaces the file.
  StateDocument other = doc;
  other.serial = 9;
  REQUIRE(write_file_atomic(path, to_json_text(other), 0600).ok());
  const std::string log_before = slurp(log);
  auto st = b->save_changes(next_changes(doc, {vlan("v2", 102)}));
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message.find("state was changed by another run") != std::string::npos);
  CHECK(slurp(log) == log_before);
}

TEST_CASE("change log: a failed append takes its partial record back and leaves the state as it was") {
  TempDir dir;
  const std::string path = dir.path() + "/s.json", log = path + ".d/changes.log";
  StateDocument doc = save_version(*open_local(path), new_document(), 1, 1);
  auto b = run_with_one_save(path, doc);
  const std::string log_before = slurp(log);
  // A record larger than the file size limit: write(2) stops short (EFBIG).
  std::vector<Resource> many;
  for (int i = 0; i < 2000; ++i) many.push_back(vlan("big" + std::to_string(i), i));
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim {
      static_cast<rlim_t>(log_before.size() + 4096), static_cast<rlim_t>(log_before.size() + 4096)
    };
    ::setrlimit(RLIMIT_FSIZE, &lim);
    auto st = b->save_changes(next_changes(doc, std::move(many)));
    _exit(!st.ok() && st.error().message.find("cannot append to its change log") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  CHECK(slurp(log) == log_before);
  CHECK(*load_of(path) == doc);
}

}  // namespace plinth::test::state_change_log
