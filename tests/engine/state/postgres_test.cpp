// The PostgreSQL state backend against a real server (tests/support/postgres.h:
// $PLINTH_TEST_POSTGRES_URL, else the one .ci/postgres starts).
#include <catch2/catch.hpp>

#include <libpq-fe.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <thread>

#include "engine/state/state.h"
#include "tests/engine/state/fixtures.h"
#include "tests/support/postgres.h"
#include "tests/support/run.h"

namespace plinth::test::state_postgres {

using namespace plinth::state;
using std::chrono::milliseconds;

namespace {

std::string workspace_of(const std::string& url) { return url.substr(url.rfind("workspace=") + 10); }

/// The backend's name in messages: the URL without its password, and the workspace.
std::string shown(const std::string& url) {
  return redact_location(url) + " (workspace " + workspace_of(url) + ")";
}

/// Runs one SQL statement with parameters through a connection of the test's own.
void sql(const std::string& statement, const std::vector<std::string>& params) {
  std::string url = test::postgres_url();
  std::unique_ptr<PGconn, decltype(&PQfinish)> c(PQconnectdb(url.c_str()), &PQfinish);
  REQUIRE(PQstatus(c.get()) == CONNECTION_OK);
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p.c_str());
  std::unique_ptr<PGresult, decltype(&PQclear)> r(
      PQexecParams(c.get(), statement.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                   nullptr, 0),
      &PQclear);
  INFO(PQerrorMessage(c.get()));
  REQUIRE(PQresultStatus(r.get()) == PGRES_COMMAND_OK);
}

/// A child process holding the lock on `url` until killed.
struct LockHolder {
  pid_t pid = -1;
  LockHolder(const std::string& url, const std::string& operation) {
    int ready[2];
    REQUIRE(pipe(ready) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(ready[0]);
      auto b = open_postgres(url);
      char ok = b->lock(operation, milliseconds(0)) ? 'y' : 'n';
      if (write(ready[1], &ok, 1) != 1) _exit(2);
      for (;;) pause();
    }
    close(ready[1]);
    char ok = 0;
    REQUIRE(read(ready[0], &ok, 1) == 1);
    close(ready[0]);
    REQUIRE(ok == 'y');
  }
  void kill_hard() {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }
  ~LockHolder() { kill_hard(); }
};

const std::regex kTime("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ");

}  // namespace

TEST_CASE("postgres backend: no state yet, then save and load round-trip") {
  std::string url = test::postgres_workspace_url("roundtrip");
  auto b = open_backend(url);
  CHECK(b->describe() == "PostgreSQL " + shown(url));
  auto none = b->load();
  INFO((none ? "" : none.error().message));
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());

  StateDocument doc = new_document();
  doc.serial = 1;
  doc.resources = {vlan("a", 10), vlan("b", 20)};
  REQUIRE(b->save(doc).ok());
  auto again = open_backend(url)->load();  // a second connection sees it
  REQUIRE(again.ok());
  REQUIRE(again->has_value());
  doc.plinth_version = PLINTH_VERSION;
  CHECK(**again == doc);

  // Workspaces are separate states in the same tables.
  auto other = open_backend(test::postgres_workspace_url("roundtrip-other"))->load();
  REQUIRE(other.ok());
  CHECK_FALSE(other->has_value());
}

TEST_CASE("postgres backend: a write with another lineage or a serial that does not grow is refused") {
  std::string url = test::postgres_workspace_url("refusals");
  auto b = open_backend(url);
  StateDocument base = new_document();
  save_version(*b, base, 3, 1);

  StateDocument stale = base;
  stale.serial = 3;
  auto st = b->save(stale);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().kind == Error::Kind::Conflict);
  CHECK(st.error().message == "state was changed by another run: " + shown(url) +
                                  " is at serial 3 but this run tried to write serial 3; nothing was written. Plan "
                                  "again against the current state");

  StateDocument stranger = new_document();
  stranger.serial = 9;
  st = b->save(stranger);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message == "state was changed by another run: " + shown(url) + " now has lineage " +
                                  base.lineage + " but this run's state has lineage " + stranger.lineage +
                                  "; nothing was written. Check --state points at the right state, then plan again");
  auto cur = b->load();
  REQUIRE(cur.ok());
  CHECK((*cur)->serial == 3);
  CHECK((*cur)->resources.size() == 1);
}

