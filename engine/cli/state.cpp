// plinth state list|show|history|restore|unlock|rm|mv|rekey|migrate|push-journal:
// the flags, and the rendering of what engine/run/state_ops.h does
// (docs/state.md).
#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <set>

#include "engine/cli/common.h"
#include "engine/cli/options.h"
#include "engine/run/state_ops.h"
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
  if (!r) return fail(io, "state", run::not_in_state(doc, path, address));
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

/// One resource in `state list --json`: where it is and what it is.
Json summary_json(const Resource& r) {
  Json j = {{"address", r.address}, {"type", r.type}, {"name", r.name}, {"provider", r.provider}};
  if (r.index >= 0) j["index"] = r.index;
  if (r.source.known()) j["declared"] = r.source.str();
  return j;
}

/// One resource in `state show --json`: the summary, its dependencies, its
/// attributes and computed values; a sensitive attribute's value is null and
/// its name is listed under "sensitive_attributes" (never printed).
Json resource_json(const Resource& r) {
  Json j = summary_json(r);
  j["depends_on"] = r.depends_on;
  const ResourceType* type = find_resource_type(r.type, r.provider);
  Json attributes = r.attributes, computed = r.computed, hidden = Json::array();
  for (Json* values : {&attributes, &computed})
    for (auto& [k, v] : values->items())
      if (const AttributeSpec* spec = type ? type->find(k) : nullptr; spec && spec->sensitive) {
        v = nullptr;
        hidden.push_back(k);
      }
  j["attributes"] = std::move(attributes);
  j["computed"] = std::move(computed);
  j["sensitive_attributes"] = std::move(hidden);
  return j;
}

