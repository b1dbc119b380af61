#include <catch2/catch.hpp>
#include <fstream>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include "engine/state/state.h"
#include "tests/engine/state/fixtures.h"
#include "tests/support/run.h"

namespace plinth::test::state_local {

using namespace plinth::state;
using std::chrono::milliseconds;
namespace fs = std::filesystem;

namespace {

/// A child process that takes the lock on `path` for `operation` and holds it
/// until the parent closes `release` (or kills it).
struct LockHolder {
  pid_t pid = -1;
  int release_fd = -1;

  LockHolder(const std::string& path, const std::string& operation) {
    int ready[2], release[2];
    REQUIRE(pipe(ready) == 0);
    REQUIRE(pipe(release) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(ready[0]);
      close(release[1]);
      auto b = open_local(path);
      char ok = b->lock(operation, milliseconds(0)) ? 'y' : 'n';
      if (write(ready[1], &ok, 1) != 1) _exit(2);
      char c;
      while (read(release[0], &c, 1) > 0) {
      }
      b->unlock();
      _exit(0);
    }
    close(ready[1]);
    close(release[0]);
    release_fd = release[1];
    char ok = 0;
    REQUIRE(read(ready[0], &ok, 1) == 1);
    close(ready[0]);
    REQUIRE(ok == 'y');
  }
  /// Lets the child unlock and exit normally.
  void release() {
    if (release_fd >= 0) close(release_fd);
    release_fd = -1;
    reap();
  }
  void kill_hard() {
    kill(pid, SIGKILL);
    reap();
  }
  void reap() {
    if (pid > 0) waitpid(pid, nullptr, 0);
    pid = -1;
  }
  ~LockHolder() {
    if (pid > 0) kill_hard();
    if (release_fd >= 0) close(release_fd);
  }
};

std::string lock_time(const std::string& path) { return Json::parse(test::slurp(path + ".lock"))["time"]; }

}  // namespace

TEST_CASE("local backend: no file means no state yet, save then load round-trips") {
  test::TempDir dir;
  std::string path = dir.path() + "/plinth.state.json";
  auto b = open_local(path);
  CHECK(b->describe() == "local file " + path);
  auto none = b->load();
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());

  StateDocument doc = new_document();
  doc.serial = 1;
  doc.resources = {vlan("ml-fabric", 120)};
  REQUIRE(b->save(doc).ok());
  auto back = b->load();
  REQUIRE(back.ok());
  REQUIRE(back->has_value());
  CHECK(**back == doc);

  struct stat sb {};
  REQUIRE(stat(path.c_str(), &sb) == 0);
  CHECK((sb.st_mode & 0777) == 0600);
  CHECK(test::slurp(dir.path() + "/plinth.state.json.d/history/1.json") == test::slurp(path));
  // The lock taken for the save is gone again.
  CHECK_FALSE(fs::exists(path + ".lock"));
}

TEST_CASE("local backend: the serial must grow and the lineage must match") {
  test::TempDir dir;
  std::string path = dir.path() + "/s.json";
  auto b = open_local(path);
  StateDocument doc = save_version(*b, new_document(), 3, 1);
  std::string before = test::slurp(path);

  StateDocument stale = doc;
  stale.resources.push_back(vlan("late", 7));
  auto st = b->save(stale);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message == "state was changed by another run: " + path +
                                  " is at serial 3 but this run tried to write serial 3; nothing was written. Plan "
                                  "again against the current state");
  StateDocument other = new_document();
  other.serial = 9;
  st = b->save(other);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message == "state was changed by another run: " + path + " now has lineage " + doc.lineage +
                                  " but this run's state has lineage " + other.lineage +
                                  "; nothing was written. Check --state points at the right file, then plan again");
  CHECK(test::slurp(path) == before);
}

