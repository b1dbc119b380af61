// plinth state list|show|history|restore|unlock: inspect and repair the state
// file (engine/state/state.h; docs/state.md).
#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <set>

#include "engine/cli/common.h"
#include "engine/cli/options.h"
#include "engine/run/state_session.h"
#include "engine/core/strings.h"
#include "engine/provider/registry.h"
#include "engine/state/encryption.h"
#include "engine/state/journal.h"
#include "engine/state/state.h"

namespace plinth::cli {
namespace {

/// The state's key (--state-key-file, else the environment's); the state
/// subcommands take their lock themselves.
run::StateOptions key_of(const Args& args) {
  run::StateOptions o;
  o.key_file = args.get("state-key-file");
  return o;
}

const std::vector<std::string> kSubcommands = {"list", "show", "history", "restore", "unlock", "rm", "mv", "rekey",
                                               "migrate", "push-journal"};

/// Loads the state at `path`; nullopt (after printing why) when it is
/// missing and `required`, or damaged.
std::optional<state::StateDocument> load_state(state::Backend& backend, const std::string& path, bool required,
                                               Io& io, int& status) {
  auto doc = backend.load();
  if (!doc) {
    status = fail(io, "state", doc.error().message);
    return std::nullopt;
  }
  if (!*doc) {
    std::string msg = "no state at " + path +
                      " yet (nothing has been applied there); pass --state FILE or set PLINTH_STATE to use another";
    if (required) {
      status = fail(io, "state", msg);
    } else {
      std::fprintf(io.err, "plinth state: %s\n", msg.c_str());
      status = kExitSuccess;
    }
    return std::nullopt;
  }
  return std::move(**doc);
}

/// Prints attributes as "key = json", nested objects as dotted keys.
void print_values(const Json& obj, const std::string& prefix, const ResourceType* type, Io& io) {
  for (const auto& [k, v] : obj.items()) {
    std::string key = safe_text(prefix.empty() ? k : prefix + "." + k);  // keys come from blueprints and BMCs
    const AttributeSpec* spec = type && prefix.empty() ? type->find(k) : nullptr;
    if (spec && spec->sensitive) {
      std::fprintf(io.out, "  %s = (sensitive)\n", key.c_str());
    } else if (v.is_object() && !v.empty()) {
      print_values(v, key, nullptr, io);
    } else {
      std::fprintf(io.out, "  %s = %s\n", key.c_str(), v.dump(-1, ' ', false, Json::error_handler_t::replace).c_str());
    }
  }
}

int show(const state::StateDocument& doc, const std::string& path, const std::string& address, Io& io) {
  const Resource* r = doc.find(address);
  if (!r) {
    std::vector<std::string> addresses;
    for (const auto& x : doc.resources) addresses.push_back(x.address);
    std::string msg = "no resource '" + address + "' in state " + path;
    if (auto m = closest_match(address, addresses)) msg += "; did you mean '" + *m + "'?";
    else msg += " ('plinth state list' lists the addresses)";
    return fail(io, "state", msg);
  }
  std::fprintf(io.out, "# %s\n", r->address.c_str());
  std::fprintf(io.out, "type       = %s\n", r->type.c_str());
  std::fprintf(io.out, "name       = %s\n", r->name.c_str());
  if (r->index >= 0) std::fprintf(io.out, "index      = %d\n", r->index);
  std::fprintf(io.out, "provider   = %s\n", r->provider.c_str());
  if (r->source.known()) std::fprintf(io.out, "declared   = %s\n", r->source.str().c_str());
  if (!r->depends_on.empty()) std::fprintf(io.out, "depends on = %s\n", join(r->depends_on, ", ").c_str());
  const ResourceType* type = find_resource_type(r->type, r->provider);
  std::fprintf(io.out, "\nattributes:\n");
  if (r->attributes.empty()) std::fprintf(io.out, "  (none)\n");
  print_values(r->attributes, "", type, io);
  std::fprintf(io.out, "\ncomputed:\n");
  if (r->computed.empty()) std::fprintf(io.out, "  (none yet)\n");
  print_values(r->computed, "", type, io);
  return kExitSuccess;
}

int history(state::Backend& backend, const std::string& path, Io& io) {
  auto h = backend.history();
  if (!h) return fail(io, "state", h.error().message);
  if (h->empty()) {
    std::fprintf(io.err, "plinth state: no saved versions of state %s yet\n", path.c_str());
    return kExitSuccess;
  }
  auto cur = backend.load();
  std::optional<uint64_t> current;
  if (cur && *cur) current = (*cur)->serial;
  std::fprintf(io.out, "%8s  %-20s  %9s\n", "SERIAL", "SAVED (UTC)", "RESOURCES");
  for (const auto& e : *h) {
    std::string note = e.damaged ? "  (damaged)" : current && *current == e.serial ? "  (current)" : "";
    if (e.run_start && !e.damaged) note += "  (before a run; kept)";
    std::string count = e.damaged ? "-" : std::to_string(e.resources);
    std::fprintf(io.out, "%8llu  %-20s  %9s%s\n", static_cast<unsigned long long>(e.serial), e.saved_at.c_str(),
                 count.c_str(), note.c_str());
  }
  if (!cur) std::fprintf(io.err, "plinth state: %s\n", cur.error().message.c_str());
  return kExitSuccess;
}

/// The state's addresses that `pattern` names: the address itself, or every
/// index of a counted resource written without one ("baremetal.node.a").
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

/// Locks, loads (the state must exist), lets `change` edit the document,
/// and saves it as the next serial unless --dry-run. `change` returns the
/// lines to print, or an error (nothing is written then).
int edit_state(const Args& args, Io& io, state::Backend& backend, const std::string& path, const std::string& what,
               const std::function<Result<std::vector<std::string>>(state::StateDocument&)>& change) {
  auto timeout = state::parse_duration(args.get_or("lock-timeout", "0s"));
  if (!timeout) return fail(io, "state", timeout.error().message);
  auto guard = state::LockGuard::acquire(backend, "plinth state " + what, *timeout);
  if (!guard) return fail(io, "state", guard.error().message);
  int status = kExitSuccess;
  auto doc = load_state(backend, path, true, io, status);
  if (!doc) return status;
  state::StateDocument next = *doc;
  auto lines = change(next);
  if (!lines) return fail(io, "state", lines.error().message);
  const bool dry = args.flag("dry-run");
  for (const auto& l : *lines) std::fprintf(io.out, "%s%s\n", dry ? "would be " : "", l.c_str());
  if (dry) {
    std::fprintf(io.out, "Dry run: state %s was not changed.\n", path.c_str());
    return kExitSuccess;
  }
  next.serial = doc->serial + 1;
  if (auto st = backend.save(next); !st) return fail(io, "state", st.error().message);
  std::fprintf(io.out,
               "Saved state %s as serial %llu. No infrastructure was changed; serial %llu stays restorable "
               "(plinth state restore %llu).\n",
               path.c_str(), static_cast<unsigned long long>(next.serial), static_cast<unsigned long long>(doc->serial),
               static_cast<unsigned long long>(doc->serial));
  return kExitSuccess;
}

/// state rm ADDRESS...: Plinth forgets the resources; they keep running.
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

/// state mv SRC DST: the same resource under another address (a renamed
/// pool keeps its servers instead of deleting and re-creating them).
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

/// state migrate --to LOCATION: copies the state, its lineage, serial and
/// kept versions as stored (encrypted values stay encrypted; no key needed).
int migrate(const Args& args, Io& io, const std::string& location, const std::string& path) {
  auto to = args.get("to");
  if (!to || to->empty())
    return fail(io, "state", "missing --to LOCATION; usage: plinth state migrate --to postgres://...|FILE [--state FILE]");
  const std::string target_shown = state::redact_location(*to);
  if (*to == location) return fail(io, "state", "--to " + target_shown + " is the state itself; nothing to do");
  auto timeout = state::parse_duration(args.get_or("lock-timeout", "0s"));
  if (!timeout) return fail(io, "state", timeout.error().message);
  auto source = state::open_backend(location);  // as stored: no key needed
  auto target = state::open_backend(*to);
  auto src_lock = state::LockGuard::acquire(*source, "plinth state migrate", *timeout);
  if (!src_lock) return fail(io, "state", src_lock.error().message);
  auto cur = source->load();
  if (!cur) return fail(io, "state", cur.error().message);
  if (!*cur) return fail(io, "state", "no state at " + path + " to migrate (nothing has been applied there)");
  auto entries = source->history();
  if (!entries) return fail(io, "state", entries.error().message);
  std::vector<std::pair<state::HistoryEntry, state::StateDocument>> versions;
  size_t skipped = 0;
  for (const auto& e : *entries) {
    if (e.damaged || e.lineage != (**cur).lineage) {
      ++skipped;
      continue;
    }
    auto v = source->saved_version(e.serial);
    if (!v) return fail(io, "state", v.error().message);
    versions.emplace_back(e, std::move(*v));
  }
  auto dst_lock = state::LockGuard::acquire(*target, "plinth state migrate", *timeout);
  if (!dst_lock) return fail(io, "state", dst_lock.error().message);
  if (auto st = target->adopt(versions, **cur); !st) return fail(io, "state", st.error().message);
  std::fprintf(io.out,
               "Migrated state %s (lineage %s, serial %llu, %zu kept version(s)) to %s.\n"
               "%s is left as it was; use --state %s (or PLINTH_STATE) from now on.\n",
               path.c_str(), (**cur).lineage.c_str(), static_cast<unsigned long long>((**cur).serial), versions.size(),
               target_shown.c_str(), path.c_str(), target_shown.c_str());
  if (skipped)
    std::fprintf(io.err, "plinth state: %zu damaged kept version(s) were not copied (plinth state history shows them)\n",
                 skipped);
  return kExitSuccess;
}

/// state rekey: loads with the current key (--state-key-file, PLINTH_STATE_KEY)
/// and saves under the new one (--new-key-file, PLINTH_STATE_NEW_KEY).
int rekey(const Args& args, Io& io, const std::string& location, const std::string& path) {
  Result<state::StateKey> new_key = Error::invalid(
      "missing the new key: pass --new-key-file FILE or set PLINTH_STATE_NEW_KEY (64 hex digits or base64 of 32 "
      "bytes, e.g. from 'openssl rand -hex 32')");
  if (auto f = args.get("new-key-file")) new_key = state::read_state_key_file(*f);
  else if (const char* v = std::getenv("PLINTH_STATE_NEW_KEY"); v && *v) new_key = state::parse_state_key(v, "PLINTH_STATE_NEW_KEY");
  if (!new_key) return fail(io, "state", new_key.error().message);
  // The current key reads (as an old key), the new one writes.
  auto settings = run::state_encryption(key_of(args), location, false);
  if (!settings) return fail(io, "state", settings.error().message);
  state::EncryptionSettings s = std::move(*settings);
  s.old_keys.clear();
  if (s.key) s.old_keys.push_back(*s.key);
  s.key = *new_key;
  s.shown = path;
  s.allow_cleartext = true;  // rekey is how a state written in clear gets encrypted
  const state::EncryptionSettings rekeyed = s;
  auto backend = state::with_encryption(state::open_backend(location), std::move(s));
  auto timeout = state::parse_duration(args.get_or("lock-timeout", "0s"));
  if (!timeout) return fail(io, "state", timeout.error().message);
  auto guard = state::LockGuard::acquire(*backend, "plinth state rekey", *timeout);
  if (!guard) return fail(io, "state", guard.error().message);
  int status = kExitSuccess;
  auto doc = load_state(*backend, path, true, io, status);
  if (!doc) return status;
  state::StateDocument next = *doc;
  next.serial = doc->serial + 1;
  if (auto st = backend->save(next); !st) return fail(io, "state", st.error().message);
  std::fprintf(io.out, "Saved state %s as serial %llu encrypted with key %s (%s).\n", path.c_str(),
               static_cast<unsigned long long>(next.serial), new_key->id.c_str(), new_key->origin.c_str());
  // The kept versions too, so the old key opens nothing any more: each is
  // read as stored, decrypted with the old key and sealed again with the new
  // one (in place: serial, saved_at and run start unchanged).
  auto kept = backend->history();
  if (!kept) return fail(io, "state", kept.error().message);
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
  size_t rewritten = 0;
  std::vector<std::string> left;
  for (const auto& e : *kept) {
    if (e.serial >= next.serial) continue;
    const std::string name = "kept version " + std::to_string(e.serial);
    if (auto st = reencrypt(e, name); !st)
      left.push_back(name + ": " + st.error().message);
    else
      ++rewritten;
  }
  std::fprintf(io.out, "Re-encrypted %zu kept version(s) with key %s.\n", rewritten, new_key->id.c_str());
  if (!left.empty()) {
    std::fprintf(io.err, "plinth state: %zu kept version(s) were not re-encrypted (the old key still opens them):\n",
                 left.size());
    for (const auto& l : left) std::fprintf(io.err, "  - %s\n", l.c_str());
    return kExitFailure;
  }
  return kExitSuccess;
}

/// state push-journal [JOURNAL]: writes the local journal an apply kept when
/// the state could not be written (state::journal_path by default) into it.
int push_journal(const Args& args, Io& io, state::Backend& backend, const std::string& location,
                 const std::string& given) {
  const std::string jp = given.empty() ? state::journal_path(location) : given;
  if (!state::journal_exists(jp))
    return fail(io, "state",
                "no local journal at " + jp + " (an apply keeps one only when the state could not be written; " +
                    "pass the path it printed: plinth state push-journal JOURNAL --state " +
                    state::redact_location(location) + ")");
  auto timeout = state::parse_duration(args.get_or("lock-timeout", "0s"));
  if (!timeout) return fail(io, "state", timeout.error().message);
  auto guard = state::LockGuard::acquire(backend, "plinth state push-journal", *timeout);
  if (!guard) return fail(io, "state", guard.error().message);
  if (auto st = state::check_journal_owner(jp); !st) return fail(io, "state", st.error().message);
  auto journal = run::open_state_backend(key_of(args), jp);  // encrypted as the state is
  if (!journal) return fail(io, "state", journal.error().message);
  auto r = state::push_journal(**journal, jp, backend);
  if (!r) return fail(io, "state", r.error().message);
  std::fprintf(io.out, "%s\n", r->c_str());
  return kExitSuccess;
}

int run_state(const Args& args, Io& io) {
  if (args.positional.empty())
    return fail(io, "state", "missing subcommand; use one of: " + join(kSubcommands, ", ") +
                                 " (see 'plinth help state')");
  const std::string& sub = args.positional[0];
  const std::vector<std::string> rest(args.positional.begin() + 1, args.positional.end());
  if (std::find(kSubcommands.begin(), kSubcommands.end(), sub) == kSubcommands.end())
    return fail(io, "state", "unknown subcommand '" + sub + "'; " + did_you_mean(sub, kSubcommands));
  const size_t want = sub == "show" || sub == "restore" || sub == "rm" ? 1 : sub == "mv" ? 2 : 0;
  if (rest.size() < want || (rest.size() > want && sub != "rm" && !(sub == "push-journal" && rest.size() == 1))) {
    std::string usage = sub == "show"      ? "plinth state show ADDRESS"
                        : sub == "restore" ? "plinth state restore SERIAL"
                        : sub == "rm"      ? "plinth state rm ADDRESS..."
                        : sub == "mv"      ? "plinth state mv SOURCE DESTINATION"
                        : sub == "push-journal" ? "plinth state push-journal [JOURNAL]"
                                           : "plinth state " + sub;
    return fail(io, "state", (rest.size() < want ? "missing argument" : "unexpected argument '" + rest[want] + "'") +
                                 "; usage: " + usage + " [--state FILE]");
  }
  const std::string location = state::resolve_state_path(args.get("state"));
  const std::string path = state::redact_location(location);
  auto opened = run::open_state_backend(key_of(args), location);
  if (!opened) return fail(io, "state", opened.error().message);
  auto backend = std::move(*opened);
  int status = kExitSuccess;

  if (sub == "list") {
    auto doc = load_state(*backend, path, false, io, status);
    if (!doc) return status;
    for (const auto& r : doc->resources) std::fprintf(io.out, "%s\n", r.address.c_str());
    return kExitSuccess;
  }
  if (sub == "show") {
    auto doc = load_state(*backend, path, true, io, status);
    if (!doc) return status;
    return show(*doc, path, rest[0], io);
  }
  if (sub == "history") return history(*backend, path, io);
  if (sub == "migrate") return migrate(args, io, location, path);
  if (sub == "push-journal") return push_journal(args, io, *backend, location, rest.empty() ? "" : rest[0]);
  if (sub == "rekey") return rekey(args, io, location, path);
  if (sub == "rm")
    return edit_state(args, io, *backend, path, "rm",
                      [&](state::StateDocument& d) { return remove_resources(d, path, rest); });
  if (sub == "mv")
    return edit_state(args, io, *backend, path, "mv",
                      [&](state::StateDocument& d) { return move_resources(d, path, rest[0], rest[1]); });
  if (sub == "unlock") {
    auto r = backend->break_lock(args.flag("force"));
    if (!r) return fail(io, "state", r.error().message);
    std::fprintf(io.out, "%s\n", r->c_str());
    return kExitSuccess;
  }
  // restore SERIAL
  uint64_t serial = 0;
  const std::string& s = rest[0];
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), serial);
  if (s.empty() || ec != std::errc{} || ptr != s.data() + s.size())
    return fail(io, "state", "'" + s + "' is not a serial number; 'plinth state history' lists the saved serials");
  auto timeout = state::parse_duration(args.get_or("lock-timeout", "0s"));
  if (!timeout) return fail(io, "state", timeout.error().message);
  auto guard = state::LockGuard::acquire(*backend, "plinth state restore", *timeout);
  if (!guard) return fail(io, "state", guard.error().message);
  auto r = backend->restore(serial);
  if (!r) return fail(io, "state", r.error().message);
  std::fprintf(io.out, "%s\n", r->c_str());
  return kExitSuccess;
}

