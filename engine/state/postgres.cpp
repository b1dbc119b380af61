// The PostgreSQL backend: one row per workspace in plinth_state, every saved
// version in plinth_state_history (the last kHistoryKeep), and the lock as a
// session-level advisory lock on the backend's connection, so the server
// releases it when the holder dies. plinth_state_lock records who holds it,
// for the messages of those waiting. Values always travel as query parameters.
#include <libpq-fe.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <thread>

#include "engine/state/lock_error.h"
#include "engine/state/changes.h"
#include "engine/state/state.h"

namespace plinth::state {

namespace {

using namespace std::chrono;

struct ConnDeleter {
  void operator()(PGconn* c) const { PQfinish(c); }
};
struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Conn = std::unique_ptr<PGconn, ConnDeleter>;
using PgResult = std::unique_ptr<PGresult, ResultDeleter>;

/// Creates the tables once per database; the transaction-scoped advisory lock
/// keeps two first runs from racing on CREATE TABLE.
constexpr const char* kSchema = R"sql(
BEGIN;
SELECT pg_advisory_xact_lock(7061734011700336);
CREATE TABLE IF NOT EXISTS plinth_state (
  workspace  text PRIMARY KEY,
  lineage    text NOT NULL,
  serial     bigint NOT NULL,
  document   text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS plinth_state_history (
  workspace text NOT NULL,
  serial    bigint NOT NULL,
  document  text NOT NULL,
  saved_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace, serial));
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'plinth_state_history'::regclass
                 AND attname = 'run_start' AND NOT attisdropped) THEN
    ALTER TABLE plinth_state_history ADD COLUMN run_start boolean NOT NULL DEFAULT false;
  END IF;
END $$;
CREATE TABLE IF NOT EXISTS plinth_state_lock (
  workspace   text PRIMARY KEY,
  pid         bigint NOT NULL,
  host        text NOT NULL,
  locked_at   text NOT NULL,
  operation   text NOT NULL,
  session_pid integer NOT NULL);
CREATE TABLE IF NOT EXISTS plinth_state_changes (
  workspace text NOT NULL,
  serial    bigint NOT NULL,
  record    text NOT NULL,
  PRIMARY KEY (workspace, serial));
CREATE TABLE IF NOT EXISTS plinth_state_damaged (
  workspace   text NOT NULL,
  set_aside_at timestamptz NOT NULL DEFAULT now(),
  document    text NOT NULL);
COMMIT;
)sql";

/// libpq's message on one line, ending in a full stop: "... failed: Connection refused. Is the server running ...?"
std::string sentence(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n' && !out.empty() && std::string_view(".?!:").find(out.back()) == std::string_view::npos) {
      out += ". ";
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (!out.empty() && out.back() != '.' && out.back() != '?' && out.back() != '!') out += '.';
  return out;
}

/// libpq's message on one line, without a final full stop, for "...: MESSAGE; what to do".
std::string trimmed(const std::string& s) {
  std::string out = sentence(s);
  if (out.ends_with('.')) out.pop_back();
  return out;
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

/// The advisory lock key of a workspace: FNV-1a (64 bit) of "plinth-state:NAME".
int64_t lock_key(const std::string& workspace) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : "plinth-state:" + workspace) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return static_cast<int64_t>(h);
}

std::string holder_text(const std::optional<LockHolder>& info) {
  if (!info) return "another process (it has not recorded who it is yet)";
  return holder_description(*info);
}

class PostgresBackend final : public Backend {
 public:
  explicit PostgresBackend(const std::string& url) : shown_(redact_location(url)) {
    // libpq reads every URI parameter but ours, so `workspace` is taken out.
    size_t q = url.find('?');
    conninfo_ = url.substr(0, q);
    std::string kept;
    for (size_t start = q; start != std::string::npos && start < url.size();) {
      size_t end = url.find('&', start + 1);
      std::string param = url.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
      if (param.starts_with("workspace=")) workspace_ = percent_decode(param.substr(10));
      else if (!param.empty()) kept += (kept.empty() ? "?" : "&") + param;
      start = end;
    }
    conninfo_ += kept;
    key_ = std::to_string(lock_key(workspace_));
    uint64_t k = static_cast<uint64_t>(lock_key(workspace_));
    key_high_ = std::to_string(k >> 32);
    key_low_ = std::to_string(k & 0xffffffffull);
    source_ = shown_ + " (workspace " + workspace_ + ")";
  }
  ~PostgresBackend() override { unlock(); }

