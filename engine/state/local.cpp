// The local-file backend: PATH written atomically (engine/core/files.h),
// PATH.lock held with flock(2) so the kernel releases it when the holder
// dies, and every saved version kept in PATH.d/history/SERIAL.json. An
// apply's saves are appended to the change log PATH.d/changes.log, one
// checksummed line each, and folded into PATH when it ends (or by the next
// run, when it died first): an apply of N operations writes O(N) bytes.
//
// Symbolic links (docs/state.md): when PATH is a link it is resolved once,
// deliberately, and the state lives at the link's target: the target is
// read and replaced (the link stays a link), and the lock and history sit
// beside the target, so two links to one state share one lock. The lock
// file itself is never followed (O_NOFOLLOW): a link planted at PATH.lock
// would otherwise make plinth truncate the file it points to.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <thread>

#include "engine/core/files.h"
#include "engine/state/changes.h"
#include "engine/state/checks.h"
#include "engine/state/lock_error.h"
#include "engine/state/state.h"
#include "engine/core/wire.h"

namespace plinth::state {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono;

/// Opens the lock file without following a link at its path and checks it
/// is a regular file. -1 with errno set (ELOOP for a link, EINVAL for
/// another kind of file) on failure.
int open_lock_file(const std::string& lock_path, int flags) {
  int fd = ::open(lock_path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return -1;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

std::string lock_open_error(const std::string& lock_path, int err) {
  if (err == ELOOP)
    return "the lock file " + lock_path +
           " is a symbolic link; plinth never follows it (writing the lock through it would overwrite the file it "
           "points to). Remove the link and run again";
  if (err == EINVAL)
    return "the lock file " + lock_path + " is not a regular file; remove it and run again";
  return "cannot open the lock file " + lock_path + ": " + std::strerror(err) +
         "; check that its directory exists and is writable";
}

std::optional<LockHolder> read_lock_info(const std::string& lock_path) {
  int fd = open_lock_file(lock_path, O_RDONLY);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < 65536;) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  Json j = parse_json_or_discard(text);
  if (!j.is_object() || !j.contains("pid") || !j["pid"].is_number_integer()) return std::nullopt;
  LockHolder info;
  info.pid = j["pid"].get<long>();
  info.host = j.value("host", "");
  info.time = j.value("time", "");
  info.operation = j.value("operation", "");
  return info;
}

std::string holder_text(const std::optional<LockHolder>& info, const std::string& lock_path) {
  if (!info) return "another process (" + lock_path + " gives no details yet)";
  return holder_description(*info);
}

/// True when `fd` is still the file at `path` (not unlinked or replaced).
bool same_file(int fd, const std::string& path) {
  struct stat a {}, b {};
  return fstat(fd, &a) == 0 && stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

std::optional<uint64_t> serial_of(const fs::path& p) {
  if (p.extension() != ".json") return std::nullopt;
  std::string stem = p.stem().string();
  uint64_t v = 0;
  auto r = std::from_chars(stem.data(), stem.data() + stem.size(), v);
  if (stem.empty() || r.ec != std::errc{} || r.ptr != stem.data() + stem.size()) return std::nullopt;
  return v;
}

/// What identifies a version of a file without reading it: a replacement
/// (rename) changes the inode, a write the size or the time.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = -1;
  struct timespec mtime {};
  bool operator==(const FileId& o) const {
    return dev == o.dev && ino == o.ino && size == o.size && mtime.tv_sec == o.mtime.tv_sec &&
           mtime.tv_nsec == o.mtime.tv_nsec;
  }
};
FileId file_id(const std::string& path) {
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0) return {};
  return {sb.st_dev, sb.st_ino, sb.st_size, sb.st_mtim};
}
/// Makes the names in directory `dir` durable (best effort, as files.cpp does).
void sync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

/// The size of the file at `path`; 0 when there is none.
size_t size_of(const std::string& path) {
  struct stat sb {};
  return ::lstat(path.c_str(), &sb) == 0 ? static_cast<size_t>(sb.st_size) : 0;
}

class LocalBackend final : public Backend {
 public:
  explicit LocalBackend(std::string path) : given_(std::move(path)) {
    auto resolved = resolve_state_link(given_);
    if (resolved) {
      path_ = *resolved;
    } else {
      path_ = given_;
      resolve_error_ = resolved.error();
    }
    lock_path_ = path_ + ".lock";
    state_dir_ = path_ + ".d";
    history_dir_ = state_dir_ + "/history";
    log_path_ = state_dir_ + "/changes.log";
  }
  ~LocalBackend() override { unlock(); }