TEST_CASE("postgres backend: history keeps the last 20 versions and restore saves one as a new serial") {
  std::string url = test::postgres_workspace_url("history");
  auto b = open_backend(url);
  StateDocument base = new_document();
  // One run (one lock hold): its journal saves beyond the newest 20 go.
  REQUIRE(b->lock("plinth apply", milliseconds(0)).ok());
  for (uint64_t s = 1; s <= 25; ++s) save_version(*b, base, s, static_cast<int>(s % 7));
  b->unlock();
  auto h = b->history();
  REQUIRE(h.ok());
  REQUIRE(h->size() == kHistoryKeep);
  CHECK(h->front().serial == 6);
  CHECK(h->back().serial == 25);
  CHECK(h->front().lineage == base.lineage);
  CHECK(h->front().resources == 6);
  CHECK(std::regex_match(h->front().saved_at, kTime));

  auto r = b->restore(10);
  INFO((r ? "" : r.error().message));
  REQUIRE(r.ok());
  CHECK(*r == "restored serial 10 of state " + shown(url) + " as serial 26 (3 resources)");
  auto cur = b->load();
  REQUIRE(cur.ok());
  CHECK((*cur)->serial == 26);
  CHECK((*cur)->resources.size() == 3);

  auto gone = b->restore(2);
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.error().kind == Error::Kind::NotFound);
  CHECK(gone.error().message == "no saved version 2 of state " + shown(url) +
                                    " (kept: 7 to 26); 'plinth state history' lists them");
}

TEST_CASE("postgres backend: a second process is refused with who holds the lock, until it dies") {
  std::string url = test::postgres_workspace_url("lock");
  auto b = open_backend(url);
  std::string host = hostname();
  LockHolder holder(url, "plinth apply");

  auto st = b->lock("plinth plan", milliseconds(0));
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().kind == Error::Kind::Conflict);
  std::regex once("state " + std::regex_replace(shown(url), std::regex(R"([.?*+()\[\]])"), R"(\$&)") +
                  " is locked by PID " + std::to_string(holder.pid) + " on " + host +
                  " since \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ \\(plinth apply\\); wait for it to finish, or pass "
                  "--lock-timeout=60s to wait, or run 'plinth state unlock' if that process is gone");
  INFO(st.error().message);
  CHECK(std::regex_match(st.error().message, once));

  auto waited = b->lock("plinth plan", milliseconds(600));
  REQUIRE_FALSE(waited.ok());
  CHECK(waited.error().message.find(" is still locked by PID " + std::to_string(holder.pid) + " on " + host) !=
        std::string::npos);
  CHECK(waited.error().message.find("(plinth apply) after waiting 600ms; wait for it to finish, or pass a longer "
                                    "--lock-timeout") != std::string::npos);

  auto refused = b->break_lock(false);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find(", and its PostgreSQL session is still open; wait for it to finish, or pass "
                                     "--force to end that session") != std::string::npos);

  // The holder dies without unlocking: the server ends its session and the lock goes with it.
  holder.kill_hard();
  auto after = b->lock("plinth plan", milliseconds(10000));
  INFO((after ? "" : after.error().message));
  CHECK(after.ok());
  // Taking a lock this backend holds succeeds; another backend (connection) is refused.
  CHECK(b->lock("plinth plan", milliseconds(0)).ok());
  auto second = open_backend(url)->lock("plinth apply", milliseconds(0));
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().message.find("is locked by PID " + std::to_string(getpid()) + " on " + host) !=
        std::string::npos);
  CHECK(second.error().message.find("(plinth plan)") != std::string::npos);
  b->unlock();
  auto third = open_backend(url);
  CHECK(third->lock("plinth apply", milliseconds(0)).ok());
  CHECK(*third->break_lock(false) == "released this process's lock on state " + shown(url));
  CHECK(*third->break_lock(false) == "state " + shown(url) + " is not locked; nothing to do");
}

