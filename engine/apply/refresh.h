#pragma once
// Refresh: read every resource in state through its provider and report
// drift (attributes changed outside Plinth).
#include <optional>
#include <string>
#include <vector>

#include "engine/apply/executor.h"
#include "engine/core/diagnostic.h"
#include "engine/plan/plan.h"

namespace plinth::apply {

/// One resource whose observed attributes differ from state.
struct Drift {
  std::string address;
  bool gone = false;  ///< the provider says it no longer exists
  std::vector<plan::AttributeChange> changes;  ///< before = state value, after = observed value
};

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
};

/// Reads `prior` through providers, one batch call per provider. Resources of
/// provider "plinth" (logical) are kept as they are. A provider this build
/// does not have is a failure for each of its resources.
RefreshResult refresh(const std::vector<Resource>& prior, const ProviderLookup& providers);

/// "  ~ baremetal.node.a[0]\n      bios.X: "A" -> "B"\n" blocks, or "" when
/// there is no drift. Sensitive values print as (sensitive).
std::string drift_text(const std::vector<Drift>& drift);

}  // namespace plinth::apply
