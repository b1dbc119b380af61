#include "engine/run/plan.h"

#include <algorithm>

#include "engine/blueprint/loader.h"
#include "engine/blueprint/trust.h"
#include "engine/core/strings.h"
#include "engine/plan/target.h"
#include "engine/provider/call.h"
#include "engine/provider/registry.h"
#include "engine/run/outputs.h"

namespace plinth::run {
namespace {

/// "ADDRESS: message", naming the address once (provider errors usually
/// start with it already).
std::string about(const std::string& address, const std::string& message) {
  return safe_text(message.rfind(address + ":", 0) == 0 ? message : address + ": " + message);
}

}  // namespace

std::optional<apply::RefreshResult> refresh_state(StateSession& session, ProviderSet& providers, Events& events,
                                                  const std::set<std::string>& rechecked,
                                                  const std::vector<Resource>& desired) {
  if (auto st = providers.open(providers_of({}, session.doc.resources)); !st) {
    events.error(st.error().message);
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
  events.diagnostics(r.diagnostics);
  for (const auto& f : r.failures) events.error("refresh " + about(f.address, f.error.message));
  if (!r.failures.empty() || has_errors(r.diagnostics)) {
    // A failure is a resource's read, or a provider's search for objects
    // the state does not record ("provider azure"): counted apart.
    std::vector<std::string> failed_providers;
    size_t failed_resources = count(r.diagnostics, Severity::Error);
    for (const auto& f : r.failures) {
      if (f.address.rfind("provider ", 0) == 0) failed_providers.push_back(f.address.substr(9));
      else ++failed_resources;
    }
    std::string what;
    if (failed_resources) what = std::to_string(failed_resources) + " resource(s)";
    if (!failed_providers.empty())
      what += (what.empty() ? "" : " and ") + std::string(failed_providers.size() == 1 ? "provider " : "providers ") +
              join(failed_providers, ", ");
    events.error("refresh failed for " + what + "; nothing was changed and the state " + session.path +
                 " is as it was. Fix the errors above, or pass --refresh=false to plan against the state as "
                 "recorded.");
    return std::nullopt;
  }
  // Objects their provider removed on its own (a reclaimed spot instance)
  // are not drift by a person: they are reported apart.
  std::vector<apply::Drift> by_person, by_provider;
  for (const auto& d : r.drift) (d.gone && !d.reason.empty() ? by_provider : by_person).push_back(d);
  if (!by_person.empty() || !by_provider.empty()) events.drift(by_person, by_provider);
  if (!r.adopted.empty()) events.adopted(session.doc.lineage, r.adopted);
  if (!r.deposed.empty()) {
    events.superseded(r.deposed);
    session.doc.deposed.insert(session.doc.deposed.end(), r.deposed.begin(), r.deposed.end());
  }
  session.doc.resources = r.resources;
  return r;
}

bool check_inventory(const std::vector<Resource>& desired, ProviderSet& providers, Events& events,
                     const std::string& operation) {
  if (desired.empty()) return true;
  if (auto st = providers.open(providers_of(desired, {})); !st) {
    events.error(st.error().message);
    return false;
  }
  // With the provider's retries, as the refresh reads: a throttled or
  // briefly unavailable BMC does not fail the plan.
  apply::RefreshResult r = apply::refresh(desired, providers.lookup(), providers.limits_lookup());
  events.diagnostics(r.diagnostics);
  // A plan that could not read the servers it creates or keeps is no plan:
  // it would show creates that can only fail (a wrong BMC password).
  if (!r.failures.empty()) {
    constexpr size_t kShown = 3;
    std::vector<std::string> named;
    for (size_t i = 0; i < r.failures.size() && i < kShown; ++i)
      named.push_back(about(r.failures[i].address, r.failures[i].error.message));
    std::string more = r.failures.size() > kShown
                           ? "; and " + std::to_string(r.failures.size() - kShown) + " more server(s)"
                           : std::string();
    events.error("cannot read " + std::to_string(r.failures.size()) + " server(s) the plan creates or keeps: " +
                 join(named, "; ") + more + ". Nothing was " + (operation == "plan" ? "saved" : "changed") +
                 ": fix the access (credentials, network, CA bundle), or plan with --refresh=false to plan "
                 "without reading the fleet");
    return false;
  }
  if (!has_errors(r.diagnostics)) return true;
  events.error("the inventory of " + std::to_string(count(r.diagnostics, Severity::Error)) +
               " server(s) differs from the blueprint (errors above); nothing was changed. Fix the pools' hardware "
               "declarations or the servers, then plan again.");
  return false;
}

bool check_preflight(const plan::Plan& plan, ProviderSet& providers, Events& events, const std::string& operation) {
  std::map<std::string, std::vector<Resource>> by_provider;
  for (const auto& c : plan.changes)
    if (c.after && !c.deposed &&
        (c.action == plan::Action::Create || c.action == plan::Action::Update || c.action == plan::Action::Replace))
      by_provider[c.after->provider].push_back(*c.after);
  if (by_provider.empty()) return true;
  Diagnostics found;
  for (const auto& [name, rs] : by_provider) {
    // A provider that cannot be configured (no credentials) can read
    // nothing: the plan would promise what apply cannot do.
    if (auto st = providers.open({name}); !st) {
      std::string why = st.error().message;
      if (const std::string own = "provider " + name + ": "; why.rfind(own, 0) == 0) why.erase(0, own.size());
      found.push_back({"PLAN001", Severity::Error,
                       "provider " + name + " cannot be used for the " + std::to_string(rs.size()) +
                           " resource(s) the plan changes (" + rs.front().address +
                           (rs.size() > 1 ? ", ..." : "") + "): " + why,
                       rs.front().source, rs.front().address,
                       "give it its credentials (docs/providers/" + name +
                           ".md), or plan with --refresh=false to plan without contacting the providers"});
      continue;
    }
    Provider* p = providers.get(name);
    if (!p) continue;
    const apply::ProviderLimits limits = providers.limits_lookup()(name);
    RetryPolicy once = limits.retry;
    once.max_attempts = 1;
    Call call(Deadline::after(limits.deadlines.read), once);
    auto ds = p->preflight(rs, call);
    found.insert(found.end(), ds.begin(), ds.end());
  }
  events.diagnostics(found);
  if (!has_errors(found)) return true;
  events.error(std::to_string(count(found, Severity::Error)) + " problem(s) above would stop the " +
               (operation == "plan" ? std::string("apply") : operation) +
               " half-way; nothing was changed. Fix them and run plinth " + operation + " again.");
  return false;
}

void release_at_exit(Planned& planned) {
  struct Kept {
    Loaded loaded;
    std::shared_ptr<const graph::ResourceGraph> desired;
    state::StateDocument doc;
    plan::Plan plan;
    std::vector<Resource> inventory;
    std::shared_ptr<const std::vector<Resource>> prior;
  };
  static std::vector<Kept*>* kept = new std::vector<Kept*>();  // never freed, on purpose
  kept->push_back(new Kept{std::move(planned.loaded), std::move(planned.desired), std::move(planned.state.doc),
                           std::move(planned.plan), std::move(planned.inventory), std::move(planned.prior)});
}

std::optional<Planned> plan(const PlanOptions& options, ProviderSet& providers, Events& events,
                            const std::function<void(const Checked&)>& on_invalid) {
  // 1. load
  auto loaded = load_blueprint(options.paths, providers.factory(), events, on_invalid);
  if (!loaded) return std::nullopt;
  providers.use_declarations(loaded->blueprint.providers);

  // 2. expand (shared, read-only: the plan's desired resources are these)
  auto expanded = graph::expand(loaded->blueprint);
  if (!expanded) {
    events.error(expanded.error().message);
    return std::nullopt;
  }
  auto desired = std::make_shared<const graph::ResourceGraph>(std::move(*expanded));

  // Untrusted: every credential the plan would read and send is one the
  // operator's trust file allows for that endpoint, before any request.
  if (options.untrusted) {
    Diagnostics refused = bp::check_untrusted_credentials(desired->resources, *options.untrusted);
    if (!refused.empty()) {
      events.diagnostics(refused);
      events.error(std::to_string(refused.size()) +
                   " credential use(s) the trust file does not allow; nothing was read or sent (docs/security.md)");
      return std::nullopt;
    }
  }

  std::set<std::string> used;
  for (const auto& r : desired->resources) used.insert(r.provider);
  if (auto st = providers.check_options(used); !st) {
    events.error(st.error().message);
    return std::nullopt;
  }

  // 3. state
  auto session = open_state(options.state, options.paths, "plinth " + options.operation, options.untrusted != nullptr);
  if (!session) {
    events.error(session.error().message);
    return std::nullopt;
  }
  if (!session->notice.empty()) events.note(session->notice);

  // 4. refresh (servers the blueprint declares are checked against it below)
  static const std::vector<Resource> kNothing;
  std::vector<Resource> inventory;
  std::set<std::string> rechecked;
  if (!options.destroy && options.refresh)
    for (const auto& r : desired->resources)
      if (const ResourceType* t = find_resource_type(r.type, r.provider); t && t->inventory) {
        inventory.push_back(r);
        rechecked.insert(r.address);
      }
  if (!session->doc.lineage.empty()) providers.bind({session->doc.lineage, loaded->blueprint.metadata.name});
  std::vector<apply::Drift> drift;
  bool adopted = false;
  if (options.refresh && (!session->doc.resources.empty() || !session->doc.lineage.empty())) {
    auto r = refresh_state(*session, providers, events, rechecked,
                           options.destroy ? kNothing : desired->resources);
    if (!r) return std::nullopt;
    drift = std::move(r->drift);
    adopted = !r->adopted.empty();
  }

  // 5. diff (the deletes of deposed objects included; -target: only some
  // resources and what they need)
  const std::shared_ptr<const std::vector<Resource>> desired_resources(desired, &desired->resources);
  std::shared_ptr<const std::vector<Resource>> prior;
  plan::Plan p;
  if (options.destroy) {
    p = plan::diff(kNothing, session->doc.resources, session->doc.deposed);
  } else if (options.share_state) {
    prior = std::make_shared<const std::vector<Resource>>(std::move(session->doc.resources));
    session->doc.resources.clear();
    p = plan::diff_sharing_all(desired_resources, prior, session->doc.deposed);
  } else {
    p = plan::diff_sharing(desired_resources, session->doc.resources, session->doc.deposed);
  }
  if (!options.replace.empty()) {
    if (options.destroy) {
      events.error("-replace and -destroy exclude each other: a destroy plan replaces nothing");
      return std::nullopt;
    }
    if (auto st = plan::request_replace(p, options.replace); !st) {
      events.error(st.error().message);
      return std::nullopt;
    }
  }
  if (!options.targets.empty()) {
    auto t = plan::restrict_to_targets(p, options.targets);
    if (!t) {
      events.error(t.error().message);
      return std::nullopt;
    }
    events.warning("warning: resource targeting is in effect: this plan holds only the changes of " +
                   join(options.targets, ", ") +
                   (t->added.empty() ? "" : " and what they need (" + join(t->added, ", ") + ")") + "; " +
                   std::to_string(t->changes_left_out) +
                   " other change(s) the blueprint needs are left out.\n  -target is for exceptional situations, "
                   "such as recovering from an error; run a full plan afterwards so nothing is forgotten.");
    p = std::move(t->plan);
  }

  // 6. the servers the plan touches or keeps, checked against the blueprint
  // by the caller once the policy gate passed (check_inventory)
  std::set<std::string> planned;
  for (const auto& c : p.changes)
    if (c.action != plan::Action::Delete) planned.insert(c.address);
  std::erase_if(inventory, [&](const Resource& r) { return !planned.count(r.address); });
  return Planned{std::move(*loaded), std::move(desired), std::move(*session), std::move(p), std::move(drift),
                 std::move(inventory), adopted, options.refresh && !options.destroy, std::move(prior)};
}

state::StateDocument Planned::state_document() const {
  state::StateDocument doc = state.doc;
  if (prior) doc.resources = *prior;
  return doc;
}

std::optional<Refreshed> refresh(const PlanOptions& options, ProviderSet& providers, Events& events,
                                 const std::function<bool()>& approve) {
  auto session = open_state(options.state, options.paths, "plinth refresh");
  if (!session) {
    events.error(session.error().message);
    return std::nullopt;
  }
  if (!session->notice.empty()) events.note(session->notice);
  Refreshed out;
  out.state_path = session->path;
  if (!session->existed) return out;
  out.existed = true;
  // The blueprint says which plugins (and options) its providers are, and
  // what objects of this state not recorded in it would be.
  std::vector<Resource> desired;
  std::string blueprint_name;
  std::optional<Loaded> loaded;
  if (!options.paths.empty()) {
    loaded = load_blueprint(options.paths, providers.factory(), events);
    if (!loaded) return std::nullopt;
    providers.use_declarations(loaded->blueprint.providers);
    blueprint_name = loaded->blueprint.metadata.name;
    if (auto g = graph::expand(loaded->blueprint)) desired = std::move(g->resources);
  }
  providers.bind({session->doc.lineage, blueprint_name});
  out.resources = session->doc.resources.size();
  auto r = refresh_state(*session, providers, events, {}, desired);
  if (!r) return std::nullopt;
  out.drifted = r->drift.size();
  out.adopted = r->adopted.size();
  // The outputs follow what was observed (an instance's new address).
  Json outputs = loaded ? evaluate_outputs(loaded->blueprint, session->doc.resources) : session->doc.outputs;
  if (r->drift.empty() && r->adopted.empty() && outputs == session->doc.outputs) return out;
  if (approve && !approve()) {
    out.declined = true;
    return out;
  }
  state::StateDocument next = session->doc;
  next.serial = session->doc.serial + 1;
  next.outputs = std::move(outputs);
  if (auto s = session->backend->save(next); !s) {
    events.error("state " + session->path + ": " + s.error().message);
    return std::nullopt;
  }
  out.serial = next.serial;
  return out;
}

std::optional<Imported> import_resource(const ImportRequest& request, const PlanOptions& options, ProviderSet& providers,
                                 Events& events) {
  const std::string& address = request.address;
  const std::string& id = request.id;
  // 1. the blueprint must declare it
  auto loaded = load_blueprint(options.paths, providers.factory(), events);
  if (!loaded) return std::nullopt;
  auto fail = [&](const std::string& message) {
    events.error(message);
    return std::nullopt;
  };
  auto desired = graph::expand(loaded->blueprint);
  if (!desired) return fail(desired.error().message);
  const Resource* want = desired->find(address);
  if (!want) {
    std::vector<std::string> all;
    for (const auto& r : desired->resources) all.push_back(r.address);
    std::string msg = "the blueprint declares no '" + address + "'; import adopts a resource the blueprint declares";
    if (auto m = closest_match(address, all)) msg += "; did you mean '" + *m + "'?";
    else msg += " (add it to the blueprint first; plinth plan lists the addresses)";
    return fail(msg);
  }
  const ResourceType* type = find_resource_type(want->type, want->provider);
  if (!type || type->import_id.empty())
    return fail(address + " (" + want->type + ", provider " + want->provider +
                          ") cannot be imported: its provider declares no identity to adopt it by (plinth providers "
                          "--json shows each type's import_id); plinth apply creates or records it");
  if (type->import_id == "bmc_endpoint")
    if (auto problem = bp::bmc_endpoint_problem(id); !problem.empty()) return fail(problem);
  // The blueprint says which object the address is (a node's BMC from its
  // pool's bmc.endpoints): adopting another one would have the next plan
  // reprovision a server of another pool.
  if (auto it = want->attributes.find(type->import_id);
      !request.force && it != want->attributes.end() && it->is_string() && !it->get<std::string>().empty() &&
      it->get<std::string>() != id)
    return fail(address + " is declared with " + type->import_id + " " + it->get<std::string>() + " (" +
                want->source.str() + "), not " + id +
                "; import the object the blueprint names, change the blueprint first, or pass --force to adopt this one");

  // 2. state, locked for the whole import
  auto session = open_state(options.state, options.paths, "plinth import");
  if (!session) return fail(session.error().message);
  if (!session->notice.empty()) events.note(session->notice);
  if (session->doc.find(address))
    return fail(address + " is already in state " + session->path +
                          "; to adopt another one, first forget it: plinth state rm '" + address + "'");

  // 3. read it through its provider
  Resource probe = *want;
  probe.attributes[type->import_id] = id;
  providers.use_declarations(loaded->blueprint.providers);
  if (auto st = providers.open({want->provider}); !st) return fail(st.error().message);
  Provider* p = providers.get(want->provider);
  if (!p) return fail("no provider '" + want->provider + "' in this build");
  const apply::ProviderLimits limits = providers.limits_lookup()(want->provider);
  Call call(Deadline::after(limits.deadlines.read), limits.retry);
  auto results = p->read({probe}, call);
  if (results.size() != 1) return fail("provider " + want->provider + " returned no answer for " + address);
  ReadResult& r = results.front();
  events.diagnostics(r.diagnostics);
  if (r.error)
    return fail("cannot read " + address + " (" + type->import_id + " " + id + "): " + r.error->message +
                          "; nothing was imported");
  if (!r.current)
    return fail("there is no " + want->type + " with " + type->import_id + " " + id +
                          " (the provider found nothing there); nothing was imported");
  if (has_errors(r.diagnostics))
    return fail(address + " does not match the blueprint (errors above); nothing was imported. Fix the "
                          "blueprint or pick the right " + type->import_id);
  // The object itself (a server's UUID) may already be recorded under another
  // address: the same server reached through another BMC address, or a typo.
  for (const auto& key : type->identity) {
    auto v = r.current->computed.find(key);
    if (request.force || v == r.current->computed.end() || !v->is_string() || v->get<std::string>().empty()) continue;
    for (const auto& other : session->doc.resources) {
      if (other.type != want->type || other.address == address) continue;
      auto o = other.computed.find(key);
      if (o == other.computed.end() || *o != *v) continue;
      return fail("the object at " + type->import_id + " " + id + " has " + key + " " + v->get<std::string>() +
                  ", which state " + session->path + " records as " + other.address +
                  "; one object cannot be two resources (the same server behind another BMC address?). Forget the "
                  "old address first (plinth state rm '" + other.address + "'), or pass --force; nothing was imported");
    }
  }

  // 4. record it
  Resource adopted = *r.current;
  adopted.depends_on = want->depends_on;
  adopted.source = want->source;
  state::StateDocument next = session->doc;
  if (next.lineage.empty()) next = state::new_document();
  next.serial = session->doc.serial + 1;
  next.resources.push_back(std::move(adopted));
  std::sort(next.resources.begin(), next.resources.end(),
            [](const Resource& a, const Resource& b) { return a.address < b.address; });
  if (auto st = session->backend->save(next); !st) return fail("state " + session->path + ": " + st.error().message);
  return Imported{type->import_id, session->path, next.serial};
}

}  // namespace plinth::run