TEST_CASE("postgres backend: unlock --force ends the holder's session and its next write fails") {
  std::string url = test::postgres_workspace_url("force");
  auto holder = open_backend(url);
  StateDocument base = new_document();
  save_version(*holder, base, 1, 1);
  REQUIRE(holder->lock("plinth apply", milliseconds(0)).ok());

  auto breaker = open_backend(url);
  auto r = breaker->break_lock(true);
  INFO((r ? "" : r.error().message));
  REQUIRE(r.ok());
  CHECK(r->starts_with("ended the PostgreSQL session of PID " + std::to_string(getpid()) + " on " + hostname()));
  CHECK(r->ends_with("(plinth apply) on state " + shown(url) +
                     " (forced), which released its lock; if that process is still running, its next write of the "
                     "state fails"));
  CHECK(breaker->lock("plinth apply", milliseconds(5000)).ok());

  StateDocument next = base;
  next.serial = 2;
  auto st = holder->save(next);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message.starts_with("lost the connection to PostgreSQL state " + shown(url) + ": "));
  CHECK(st.error().message.find("and with it this run's lock") != std::string::npos);
  breaker->unlock();
  auto cur = breaker->load();
  REQUIRE(cur.ok());
  CHECK((*cur)->serial == 1);
}

TEST_CASE("postgres backend: a damaged document in the table is refused, never overwritten, and restore sets it aside") {
  std::string url = test::postgres_workspace_url("damaged");
  auto b = open_backend(url);
  StateDocument base = new_document();
  save_version(*b, base, 1, 2);
  save_version(*b, base, 2, 3);
  // Edit the stored document by hand: the checksum no longer matches.
  sql("UPDATE plinth_state SET document = replace(document, '\"id\": 100', '\"id\": 999') WHERE workspace = $1",
      {workspace_of(url)});

  auto loaded = b->load();
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.error().message.starts_with("state file " + shown(url) + " fails its checksum (stored sha256:"));
  CHECK(loaded.error().message.find("): it was damaged or edited by hand.") != std::string::npos);

  StateDocument next = base;
  next.serial = 3;
  auto st = b->save(next);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message.starts_with("will not overwrite the state: state file " + shown(url) +
                                       " fails its checksum"));

  auto h = b->history();
  REQUIRE(h.ok());
  REQUIRE(h->size() == 2);
  CHECK_FALSE(h->back().damaged);
  auto r = b->restore(2);
  INFO((r ? "" : r.error().message));
  REQUIRE(r.ok());
  CHECK(*r == "restored serial 2 of state " + shown(url) +
                  " as serial 3 (3 resources); the damaged document was kept in table plinth_state_damaged");
  auto cur = b->load();
  REQUIRE(cur.ok());
  CHECK((*cur)->serial == 3);
}

TEST_CASE("postgres backend: a server that is not there gives a clear error without the password") {
  std::string url = "postgres://plinth:hunter2-secret@127.0.0.1:1/plinth_test?connect_timeout=5&workspace=x";
  auto b = open_backend(url);
  CHECK(b->describe() == "PostgreSQL postgres://plinth:***@127.0.0.1:1/plinth_test?connect_timeout=5&workspace=x "
                         "(workspace x)");
  auto r = b->load();
  REQUIRE_FALSE(r.ok());
  INFO(r.error().message);
  CHECK(r.error().message.starts_with("cannot connect to PostgreSQL state postgres://plinth:***@127.0.0.1:1/"
                                      "plinth_test?connect_timeout=5&workspace=x (workspace x): "));
  CHECK(r.error().message.find("failed: Connection refused. Is the server running on that host and accepting "
                                "TCP/IP connections? Check that") != std::string::npos);
  CHECK(r.error().message.ends_with("? Check that the server is running and reachable at that host and port, and "
                                    "the user, password (in the URL, PGPASSWORD or ~/.pgpass) and database name"));
  CHECK(r.error().message.find("hunter2") == std::string::npos);
  CHECK_FALSE(b->lock("plinth plan", milliseconds(0)).ok());
}