  std::string describe() const override { return "PostgreSQL " + source_; }

  Status lock(const std::string& operation, milliseconds timeout) override {
    if (locked_) return {};
    if (auto st = connect(); !st) return st;
    const auto deadline = steady_clock::now() + timeout;
    for (;;) {
      auto got = exec("SELECT pg_try_advisory_lock($1::bigint)", {key_});
      if (!got) return got.error();
      if (value(*got, 0, 0) == "t") {
        auto rec = exec(
            "INSERT INTO plinth_state_lock (workspace, pid, host, locked_at, operation, session_pid) "
            "VALUES ($1, $2::bigint, $3, $4, $5, pg_backend_pid()) ON CONFLICT (workspace) DO UPDATE SET "
            "pid = EXCLUDED.pid, host = EXCLUDED.host, locked_at = EXCLUDED.locked_at, "
            "operation = EXCLUDED.operation, session_pid = EXCLUDED.session_pid",
            {workspace_, std::to_string(getpid()), this_host(), utc_iso8601(std::time(nullptr)), operation});
        if (!rec) {
          (void)exec("SELECT pg_advisory_unlock($1::bigint)", {key_});
          return rec.error();
        }
        locked_ = true;
        run_started_ = false;  // a new run: its first save marks what it started from
        return {};
      }
      auto now = steady_clock::now();
      if (now >= deadline) {
        auto info = holder();
        // The holder records itself right after taking the lock: a run that
        // just took it has not yet. Give it a moment so the message names it.
        for (int i = 0; i < 100 && info && !*info; ++i) {
          std::this_thread::sleep_for(milliseconds(20));
          info = holder();
        }
        if (!info) return info.error();
        std::string who = holder_text(*info);
        return lock_held_error(source_, who, timeout);
        return Error{Error::Kind::Conflict,
                     "state " + source_ + " is still locked by " + who + " after waiting " +
                         format_duration(timeout) +
                         "; wait for it to finish, or pass a longer --lock-timeout, or run 'plinth state unlock' if "
                         "that process is gone",
                     0};
      }
      std::this_thread::sleep_for(std::min<steady_clock::duration>(milliseconds(200), deadline - now));
    }
  }

  void unlock() override {
    if (!locked_) return;
    // A run that stored changes folds them before it lets go; if that fails
    // they stay in plinth_state_changes and are read and folded later.
    if (appended_) (void)fold_locked();
    locked_ = false;
    auto del = exec("DELETE FROM plinth_state_lock WHERE workspace = $1 AND session_pid = pg_backend_pid()",
                    {workspace_});
    auto rel = exec("SELECT pg_advisory_unlock($1::bigint)", {key_});
    // Closing the connection releases the lock whatever went wrong above.
    if (!del || !rel) conn_.reset();
  }

  Result<std::optional<StateDocument>> load() override {
    if (auto st = connect(); !st) return st.error();
    // The document and the changes stored after it, in one snapshot.
    auto r = exec(
        "SELECT s.document, c.serial, c.record FROM plinth_state s LEFT JOIN plinth_state_changes c "
        "ON c.workspace = s.workspace AND c.serial > s.serial WHERE s.workspace = $1 ORDER BY c.serial",
        {workspace_});
    if (!r) return r.error();
    changes_stored_ = 0;
    if (PQntuples(r->get()) == 0) return std::optional<StateDocument>{};
    auto doc = parse(value(*r, 0, 0), source_);
    if (!doc) return doc.error();
    ChangeChain chain(*doc);
    for (int i = 0; i < PQntuples(r->get()); ++i) {
      if (PQgetisnull(r->get(), i, 1)) continue;
      std::string text = value(*r, i, 2);
      if (text.ends_with('\n')) text.pop_back();
      const std::string where = "change serial " + value(*r, i, 1) + " of " + source_ + " (table plinth_state_changes)";
      auto rec = parse_change_line(text);
      if (!rec)
        return Error::invalid(where + " is damaged (" + rec.error().message + "); plinth left it untouched. Deleting "
                              "the workspace's rows of plinth_state_changes makes the state serial " +
                              std::to_string(doc->serial) +
                              " again, without the operations recorded after it: refresh and plan then show them");
      ++changes_stored_;
      if (auto st = chain.add(std::move(*rec)); !st)
        return Error::invalid(where + " " + st.error().message + "; plinth left both untouched");
    }
    chain.apply_to(*doc);
    return std::optional<StateDocument>{std::move(*doc)};
  }

