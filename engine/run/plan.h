#pragma once
// Planning, the first half of plan, apply and destroy:
//   load -> expand -> state (locked) -> refresh (providers) -> diff
// and the refresh and inventory steps it is made of.
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/apply/refresh.h"
#include "engine/graph/expand.h"
#include "engine/plan/plan.h"
#include "engine/run/blueprint.h"
#include "engine/run/events.h"
#include "engine/run/options.h"
#include "engine/run/provider_set.h"
#include "engine/run/state_session.h"

namespace plinth::run {

/// Everything a plan needs, and the plan.
struct Planned {
  Loaded loaded;
  std::shared_ptr<const graph::ResourceGraph> desired;  ///< never null; shared with the plan's `after`s
  StateSession state;
  plan::Plan plan;
  std::vector<apply::Drift> drift;
  /// Desired resources of inventory types the plan creates, changes or
  /// keeps: check_inventory() reads them after the policy gate.
  std::vector<Resource> inventory;
  /// The refresh adopted objects the state did not record (saved even when
  /// the plan has no changes).
  bool adopted = false;
  /// Ask the providers what apply will need (check_preflight): unless
  /// --refresh=false (no provider is contacted) or -destroy.
  bool preflight = false;
  /// With PlanOptions::share_state: the state's resources, moved out of
  /// state.doc (whose `resources` is then empty) and shared with the plan's
  /// `before`s; never changed. Null otherwise.
  std::shared_ptr<const std::vector<Resource>> prior;

  /// The state's resources as planned against (prior's, or state.doc's).
  const std::vector<Resource>& state_resources() const { return prior ? *prior : state.doc.resources; }
  /// The state's document with its resources (a copy of it).
  state::StateDocument state_document() const;
};

/// load -> expand -> state -> refresh (unless options.refresh is false;
/// nothing to do without state) -> diff (plan::diff adds the deletes of
/// deposed objects) -> -target. With options.destroy the desired set is empty
/// so every resource in state is planned for deletion. Reports what went
/// wrong (Events::error, diagnostics) and returns nullopt on any failure.
/// `on_invalid` is called with the diagnostics of an invalid blueprint.
std::optional<Planned> plan(const PlanOptions& options, ProviderSet& providers, Events& events,
                            const std::function<void(const Checked&)>& on_invalid = nullptr);

/// The refresh step: reads every resource of `session.doc` through its
/// provider and replaces them with what was observed; objects a provider
/// found at an address the state records with another object are recorded
/// as deposed. Reports provider diagnostics, drift, adoptions. Read failures
/// and provider diagnostics of error severity are errors naming each
/// address; returns nullopt then (the state is left as it was).
/// Diagnostics of addresses in `rechecked` are left out (plan checks those
/// against the blueprint instead: check_inventory).
/// With `desired` (the blueprint's resources) the providers also look for
/// objects of this state it does not record; they are adopted.
std::optional<apply::RefreshResult> refresh_state(StateSession& session, ProviderSet& providers, Events& events,
                                                  const std::set<std::string>& rechecked = {},
                                                  const std::vector<Resource>& desired = {});

/// Reads `desired` (resources of types whose schema sets `inventory`)
/// through their providers and reports what they find: the real objects
/// checked against the blueprint, before anything changes. False when a
/// check found an error (a server whose GPUs differ from its pool's); a
/// resource that cannot be read is a warning (apply will fail it).
bool check_inventory(const std::vector<Resource>& desired, ProviderSet& providers, Events& events,
                     const std::string& operation);

/// Asks the provider of each resource `plan` creates, updates or replaces
/// what apply will need (Provider::preflight) and reports it: false when a
/// provider found a problem apply would certainly hit (an error). Read-only.
bool check_preflight(const plan::Plan& plan, ProviderSet& providers, Events& events, const std::string& operation);

/// For a process about to exit: moves the plan, the desired graph, the state
/// document and the blueprint out of `planned` into storage that is never
/// freed, so that destroying `planned` only releases the state lock and the
/// backend. The process's exit returns the memory at once; freeing the tens
/// of millions of allocations of a 100,000-node plan one by one took a third
/// of the plan's time (docs/benchmarks.md). The storage stays reachable, so
/// leak checkers do not report it.
void release_at_exit(Planned& planned);

/// What `plinth refresh` did.
struct Refreshed {
  bool existed = false;   ///< there was a state to refresh
  std::string state_path;
  size_t resources = 0;   ///< resources in state before
  size_t drifted = 0;     ///< resources that drifted or went away
  size_t adopted = 0;
  uint64_t serial = 0;    ///< the serial saved (0: nothing saved)
  bool declined = false;  ///< there was something to record and `approve` said no
};

/// refresh: reads every resource of the state through its provider, reports
/// drift and records what was observed as a new serial; changes nothing. The
/// blueprint (options.paths, optional) says which plugins and options the
/// providers are and what objects of this state not recorded in it would be.
/// `approve`, when set, is asked once the drift is reported and before it is
/// recorded (apply -refresh-only's question; plan -refresh-only says no).
std::optional<Refreshed> refresh(const PlanOptions& options, ProviderSet& providers, Events& events,
                                 const std::function<bool()>& approve = nullptr);

/// What `plinth import` is asked to adopt.
struct ImportRequest {
  std::string address;  ///< declared by the blueprint
  std::string id;       ///< the value of the type's import_id (a BMC URL, ...)
  /// Import although the blueprint declares another identity for the
  /// address (--force): another pool's BMC, a server being moved.
  bool force = false;
};

struct Imported {
  std::string import_id;  ///< the identity attribute
  std::string state_path;
  uint64_t serial = 0;
};

/// import: reads the declared resource `request.address` through its
/// provider with `request.id` as its identity and records it in state as the
/// next serial; nothing is changed on it. Reports why nothing was imported
/// (Events::error) and returns nullopt otherwise.
std::optional<Imported> import_resource(const ImportRequest& request, const PlanOptions& options, ProviderSet& providers,
                                 Events& events);

}  // namespace plinth::run
