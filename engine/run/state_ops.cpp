#include "engine/run/state_ops.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/core/strings.h"
#include "engine/run/state_session.h"
#include "engine/state/journal.h"

namespace plinth::run {

namespace {

/// The state at `path`, which must exist.
Result<state::StateDocument> load_existing(state::Backend& backend, const std::string& path) {
  auto doc = backend.load();
  if (!doc) return doc.error();
  if (!*doc)
    return Error::invalid("no state at " + path +
                          " yet (nothing has been applied there); pass --state FILE or set PLINTH_STATE to use another");
  return std::move(**doc);
}

}  // namespace

std::vector<std::string> matching(const state::StateDocument& doc, const std::string& pattern) {
  std::vector<std::string> out;
  for (const auto& r : doc.resources)
    if (r.address == pattern || (r.index >= 0 && r.type + "." + r.name == pattern)) out.push_back(r.address);
  return out;
}

std::string not_in_state(const state::StateDocument& doc, const std::string& path, const std::string& address) {
  std::vector<std::string> addresses;
  for (const auto& x : doc.resources) addresses.push_back(x.address);
  std::string msg = "no resource '" + address + "' in state " + path;
  if (auto m = closest_match(address, addresses)) msg += "; did you mean '" + *m + "'?";
  else msg += " ('plinth state list' lists the addresses)";
  return msg;
}

Result<std::vector<std::string>> remove_resources(state::StateDocument& doc, const std::string& path,
                                                  const std::vector<std::string>& patterns) {
  std::set<std::string> gone;
  for (const auto& p : patterns) {
    auto m = matching(doc, p);
    if (m.empty()) return Error::invalid(not_in_state(doc, path, p) + "; nothing was removed");
    gone.insert(m.begin(), m.end());
  }
  std::vector<std::string> lines;
  std::erase_if(doc.resources, [&](const Resource& r) { return gone.count(r.address) > 0; });
  for (const auto& a : gone) lines.push_back("removed " + a + " from state (it still exists; Plinth no longer manages it)");
  return lines;
}

Result<std::vector<std::string>> move_resources(state::StateDocument& doc, const std::string& path,
                                                const std::string& src, const std::string& dst) {
  auto from = matching(doc, src);
  if (from.empty()) return Error::invalid(not_in_state(doc, path, src) + "; nothing was moved");
  auto to = parse_address(dst);
  if (!to) return Error::invalid("'" + dst + "' is not an address: write TYPE.NAME or TYPE.NAME[INDEX]");
  const bool whole = from.size() > 1 || (from.front() != src);  // every index of SRC
  if (whole && to->index >= 0)
    return Error::invalid("'" + src + "' names every index of a pool; move it to a pool address without an index, "
                          "e.g. " + to->type + "." + to->name);
  std::map<std::string, std::string> renamed;  // old address -> new
  for (auto& r : doc.resources) {
    if (std::find(from.begin(), from.end(), r.address) == from.end()) continue;
    if (to->type != r.type)
      return Error::invalid("cannot move " + r.address + " (a " + r.type + ") to " + dst + " (a " + to->type +
                            "): a resource keeps its type");
    const int index = whole ? r.index : to->index;
    const std::string address = make_address(r.type, to->name, index);
    if (doc.find(address))
      return Error::invalid("cannot move " + r.address + " to " + address + ": the state already has " + address +
                            "; remove it first (plinth state rm) if it is stale");
    renamed[r.address] = address;
  }
  std::vector<std::string> lines;
  for (auto& r : doc.resources) {
    if (auto it = renamed.find(r.address); it != renamed.end()) {
      auto parts = parse_address(it->second);
      r.address = it->second;
      r.name = parts->name;
      r.index = parts->index;
    }
    for (auto& d : r.depends_on)
      if (auto it = renamed.find(d); it != renamed.end()) d = it->second;
  }
  std::sort(doc.resources.begin(), doc.resources.end(),
            [](const Resource& a, const Resource& b) { return a.address < b.address; });
  for (const auto& [a, b] : renamed) lines.push_back("moved " + a + " to " + b);
  return lines;
}

Result<StateEdit> edit_state(state::Backend& backend, const std::string& path, const std::string& what,
                             std::chrono::milliseconds lock_timeout, bool dry_run,
                             const std::function<Result<std::vector<std::string>>(state::StateDocument&)>& change) {
  auto guard = state::LockGuard::acquire(backend, "plinth state " + what, lock_timeout);
  if (!guard) return guard.error();
  auto doc = load_existing(backend, path);
  if (!doc) return doc.error();
  state::StateDocument next = *doc;
  auto lines = change(next);
  if (!lines) return lines.error();
  StateEdit out{std::move(*lines), doc->serial, 0};
  if (dry_run) return out;
  next.serial = doc->serial + 1;
  if (auto st = backend.save(next); !st) return st.error();
  out.to_serial = next.serial;
  return out;
}

Result<std::string> restore_state(state::Backend& backend, uint64_t serial, std::chrono::milliseconds lock_timeout) {
  auto guard = state::LockGuard::acquire(backend, "plinth state restore", lock_timeout);
  if (!guard) return guard.error();
  return backend.restore(serial);
}

Result<Migrated> migrate_state(const std::string& from, const std::string& from_shown, const std::string& to,
                               std::chrono::milliseconds lock_timeout) {
  if (to == from) return Error::invalid("--to " + state::redact_location(to) + " is the state itself; nothing to do");
  auto source = state::open_backend(from);  // as stored: no key needed
  auto target = state::open_backend(to);
  auto src_lock = state::LockGuard::acquire(*source, "plinth state migrate", lock_timeout);
  if (!src_lock) return src_lock.error();
  auto cur = source->load();
  if (!cur) return cur.error();
  if (!*cur) return Error::invalid("no state at " + from_shown + " to migrate (nothing has been applied there)");
  auto entries = source->history();
  if (!entries) return entries.error();
  std::vector<std::pair<state::HistoryEntry, state::StateDocument>> versions;
  Migrated out{(**cur).lineage, (**cur).serial, 0, 0};
  for (const auto& e : *entries) {
    if (e.damaged || e.lineage != (**cur).lineage) {
      ++out.skipped;
      continue;
    }
    auto v = source->saved_version(e.serial);
    if (!v) return v.error();
    versions.emplace_back(e, std::move(*v));
  }
  auto dst_lock = state::LockGuard::acquire(*target, "plinth state migrate", lock_timeout);
  if (!dst_lock) return dst_lock.error();
  if (auto st = target->adopt(versions, **cur); !st) return st.error();
  out.versions = versions.size();
  return out;
}

Result<Rekeyed> rekey_state(const StateOptions& current, const std::string& location, const std::string& path,
                            const state::StateKey& new_key, std::chrono::milliseconds lock_timeout) {
  // The current key reads (as an old key), the new one writes.
  auto settings = state_encryption(current, location, false);
  if (!settings) return settings.error();
  state::EncryptionSettings s = std::move(*settings);
  s.old_keys.clear();
  if (s.key) s.old_keys.push_back(*s.key);
  s.key = new_key;
  s.shown = path;
  s.allow_cleartext = true;  // rekey is how a state written in clear gets encrypted
  const state::EncryptionSettings rekeyed = s;
  auto backend = state::with_encryption(state::open_backend(location), std::move(s));
  auto guard = state::LockGuard::acquire(*backend, "plinth state rekey", lock_timeout);
  if (!guard) return guard.error();
  auto doc = load_existing(*backend, path);
  if (!doc) return doc.error();
  state::StateDocument next = *doc;
  next.serial = doc->serial + 1;
  if (auto st = backend->save(next); !st) return st.error();
  Rekeyed out;
  out.serial = next.serial;
  // The kept versions too, so the old key opens nothing any more: each is
  // read as stored, decrypted with the old key and sealed again with the new
  // one (in place: serial, saved_at and run start unchanged).
  auto kept = backend->history();
  if (!kept) return kept.error();
  auto reencrypt = [&](const state::HistoryEntry& e, const std::string& name) -> Status {
    if (e.damaged) return Error::invalid("damaged, cannot be read");
    auto stored = backend->saved_version(e.serial);
    if (!stored) return stored.error();
    auto clear = state::decrypt_document(*stored, rekeyed, path + " " + name);
    if (!clear) return clear.error();
    auto sealed = state::encrypt_document(*clear, rekeyed);
    if (!sealed) return sealed.error();
    return backend->rewrite_version(*sealed);
  };
  for (const auto& e : *kept) {
    if (e.serial >= next.serial) continue;
    const std::string name = "kept version " + std::to_string(e.serial);
    if (auto st = reencrypt(e, name); !st)
      out.left.push_back(name + ": " + st.error().message);
    else
      ++out.rewritten;
  }
  return out;
}

Result<std::string> push_journal(const StateOptions& key, state::Backend& backend, const std::string& location,
                                 const std::string& journal, std::chrono::milliseconds lock_timeout) {
  if (!state::journal_exists(journal))
    return Error::invalid("no local journal at " + journal +
                          " (an apply keeps one only when the state could not be written; " +
                          "pass the path it printed: plinth state push-journal JOURNAL --state " +
                          state::redact_location(location) + ")");
  auto guard = state::LockGuard::acquire(backend, "plinth state push-journal", lock_timeout);
  if (!guard) return guard.error();
  if (auto st = state::check_journal_owner(journal); !st) return st.error();
  auto opened = open_state_backend(key, journal);  // encrypted as the state is
  if (!opened) return opened.error();
  return state::push_journal(**opened, journal, backend);
}

}  // namespace plinth::run