  bool stores_changes() const override { return true; }

  Status save_changes(const StateChanges& changes) override {
    bool took_lock = !locked_;
    if (took_lock) {
      if (auto st = lock("plinth (saving state)", milliseconds(0)); !st) return st;
    }
    Status st = save_changes_locked(changes);
    if (took_lock) {
      if (st) st = fold_locked();
      unlock();
    }
    return st;
  }

  Status settle() override {
    if (!locked_ || !appended_) return {};
    return fold_locked();
  }

  Status save(const StateDocument& doc) override {
    bool took_lock = !locked_;
    if (took_lock) {
      if (auto st = lock("plinth (saving state)", milliseconds(0)); !st) return st;
    }
    std::string note;
    Status st = save_locked(doc, false, note);
    if (took_lock) unlock();
    return st;
  }

  uint64_t bytes_written() const override { return bytes_written_; }

  Result<std::vector<HistoryEntry>> history() override {
    if (auto st = connect(); !st) return st.error();
    auto r = exec(
        "SELECT serial, to_char(saved_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), document, run_start "
        "FROM plinth_state_history WHERE workspace = $1 ORDER BY serial",
        {workspace_});
    if (!r) return r.error();
    std::vector<HistoryEntry> out;
    for (int i = 0; i < PQntuples(r->get()); ++i) {
      HistoryEntry e;
      e.serial = std::strtoull(PQgetvalue(r->get(), i, 0), nullptr, 10);
      e.saved_at = value(*r, i, 1);
      e.run_start = value(*r, i, 3) == "t";
      auto doc = parse(value(*r, i, 2), source_ + " history serial " + std::to_string(e.serial));
      if (doc) {
        e.lineage = doc->lineage;
        e.resources = doc->resources.size();
      } else {
        e.damaged = true;
      }
      out.push_back(std::move(e));
    }
    return out;
  }

  Result<std::string> restore(uint64_t serial) override {
    bool took_lock = !locked_;
    if (took_lock) {
      if (auto st = lock("plinth state restore", milliseconds(0)); !st) return st.error();
    }
    auto r = restore_locked(serial);
    if (took_lock) unlock();
    return r;
  }

  Result<StateDocument> saved_version(uint64_t serial) override {
    if (auto st = connect(); !st) return st.error();
    auto r = exec("SELECT document FROM plinth_state_history WHERE workspace = $1 AND serial = $2::bigint",
                  {workspace_, std::to_string(serial)});
    if (!r) return r.error();
    if (PQntuples(r->get()) == 0)
      return Error{Error::Kind::NotFound, "no saved version " + std::to_string(serial) + " of state " + source_, 0};
    return parse(value(*r, 0, 0), source_ + " history serial " + std::to_string(serial));
  }

  Status rewrite_version(const StateDocument& doc) override {
    bool took_lock = !locked_;
    if (took_lock) {
      if (auto st = lock("plinth state rekey", milliseconds(0)); !st) return st;
    }
    Status st = rewrite_version_locked(doc);
    if (took_lock) unlock();
    return st;
  }

  Status adopt(const std::vector<std::pair<HistoryEntry, StateDocument>>& versions,
               const StateDocument& current) override {
    bool took_lock = !locked_;
    if (took_lock) {
      if (auto st = lock("plinth state migrate", milliseconds(0)); !st) return st;
    }
    Status st = adopt_locked(versions, current);
    if (took_lock) unlock();
    return st;
  }

