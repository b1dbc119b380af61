#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/duration.h"
#include "engine/core/result.h"
#include "engine/provider/resource.h"

namespace plinth::state {

/// The state document: what Plinth last saw of every managed resource.
/// `lineage` is fixed at creation; `serial` grows with every write.
struct StateDocument {
  int format_version = 1;
  std::string lineage;
  uint64_t serial = 0;
  std::string plinth_version;
  std::vector<Resource> resources;  ///< sorted by address
  /// Objects a create-before-destroy replace superseded whose removal has not
  /// completed yet (docs/apply.md): each keeps the address it had; the next
  /// plan deletes them. Written only when there are some.
  std::vector<Resource> deposed;
  /// What the blueprint's `outputs:` gave at the last apply (engine/run/outputs.h):
  /// NAME -> {description, sensitive, value}. Written only when there are some.
  Json outputs = Json::object();
  /// Whole-document encryption (engine/state/encryption.h): the resources,
  /// AES-256-GCM sealed, and `resources` empty. "" for a document in clear.
  std::string sealed;

  const Resource* find(const std::string& address) const;
  bool operator==(const StateDocument&) const = default;
};

/// The newest format_version this build reads and writes: 2 is a document
/// with encrypted values or sealed resources (engine/state/encryption.h), 1
/// one in clear (older plinth cannot read 2, so it never takes an encrypted
/// state for an empty one).
inline constexpr int kFormatVersion = 2;

}  // namespace plinth::state

#include <chrono>
#include <memory>
#include <optional>

