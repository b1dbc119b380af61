#include "engine/run/saved_plan.h"

#include "engine/audit/provenance.h"
#include "engine/core/strings.h"

namespace plinth::run {

Status require_committed(const std::vector<std::string>& files) {
  auto prov = audit::record_provenance(files);
  if (!prov) return Error::invalid("git provenance: " + prov.error().message);
  if (!prov->files_dirty) return {};
  return Error::invalid("the blueprint has uncommitted changes (" + join(prov->dirty_files, ", ") +
                        "); commit them so what is applied can be reproduced from a commit, or pass --allow-dirty");
}

std::optional<Planned> plan_saved(const plan::PlanFile& saved, const std::string& path, PlanOptions options,
                                  ProviderSet& providers, Events& events) {
  std::vector<std::string> files, policy_files;
  for (const auto& [f, sha] : saved.bindings.blueprints) files.push_back(f);
  for (const auto& [f, sha] : saved.bindings.policies) policy_files.push_back(f);
  options.paths = files;
  options.refresh = false;
  auto planned = plan(options, providers, events);
  if (!planned) return std::nullopt;
  std::optional<state::StateDocument> stored;
  if (planned->state.existed) stored = planned->state.doc;
  state::StateDocument start = plan::starting_state(saved, stored);

  auto prov = audit::record_provenance(files);
  if (!prov) {
    events.error("git provenance: " + prov.error().message);
    return std::nullopt;
  }
  // A plan made against no state applies only where there has never been
  // one: not after the state it created was moved away with its history kept.
  const bool existed = planned->state.existed;
  if (!existed && !saved.bindings.state_existed) {
    auto kept = planned->state.backend->history();
    if (!kept) {
      events.error(kept.error().message + "; nothing was changed");
      return std::nullopt;
    }
    if (!kept->empty()) {
      events.error("refusing the saved plan " + path + ": it was made when there was no state at " +
                   planned->state.path + ", but that state has " + std::to_string(kept->size()) +
                   " kept version(s) (it was applied before and moved or removed since); run plinth plan again");
      return std::nullopt;
    }
  }
  auto current = plan::make_bindings(files, policy_files,
                                     {plan::bound_location(planned->state.location), existed, start}, prov->commit,
                                     prov->files_dirty);
  if (!current) {
    events.error(current.error().message + "; nothing was changed");
    return std::nullopt;
  }
  if (auto st = plan::verify(saved, *current); !st) {
    events.error("refusing the saved plan " + path + ": " + st.error().message);
    return std::nullopt;
  }
  planned->state.doc = std::move(start);
  planned->plan = saved.plan;
  return planned;
}

}  // namespace plinth::run
