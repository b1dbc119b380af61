#include "engine/run/state_session.h"

#include <cstdlib>

#include "engine/core/log.h"
#include "engine/provider/registry.h"
#include "engine/state/journal.h"

namespace plinth::run {

Result<state::EncryptionSettings> state_encryption(const StateOptions& options, const std::string& location,
                                                   bool document_needs_key) {
  auto key = state::state_key_from(options.key_file);
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

Result<std::unique_ptr<state::Backend>> open_state_backend(const StateOptions& options, const std::string& location) {
  auto s = state_encryption(options, location);
  if (!s) return s.error();
  return state::with_encryption(state::open_backend(location), std::move(*s));
}

Result<StateSession> open_state(const StateOptions& options, const std::vector<std::string>& paths,
                                const std::string& operation, bool untrusted) {
  StateSession s;
  const std::string location = state::resolve_state_path(options.location, paths);
  s.location = location;
  s.path = state::redact_location(location);
  // Backend messages usually name the state already ("state P is locked
  // by ..."); say it once.
  auto fail = [&](const std::string& m) {
    return Error::invalid(m.rfind("state " + s.path, 0) == 0 ? m : "state " + s.path + ": " + m);
  };
  auto backend = open_state_backend(options, location);
  if (!backend) return fail(backend.error().message);
  s.backend = std::move(*backend);
  // -lock=false: a read-only plan (Terraform's flag); an untrusted plan
  // writes nothing, not even the lock file.
  if (options.lock && !untrusted) {
    auto guard = state::LockGuard::acquire(*s.backend, operation, options.lock_timeout);
    if (!guard) {
      std::string m = guard.error().message;
      if (operation == "plinth plan" && m.find("cannot open the lock file") != std::string::npos)
        m += "; to plan without writing anything, pass -lock=false";
      return fail(m);
    }
    s.lock.emplace(std::move(*guard));
    log::write(log::Level::Info, "state", "locked " + s.path + " for " + operation);
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
        auto journal = open_state_backend(options, jp);
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

}  // namespace plinth::run
