#pragma once
// -target ADDRESS: a plan cut down to some resources and what they need.
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/plan/plan.h"

namespace plinth::plan {

/// What restrict_to_targets kept.
struct Targeted {
  Plan plan;                       ///< the targeted changes, in the original order
  int changes_left_out = 0;        ///< changes of the full plan not in `plan`
  std::vector<std::string> added;  ///< addresses pulled in as dependencies (or dependents), sorted
};

/// The part of `plan` that `targets` select, Terraform's -target: a target
/// is an address ("baremetal.node.train-a[3]") or a resource without an
/// index, which selects every index ("baremetal.node.train-a"). A selected
/// create, update or replace brings in the changes of everything it depends
/// on (transitively, through the desired `depends_on`); a selected delete
/// brings in the deletes of what depended on it, so nothing is left pointing
/// at a resource that is gone. A target that names nothing in the plan
/// (no-ops included) is an error with a "did you mean".
Result<Targeted> restrict_to_targets(const Plan& plan, const std::vector<std::string>& targets);

/// Terraform's -replace: each address (one resource, "baremetal.node.train-a[3]")
/// that the plan keeps or updates becomes a replace with replace_requested
/// set; one it replaces already is marked too. An address the plan creates
/// or deletes, or that names nothing in both the blueprint and the state,
/// is an error that says why.
Status request_replace(Plan& plan, const std::vector<std::string>& addresses);

}  // namespace plinth::plan