  Result<std::string> break_lock(bool force) override {
    if (locked_) {
      unlock();
      return "released this process's lock on state " + source_;
    }
    if (auto st = connect(); !st) return st.error();
    auto got = exec("SELECT pg_try_advisory_lock($1::bigint)", {key_});
    if (!got) return got.error();
    if (value(*got, 0, 0) == "t") {
      // Nobody holds it. A record left behind is from a session that ended
      // without unlocking (the server released its advisory lock then).
      auto del = exec("DELETE FROM plinth_state_lock WHERE workspace = $1 RETURNING pid, host, locked_at, operation",
                      {workspace_});
      auto rel = exec("SELECT pg_advisory_unlock($1::bigint)", {key_});
      if (!del) return del.error();
      if (!rel) return rel.error();
      if (PQntuples(del->get()) == 0) return "state " + source_ + " is not locked; nothing to do";
      LockHolder gone{std::atol(PQgetvalue(del->get(), 0, 0)), value(*del, 0, 1), value(*del, 0, 2),
                      value(*del, 0, 3), 0};
      return "removed the stale lock record of " + holder_description(gone) + " on state " + source_ +
             ": its PostgreSQL session is gone and the server released the lock";
    }
    auto info = holder();
    if (!info) return info.error();
    std::string who = holder_text(*info);
    if (!force)
      return Error{Error::Kind::Conflict,
                   "state " + source_ + " is locked by " + who +
                       ", and its PostgreSQL session is still open; wait for it to finish, or pass --force to end "
                       "that session (only if you are sure it is not writing state)",
                   0};
    if (!*info)
      return Error{Error::Kind::Conflict,
                   "state " + source_ + " is locked by " + who +
                       "; plinth cannot tell which PostgreSQL session to end. Run 'plinth state unlock --force' again",
                   0};
    auto killed = exec("SELECT pg_terminate_backend($1::integer)", {std::to_string((*info)->session_pid)});
    if (!killed)
      return Error::fatal(killed.error().message +
                          "; ending another session needs the same PostgreSQL role or membership in pg_signal_backend");
    if (value(*killed, 0, 0) != "t")
      return Error::fatal("could not end PostgreSQL session " + std::to_string((*info)->session_pid) + " of " + who +
                          " on state " + source_ + "; it may have just ended: run 'plinth state unlock' again");
    return "ended the PostgreSQL session of " + who + " on state " + source_ +
           " (forced), which released its lock; if that process is still running, its next write of the state fails";
  }

 private:
  /// Opens the connection (and the tables) when there is none.
  Status connect() {
    if (conn_ && PQstatus(conn_.get()) == CONNECTION_OK) return {};
    conn_.reset();
    if (workspace_.empty())
      return Error::invalid("state " + shown_ +
                            ": the workspace name is empty; write ?workspace=NAME, or leave it out for \"default\"");
    Conn c(PQconnectdb(conninfo_.c_str()));
    if (!c) return Error::fatal("cannot connect to PostgreSQL state " + source_ + ": out of memory");
    if (PQstatus(c.get()) != CONNECTION_OK)
      return Error::fatal("cannot connect to PostgreSQL state " + source_ + ": " + sentence(PQerrorMessage(c.get())) +
                          " Check that the server is running and reachable at that host and port, and the user, "
                          "password (in the URL, PGPASSWORD or ~/.pgpass) and database name");
    PQsetNoticeProcessor(c.get(), [](void*, const char*) {}, nullptr);
    PgResult schema(PQexec(c.get(), kSchema));
    if (PQresultStatus(schema.get()) != PGRES_COMMAND_OK) {
      std::string why = trimmed(PQerrorMessage(c.get()));
      PgResult(PQexec(c.get(), "ROLLBACK"));
      return Error::fatal("cannot create the plinth_state tables for PostgreSQL state " + source_ + ": " + why +
                          ". Check that the role may create tables in the database (or create them as in "
                          "docs/state.md)");
    }
    conn_ = std::move(c);
    return {};
  }

  /// Runs one parameterized statement; the error names the state and what to check.
  Result<PgResult> exec(const char* sql, const std::vector<std::string>& params) {
    if (!conn_) return Error::fatal("PostgreSQL state " + source_ + ": not connected");
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    PgResult r(PQexecParams(conn_.get(), sql, static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                            nullptr, 0));
    ExecStatusType st = PQresultStatus(r.get());
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
    std::string why = trimmed(PQerrorMessage(conn_.get()));
    if (PQstatus(conn_.get()) != CONNECTION_OK) {
      std::string lost = locked_ ? ", and with it this run's lock (the server ended the session, or 'plinth state "
                                   "unlock --force' did); nothing more was written. Check the state and plan again"
                                 : "; check the server and run again";
      return Error::fatal("lost the connection to PostgreSQL state " + source_ + ": " + why + lost);
    }
    return Error::fatal("PostgreSQL state " + source_ + ": " + why);
  }

  static std::string value(const PgResult& r, int row, int col) {
    return std::string(PQgetvalue(r.get(), row, col), PQgetlength(r.get(), row, col));
  }