  std::string describe() const override {
    return "local file " + given_ + (path_ != given_ ? " (a link to " + path_ + ")" : "");
  }

  Status lock(const std::string& operation, milliseconds timeout) override {
    if (lock_fd_ >= 0) return {};
    if (resolve_error_) return *resolve_error_;
    const auto deadline = steady_clock::now() + timeout;
    for (;;) {
      int fd = open_lock_file(lock_path_, O_RDWR | O_CREAT);
      if (fd < 0) return Error::fatal(lock_open_error(lock_path_, errno));
      if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        // The holder before us unlinks the file before releasing it; if we
        // locked an unlinked file, start again on the new one.
        if (!same_file(fd, lock_path_)) {
          ::close(fd);
          continue;
        }
        Json info = {{"pid", static_cast<long>(getpid())},
                     {"host", this_host()},
                     {"time", utc_iso8601(std::time(nullptr))},
                     {"operation", operation}};
        std::string text = info.dump() + "\n";
        if (ftruncate(fd, 0) != 0 || pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
          int e = errno;
          ::unlink(lock_path_.c_str());
          ::close(fd);
          return Error::fatal("cannot write the lock file " + lock_path_ + ": " + std::strerror(e));
        }
        lock_fd_ = fd;
        run_started_ = false;  // a new run: its first save marks what it started from
        return {};
      }
      int e = errno;
      ::close(fd);
      if (e != EWOULDBLOCK && e != EINTR)
        return Error::fatal("cannot lock " + lock_path_ + ": " + std::strerror(e));
      auto now = steady_clock::now();
      if (now >= deadline) {
        // The holder writes its details just after it takes the lock; a
        // refusal in between would name nobody, so give it a moment.
        auto holder = read_lock_info(lock_path_);
        for (int i = 0; !holder && i < 50; ++i) {
          std::this_thread::sleep_for(milliseconds(10));
          holder = read_lock_info(lock_path_);
        }
        std::string who = holder_text(holder, lock_path_);
        return lock_held_error(path_, who, timeout);
      }
      std::this_thread::sleep_for(std::min<steady_clock::duration>(milliseconds(100), deadline - now));
    }
  }

  void unlock() override {
    if (lock_fd_ < 0) return;
    // A run that appended changes folds them before it lets go; if that
    // fails (a full disk) the change log stays and is read and folded later.
    if (appended_) (void)fold_log_locked();
    // Unlink first (only if the file is still ours: 'state unlock --force'
    // may have replaced it), so a waiter never locks a file nobody will clean.
    if (same_file(lock_fd_, lock_path_)) ::unlink(lock_path_.c_str());
    flock(lock_fd_, LOCK_UN);
    ::close(lock_fd_);
    lock_fd_ = -1;
  }

