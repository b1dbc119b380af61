#include "engine/state/journal.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "engine/core/hash.h"

namespace plinth::state {

namespace fs = std::filesystem;

std::string journal_path(const std::string& location) {
  const char* dir = std::getenv("PLINTH_JOURNAL_DIR");
  const std::string base = dir && *dir ? dir : ".plinth-journal";
  return base + "/" + sha256_hex(redact_location(location)).substr(0, 16) + ".state.json";
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
  if (at != base)
    return Error{Error::Kind::Conflict,
                 "state " + target.describe() + " is at serial " + std::to_string(at) + ", but " + shown +
                     " continues serial " + std::to_string(base) + ": another run changed the state since" + compare,
                 0};
  if (auto st = target.save(j); !st) return st.error();
  const uint64_t ops = j.serial - base;
  remove_journal();
  return "wrote " + shown + " (" + std::to_string(ops) + " operation(s) completed after the state could not be " +
         "written; serial " + std::to_string(base) + " -> " + std::to_string(j.serial) + ") to state " +
         target.describe() + " and removed it";
}

}  // namespace plinth::state