  /// The recorded holder of the advisory lock, if its session still holds it.
  Result<std::optional<LockHolder>> holder() {
    auto r = exec(
        "SELECT l.pid, l.host, l.locked_at, l.operation, l.session_pid FROM plinth_state_lock l "
        "WHERE l.workspace = $1 AND EXISTS (SELECT 1 FROM pg_locks k WHERE k.locktype = 'advisory' AND k.granted "
        "AND k.pid = l.session_pid AND k.classid = $2::oid AND k.objid = $3::oid AND k.objsubid = 1)",
        {workspace_, key_high_, key_low_});
    if (!r) return r.error();
    if (PQntuples(r->get()) == 0) return std::optional<LockHolder>{};
    return std::optional<LockHolder>{LockHolder{std::atol(PQgetvalue(r->get(), 0, 0)), value(*r, 0, 1), value(*r, 0, 2),
                                            value(*r, 0, 3), std::atoi(PQgetvalue(r->get(), 0, 4))}};
  }

  /// Rolls back an open transaction unless it was committed.
  struct Transaction {
    PostgresBackend& b;
    bool done = false;
    ~Transaction() {
      if (!done) (void)b.exec("ROLLBACK", {});
    }
  };

  /// Stores one change (an apply's save) as a row of plinth_state_changes,
  /// checked against the stored lineage and serial in the same transaction.
  Status save_changes_locked(const StateChanges& c) {
    if (auto st = connect(); !st) return st;
    // What an earlier run left (it died before folding) is folded first, so
    // that this run starts from a document the history keeps.
    if (!run_started_) {
      if (auto st = fold_leftovers(); !st) return st;
    }
    if (auto b = exec("BEGIN", {}); !b) return b.error();
    Transaction txn{*this};
    auto cur = exec(
        "SELECT s.lineage, COALESCE((SELECT max(c.serial) FROM plinth_state_changes c WHERE c.workspace = "
        "s.workspace AND c.serial > s.serial), s.serial) FROM plinth_state s WHERE s.workspace = $1 FOR UPDATE",
        {workspace_});
    if (!cur) return cur.error();
    if (PQntuples(cur->get()) == 0) {
      if (c.from_serial != 0)
        return Error{Error::Kind::Conflict,
                     "state was changed by another run: " + source_ +
                         " no longer exists; nothing was written. Plan again against the current state",
                     0};
      // A new state: its first save is a whole document.
      (void)exec("ROLLBACK", {});
      txn.done = true;
      StateDocument first;
      first.lineage = c.lineage;
      apply_changes(first, c);
      std::string note;
      return save_locked(first, false, note);
    }
    const uint64_t serial = std::strtoull(PQgetvalue(cur->get(), 0, 1), nullptr, 10);
    if (auto st = check_continues(source_, "state", value(*cur, 0, 0), serial, c); !st) return st;
    if (!run_started_) {  // what this run started from, kept for good (state.h, kHistoryKeep)
      auto mark = exec(
          "INSERT INTO plinth_state_history (workspace, serial, document, run_start) SELECT workspace, serial, "
          "document, true FROM plinth_state WHERE workspace = $1 ON CONFLICT (workspace, serial) DO UPDATE SET "
          "run_start = true",
          {workspace_});
      if (!mark) return Error::fatal("cannot save state " + source_ + ": " + mark.error().message + " (the stored state is unchanged)");
    }
    const std::string line = change_line(c);
    auto ins = exec("INSERT INTO plinth_state_changes (workspace, serial, record) VALUES ($1, $2::bigint, $3)",
                    {workspace_, std::to_string(c.serial), line});
    if (!ins) return Error::fatal("cannot save state " + source_ + ": " + ins.error().message + " (the stored state is unchanged)");
    if (auto cm = exec("COMMIT", {}); !cm) return Error::fatal("cannot save state " + source_ + ": " + cm.error().message);
    txn.done = true;
    run_started_ = true;
    appended_ = true;
    bytes_written_ += line.size();
    return {};
  }