TEST_CASE("postgres backend: an apply's saves are change rows that every read applies and the end of the run folds") {
  std::string url = test::postgres_workspace_url("changes");
  auto b = open_backend(url);
  REQUIRE(b->stores_changes());
  StateDocument doc = save_version(*b, new_document(), 1, 3);
  doc.plinth_version = PLINTH_VERSION;
  REQUIRE(b->lock("plinth apply", milliseconds(0)).ok());
  const uint64_t bytes0 = b->bytes_written();
  auto c = next_changes(doc, {vlan("v3", 103)}, {"net.vlan.v0"});
  REQUIRE(b->save_changes(c).ok());
  advance(doc, c);
  c = next_changes(doc, {vlan("v1", 201)});
  REQUIRE(b->save_changes(c).ok());
  advance(doc, c);
  const uint64_t appended = b->bytes_written() - bytes0;
  CHECK(appended > 0);
  CHECK(appended < 2000);  // two small records, not two documents of history and state

  auto seen = open_backend(url)->load();  // another reader, as plan would read it
  REQUIRE(seen.ok());
  CHECK(**seen == doc);
  auto stale = open_backend(url)->save_changes(next_changes(doc, {}));  // locked by this run
  CHECK_FALSE(stale.ok());
  // Another run that saves changes continuing an old serial is refused.
  auto wrong = next_changes(doc, {});
  wrong.from_serial = 1;
  wrong.serial = 2;
  auto refused = b->save_changes(wrong);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("state was changed by another run") != std::string::npos);

  REQUIRE(b->settle().ok());
  b->unlock();
  auto h = b->history();
  REQUIRE(h.ok());
  CHECK(h->back().serial == 3);
  CHECK(std::any_of(h->begin(), h->end(), [](const HistoryEntry& e) { return e.serial == 1 && e.run_start; }));
  auto folded = open_backend(url)->load();
  REQUIRE(folded.ok());
  CHECK(**folded == doc);
  auto saved = b->saved_version(3);
  REQUIRE(saved.ok());
  CHECK(*saved == doc);  // the fold wrote the document itself, not only the rows
}

TEST_CASE("postgres backend: changes a killed run left are read and the next run folds them first") {
  std::string url = test::postgres_workspace_url("changes-killed");
  StateDocument doc = save_version(*open_backend(url), new_document(), 5, 2);
  doc.plinth_version = PLINTH_VERSION;
  auto c1 = next_changes(doc, {vlan("v7", 107)});
  StateDocument mid = doc;
  advance(mid, c1);
  auto c2 = next_changes(mid, {vlan("v8", 108)});
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    Backend* dying = open_backend(url).release();  // never destroyed: no fold
    bool ok = dying->lock("plinth apply", milliseconds(0)) && dying->save_changes(c1) && dying->save_changes(c2);
    ::kill(getpid(), SIGKILL);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  advance(doc, c1);
  advance(doc, c2);
  auto seen = open_backend(url)->load();
  REQUIRE(seen.ok());
  REQUIRE(seen->has_value());
  CHECK(**seen == doc);

  auto b = open_backend(url);
  REQUIRE(b->lock("plinth apply", milliseconds(5000)).ok());  // the server freed the dead run's lock
  auto c3 = next_changes(doc, {}, {"net.vlan.v0"});
  REQUIRE(b->save_changes(c3).ok());
  advance(doc, c3);
  auto h = b->history();
  REQUIRE(h.ok());
  CHECK(std::any_of(h->begin(), h->end(), [](const HistoryEntry& e) { return e.serial == 7 && e.run_start; }));
  b->unlock();
  auto after = open_backend(url)->load();
  REQUIRE(after.ok());
  CHECK(**after == doc);
  CHECK((*after)->serial == 8);
}

TEST_CASE("open_backend: postgres:// and postgresql:// URLs open PostgreSQL, anything else a local file") {
  CHECK(open_backend("site/plinth.state.json")->describe() == "local file site/plinth.state.json");
  CHECK(open_backend("postgresql://u@db.internal/plinth")->describe() ==
        "PostgreSQL postgresql://u@db.internal/plinth (workspace default)");
  CHECK(open_backend("postgres://u@db/plinth?workspace=prod%2Feu")->describe() ==
        "PostgreSQL postgres://u@db/plinth?workspace=prod%2Feu (workspace prod/eu)");
  CHECK(redact_location("postgres://u:p%40ss@db:5432/plinth?sslmode=require&password=x&workspace=w") ==
        "postgres://u:***@db:5432/plinth?sslmode=require&password=***&workspace=w");
  CHECK(redact_location("postgres://u@db/plinth") == "postgres://u@db/plinth");
  CHECK(redact_location("state:with:colons@host.json") == "state:with:colons@host.json");
}

}  // namespace plinth::test::state_postgres