TEST_CASE("local backend: a state another writer changed between two saves is read again") {
  // A backend skips parsing a file that still has the bytes it last wrote;
  // whatever another writer did in between must be seen.
  test::TempDir dir;
  std::string path = dir.path() + "/s.json";
  auto mine = open_local(path);
  StateDocument doc = save_version(*mine, new_document(), 1, 1);

  SECTION("another backend saved the next serial") {
    auto other = open_local(path);
    StateDocument theirs = doc;
    theirs.serial = 2;
    REQUIRE(other->save(theirs).ok());
    StateDocument next = doc;
    next.serial = 2;
    auto st = mine->save(next);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message == "state was changed by another run: " + path +
                                    " is at serial 2 but this run tried to write serial 2; nothing was written. Plan "
                                    "again against the current state");
  }
  SECTION("the file was rewritten in place with the same size") {
    std::string text = test::slurp(path);
    StateDocument other = new_document();  // a lineage of the same length
    std::string changed = text;
    changed.replace(changed.find(doc.lineage), doc.lineage.size(), other.lineage);
    REQUIRE(changed.size() == text.size());
    {
      std::ofstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f << changed;
    }
    StateDocument next = doc;
    next.serial = 2;
    auto st = mine->save(next);
    REQUIRE_FALSE(st.ok());  // read again: the edit breaks the checksum, so it is refused as damaged
    CHECK(st.error().message.find("will not overwrite the state") == 0);
    CHECK(test::slurp(path) == changed);
  }
  SECTION("unchanged: the next save goes through") {
    StateDocument next = doc;
    next.serial = 2;
    REQUIRE(mine->save(next).ok());
    next.serial = 3;
    REQUIRE(mine->save(next).ok());
    auto back = open_local(path)->load();
    REQUIRE(back.ok());
    CHECK((*back)->serial == 3);
  }
}

TEST_CASE("local backend: a damaged state file is refused and never overwritten") {
  test::TempDir dir;
  std::string path = dir.path() + "/s.json";
  auto b = open_local(path);
  StateDocument doc = save_version(*b, new_document(), 1, 2);
  std::string damaged = test::slurp(path).substr(0, 120);
  dir.write("s.json", damaged);

  auto loaded = b->load();
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().message.rfind("state file " + path + " is truncated: the JSON ends at " + path + ":", 0) == 0);

  doc.serial = 2;
  auto st = b->save(doc);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message == "will not overwrite the state: " + loaded.error().message);
  CHECK(test::slurp(path) == damaged);
}

TEST_CASE("local backend: a failed write leaves the previous state file intact") {
  test::TempDir dir;
  std::string path = dir.path() + "/s.json";
  auto b = open_local(path);
  StateDocument doc = save_version(*b, new_document(), 1, 1);
  std::string before = test::slurp(path);

  SECTION("the disk fills up mid-write (RLIMIT_FSIZE makes write fail with EFBIG)") {
    REQUIRE(b->lock("plinth apply", milliseconds(0)).ok());
    doc.serial = 2;
    for (int i = 0; i < 200; ++i) doc.resources.push_back(vlan("big" + std::to_string(i), i + 1));
    struct rlimit old {};
    getrlimit(RLIMIT_FSIZE, &old);
    auto old_handler = signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = old;
    small.rlim_cur = 4096;
    REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
    auto st = b->save(doc);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, old_handler);
    b->unlock();
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message.rfind("cannot save state " + path + ": cannot write ", 0) == 0);
    CHECK(st.error().message.find("File too large (the previous file is unchanged)") != std::string::npos);
  }
  SECTION("the directory vanished") {
    auto gone = open_local(dir.path() + "/no-such-dir/s.json");
    StateDocument fresh = new_document();
    fresh.serial = 1;
    auto st = gone->save(fresh);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message == "cannot open the lock file " + dir.path() +
                                    "/no-such-dir/s.json.lock: No such file or directory; check that its directory "
                                    "exists and is writable");
    CHECK_FALSE(fs::exists(dir.path() + "/no-such-dir"));
  }
  CHECK(test::slurp(path) == before);
  // No temp file and no history entry for the failed version were left behind.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"s.json", "s.json.d"});
  CHECK(fs::exists(path + ".d/history/1.json"));
  CHECK_FALSE(fs::exists(path + ".d/history/2.json"));
}