  Result<std::optional<StateDocument>> load() override {
    if (resolve_error_) return *resolve_error_;
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) {
      if (errno == ENOENT) return std::optional<StateDocument>{};
      return Error::fatal("cannot access state file " + path_ + ": " + std::strerror(errno));
    }
    if (S_ISDIR(st.st_mode))
      return Error::invalid("the state path " + path_ +
                            " is a directory, not a state file; pass the file's path with --state (for example " +
                            (fs::path(path_) / "plinth.state.json").string() + ")");
    if (!S_ISREG(st.st_mode))
      return Error::invalid("the state path " + path_ +
                            " is not a regular file (a device, FIFO or socket); pass a state file's path with --state");
    const FileId id = file_id(path_);
    auto text = read_file(path_);
    if (!text) return text.error();
    auto doc = parse(*text, path_);
    if (!doc) return doc.error();
    auto log = replay_log(*doc);
    if (!log) return log.error();
    if (auto st2 = check_serial_room(doc->serial, path_); !st2) return st2.error();
    remember(std::move(*text), id, *doc, *log);
    return std::optional<StateDocument>{std::move(*doc)};
  }

  bool stores_changes() const override { return true; }

  Status save_changes(const StateChanges& changes) override {
    bool took_lock = lock_fd_ < 0;
    if (took_lock) {
      if (auto st = lock("plinth (saving state)", milliseconds(0)); !st) return st;
    }
    Status st = save_changes_locked(changes);
    if (took_lock) {
      if (st) st = fold_log_locked();
      unlock();
    }
    return st;
  }

  Status settle() override {
    if (lock_fd_ < 0 || !appended_) return {};
    return fold_log_locked();
  }

  uint64_t bytes_written() const override { return bytes_written_; }

  Status save(const StateDocument& doc) override {
    bool took_lock = lock_fd_ < 0;
    if (took_lock) {
      if (auto st = lock("plinth (saving state)", milliseconds(0)); !st) return st;
    }
    Status st = save_locked(doc);
    if (took_lock) unlock();
    return st;
  }

  Result<std::vector<HistoryEntry>> history() override {
    std::vector<HistoryEntry> out;
    std::error_code ec;
    if (!fs::is_directory(history_dir_, ec)) return out;
    for (const auto& [serial, file] : history_files()) {
      HistoryEntry e;
      e.serial = serial;
      e.run_start = is_run_start(serial);
      struct stat sb {};
      if (stat(file.c_str(), &sb) == 0) e.saved_at = utc_iso8601(sb.st_mtim.tv_sec);
      auto text = read_file(file.string());
      auto doc = text ? parse(*text, file.string()) : Result<StateDocument>(text.error());
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
    bool took_lock = lock_fd_ < 0;
    if (took_lock) {
      if (auto st = lock("plinth state restore", milliseconds(0)); !st) return st.error();
    }
    auto r = restore_locked(serial);
    if (took_lock) unlock();
    return r;
  }

  Result<StateDocument> saved_version(uint64_t serial) override {
    const std::string file = history_file(serial);
    std::error_code ec;
    if (!fs::exists(file, ec))
      return Error{Error::Kind::NotFound, "no saved version " + std::to_string(serial) + " of state " + path_, 0};
    auto text = read_file(file);
    if (!text) return text.error();
    return parse(*text, file);
  }

  Status adopt(const std::vector<std::pair<HistoryEntry, StateDocument>>& versions,
               const StateDocument& current) override {
    bool took_lock = lock_fd_ < 0;
    if (took_lock) {
      if (auto st = lock("plinth state migrate", milliseconds(0)); !st) return st;
    }
    Status st = adopt_locked(versions, current);
    if (took_lock) unlock();
    return st;
  }

  Status rewrite_version(const StateDocument& doc) override {
    bool took_lock = lock_fd_ < 0;
    if (took_lock) {
      if (auto st = lock("plinth state rekey", milliseconds(0)); !st) return st;
    }
    Status st = rewrite_version_locked(doc);
    if (took_lock) unlock();
    return st;
  }

  Result<std::string> break_lock(bool force) override {
    if (lock_fd_ >= 0) {
      unlock();
      return "released this process's lock on state " + path_;
    }
    int fd = open_lock_file(lock_path_, O_RDWR);
    if (fd < 0) {
      if (errno == ENOENT) return "state " + path_ + " is not locked; nothing to do";
      return Error::fatal(lock_open_error(lock_path_, errno));
    }
    auto info = read_lock_info(lock_path_);
    std::string who = holder_text(info, lock_path_);
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      // Nobody holds it: the holder died and the kernel released its lock.
      if (same_file(fd, lock_path_)) ::unlink(lock_path_.c_str());
      ::close(fd);
      return "removed the stale lock of " + who + " on state " + path_ + ": that process is gone";
    }
    ::close(fd);
    const bool here = info && info->host == this_host();
    if (here && kill(static_cast<pid_t>(info->pid), 0) != 0 && errno == ESRCH) {
      // The holder is gone but a process it started still has the lock file
      // open; nobody will write through that lock.
      ::unlink(lock_path_.c_str());
      return "removed the lock of " + who + " on state " + path_ +
             ": that process is not running (a process it started still has the lock file open)";
    }
    if (force) {
      ::unlink(lock_path_.c_str());
      return "removed the lock of " + who + " on state " + path_ +
             " (forced); if that process is still running it may still write the state";
    }
    if (here)
      return Error{Error::Kind::Conflict,
                   "state " + path_ + " is locked by " + who +
                       ", and that process is still running; wait for it to finish, or pass --force to remove the "
                       "lock anyway (only if you are sure it is not writing state)",
                   0};
    return Error{Error::Kind::Conflict,
                 "state " + path_ + " is locked by " + who + ", on another host; plinth cannot tell from " +
                     this_host() +
                     " whether it is still running. Pass --force to remove the lock if you are sure it is gone",
                 0};
  }

 private:
  /// History files by serial, oldest first.
  std::vector<std::pair<uint64_t, fs::path>> history_files() const {
    std::vector<std::pair<uint64_t, fs::path>> files;
    std::error_code ec;
    for (fs::directory_iterator it(history_dir_, ec), end; !ec && it != end; it.increment(ec))
      if (auto s = serial_of(it->path())) files.emplace_back(*s, it->path());
    std::sort(files.begin(), files.end());
    return files;
  }

  Status rewrite_version_locked(const StateDocument& doc) {
    const std::string file = history_file(doc.serial);
    struct stat sb {};
    if (::lstat(file.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode))
      return Error{Error::Kind::NotFound, "no saved version " + std::to_string(doc.serial) + " of state " + path_, 0};
    auto text = read_file(file);
    if (!text) return text.error();
    auto old = parse(*text, file);
    if (old && old->lineage != doc.lineage)
      return Error{Error::Kind::Conflict,
                   "saved version " + std::to_string(doc.serial) + " of state " + path_ + " holds lineage " +
                       old->lineage + ", not " + doc.lineage + "; it was not rewritten",
                   0};
    if (auto st = write_file_atomic(file, to_json_text(doc), 0600); !st)
      return Error::fatal("cannot write state " + path_ + ": " + st.error().message);
    struct timespec times[2] = {sb.st_mtim, sb.st_mtim};  // saved_at is the file's time
    (void)::utimensat(AT_FDCWD, file.c_str(), times, 0);
    return {};
  }
  std::string history_file(uint64_t serial) const { return history_dir_ + "/" + std::to_string(serial) + ".json"; }
  /// The marker of a run start (state.h, kHistoryKeep): history/SERIAL.run-start.
  std::string run_start_marker(uint64_t serial) const {
    return history_dir_ + "/" + std::to_string(serial) + ".run-start";
  }
  bool is_run_start(uint64_t serial) const {
    std::error_code ec;
    return fs::exists(run_start_marker(serial), ec);
  }

  Status save_locked(const StateDocument& doc) {
    // A change log an apply left (it died before folding) is folded first, so
    // that the version this save starts from is a document the history can
    // keep as it is.
    if (size_of(log_path_) > 0) {
      if (auto st = fold_log_locked(); !st) return st;
    }
    // What the file holds now: known without parsing it when it still has the
    // bytes this backend last read or wrote, so a journal's save after save
    // costs a read and a comparison; anything else is parsed.
    std::optional<Stored> known = unchanged_since_seen();
    if (!known) {
      auto stored = load();
      if (!stored) return Error{stored.error().kind, "will not overwrite the state: " + stored.error().message, 0};
      if (*stored) known = Stored{(*stored)->lineage, (*stored)->serial};
    }
    std::optional<uint64_t> run_start;  // the stored version this run started from, on its first save
    if (known) {
      const Stored& cur = *known;
      if (cur.lineage != doc.lineage)
        return Error{Error::Kind::Conflict,
                     "state was changed by another run: " + path_ + " now has lineage " + cur.lineage +
                         " but this run's state has lineage " + doc.lineage +
                         "; nothing was written. Check --state points at the right file, then plan again",
                     0};
      if (doc.serial <= cur.serial)
        return Error{Error::Kind::Conflict,
                     "state was changed by another run: " + path_ + " is at serial " + std::to_string(cur.serial) +
                         " but this run tried to write serial " + std::to_string(doc.serial) +
                         "; nothing was written. Plan again against the current state",
                     0};
      if (!run_started_) run_start = cur.serial;
    }
    std::string text = to_json_text(doc, PLINTH_VERSION);

    if (auto st = make_dirs(); !st) return st;
    std::error_code ec;
    // Keep what this run started from for good (state.h, kHistoryKeep). A
    // state written before history existed gets its history copy now.
    if (run_start) {
      if (!fs::exists(history_file(*run_start), ec)) {
        if (auto old_text = read_file(path_); old_text) (void)write_file_atomic(history_file(*run_start), *old_text, 0600);
      }
      if (auto st = write_file_atomic(run_start_marker(*run_start), "", 0600); !st)
        return Error::fatal("cannot save state " + path_ + ": " + st.error().message);
    }
    // The history copy first: if the state file cannot be written, the
    // history must not claim a version that never became current.
    std::string hist = history_file(doc.serial);
    if (auto st = write_file_atomic(hist, text, 0600); !st)
      return Error::fatal("cannot save state " + path_ + ": " + st.error().message);
    if (auto st = write_file_atomic(path_, text, 0600); !st) {
      ::unlink(hist.c_str());
      return Error::fatal("cannot save state " + path_ + ": " + st.error().message);
    }
    bytes_written_ += 2 * text.size();
    // The document holds what the change log held (its serial is above the
    // log's): the log goes. Should that be lost in a crash, the log's records
    // are at or below the document's serial and are ignored.
    ::unlink(log_path_.c_str());
    appended_ = false;
    remember(std::move(text), file_id(path_), doc, 0);
    run_started_ = true;
    prune_history();
    return {};
  }

  /// Journal saves beyond the newest kHistoryKeep go; run starts stay.
  void prune_history() {
    std::error_code ec;
    auto files = history_files();
    for (size_t i = 0; i + kHistoryKeep < files.size(); ++i)
      if (!is_run_start(files[i].first)) fs::remove(files[i].second, ec);
  }

  /// Creates PATH.d and its history directory (mode 0700).
  Status make_dirs() {
    std::error_code ec;
    for (const std::string& dir : {state_dir_, history_dir_}) {
      fs::create_directory(dir, ec);
      if (ec)
        return Error::fatal("cannot save state " + path_ + ": cannot create " + dir + ": " + ec.message() +
                            " (the stored state is unchanged)");
      fs::permissions(dir, fs::perms::owner_all, ec);
    }
    return {};
  }

  /// Applies the change log's records to `doc`, the state file's document:
  /// those that continue it, in order. Records at or below its serial, or of
  /// another lineage, were folded already (a crash between writing PATH and
  /// removing the log) and are skipped; a last line without its newline or
  /// its checksum is a save that never completed (the apply died writing it)
  /// and is ignored. Any other damage is an error: the log is left as it is.
  /// Returns the size of the log (0 when there is none).
  Result<size_t> replay_log(StateDocument& doc) const {
    struct stat sb {};
    if (::lstat(log_path_.c_str(), &sb) != 0) {
      if (errno == ENOENT) return size_t{0};
      return Error::fatal("cannot access the state's change log " + log_path_ + ": " + std::strerror(errno));
    }
    if (!S_ISREG(sb.st_mode))
      return Error::invalid("the state's change log " + log_path_ +
                            " is not a regular file; plinth never writes one like it. Move it aside and run again");
    auto text = read_file(log_path_);
    if (!text) return text.error();
    ChangeChain chain(doc);
    size_t pos = 0;
    for (size_t line = 1; pos < text->size(); ++line) {
      const size_t nl = text->find('\n', pos);
      if (nl == std::string::npos) break;  // torn: that save never returned
      auto rec = parse_change_line(std::string_view(*text).substr(pos, nl - pos));
      const bool last = nl + 1 == text->size();
      const std::string where = log_path_ + ":" + std::to_string(line);
      if (!rec) {
        if (last) break;  // torn in a crash
        return Error::invalid("the state's change log " + where + " is damaged (" + rec.error().message +
                              "); plinth left it and " + path_ +
                              " untouched. Moving the log aside makes the state serial " +
                              std::to_string(doc.serial) +
                              " again, without the operations recorded after it: refresh and plan then show them");
      }
      pos = nl + 1;
      if (auto st = chain.add(std::move(*rec)); !st)
        return Error::invalid("the state's change log " + where + " " + st.error().message +
                              "; plinth left both untouched (another writer changed " + path_ +
                              " while an apply was appending to it?). Move the log aside to use " + path_ +
                              " as it is");
    }
    chain.apply_to(doc);
    return text->size();
  }

  Status save_changes_locked(const StateChanges& c) {
    // What is stored now: known without reading when neither the state file
    // nor the log changed since this backend last read or wrote them.
    if (!seen_ || file_id(path_) != seen_->id || size_of(log_path_) != seen_->log_size) {
      auto stored = load();
      if (!stored) return Error{stored.error().kind, "will not overwrite the state: " + stored.error().message, 0};
      if (!*stored) {
        if (c.from_serial != 0)
          return Error{Error::Kind::Conflict,
                       "state was changed by another run: " + path_ +
                           " no longer exists; nothing was written. Plan again against the current state",
                       0};
        // A new state: its first save is a whole document (it has no other
        // header yet); the run's next saves append to it.
        StateDocument first;
        first.lineage = c.lineage;
        apply_changes(first, c);
        return save_locked(first);
      }
    }
    if (auto st = check_continues(path_, "file", seen_->stored.lineage, seen_->stored.serial, c); !st) return st;
    if (auto st = make_dirs(); !st) return st;
    if (!run_started_) {
      // A log an earlier run left (it died before folding) is folded first,
      // so this run's log starts from a document; then what this run started
      // from is kept for good, as a whole save would (kHistoryKeep).
      if (seen_->log_size > 0) {
        if (auto st = fold_log_locked(); !st) return st;
      }
      const uint64_t start = seen_->stored.serial;
      std::error_code ec;
      if (!fs::exists(history_file(start), ec)) {
        if (auto st = write_file_atomic(history_file(start), seen_->text, 0600); !st)
          return Error::fatal("cannot save state " + path_ + ": " + st.error().message);
        bytes_written_ += seen_->text.size();
      }
      if (auto st = write_file_atomic(run_start_marker(start), "", 0600); !st)
        return Error::fatal("cannot save state " + path_ + ": " + st.error().message);
      run_started_ = true;
    }
    const std::string line = change_line(c);
    int fd = ::open(log_path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
      return Error::fatal("cannot save state " + path_ + ": cannot open its change log " + log_path_ + ": " +
                          std::strerror(errno) + " (the stored state is unchanged)");
    const size_t before = seen_->log_size;
    size_t done = 0;
    int err = 0;
    while (done < line.size()) {
      ssize_t n = ::write(fd, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        err = n < 0 ? errno : EIO;
        break;
      }
      done += static_cast<size_t>(n);
    }
    if (!err && ::fdatasync(fd) != 0) err = errno;
    if (err) {
      // Take the partial record back; were that to fail too, a record
      // without its newline or checksum is ignored when read.
      (void)::ftruncate(fd, static_cast<off_t>(before));
      ::close(fd);
      return Error::fatal("cannot save state " + path_ + ": cannot append to its change log " + log_path_ + ": " +
                          std::strerror(err) + " (the stored state is unchanged)");
    }
    ::close(fd);
    if (before == 0) sync_directory(state_dir_);  // the log's name is durable too
    bytes_written_ += line.size();
    seen_->stored.serial = c.serial;
    seen_->log_size = before + line.size();
    appended_ = true;
    return {};
  }

  /// Writes the document with the change log applied to PATH (its history
  /// copy a hard link to it), then removes the log.
  Status fold_log_locked() {
    auto stored = load();
    if (!stored) return Error{stored.error().kind, "will not overwrite the state: " + stored.error().message, 0};
    if (!*stored || seen_->log_size == 0) {
      appended_ = false;
      return {};
    }
    const StateDocument& doc = **stored;
    std::string text = to_json_text(doc, PLINTH_VERSION);
    if (auto st = make_dirs(); !st) return st;
    if (auto st = write_file_atomic(path_, text, 0600); !st)
      return Error::fatal("cannot save state " + path_ + ": " + st.error().message +
                          " (its change log " + log_path_ + " keeps the changes; the next run folds them)");
    bytes_written_ += text.size();
    const std::string hist = history_file(doc.serial);
    ::unlink(hist.c_str());
    if (::link(path_.c_str(), hist.c_str()) != 0) {  // another file system, or no links: a copy
      if (write_file_atomic(hist, text, 0600)) bytes_written_ += text.size();
    }
    ::unlink(log_path_.c_str());
    appended_ = false;
    remember(std::move(text), file_id(path_), doc, 0);
    prune_history();
    return {};
  }

  Status adopt_locked(const std::vector<std::pair<HistoryEntry, StateDocument>>& versions,
                      const StateDocument& current) {
    auto stored = load();
    if (!stored) return Error{stored.error().kind, "will not overwrite the state: " + stored.error().message, 0};
    if (*stored && (*stored)->lineage != current.lineage)
      return Error{Error::Kind::Conflict,
                   "the target state " + path_ + " holds another state (lineage " + (*stored)->lineage +
                       ", not " + current.lineage + "); nothing was written. Pick an empty target, or remove that "
                       "state first if it is no longer wanted",
                   0};
    if (*stored && (*stored)->serial > current.serial)
      return Error{Error::Kind::Conflict,
                   "the target state " + path_ + " is at serial " + std::to_string((*stored)->serial) +
                       ", newer than the source's " + std::to_string(current.serial) + "; nothing was written",
                   0};
    std::error_code ec;
    for (const std::string& dir : {state_dir_, history_dir_}) {
      fs::create_directory(dir, ec);
      if (ec) return Error::fatal("cannot write state " + path_ + ": cannot create " + dir + ": " + ec.message());
      fs::permissions(dir, fs::perms::owner_all, ec);
    }
    for (const auto& [entry, doc] : versions) {
      const std::string file = history_file(entry.serial);
      if (auto st = write_file_atomic(file, to_json_text(doc), 0600); !st)
        return Error::fatal("cannot write state " + path_ + ": " + st.error().message);
      std::tm tm{};
      if (strptime(entry.saved_at.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) {
        struct timespec times[2] = {{timegm(&tm), 0}, {timegm(&tm), 0}};
        (void)::utimensat(AT_FDCWD, file.c_str(), times, 0);
      }
      if (entry.run_start) {
        if (auto st = write_file_atomic(run_start_marker(entry.serial), "", 0600); !st)
          return Error::fatal("cannot write state " + path_ + ": " + st.error().message);
      }
    }
    if (auto st = write_file_atomic(path_, to_json_text(current), 0600); !st)
      return Error::fatal("cannot write state " + path_ + ": " + st.error().message);
    return {};
  }

  Result<std::string> restore_locked(uint64_t serial) {
    auto files = history_files();
    auto it = std::find_if(files.begin(), files.end(), [&](const auto& f) { return f.first == serial; });
    if (it == files.end()) {
      std::string kept = files.empty() ? "none are kept yet"
                                       : "kept: " + std::to_string(files.front().first) + " to " +
                                             std::to_string(files.back().first);
      return Error{Error::Kind::NotFound,
                   "no saved version " + std::to_string(serial) + " of state " + path_ + " (" + kept +
                       "); 'plinth state history' lists them",
                   0};
    }
    auto text = read_file(it->second.string());
    if (!text) return text.error();
    auto old = parse(*text, it->second.string());
    if (!old) return old.error();

    if (auto room = check_serial_room(files.back().first, history_file(files.back().first)); !room) return room.error();
    uint64_t next = files.back().first + 1;
    std::string note;
    auto cur = load();
    if (!cur) {
      // Keep the damaged file for inspection; never delete it.
      std::string aside = path_ + ".damaged-" + utc_iso8601(std::time(nullptr));
      if (std::rename(path_.c_str(), aside.c_str()) != 0)
        return Error::fatal("cannot set the damaged state " + path_ + " aside as " + aside + ": " +
                            std::strerror(errno));
      note = "; the damaged file was kept as " + aside;
    } else if (*cur) {
      if ((*cur)->lineage != old->lineage)
        return Error{Error::Kind::Conflict,
                     "saved version " + std::to_string(serial) + " has lineage " + old->lineage + " but " + path_ +
                         " has lineage " + (*cur)->lineage +
                         "; restoring it would mix two different states, so nothing was written",
                     0};
      next = std::max(next, (*cur)->serial + 1);
    }
    StateDocument doc = std::move(*old);
    doc.serial = next;
    if (auto st = save_locked(doc); !st) return st.error();
    return "restored serial " + std::to_string(serial) + " of state " + path_ + " as serial " +
           std::to_string(next) + " (" + std::to_string(doc.resources.size()) + " resources)" + note;
  }

  std::string given_;  ///< the path as given (--state, PLINTH_STATE or the default)
  std::string path_;   ///< where the state is: given_, or the target when given_ is a link
  std::string lock_path_, state_dir_, history_dir_, log_path_;
  std::optional<Error> resolve_error_;  ///< given_ is a link that cannot be resolved
  int lock_fd_ = -1;
  bool run_started_ = false;  ///< this lock hold has saved (its run start is marked)
  bool appended_ = false;     ///< this lock hold appended to the change log (to fold)
  uint64_t bytes_written_ = 0;

  /// The state file as this backend last read or wrote it: its bytes and
  /// what they hold. Comparing bytes is far cheaper than parsing them again,
  /// and no writer (another run, an editor, a restore) goes unnoticed.
  struct Stored {
    std::string lineage;
    uint64_t serial = 0;
  };
  struct Seen {
    std::string text;  ///< the state file's bytes
    FileId id;         ///< the state file's identity when they were read or written
    Stored stored;     ///< what it holds with the change log applied
    size_t log_size = 0;
  };
  std::optional<Seen> seen_;

  void remember(std::string text, FileId id, const StateDocument& doc, size_t log_size) {
    seen_ = Seen{std::move(text), id, {doc.lineage, doc.serial}, log_size};
  }
  std::optional<Stored> unchanged_since_seen() const {
    struct stat sb {};
    if (!seen_ || ::stat(path_.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode) ||
        static_cast<size_t>(sb.st_size) != seen_->text.size() || size_of(log_path_) != seen_->log_size)
      return std::nullopt;
    auto text = read_file(path_);
    if (!text || *text != seen_->text) return std::nullopt;
    return seen_->stored;
  }
};

}  // namespace

std::unique_ptr<Backend> open_local(const std::string& path) { return std::make_unique<LocalBackend>(path); }

Result<LockGuard> LockGuard::acquire(Backend& backend, const std::string& operation, milliseconds timeout) {
  if (auto st = backend.lock(operation, timeout); !st) return st.error();
  return LockGuard(&backend);
}

}  // namespace plinth::state