  /// Writes the document with the stored changes applied as the current
  /// state (and its history version), and deletes the changes, in one
  /// transaction. Nothing to do when there are none.
  Status fold_locked() {
    auto loaded = load();
    if (!loaded) return Error{loaded.error().kind, "will not overwrite the state: " + loaded.error().message, 0};
    if (!*loaded || changes_stored_ == 0) {
      appended_ = false;
      return {};
    }
    StateDocument doc = std::move(**loaded);
    doc.plinth_version = PLINTH_VERSION;
    const std::string text = to_json_text(doc);
    if (auto b = exec("BEGIN", {}); !b) return b.error();
    Transaction txn{*this};
    if (auto st = write_current(doc, text, "its changes stay stored; the next run folds them"); !st) return st;
    if (auto c = exec("COMMIT", {}); !c) return Error::fatal("cannot save state " + source_ + ": " + c.error().message);
    txn.done = true;
    appended_ = false;
    changes_stored_ = 0;
    bytes_written_ += 2 * text.size();
    return {};
  }

  /// Folds the changes a run that died before folding left, when there are
  /// any (a look at the changes table, not a read of the document).
  Status fold_leftovers() {
    auto any = exec("SELECT 1 FROM plinth_state_changes WHERE workspace = $1 LIMIT 1", {workspace_});
    if (!any) return any.error();
    if (PQntuples(any->get()) == 0) return {};
    return fold_locked();
  }

  /// In the caller's transaction: `doc` (whose text is `text`) as the
  /// current document and its history version; the stored changes deleted
  /// (the document holds them); history beyond kHistoryKeep that is not a run
  /// start deleted. A failure's message ends with `on_failure` in brackets.
  Status write_current(const StateDocument& doc, const std::string& text, const char* on_failure) {
    const std::string serial = std::to_string(doc.serial);
    for (auto [sql, params] : std::initializer_list<std::pair<const char*, std::vector<std::string>>>{
             {"INSERT INTO plinth_state (workspace, lineage, serial, document, updated_at) "
              "VALUES ($1, $2, $3::bigint, $4, now()) ON CONFLICT (workspace) DO UPDATE SET "
              "lineage = EXCLUDED.lineage, serial = EXCLUDED.serial, document = EXCLUDED.document, updated_at = now()",
              {workspace_, doc.lineage, serial, text}},
             {"INSERT INTO plinth_state_history (workspace, serial, document) VALUES ($1, $2::bigint, $3) "
              "ON CONFLICT (workspace, serial) DO UPDATE SET document = EXCLUDED.document, saved_at = now()",
              {workspace_, serial, text}},
             {"DELETE FROM plinth_state_changes WHERE workspace = $1", {workspace_}},
             {"DELETE FROM plinth_state_history WHERE workspace = $1 AND NOT run_start AND serial NOT IN "
              "(SELECT serial FROM plinth_state_history WHERE workspace = $1 ORDER BY serial DESC LIMIT $2::integer)",
              {workspace_, std::to_string(kHistoryKeep)}},
         }) {
      if (auto r = exec(sql, params); !r)
        return Error::fatal("cannot save state " + source_ + ": " + r.error().message + " (" + on_failure + ")");
    }
    return {};
  }

