#pragma once
// Applying what was reviewed: the checks that keep an apply reproducible
// (the blueprint committed) and a saved plan honest (every binding it was
// made under still holds), before run::apply executes it.
#include <optional>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/plan/planfile.h"
#include "engine/run/events.h"
#include "engine/run/options.h"
#include "engine/run/plan.h"
#include "engine/run/provider_set.h"

namespace plinth::run {

/// What is applied must be reproducible from a commit: an error naming the
/// blueprint files of `files` with uncommitted changes (or why git could
/// not tell), with what to do.
Status require_committed(const std::vector<std::string>& files);

/// The planning half of `apply PLANFILE`: loads the blueprint `saved` was
/// made from and locks the state (options.refresh is ignored: no refresh,
/// the saved plan is what runs), then re-checks every binding (blueprint
/// and policy hashes, state lineage and serial, the git commit, plinth's
/// version; a plan made against no state applies only where there has never
/// been one) and returns the Planned carrying exactly the saved plan.
/// Reports what does not hold (Events::error, "refusing the saved plan
/// PATH: ...") and returns nullopt then; nothing is changed.
std::optional<Planned> plan_saved(const plan::PlanFile& saved, const std::string& path, PlanOptions options,
                                  ProviderSet& providers, Events& events);

}  // namespace plinth::run