namespace plinth::state {

/// A fresh, empty document with a new random lineage (UUID v4).
StateDocument new_document();

/// The JSON text of a state document (docs/state.md documents the format).
/// Resources are written sorted by address, with a checksum over the rest.
std::string to_json_text(const StateDocument& doc);
/// The same, recording `plinth_version` as the version that wrote it.
std::string to_json_text(const StateDocument& doc, const std::string& plinth_version);

/// Parses a state document. A corrupt or truncated file is an error that
/// names `source` and says not to overwrite it; it is never "repaired".
/// Refused: invalid JSON (with line:column), truncation, a format_version
/// newer than kFormatVersion, a checksum mismatch, duplicate addresses and
/// missing or mistyped fields.
/// The text is read with simdjson (engine/core/json_reader.h); a file of
/// 256 KiB or more in pieces of about 64 KiB (detail::resources_splits), on
/// two threads from 4 MiB, and with 16,384 resources or more its checksum
/// is computed on one while the other takes the resources out of the parsed
/// document.
Result<StateDocument> parse(const std::string& text, const std::string& source);

namespace detail {
/// Where parse cuts a large document into pieces: the offsets of commas
/// between two elements of its top-level "resources" array, the first at or
/// after `every` bytes of text and each next one at least `every` bytes after
/// the one before (if the array ends sooner, its last comma alone); empty
/// (one piece) unless the text is one object whose top-level keys are
/// distinct and unescaped and whose resources array has two elements or
/// more. The pieces parsed, the first closed with "]}", the middle ones in
/// brackets and the last opened with {"resources":[, give the whole's value.
std::vector<size_t> resources_splits(std::string_view text, size_t every);
}  // namespace detail

/// One saved version of the state, as kept by a backend's history.
struct HistoryEntry {
  uint64_t serial = 0;
  std::string lineage;
  std::string saved_at;  ///< UTC ISO 8601, "2026-12-02T13:04:05Z"
  size_t resources = 0;
  bool damaged = false;  ///< the saved file no longer parses; it cannot be restored
  bool run_start = false;  ///< the state before a run changed it: kept for good (see kHistoryKeep)
  bool operator==(const HistoryEntry&) const = default;
};

/// What one save of an apply changes in the version before it: the
/// resources recorded (added or replaced, whole), the addresses removed, and
/// the deposed objects added or dropped (told apart by address and computed
/// values, as in the document). Header fields other than the serial do not
/// change.
struct StateChanges {
  std::string lineage;
  uint64_t from_serial = 0;  ///< the version these changes apply to
  uint64_t serial = 0;       ///< the version they make (> from_serial)
  std::vector<Resource> put;
  std::vector<std::string> removed;
  std::vector<Resource> deposed_added;
  std::vector<Resource> deposed_dropped;
  bool operator==(const StateChanges&) const = default;
};

/// Applies `changes`, in order, to `doc`, moving their resources in (its
/// serial becomes the last one's; resources stay sorted by address, deposed
/// objects in the order a whole save writes them; a dropped deposed object
/// that is not there is ignored). Lineages and serials are the caller's to
/// check.
void apply_changes(StateDocument& doc, std::span<StateChanges> changes);
/// The same for one change.
void apply_changes(StateDocument& doc, StateChanges change);

/// Where state lives. A backend is locked for the whole of a plan or apply.
class Backend {
 public:
  virtual ~Backend() = default;
  /// "local file plinth.state.json" — used in messages.
  virtual std::string describe() const = 0;
  /// Takes the exclusive lock, waiting up to `timeout` (0: try once).
  /// `operation` is shown to others waiting, e.g. "plinth apply". When
  /// another process holds it the error says who: "locked by PID 1234 on
  /// host-a since 2026-12-02T13:04:05Z (plinth apply)". Taking a lock this
  /// backend already holds succeeds.
  virtual Status lock(const std::string& operation, std::chrono::milliseconds timeout) = 0;
  /// Releases the lock if this backend holds it; otherwise does nothing.
  virtual void unlock() = 0;
  /// The stored document, or nullopt when there is no state yet.
  virtual Result<std::optional<StateDocument>> load() = 0;
  /// Stores `doc` atomically; on failure the stored state is unchanged.
  /// `doc.serial` must be greater than the stored serial and `doc.lineage`
  /// equal to the stored lineage (callers write `doc.serial = loaded.serial + 1`);
  /// otherwise the error says the state was changed by another run. A stored
  /// file that does not parse is never overwritten. Takes the lock for the
  /// write when it is not already held. Every saved version is also kept in
  /// the history; see kHistoryKeep for how long.
  virtual Status save(const StateDocument& doc) = 0;
  /// True when this backend stores an apply's saves as changes
  /// (save_changes), so that a save costs what changed, not the whole state.
  virtual bool stores_changes() const { return false; }
  /// Only when stores_changes(): stores version `changes.serial`, which is
  /// the stored version `changes.from_serial` with `changes` applied, with the
  /// same guarantees as save() (checked against the stored lineage and
  /// serial, durable when it returns, the stored state unchanged on failure).
  /// The local file appends them to its change log (docs/state.md).
  virtual Status save_changes(const StateChanges& changes);
  /// Folds stored changes into the state document (the local file writes
  /// PATH once and removes its change log). Called at the end of an apply;
  /// a run that dies before it leaves the changes to be read and folded by
  /// the next one. Nothing to do for a backend that stores no changes.
  virtual Status settle() { return {}; }
  /// Bytes of state this backend has written since it was opened (documents,
  /// history copies, change records): what an apply's saves cost.
  virtual uint64_t bytes_written() const { return 0; }
  /// Saved versions, oldest first.
  virtual Result<std::vector<HistoryEntry>> history() = 0;
  /// Saves history version `serial` again as a NEW serial (greater than any
  /// stored or kept one) with the same lineage. When the stored state is
  /// damaged it is first set aside (never deleted). Returns what was done.
  virtual Result<std::string> restore(uint64_t serial) = 0;
  /// Removes a lock left by a process that is gone (its flock is free, or its
  /// PID is not running on this host). A live holder is only removed with
  /// `force`. Returns what was done, for the user.
  virtual Result<std::string> break_lock(bool force) = 0;
  /// Kept version `serial` exactly as stored (encrypted values stay
  /// encrypted); NotFound when it is not kept.
  virtual Result<StateDocument> saved_version(uint64_t serial);
  /// Copies another state in (`plinth state migrate`): `versions` are its
  /// kept versions, oldest first, with their saved_at and run_start, and
  /// `current` its document, all as stored. Refused (Conflict, nothing
  /// written) when this state holds another lineage or a serial above
  /// current's; the same lineage at or below it is brought up to date, so
  /// an interrupted migration can be run again. Takes the lock for the write
  /// when it is not already held.
  virtual Status adopt(const std::vector<std::pair<HistoryEntry, StateDocument>>& versions,
                       const StateDocument& current);
  /// Replaces kept version `doc.serial` with `doc`, as stored (`plinth state
  /// rekey` re-encrypts the history with it), keeping its saved_at and run
  /// start. NotFound when that version is not kept; Conflict when it holds
  /// another lineage. Takes the lock for the write when it is not already held.
  virtual Status rewrite_version(const StateDocument& doc);
};

/// History retention, per run. A run is everything saved while one lock is
/// held (one apply journals after every operation; a refresh, restore,
/// `state rm`, `state mv` or `import` saves once). The first save of a run
/// marks the version stored before it as a run start, and run starts are
/// kept for good: the state before every run stays restorable however many
/// operations later runs journal. Besides them the newest kHistoryKeep
/// versions are kept; older journal saves are removed.
inline constexpr size_t kHistoryKeep = 20;

/// The local-file backend: PATH, with PATH.lock beside it and the history in
/// PATH.d/history/SERIAL.json. Files are written with mode 0600.
std::unique_ptr<Backend> open_local(const std::string& path);

/// The PostgreSQL backend for `url` ("postgres://USER@HOST:PORT/DB?workspace=NAME",
/// any libpq URI parameter allowed besides `workspace`, default "default").
/// Connects on first use and creates its tables when missing; the lock is a
/// PostgreSQL advisory lock, released by the server when the holder's
/// connection drops. docs/state.md describes the tables.
std::unique_ptr<Backend> open_postgres(const std::string& url);

/// True when `location` names a PostgreSQL state ("postgres://", "postgresql://").
bool is_postgres_location(const std::string& location);

/// The backend for a --state/PLINTH_STATE location: PostgreSQL for a
/// postgres:// or postgresql:// URL, else the local file at that path.
std::unique_ptr<Backend> open_backend(const std::string& location);

/// `location` as it may be shown to users: a URL's password (user:PASSWORD@,
/// password=...) replaced by "***". A file path is returned unchanged.
std::string redact_location(const std::string& location);

/// Holds a backend's lock for a scope (plan, apply, state restore).
class LockGuard {
 public:
  /// Locks `backend` (see Backend::lock); the guard unlocks when it dies.
  static Result<LockGuard> acquire(Backend& backend, const std::string& operation,
                                   std::chrono::milliseconds timeout);
  LockGuard(LockGuard&& o) noexcept : backend_(o.backend_) { o.backend_ = nullptr; }
  LockGuard& operator=(LockGuard&&) = delete;
  LockGuard(const LockGuard&) = delete;
  ~LockGuard() {
    if (backend_) backend_->unlock();
  }

 private:
  explicit LockGuard(Backend* b) : backend_(b) {}
  Backend* backend_;
};

/// The state file for blueprints `blueprint_paths`: plinth.state.json beside
/// the first one (inside it when it is a directory); "plinth.state.json" in
/// the current directory when there is none.
std::string default_state_path(const std::vector<std::string>& blueprint_paths);

/// The state file a command uses: `flag` (--state) when given, else the
/// PLINTH_STATE environment variable, else default_state_path(blueprint_paths).
std::string resolve_state_path(const std::optional<std::string>& flag,
                               const std::vector<std::string>& blueprint_paths = {});

/// The --lock-timeout syntax (engine/core/duration.h).
using plinth::parse_duration;
using plinth::format_duration;

}  // namespace plinth::state