void print_json(Io& io, const Json& j) {
  std::fprintf(io.out, "%s\n", j.dump(2, ' ', false, Json::error_handler_t::replace).c_str());
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

/// --lock-timeout (default: try once).
Result<std::chrono::milliseconds> lock_timeout(const Args& args) { return state::parse_duration(args.get_or("lock-timeout", "0s")); }

/// Renders an edit (rm, mv): what changed, then where it was saved.
int render_edit(const Args& args, Io& io, state::Backend& backend, const std::string& path, const std::string& what,
                const std::function<Result<std::vector<std::string>>(state::StateDocument&)>& change) {
  auto timeout = lock_timeout(args);
  if (!timeout) return fail(io, "state", timeout.error().message);
  const bool dry = args.flag("dry-run");
  auto edit = run::edit_state(backend, path, what, *timeout, dry, change);
  if (!edit) return fail(io, "state", edit.error().message);
  for (const auto& l : edit->lines) std::fprintf(io.out, "%s%s\n", dry ? "would be " : "", l.c_str());
  if (dry) {
    std::fprintf(io.out, "Dry run: state %s was not changed.\n", path.c_str());
    return kExitSuccess;
  }
  const auto from = static_cast<unsigned long long>(edit->from_serial);
  std::fprintf(io.out,
               "Saved state %s as serial %llu. No infrastructure was changed; serial %llu stays restorable "
               "(plinth state restore %llu).\n",
               path.c_str(), static_cast<unsigned long long>(edit->to_serial), from, from);
  return kExitSuccess;
}

int migrate(const Args& args, Io& io, const std::string& location, const std::string& path) {
  auto to = args.get("to");
  if (!to || to->empty())
    return fail(io, "state", "missing --to LOCATION; usage: plinth state migrate --to postgres://...|FILE [--state FILE]");
  auto timeout = lock_timeout(args);
  if (!timeout) return fail(io, "state", timeout.error().message);
  auto m = run::migrate_state(location, path, *to, *timeout);
  if (!m) return fail(io, "state", m.error().message);
  const std::string target_shown = state::redact_location(*to);
  std::fprintf(io.out,
               "Migrated state %s (lineage %s, serial %llu, %zu kept version(s)) to %s.\n"
               "%s is left as it was; use --state %s (or PLINTH_STATE) from now on.\n",
               path.c_str(), m->lineage.c_str(), static_cast<unsigned long long>(m->serial), m->versions,
               target_shown.c_str(), path.c_str(), target_shown.c_str());
  if (m->skipped)
    std::fprintf(io.err, "plinth state: %zu damaged kept version(s) were not copied (plinth state history shows them)\n",
                 m->skipped);
  return kExitSuccess;
}

/// The current key reads (--state-key-file, PLINTH_STATE_KEY), the new one
/// (--new-key-file, PLINTH_STATE_NEW_KEY) writes.
int rekey(const Args& args, Io& io, const std::string& location, const std::string& path) {
  Result<state::StateKey> new_key = Error::invalid(
      "missing the new key: pass --new-key-file FILE or set PLINTH_STATE_NEW_KEY (64 hex digits or base64 of 32 "
      "bytes, e.g. from 'openssl rand -hex 32')");
  if (auto f = args.get("new-key-file")) new_key = state::read_state_key_file(*f);
  else if (const char* v = std::getenv("PLINTH_STATE_NEW_KEY"); v && *v) new_key = state::parse_state_key(v, "PLINTH_STATE_NEW_KEY");
  if (!new_key) return fail(io, "state", new_key.error().message);
  auto timeout = lock_timeout(args);
  if (!timeout) return fail(io, "state", timeout.error().message);
  auto r = run::rekey_state(key_of(args), location, path, *new_key, *timeout);
  if (!r) return fail(io, "state", r.error().message);
  std::fprintf(io.out, "Saved state %s as serial %llu encrypted with key %s (%s).\n", path.c_str(),
               static_cast<unsigned long long>(r->serial), new_key->id.c_str(), new_key->origin.c_str());
  std::fprintf(io.out, "Re-encrypted %zu kept version(s) with key %s.\n", r->rewritten, new_key->id.c_str());
  if (!r->left.empty()) {
    std::fprintf(io.err, "plinth state: %zu kept version(s) were not re-encrypted (the old key still opens them):\n",
                 r->left.size());
    for (const auto& l : r->left) std::fprintf(io.err, "  - %s\n", l.c_str());
    return kExitFailure;
  }
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
    auto doc = load_state(*backend, path, args.flag("json"), io, status);
    if (args.flag("json")) {
      if (!doc) return status;
      Json out = Json::array();
      for (const auto& r : doc->resources) out.push_back(summary_json(r));
      print_json(io, {{"format_version", 1}, {"serial", doc->serial}, {"lineage", doc->lineage},
                      {"resources", std::move(out)}});
      return kExitSuccess;
    }
    if (!doc) return status;
    for (const auto& r : doc->resources) std::fprintf(io.out, "%s\n", r.address.c_str());
    return kExitSuccess;
  }
  if (sub == "show") {
    auto doc = load_state(*backend, path, true, io, status);
    if (!doc) return status;
    if (args.flag("json")) {
      const Resource* r = doc->find(rest[0]);
      if (!r) return fail(io, "state", run::not_in_state(*doc, path, rest[0]));
      print_json(io, resource_json(*r));
      return kExitSuccess;
    }
    return show(*doc, path, rest[0], io);
  }
  if (sub == "history") return history(*backend, path, io);
  if (sub == "migrate") return migrate(args, io, location, path);
  if (sub == "push-journal") {
    auto timeout = lock_timeout(args);
    if (!timeout) return fail(io, "state", timeout.error().message);
    const std::string jp = rest.empty() ? state::journal_path(location) : rest[0];
    auto r = run::push_journal(key_of(args), *backend, location, jp, *timeout);
    if (!r) return fail(io, "state", r.error().message);
    std::fprintf(io.out, "%s\n", r->c_str());
    return kExitSuccess;
  }
  if (sub == "rekey") return rekey(args, io, location, path);
  if (sub == "rm")
    return render_edit(args, io, *backend, path, "rm",
                       [&](state::StateDocument& d) { return run::remove_resources(d, path, rest); });
  if (sub == "mv")
    return render_edit(args, io, *backend, path, "mv",
                       [&](state::StateDocument& d) { return run::move_resources(d, path, rest[0], rest[1]); });
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
  auto timeout = lock_timeout(args);
  if (!timeout) return fail(io, "state", timeout.error().message);
  auto r = run::restore_state(*backend, serial, *timeout);
  if (!r) return fail(io, "state", r.error().message);
  std::fprintf(io.out, "%s\n", r->c_str());
  return kExitSuccess;
}

const Register state_command({
    "state",
    "plinth state list|show ADDRESS|history|restore SERIAL|unlock|rm ADDRESS...|mv SOURCE DESTINATION|rekey|migrate "
    "--to LOCATION|push-journal [JOURNAL] [flags]",
    "Inspect the state, list or restore its saved versions, forget or rename resources, remove a stale lock.",
    "  list             every resource address in the state, sorted, one per line (--json:\n"
    "                   each with its type, name, index, provider and where it is declared)\n"
    "  show ADDRESS     one resource: where it is declared, its attributes and the values\n"
    "                   the provider reported (sensitive attributes are not shown; --json)\n"
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
        {"json", "", "list, show: print JSON (docs/state.md, \"Reading the state from scripts\"); sensitive values are null."},
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