TEST_CASE("local backend: a second process gets 'locked by PID' and waits with a timeout") {
  test::TempDir dir;
  std::string path = dir.path() + "/s.json";
  LockHolder holder(path, "plinth apply");
  std::string since = lock_time(path);
  CHECK(std::regex_match(since, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  std::string who = "PID " + std::to_string(holder.pid) + " on " + hostname() + " since " + since + " (plinth apply)";

  auto b = open_local(path);
  auto st = b->lock("plinth plan", milliseconds(0));
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().kind == Error::Kind::Conflict);
  CHECK(st.error().message == "state " + path + " is locked by " + who +
                                  "; wait for it to finish, or pass --lock-timeout=60s to wait, or run 'plinth state "
                                  "unlock' if that process is gone");

  auto t0 = std::chrono::steady_clock::now();
  st = b->lock("plinth plan", milliseconds(300));
  auto waited = std::chrono::steady_clock::now() - t0;
  REQUIRE_FALSE(st.ok());
  CHECK(waited >= milliseconds(300));
  CHECK(st.error().message == "state " + path + " is still locked by " + who +
                                  " after waiting 300ms; wait for it to finish, or pass a longer --lock-timeout, or "
                                  "run 'plinth state unlock' if that process is gone");

  // A save without the lock is refused the same way and writes nothing.
  StateDocument doc = new_document();
  doc.serial = 1;
  REQUIRE_FALSE(b->save(doc).ok());
  CHECK_FALSE(fs::exists(path));

  // Another backend in this same process is a separate holder too.
  holder.release();
  REQUIRE(b->lock("plinth plan", milliseconds(0)).ok());
  auto b2 = open_local(path);
  CHECK_FALSE(b2->lock("plinth apply", milliseconds(0)).ok());
  b->unlock();
  CHECK(b2->lock("plinth apply", milliseconds(0)).ok());
}

TEST_CASE("local backend: a waiting lock succeeds once the holder finishes") {
  test::TempDir dir;
  std::string path = dir.path() + "/s.json";
  LockHolder holder(path, "plinth apply");
  pid_t releaser = fork();
  REQUIRE(releaser >= 0);
  if (releaser == 0) {
    // Only this child keeps the write end; it closes it after 200ms.
    usleep(200000);
    _exit(0);
  }
  close(holder.release_fd);
  holder.release_fd = -1;
  auto b = open_local(path);
  auto st = b->lock("plinth plan", milliseconds(10000));
  INFO((st ? "" : st.error().message));
  CHECK(st.ok());
  waitpid(releaser, nullptr, 0);
  holder.reap();
  CHECK(Json::parse(test::slurp(path + ".lock"))["pid"] == getpid());
}

TEST_CASE("local backend: the lock is released when its holder dies") {
  test::TempDir dir;
  std::string path = dir.path() + "/s.json";
  LockHolder holder(path, "plinth apply");
  long dead = holder.pid;
  std::string since = lock_time(path);
  holder.kill_hard();
  // The dead holder's lock file is still there, but its flock is gone.
  REQUIRE(fs::exists(path + ".lock"));

  SECTION("the next run just takes it") {
    auto b = open_local(path);
    CHECK(b->lock("plinth apply", milliseconds(0)).ok());
    CHECK(Json::parse(test::slurp(path + ".lock"))["pid"] == getpid());
  }
  SECTION("'state unlock' removes the stale lock file") {
    auto b = open_local(path);
    auto r = b->break_lock(false);
    REQUIRE(r.ok());
    CHECK(*r == "removed the stale lock of PID " + std::to_string(dead) + " on " + hostname() + " since " + since +
                    " (plinth apply) on state " + path + ": that process is gone");
    CHECK_FALSE(fs::exists(path + ".lock"));
    CHECK(*b->break_lock(false) == "state " + path + " is not locked; nothing to do");
  }
}

TEST_CASE("local backend: 'state unlock' refuses a live holder unless forced") {
  test::TempDir dir;
  std::string path = dir.path() + "/s.json";
  LockHolder holder(path, "plinth apply");
  std::string who = "PID " + std::to_string(holder.pid) + " on " + hostname() + " since " + lock_time(path) +
                    " (plinth apply)";
  auto b = open_local(path);
  auto r = b->break_lock(false);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "state " + path + " is locked by " + who +
                                 ", and that process is still running; wait for it to finish, or pass --force to "
                                 "remove the lock anyway (only if you are sure it is not writing state)");
  r = b->break_lock(true);
  REQUIRE(r.ok());
  CHECK(*r == "removed the lock of " + who + " on state " + path +
                  " (forced); if that process is still running it may still write the state");
  CHECK(b->lock("plinth apply", milliseconds(0)).ok());
  // When the old holder finishes it does not remove the new holder's lock file.
  holder.release();
  CHECK(fs::exists(path + ".lock"));
  CHECK(Json::parse(test::slurp(path + ".lock"))["pid"] == getpid());
}

TEST_CASE("LockGuard holds the lock for its scope") {
  test::TempDir dir;
  std::string path = dir.path() + "/s.json";
  auto a = open_local(path), b = open_local(path);
  {
    auto guard = LockGuard::acquire(*a, "plinth apply", milliseconds(0));
    REQUIRE(guard.ok());
    CHECK_FALSE(b->lock("plinth plan", milliseconds(0)).ok());
  }
  CHECK(b->lock("plinth plan", milliseconds(0)).ok());
  auto refused = LockGuard::acquire(*a, "plinth apply", milliseconds(0));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("is locked by PID " + std::to_string(getpid())) != std::string::npos);
}

