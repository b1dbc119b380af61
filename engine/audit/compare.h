#pragma once
// What a change does to policy verdicts (`plinth plan --against REF`): the
// failures it adds and the ones it fixes, comparing the verdicts of the
// blueprint at REF with those of the working tree.
#include <string>
#include <vector>

#include "engine/plan/plan.h"
#include "engine/policy/policy.h"

namespace plinth::audit {

struct VerdictChange {
  std::string policy;
  std::string address;  ///< "" for the blueprint as a whole
  std::string before;   ///< outcome at REF ("pass", "fail", "waived", "error"; "absent": no verdict)
  std::string after;    ///< outcome in the working tree (same values)
  std::string message;  ///< the working tree's message for added failures, REF's for fixed ones
  bool operator==(const VerdictChange&) const = default;
};

struct VerdictDelta {
  /// Fail or error now, and not (for that policy and address) at REF.
  std::vector<VerdictChange> added;
  /// Fail or error at REF, and not now (passing, waived, or the resource is gone).
  std::vector<VerdictChange> fixed;
  bool operator==(const VerdictDelta&) const = default;
};

/// Compares two evaluations verdict by verdict, keyed by (policy, address).
/// Lists are sorted by policy, then address.
VerdictDelta compare_verdicts(const policy::Evaluation& base, const policy::Evaluation& head);

/// The text `plan --against` prints, e.g.
///   Compared with main (3f2a9c1d0b7e): 2 resource(s) added, 1 changed, 0 removed.
///     + storage.tier.scratch
///     ~ baremetal.node.train[0] (instance_type)
///   Policy verdicts: this change adds 1 failure(s), fixes 1.
///     + SOC2-ENC-001 storage.tier.scratch: tier 'scratch' is not encrypted at rest
///     - HIPAA-AUD-001 (blueprint): was fail
/// `resources` is plan::diff(head resources, base resources).
std::string describe_change(const std::string& ref, const std::string& commit, const plan::Plan& resources,
                            const VerdictDelta& delta);

}  // namespace plinth::audit
