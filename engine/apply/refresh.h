#pragma once
// Refresh: read every resource in state through its provider and report
// drift (attributes changed outside Plinth).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/apply/executor.h"
#include "engine/core/diagnostic.h"
#include "engine/plan/plan.h"

namespace plinth::apply {

using plan::Drift;

struct ReadFailure {
  std::string address;
  Error error;
};

struct RefreshResult {
  /// State resources as observed, sorted like the input; a resource that is
  /// gone is dropped, one that could not be read is kept as it was.
  std::vector<Resource> resources;
  std::vector<Drift> drift;           ///< address order
  std::vector<ReadFailure> failures;  ///< address order
  Diagnostics diagnostics;            ///< what providers found (inventory mismatches, ...)
  /// Objects providers found for this state that it did not record
  /// (Provider::discover); also in `resources`. Address order.
  std::vector<Resource> adopted;
  /// Objects providers found for this state at an address it records with
  /// another object (a create-before-destroy replacement whose run died
  /// before its journal write): the caller records them as deposed, so the
  /// next apply removes them. When the found object is what the blueprint
  /// wants and the recorded one is not, the two trade places (the recorded
  /// one is here, the found one in `resources`). Address order.
  std::vector<Resource> deposed;
};

/// Which providers refresh asks for objects the state does not record, and
/// the blueprint's resources they are matched against.
struct Discovery {
  std::vector<std::string> providers;
  std::vector<Resource> desired;
  std::vector<Resource> deposed;  ///< the state's deposed objects (known, not read)
};

/// The limits of provider `name` (its retry policy and read deadline).
using LimitsLookup = std::function<ProviderLimits(const std::string& name)>;

/// Reads `prior` through providers: one batch call per provider, providers
/// in parallel. Reads that fail with a retryable error are read again in a
/// later batch, with the provider's backoff, until they succeed, fail for
/// good, run out of attempts or pass the provider's read deadline (counted
/// from the first attempt). A provider this run does not have is a failure
/// for each of its resources. Without `limits`, ProviderLimits' defaults.
/// With `discovery`, each of its providers is then asked for objects of this
/// state that `prior` lacks (one call each, with the read deadline); they
/// are adopted (RefreshResult::adopted) or, at an address `prior` holds,
/// returned as deposed (RefreshResult::deposed); a failing discovery is a
/// failure named after the provider.
RefreshResult refresh(const std::vector<Resource>& prior, const ProviderLookup& providers,
                      const LimitsLookup& limits = {}, const Discovery& discovery = {});

/// "  ~ baremetal.node.a[0]\n      bios.X: "A" -> "B"\n" blocks, or "" when
/// there is no drift. Sensitive values print as (sensitive).
std::string drift_text(const std::vector<Drift>& drift);

}  // namespace plinth::apply