  /// Writes `doc` as the current state and a history version, in one
  /// transaction. A stored document that does not parse is refused, or kept
  /// in plinth_state_damaged when `set_aside_damaged` (restore).
  Status save_locked(const StateDocument& doc, bool set_aside_damaged, std::string& note) {
    if (auto st = connect(); !st) return st;
    // Changes an apply left (it died before folding) are folded first, so the
    // version this save starts from is a document; a restore (which may
    // find the document damaged) drops them with it instead.
    if (!set_aside_damaged) {
      if (auto st = fold_leftovers(); !st) return st;
    }
    if (auto b = exec("BEGIN", {}); !b) return b.error();
    Transaction txn{*this};
    auto cur = exec("SELECT document FROM plinth_state WHERE workspace = $1 FOR UPDATE", {workspace_});
    if (!cur) return cur.error();
    std::optional<std::pair<uint64_t, std::string>> run_start;  // what this run started from, on its first save
    if (PQntuples(cur->get()) > 0) {
      auto stored = parse(value(*cur, 0, 0), source_);
      if (!stored && !set_aside_damaged)
        return Error{stored.error().kind, "will not overwrite the state: " + stored.error().message, 0};
      if (!stored) {
        auto aside = exec("INSERT INTO plinth_state_damaged (workspace, document) VALUES ($1, $2)",
                          {workspace_, value(*cur, 0, 0)});
        if (!aside) return aside.error();
        note = "; the damaged document was kept in table plinth_state_damaged";
      } else if (stored->lineage != doc.lineage) {
        return Error{Error::Kind::Conflict,
                     "state was changed by another run: " + source_ + " now has lineage " + stored->lineage +
                         " but this run's state has lineage " + doc.lineage +
                         "; nothing was written. Check --state points at the right state, then plan again",
                     0};
      } else if (doc.serial <= stored->serial) {
        return Error{Error::Kind::Conflict,
                     "state was changed by another run: " + source_ + " is at serial " +
                         std::to_string(stored->serial) + " but this run tried to write serial " +
                         std::to_string(doc.serial) + "; nothing was written. Plan again against the current state",
                     0};
      }
      if (stored && !run_started_) run_start.emplace(stored->serial, value(*cur, 0, 0));
    }
    // Kept for good (state.h, kHistoryKeep); a version from before history
    // existed gets its history row now.
    if (run_start) {
      auto mark = exec(
          "INSERT INTO plinth_state_history (workspace, serial, document, run_start) VALUES ($1, $2::bigint, $3, true) "
          "ON CONFLICT (workspace, serial) DO UPDATE SET run_start = true",
          {workspace_, std::to_string(run_start->first), run_start->second});
      if (!mark) return Error::fatal("cannot save state " + source_ + ": " + mark.error().message + " (the stored state is unchanged)");
    }
    StateDocument out = doc;
    out.plinth_version = PLINTH_VERSION;
    const std::string text = to_json_text(out);
    if (auto st = write_current(out, text, "the stored state is unchanged"); !st) return st;
    if (auto c = exec("COMMIT", {}); !c)
      return Error::fatal("cannot save state " + source_ + ": " + c.error().message);
    txn.done = true;
    run_started_ = true;
    bytes_written_ += 2 * text.size();  // the document and its history row
    return {};
  }

  Status rewrite_version_locked(const StateDocument& doc) {
    if (auto st = connect(); !st) return st;
    const std::string serial = std::to_string(doc.serial);
    auto old = exec("SELECT document FROM plinth_state_history WHERE workspace = $1 AND serial = $2::bigint",
                    {workspace_, serial});
    if (!old) return old.error();
    if (PQntuples(old->get()) == 0)
      return Error{Error::Kind::NotFound, "no saved version " + serial + " of state " + source_, 0};
    if (auto prev = parse(value(*old, 0, 0), source_ + " history serial " + serial); prev && prev->lineage != doc.lineage)
      return Error{Error::Kind::Conflict,
                   "saved version " + serial + " of state " + source_ + " holds lineage " + prev->lineage + ", not " +
                       doc.lineage + "; it was not rewritten",
                   0};
    auto r = exec("UPDATE plinth_state_history SET document = $3 WHERE workspace = $1 AND serial = $2::bigint",
                  {workspace_, serial, to_json_text(doc)});
    if (!r) return r.error();
    return {};
  }

  /// adopt() in one transaction.
  Status adopt_locked(const std::vector<std::pair<HistoryEntry, StateDocument>>& versions,
                      const StateDocument& current) {
    if (auto st = connect(); !st) return st;
    if (auto b = exec("BEGIN", {}); !b) return b.error();
    Transaction txn{*this};
    auto cur = exec("SELECT document FROM plinth_state WHERE workspace = $1 FOR UPDATE", {workspace_});
    if (!cur) return cur.error();
    if (PQntuples(cur->get()) > 0) {
      auto stored = parse(value(*cur, 0, 0), source_);
      if (!stored) return Error{stored.error().kind, "will not overwrite the state: " + stored.error().message, 0};
      if (stored->lineage != current.lineage)
        return Error{Error::Kind::Conflict,
                     "the target state " + source_ + " holds another state (lineage " + stored->lineage + ", not " +
                         current.lineage + "); nothing was written. Pick an empty workspace, or remove that state "
                         "first if it is no longer wanted",
                     0};
      if (stored->serial > current.serial)
        return Error{Error::Kind::Conflict,
                     "the target state " + source_ + " is at serial " + std::to_string(stored->serial) +
                         ", newer than the source's " + std::to_string(current.serial) + "; nothing was written",
                     0};
    }
    for (const auto& [entry, doc] : versions) {
      const std::string saved_at = entry.saved_at.empty() ? "now" : entry.saved_at;
      auto r = exec(
          "INSERT INTO plinth_state_history (workspace, serial, document, saved_at, run_start) "
          "VALUES ($1, $2::bigint, $3, $4::timestamptz, $5::boolean) ON CONFLICT (workspace, serial) DO UPDATE SET "
          "document = EXCLUDED.document, saved_at = EXCLUDED.saved_at, run_start = EXCLUDED.run_start",
          {workspace_, std::to_string(entry.serial), to_json_text(doc), saved_at, entry.run_start ? "true" : "false"});
      if (!r) return Error::fatal("cannot write state " + source_ + ": " + r.error().message + " (nothing was written)");
    }
    auto r = exec(
        "INSERT INTO plinth_state (workspace, lineage, serial, document, updated_at) "
        "VALUES ($1, $2, $3::bigint, $4, now()) ON CONFLICT (workspace) DO UPDATE SET "
        "lineage = EXCLUDED.lineage, serial = EXCLUDED.serial, document = EXCLUDED.document, updated_at = now()",
        {workspace_, current.lineage, std::to_string(current.serial), to_json_text(current)});
    if (!r) return Error::fatal("cannot write state " + source_ + ": " + r.error().message + " (nothing was written)");
    if (auto d = exec("DELETE FROM plinth_state_changes WHERE workspace = $1", {workspace_}); !d)
      return Error::fatal("cannot write state " + source_ + ": " + d.error().message + " (nothing was written)");
    if (auto c = exec("COMMIT", {}); !c) return Error::fatal("cannot write state " + source_ + ": " + c.error().message);
    txn.done = true;
    return {};
  }

