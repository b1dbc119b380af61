#include "engine/cli/planning.h"

namespace plinth::cli {

Result<StateSession> open_state(const Args& args, const std::string& operation) {
  StateSession s;
  const std::string location = state::resolve_state_path(args.get("state"), args.positional);
  s.path = state::redact_location(location);
  auto fail = [&](const std::string& m) { return Error::invalid("state " + s.path + ": " + m); };
  auto timeout = state::parse_duration(args.get_or("lock-timeout", "0s"));
  if (!timeout) return fail("--lock-timeout: " + timeout.error().message);
  s.backend = state::open_backend(location);
  auto guard = state::LockGuard::acquire(*s.backend, operation, *timeout);
  if (!guard) return fail(guard.error().message);
  s.lock.emplace(std::move(*guard));
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
                                                  const std::string& command, FILE* drift_out) {
  if (auto st = providers.open(providers_of({}, session.doc.resources)); !st) {
    fail(io, command, st.error().message);
    return std::nullopt;
  }
  apply::RefreshResult r = apply::refresh(session.doc.resources, providers.lookup(), providers.limits_lookup());
  print_diagnostics(r.diagnostics, io);
  for (const auto& f : r.failures)
    std::fprintf(io.err, "plinth %s: refresh %s: %s\n", command.c_str(), f.address.c_str(), f.error.message.c_str());
  if (!r.failures.empty() || has_errors(r.diagnostics)) {
    std::fprintf(io.err,
                 "plinth %s: refresh failed for %zu resource(s); nothing was changed and the state %s is as it was. "
                 "Fix the errors above, or pass --refresh=false to plan against the state as recorded.\n",
                 command.c_str(), r.failures.size() + count(r.diagnostics, Severity::Error), session.path.c_str());
    return std::nullopt;
  }
  if (drift_out && !r.drift.empty()) {
    std::fprintf(drift_out, "Drift: %zu resource(s) changed outside Plinth (state -> observed):\n%s\n", r.drift.size(),
                 apply::drift_text(r.drift).c_str());
  }
  session.doc.resources = r.resources;
  return r;
}

std::optional<Planned> build_plan(const Args& args, Io& io, const std::string& command, ProviderSet& providers,
                                  bool destroy) {
  // 1. load
  auto loaded = load_blueprint(args.positional, io);
  if (!loaded) return std::nullopt;
  providers.use_declarations(loaded->blueprint.providers);

  // 2. expand
  auto desired = graph::expand(loaded->blueprint);
  if (!desired) {
    fail(io, command, desired.error().message);
    return std::nullopt;
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

  // 4. refresh
  std::vector<apply::Drift> drift;
  if (args.flag("refresh", true) && !session->doc.resources.empty()) {
    auto r = refresh_state(*session, providers, io, command, io.err);
    if (!r) return std::nullopt;
    drift = std::move(r->drift);
  }

  // 5. diff
  plan::Plan p = plan::diff(destroy ? std::vector<Resource>{} : desired->resources, session->doc.resources);
  return Planned{std::move(*loaded), std::move(*desired), std::move(*session), std::move(p), std::move(drift)};
}

}  // namespace plinth::cli
