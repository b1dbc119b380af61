#include "engine/state/journal.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "engine/core/hash.h"

namespace plinth::state {

namespace fs = std::filesystem;

namespace {

std::string journal_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
  };
  if (std::string d = env("PLINTH_JOURNAL_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_STATE_HOME"); !d.empty()) return d + "/plinth/journal";
  if (std::string d = env("HOME"); !d.empty()) return d + "/.local/state/plinth/journal";
  return "/nonexistent/plinth-journal (set HOME or PLINTH_JOURNAL_DIR)";
}

}  // namespace

std::string journal_path(const std::string& location) {
  return journal_dir() + "/" + sha256_hex(redact_location(location)).substr(0, 16) + ".state.json";
}

Status check_journal_owner(const std::string& path) {
  const std::string dir = fs::path(path).parent_path().string();
  const uid_t me = ::geteuid();
  struct stat st {};
  const std::string fix = "; a journal is read only from a directory of your own (PLINTH_JOURNAL_DIR, docs/state.md)";
  if (::lstat(path.c_str(), &st) != 0)
    return Error::invalid("cannot read the local journal " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return Error::invalid("refusing the local journal " + path + ": it is not a regular file (a symbolic link?)" + fix);
  if (st.st_uid != me)
    return Error::invalid("refusing the local journal " + path + ": it belongs to user id " +
                          std::to_string(st.st_uid) + ", not to you (" + std::to_string(me) + ")" + fix);
  if (::lstat(dir.empty() ? "." : dir.c_str(), &st) != 0)
    return Error::invalid("cannot read the journal directory " + dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return Error::invalid("refusing the local journal " + path + ": " + dir + " is not a directory" + fix);
  if (st.st_uid != me || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return Error::invalid("refusing the local journal " + path + ": its directory " + dir +
                          (st.st_uid != me ? " belongs to another user" : " can be written by other users") +
                          " (run 'chmod go-w " + dir + "')" + fix);
  return {};
}

bool journal_exists(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

Result<std::string> push_journal(Backend& journal, const std::string& path, Backend& target) {
  const std::string shown = "the local journal " + path;
  if (auto st = journal.lock("plinth state push-journal", std::chrono::milliseconds(0)); !st) return st.error();
  auto doc = journal.load();
  if (!doc) return doc.error();
  if (!*doc) return Error{Error::Kind::NotFound, "no local journal at " + path, 0};
  auto versions = journal.history();
  if (!versions) return versions.error();
  if (versions->empty() || versions->front().lineage != (**doc).lineage)
    return Error::fatal(shown + " has no first version to say where it continues from; it was not written by "
                                "plinth apply. Inspect it with plinth state show --state " + path);
  const uint64_t base = versions->front().serial;
  const StateDocument& j = **doc;
  auto cur = target.load();
  if (!cur) return cur.error();
  const uint64_t at = *cur ? (**cur).serial : 0;
  const std::string compare = "; compare them with plinth state list --state " + path +
                              " and plinth state list, then apply again (the journal is kept; delete it once you "
                              "have what you need from it)";
  if (*cur && (**cur).lineage != j.lineage && !(**cur).lineage.empty())
    return Error{Error::Kind::Conflict,
                 "state " + target.describe() + " holds lineage " + (**cur).lineage + ", " + shown + " lineage " +
                     j.lineage + ": it belongs to another state" + compare,
                 0};
  auto remove_journal = [&] {
    journal.unlock();
    std::error_code ec;
    fs::remove(path, ec);
    fs::remove_all(path + ".d", ec);
  };
  if (*cur && at == j.serial && (**cur).resources == j.resources && (**cur).deposed == j.deposed) {
    remove_journal();
    return std::string("state " + target.describe() + " already holds " + shown + " (serial " +
                       std::to_string(j.serial) + "); removed the journal");
  }
  // A save the backend committed though its answer was lost (the server
  // went away between commit and reply): the state is at one of the
  // journal's own versions, so the journal continues from there.
  bool lost_answer = false;
  if (*cur && at > base && at < j.serial) {
    auto same = journal.saved_version(at);
    lost_answer = same && same->lineage == j.lineage && same->resources == (**cur).resources &&
                  same->deposed == (**cur).deposed;
  }
  if (at != base && !lost_answer)
    return Error{Error::Kind::Conflict,
                 "state " + target.describe() + " is at serial " + std::to_string(at) + ", but " + shown +
                     " continues serial " + std::to_string(base) + ": another run changed the state since" + compare,
                 0};
  if (auto st = target.save(j); !st) return st.error();
  const uint64_t ops = j.serial - at;
  remove_journal();
  return "wrote " + shown + " (" + std::to_string(ops) + " operation(s) completed after the state could not be " +
         "written; serial " + std::to_string(at) + " -> " + std::to_string(j.serial) + ") to state " +
         target.describe() + " and removed it";
}

}  // namespace plinth::state