const Register state_command({
    "state",
    "plinth state list|show ADDRESS|history|restore SERIAL|unlock|rm ADDRESS...|mv SOURCE DESTINATION|rekey|migrate "
    "--to LOCATION|push-journal [JOURNAL] [flags]",
    "Inspect the state, list or restore its saved versions, forget or rename resources, remove a stale lock.",
    "  list             every resource address in the state, sorted, one per line\n"
    "  show ADDRESS     one resource: where it is declared, its attributes and the values\n"
    "                   the provider reported (sensitive attributes are not shown)\n"
    "  history          the saved versions with their serials: the last 20, and for good the\n"
    "                   version before every run (marked 'before a run')\n"
    "  restore SERIAL   save an old version again as a new serial (same lineage); a damaged\n"
    "                   state file is kept beside it as PATH.damaged-TIME\n"
    "  unlock           remove the lock of a plinth run that is gone (--force: even if it\n"
    "                   still runs)\n"
    "  rm ADDRESS...    forget resources (TYPE.POOL: every node of the pool); they keep running\n"
    "                   and the next plan creates them again unless they leave the blueprint\n"
    "  mv SRC DST       record a resource (or every node of a pool) under a new address, so\n"
    "                   the plan changes it in place instead of deleting and creating it\n"
    "  rekey            save the state again encrypted with a new key (--new-key-file FILE or\n"
    "                   $PLINTH_STATE_NEW_KEY; the current key from --state-key-file or\n"
    "                   $PLINTH_STATE_KEY) and re-encrypt every kept version with it\n"
    "  migrate --to LOCATION  copy the state with its lineage, serial and kept versions to\n"
    "                   a PostgreSQL URL or a file; refuses a target holding another lineage\n"
    "  push-journal [JOURNAL]  write the local journal an apply kept when the state (a\n"
    "                   PostgreSQL server) went away mid-apply into the state, then remove it;\n"
    "                   refuses when the state changed since (the next apply does this too)\n"
    "rm and mv take the lock, save a new serial (the old one stays restorable) and accept\n"
    "--dry-run.\n\n"
    "The state file is --state, else $PLINTH_STATE, else plinth.state.json in the current\n"
    "directory. Format, locking and recovery are described in docs/state.md.",
    {
        {"state", "FILE", "State file (default: $PLINTH_STATE, else plinth.state.json)."},
        {"lock-timeout", "D", "restore, rm, mv, push-journal: how long to wait for the state lock, e.g. 30s, 2m (default 0s: try once)."},
        {"force", "", "unlock: remove the lock even if its holder still runs."},
        {"dry-run", "", "rm, mv: print what would change and write nothing."},
        state_key_flag(),
        {"new-key-file", "FILE", "rekey: the new key (default $PLINTH_STATE_NEW_KEY)."},
        {"to", "LOCATION", "migrate: where to copy the state (postgres://... URL or file)."},
    },
    run_state,
    60,
    kSubcommands,
});

}  // namespace
}  // namespace plinth::cli