  Result<std::string> restore_locked(uint64_t serial) {
    if (auto st = connect(); !st) return st.error();
    auto kept = exec("SELECT min(serial), max(serial) FROM plinth_state_history WHERE workspace = $1", {workspace_});
    if (!kept) return kept.error();
    const bool none = PQgetisnull(kept->get(), 0, 0);
    const uint64_t newest = none ? 0 : std::strtoull(PQgetvalue(kept->get(), 0, 1), nullptr, 10);
    auto hist = exec("SELECT document FROM plinth_state_history WHERE workspace = $1 AND serial = $2::bigint",
                     {workspace_, std::to_string(serial)});
    if (!hist) return hist.error();
    if (PQntuples(hist->get()) == 0) {
      std::string range = none ? "none are kept yet" : "kept: " + value(*kept, 0, 0) + " to " + value(*kept, 0, 1);
      return Error{Error::Kind::NotFound,
                   "no saved version " + std::to_string(serial) + " of state " + source_ + " (" + range +
                       "); 'plinth state history' lists them",
                   0};
    }
    auto old = parse(value(*hist, 0, 0), source_ + " history serial " + std::to_string(serial));
    if (!old) return old.error();

    uint64_t next = newest + 1;
    auto cur = exec("SELECT document FROM plinth_state WHERE workspace = $1", {workspace_});
    if (!cur) return cur.error();
    bool damaged = false;
    if (PQntuples(cur->get()) > 0) {
      auto stored = parse(value(*cur, 0, 0), source_);
      if (!stored) {
        damaged = true;
      } else {
        if (stored->lineage != old->lineage)
          return Error{Error::Kind::Conflict,
                       "saved version " + std::to_string(serial) + " has lineage " + old->lineage + " but " +
                           source_ + " has lineage " + stored->lineage +
                           "; restoring it would mix two different states, so nothing was written",
                       0};
        next = std::max(next, stored->serial + 1);
      }
    }
    StateDocument doc = std::move(*old);
    doc.serial = next;
    std::string note;
    if (auto st = save_locked(doc, damaged, note); !st) return st.error();
    return "restored serial " + std::to_string(serial) + " of state " + source_ + " as serial " +
           std::to_string(next) + " (" + std::to_string(doc.resources.size()) + " resources)" + note;
  }

  std::string shown_, source_, conninfo_, workspace_ = "default", key_, key_high_, key_low_;
  Conn conn_;
  bool locked_ = false;
  bool run_started_ = false;  ///< this lock hold has saved (its run start is marked)
  bool appended_ = false;      ///< this lock hold stored changes (to fold)
  size_t changes_stored_ = 0;  ///< rows of plinth_state_changes the last load() read
  uint64_t bytes_written_ = 0;  ///< bytes written: documents, history rows, change records
};

}  // namespace

std::unique_ptr<Backend> open_postgres(const std::string& url) { return std::make_unique<PostgresBackend>(url); }

}  // namespace plinth::state