TEST_CASE("local backend: history keeps the last 20 versions and restore writes a new serial") {
  test::TempDir dir;
  std::string path = dir.path() + "/s.json";
  auto b = open_local(path);
  StateDocument base = new_document();
  for (uint64_t s = 1; s <= 3; ++s) save_version(*b, base, s, static_cast<int>(s));

  auto h = b->history();
  REQUIRE(h.ok());
  REQUIRE(h->size() == 3);
  CHECK((*h)[0].serial == 1);
  CHECK((*h)[0].resources == 1);
  CHECK((*h)[2].serial == 3);
  CHECK((*h)[2].resources == 3);
  CHECK((*h)[2].lineage == base.lineage);
  CHECK(std::regex_match((*h)[2].saved_at, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));

  auto r = b->restore(1);
  REQUIRE(r.ok());
  CHECK(*r == "restored serial 1 of state " + path + " as serial 4 (1 resources)");
  auto cur = b->load();
  REQUIRE(cur.ok());
  CHECK((*cur)->serial == 4);
  CHECK((*cur)->lineage == base.lineage);
  REQUIRE((*cur)->resources.size() == 1);
  CHECK((*cur)->resources[0].address == "net.vlan.v0");

  auto missing = b->restore(42);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "no saved version 42 of state " + path +
                                       " (kept: 1 to 4); 'plinth state history' lists them");

  // One run (one lock hold) journals 21 saves: of its own saves the newest
  // 20 are kept, and the versions before each run (1, 2, 3: the standalone
  // saves and the restore above; 4: this run) are kept for good.
  REQUIRE(b->lock("plinth apply", milliseconds(0)).ok());
  for (uint64_t s = 5; s <= 25; ++s) save_version(*b, base, s, 1);
  b->unlock();
  h = b->history();
  REQUIRE(h->size() == kHistoryKeep + 4);
  std::vector<uint64_t> starts, serials;
  for (const auto& e : *h) {
    serials.push_back(e.serial);
    if (e.run_start) starts.push_back(e.serial);
  }
  CHECK(starts == std::vector<uint64_t>{1, 2, 3, 4});
  CHECK(serials[4] == 6);  // 5 was a journal save of the run, older than the newest 20
  CHECK(h->back().serial == 25);
  CHECK(b->restore(4).ok());
}

TEST_CASE("local backend: the state before every run stays restorable after long runs") {
  test::TempDir dir;
  std::string path = dir.path() + "/s.json";
  auto b = open_local(path);
  StateDocument base = new_document();
  uint64_t serial = 0;
  std::vector<uint64_t> befores;
  for (int run = 0; run < 3; ++run) {  // three applies of 30 operations each
    if (serial) befores.push_back(serial);
    REQUIRE(b->lock("plinth apply", milliseconds(0)).ok());
    for (int op = 0; op < 30; ++op) save_version(*b, base, ++serial, run + 1);
    b->unlock();
  }
  auto h = b->history();
  REQUIRE(h.ok());
  for (uint64_t before : befores) {
    INFO("serial " << before);
    auto it = std::find_if(h->begin(), h->end(), [&](const HistoryEntry& e) { return e.serial == before; });
    REQUIRE(it != h->end());
    CHECK(it->run_start);
    CHECK(b->restore(before).ok());
  }
  CHECK(h->size() == kHistoryKeep + befores.size());
}

TEST_CASE("local backend: restore recovers from a damaged state file and keeps the damaged copy") {
  test::TempDir dir;
  std::string path = dir.path() + "/s.json";
  auto b = open_local(path);
  StateDocument base = new_document();
  save_version(*b, base, 1, 1);
  save_version(*b, base, 2, 2);
  dir.write("s.json", "{\"format_version\": 1, \"lin");

  auto r = b->restore(2);
  REQUIRE(r.ok());
  std::smatch m;
  REQUIRE(std::regex_match(*r, m, std::regex("restored serial 2 of state " + path +
                                             " as serial 3 \\(2 resources\\); the damaged file was kept as (.*)")));
  CHECK(test::slurp(m[1]) == "{\"format_version\": 1, \"lin");
  auto cur = b->load();
  REQUIRE(cur.ok());
  CHECK((*cur)->serial == 3);
  CHECK((*cur)->resources.size() == 2);
}

TEST_CASE("local backend: restore refuses a version from another lineage") {
  test::TempDir dir;
  std::string path = dir.path() + "/s.json";
  auto b = open_local(path);
  StateDocument other = new_document();
  other.serial = 1;
  // A history entry copied in from another state.
  dir.write("s.json.d/history/1.json", to_json_text(other));
  StateDocument base = save_version(*b, new_document(), 2, 1);
  auto r = b->restore(1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "saved version 1 has lineage " + other.lineage + " but " + path + " has lineage " +
                                 base.lineage + "; restoring it would mix two different states, so nothing was written");
}

}  // namespace plinth::test::state_local
