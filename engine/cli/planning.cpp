#include "engine/cli/planning.h"

#include "engine/blueprint/trust.h"
#include "engine/cli/untrusted.h"

#include "engine/core/strings.h"
#include "engine/plan/target.h"
#include "engine/provider/registry.h"
#include "engine/state/encryption.h"
#include "engine/state/journal.h"

namespace plinth::cli {

FlagSpec state_key_flag() {
  return {"state-key-file", "FILE",
          "Key for encrypted state (64 hex digits or base64 of 32 bytes; default $PLINTH_STATE_KEY, else the file "
          "$PLINTH_STATE_KEY_FILE; docs/state.md)."};
}

Result<state::EncryptionSettings> state_encryption(const Args& args, const std::string& location,
                                                   bool document_needs_key) {
  auto key = state::state_key_from(args.get("state-key-file"));
  if (!key) return key.error();
  state::EncryptionSettings s;
  s.key = *key;
  const char* mode = std::getenv("PLINTH_STATE_ENCRYPTION");
  const std::string m = mode ? mode : "";
  if (!m.empty() && m != "sensitive" && m != "document")
    return Error::invalid("PLINTH_STATE_ENCRYPTION='" + m + "' must be 'sensitive' (the default) or 'document'");
  s.whole_document = m == "document";
  if (s.whole_document && !s.key && document_needs_key)
    return Error::invalid("PLINTH_STATE_ENCRYPTION=document needs a key: set PLINTH_STATE_KEY, "
                          "PLINTH_STATE_KEY_FILE or pass --state-key-file FILE");
  s.sensitive_paths = [](const Resource& r) {
    std::vector<std::string> out;
    if (const ResourceType* t = find_resource_type(r.type, r.provider))
      for (const auto& a : t->attributes)
        if (a.sensitive) out.push_back(a.name);
    return out;
  };
  s.shown = state::redact_location(location);
  return s;
}

Result<std::unique_ptr<state::Backend>> open_state_backend(const Args& args, const std::string& location) {
  auto s = state_encryption(args, location);
  if (!s) return s.error();
  return state::with_encryption(state::open_backend(location), std::move(*s));
}

Result<StateSession> open_state(const Args& args, const std::string& operation) {
  StateSession s;
  const std::string location = state::resolve_state_path(args.get("state"), args.positional);
  s.location = location;
  s.path = state::redact_location(location);
  // Backend messages usually name the state already ("state P is locked
  // by ..."); say it once.
  auto fail = [&](const std::string& m) {
    return Error::invalid(m.rfind("state " + s.path, 0) == 0 ? m : "state " + s.path + ": " + m);
  };
  auto timeout = state::parse_duration(args.get_or("lock-timeout", "0s"));
  if (!timeout) return fail("--lock-timeout: " + timeout.error().message);
  auto backend = open_state_backend(args, location);
  if (!backend) return fail(backend.error().message);
  s.backend = std::move(*backend);
  // -lock=false: a read-only plan (Terraform's flag); an untrusted plan
  // writes nothing, not even the lock file.
  if (args.flag("lock", true) && !untrusted().on) {
    auto guard = state::LockGuard::acquire(*s.backend, operation, *timeout);
    if (!guard) {
      std::string m = guard.error().message;
      if (operation == "plinth plan" && m.find("cannot open the lock file") != std::string::npos)
        m += "; to plan without writing anything, pass -lock=false";
      return fail(m);
    }
    s.lock.emplace(std::move(*guard));
    // An apply that lost its state backend left the operations it completed
    // in a local journal (in the user's own directory, never the checkout):
    // an apply or destroy writes it into the state before anything else; a
    // plan only says so (a plan never writes state), and refresh and import
    // stop, since writing first would strand the journal.
    if (const std::string jp = state::journal_path(location); state::journal_exists(jp)) {
      const bool writes = operation == "plinth apply" || operation == "plinth destroy";
      if (auto st = state::check_journal_owner(jp); !st) return fail(st.error().message);
      if (operation == "plinth plan") {
        s.notice = "plinth: the local journal " + jp + " holds operations an earlier apply completed after the state "
                   "could not be written; this plan is made against the state as stored. plinth apply writes the "
                   "journal into the state first (or run plinth state push-journal)";
      } else if (!writes) {
        return fail("the local journal " + jp + " holds operations an earlier apply completed after the state could "
                    "not be written; write it into the state first with plinth state push-journal (" + operation +
                    " stopped before changing anything)");
      } else {
        auto journal = open_state_backend(args, jp);
        if (!journal) return fail(journal.error().message);
        auto pushed = state::push_journal(**journal, jp, *s.backend);
        if (!pushed)
          return fail(pushed.error().message + " (" + operation + " stopped before changing anything; plinth state "
                      "push-journal retries)");
        s.notice = "plinth: " + *pushed;
      }
    }
  }
  auto doc = s.backend->load();
  if (!doc) return fail(doc.error().message);
  if (*doc) {
    s.doc = std::move(**doc);
    s.existed = true;
  }
  return s;
}

std::set<std::string> providers_of(const std::vector<Resource>& desired, const std::vector<Resource>& state) {
  std::set<std::string> names;
  for (const auto* list : {&desired, &state})
    for (const auto& r : *list) names.insert(r.provider);
  return names;
}

std::optional<apply::RefreshResult> refresh_state(StateSession& session, ProviderSet& providers, Io& io,
                                                  const std::string& command, FILE* drift_out,
                                                  const std::set<std::string>& rechecked,
                                                  const std::vector<Resource>& desired) {
  if (auto st = providers.open(providers_of({}, session.doc.resources)); !st) {
    fail(io, command, st.error().message);
    return std::nullopt;
  }
  // Objects of this state it does not record: asked of every provider in
  // use that this run can open (one that cannot is reported when it is used).
  apply::Discovery discovery;
  if (!session.doc.lineage.empty()) {
    for (const auto& name : providers_of(desired, session.doc.resources))
      if (providers.get(name) || providers.open({name})) discovery.providers.push_back(name);
    discovery.desired = desired;
    discovery.deposed = session.doc.deposed;
  }
  apply::RefreshResult r =
      apply::refresh(session.doc.resources, providers.lookup(), providers.limits_lookup(), discovery);
  std::erase_if(r.diagnostics, [&](const Diagnostic& d) { return rechecked.count(d.address) > 0; });
  print_diagnostics(r.diagnostics, io);
  for (const auto& f : r.failures) {
    // Provider errors usually start with the address already: say it once.
    const std::string& m = f.error.message;
    const bool named = m.rfind(f.address + ":", 0) == 0;
    std::fprintf(io.err, "plinth %s: refresh %s\n", command.c_str(),
                 safe_text(named ? m : f.address + ": " + m).c_str());
  }
  if (!r.failures.empty() || has_errors(r.diagnostics)) {
    std::fprintf(io.err,
                 "plinth %s: refresh failed for %zu resource(s); nothing was changed and the state %s is as it was. "
                 "Fix the errors above, or pass --refresh=false to plan against the state as recorded.\n",
                 command.c_str(), r.failures.size() + count(r.diagnostics, Severity::Error), session.path.c_str());
    return std::nullopt;
  }
  // Objects their provider removed on its own (a reclaimed spot instance)
  // are not drift by a person: they are listed apart.
  std::vector<apply::Drift> by_person, by_provider;
  for (const auto& d : r.drift) (d.gone && !d.reason.empty() ? by_provider : by_person).push_back(d);
  if (drift_out && !by_provider.empty())
    std::fprintf(drift_out, "Gone: %zu resource(s) removed by their provider, not by a person:\n%s\n",
                 by_provider.size(), apply::drift_text(by_provider).c_str());
  if (drift_out && !by_person.empty()) {
    std::fprintf(drift_out, "Drift: %zu resource(s) changed outside Plinth (state -> observed):\n%s\n",
                 by_person.size(), apply::drift_text(by_person).c_str());
  }
  if (!r.adopted.empty()) {
    std::fprintf(io.err, "Adopted: %zu object(s) made for this state (lineage %s) but missing from it:\n",
                 r.adopted.size(), session.doc.lineage.c_str());
    for (const auto& a : r.adopted) {
      std::string id = a.computed.value("id", Json("")).is_string() ? a.computed.value("id", "") : "";
      std::fprintf(io.err, "  + %s%s\n", a.address.c_str(), id.empty() ? "" : (" (" + safe_text(id) + ")").c_str());
    }
  }
  if (!r.deposed.empty()) {
    std::fprintf(io.err,
                 "Superseded: %zu object(s) made for this state at an address it records with another object; "
                 "recorded as deposed, the next apply removes them:\n",
                 r.deposed.size());
    for (const auto& d : r.deposed) {
      std::string id = d.computed.value("id", Json("")).is_string() ? d.computed.value("id", "") : "";
      std::fprintf(io.err, "  - %s%s\n", d.address.c_str(), id.empty() ? "" : (" (" + safe_text(id) + ")").c_str());
    }
    session.doc.deposed.insert(session.doc.deposed.end(), r.deposed.begin(), r.deposed.end());
  }
  session.doc.resources = r.resources;
  return r;
}

bool check_inventory(const std::vector<Resource>& desired, ProviderSet& providers, Io& io,
                     const std::string& command) {
  if (desired.empty()) return true;
  if (auto st = providers.open(providers_of(desired, {})); !st) {
    fail(io, command, st.error().message);
    return false;
  }
  // One attempt each: a server that cannot be read now is reported, and its
  // create (with the provider's retries) fails or succeeds in apply.
  auto limits = [base = providers.limits_lookup()](const std::string& name) {
    apply::ProviderLimits l = base(name);
    l.retry.max_attempts = 1;
    return l;
  };
  apply::RefreshResult r = apply::refresh(desired, providers.lookup(), limits);
  print_diagnostics(r.diagnostics, io);
  constexpr size_t kShown = 3;
  for (size_t i = 0; i < r.failures.size() && i < kShown; ++i) {
    const auto& f = r.failures[i];
    const std::string& m = f.error.message;
    const bool named = m.rfind(f.address + ":", 0) == 0;
    std::fprintf(io.err, "plinth %s: warning: cannot check the inventory of %s\n", command.c_str(),
                 safe_text(named ? m : f.address + ": " + m).c_str());
  }
  if (r.failures.size() > kShown)
    std::fprintf(io.err,
                 "plinth %s: warning: ... and of %zu more server(s); plan with --refresh=false where the BMCs are "
                 "out of reach\n",
                 command.c_str(), r.failures.size() - kShown);
  if (!has_errors(r.diagnostics)) return true;
  std::fprintf(io.err,
               "plinth %s: the inventory of %zu server(s) differs from the blueprint (errors above); nothing was "
               "changed. Fix the pools' hardware declarations or the servers, then plan again.\n",
               command.c_str(), count(r.diagnostics, Severity::Error));
  return false;
}

void release_at_exit(Planned& planned) {
  struct Kept {
    Loaded loaded;
    std::shared_ptr<const graph::ResourceGraph> desired;
    state::StateDocument doc;
    plan::Plan plan;
    std::vector<Resource> inventory;
  };
  static std::vector<Kept*>* kept = new std::vector<Kept*>();  // never freed, on purpose
  kept->push_back(new Kept{std::move(planned.loaded), std::move(planned.desired), std::move(planned.state.doc),
                           std::move(planned.plan), std::move(planned.inventory)});
}

std::optional<Planned> build_plan(const Args& args, Io& io, const std::string& command, ProviderSet& providers,
                                  bool destroy, const std::function<void(const Checked&)>& on_invalid) {
  // 1. load
  auto loaded = load_blueprint(args.positional, io, on_invalid);
  if (!loaded) return std::nullopt;
  providers.use_declarations(loaded->blueprint.providers);

  // 2. expand (shared, read-only: the plan's desired resources are these)
  auto expanded = graph::expand(loaded->blueprint);
  if (!expanded) {
    fail(io, command, expanded.error().message);
    return std::nullopt;
  }
  auto desired = std::make_shared<const graph::ResourceGraph>(std::move(*expanded));

  // Untrusted: every credential the plan would read and send is one the
  // operator's trust file allows for that endpoint, before any request.
  if (untrusted().on) {
    Diagnostics refused = bp::check_untrusted_credentials(desired->resources, untrusted().trust);
    if (!refused.empty()) {
      print_diagnostics(refused, io);
      fail(io, command,
           std::to_string(refused.size()) + " credential use(s) the trust file does not allow; nothing was read or "
           "sent (docs/security.md)");
      return std::nullopt;
    }
  }

  std::set<std::string> used;
  for (const auto& r : desired->resources) used.insert(r.provider);
  if (auto st = providers.check_options(used); !st) {
    fail(io, command, st.error().message);
    return std::nullopt;
  }

  // 3. state
  auto session = open_state(args, "plinth " + command);
  if (!session) {
    fail(io, command, session.error().message);
    return std::nullopt;
  }
  if (!session->notice.empty()) std::fprintf(io.err, "%s\n", session->notice.c_str());

  // 4. refresh (servers the blueprint declares are checked against it below)
  static const std::vector<Resource> kNothing;
  std::vector<Resource> inventory;
  std::set<std::string> rechecked;
  if (!destroy && args.flag("refresh", true))
    for (const auto& r : desired->resources)
      if (const ResourceType* t = find_resource_type(r.type, r.provider); t && t->inventory) {
        inventory.push_back(r);
        rechecked.insert(r.address);
      }
  if (!session->doc.lineage.empty())
    providers.bind({session->doc.lineage, loaded->blueprint.metadata.name});
  std::vector<apply::Drift> drift;
  bool adopted = false;
  if (args.flag("refresh", true) && (!session->doc.resources.empty() || !session->doc.lineage.empty())) {
    auto r = refresh_state(*session, providers, io, command, io.err, rechecked,
                           destroy ? kNothing : desired->resources);
    if (!r) return std::nullopt;
    drift = std::move(r->drift);
    adopted = !r->adopted.empty();
  }

  // 5. diff (-target: only some resources and what they need)
  plan::Plan p = destroy ? plan::diff(kNothing, session->doc.resources)
                         : plan::diff_sharing(std::shared_ptr<const std::vector<Resource>>(desired, &desired->resources),
                                              session->doc.resources);
  for (const auto& old : session->doc.deposed) {  // left by a create-before-destroy replace (docs/apply.md)
    plan::ResourceChange c;
    c.address = old.address + " (deposed)";
    c.type = old.type;
    c.action = plan::Action::Delete;
    c.before = old;
    c.deposed = true;
    p.changes.push_back(std::move(c));
  }
  if (const auto targets = args.all("target"); !targets.empty()) {
    auto t = plan::restrict_to_targets(p, targets);
    if (!t) {
      fail(io, command, t.error().message);
      return std::nullopt;
    }
    std::fprintf(io.err,
                 "warning: resource targeting is in effect: this plan holds only the changes of %s%s; %d other "
                 "change(s) the blueprint needs are left out.\n  -target is for exceptional situations, such as "
                 "recovering from an error; run a full plan afterwards so nothing is forgotten.\n",
                 join(targets, ", ").c_str(),
                 t->added.empty() ? "" : (" and what they need (" + join(t->added, ", ") + ")").c_str(),
                 t->changes_left_out);
    p = std::move(t->plan);
  }

  // 6. the servers the plan touches or keeps, checked against the blueprint
  // by the caller once the policy gate passed (check_inventory)
  std::set<std::string> planned;
  for (const auto& c : p.changes)
    if (c.action != plan::Action::Delete) planned.insert(c.address);
  std::erase_if(inventory, [&](const Resource& r) { return !planned.count(r.address); });
  return Planned{std::move(*loaded), std::move(desired), std::move(*session), std::move(p), std::move(drift),
                 std::move(inventory), adopted};
}

}  // namespace plinth::cli
