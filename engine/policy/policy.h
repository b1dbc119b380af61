#pragma once
#include <map>
#include <string>
#include <vector>

#include "engine/blueprint/blueprint.h"
#include "engine/core/diagnostic.h"
#include "engine/plan/plan.h"
#include "engine/policy/sandbox.h"
#include "engine/provider/resource.h"

namespace plinth::policy {

/// One policy's declaration, as read from its `policy { ... }` table.
struct PolicyInfo {
  std::string id;           ///< "SOC2-ENC-001"; unique across every loaded directory
  std::string title;
  std::string description;
  std::string severity;     ///< low | medium | high | critical
  std::string enforcement;  ///< advisory | mandatory
  /// framework -> control IDs ("soc2" -> {"CC6.1"}), frameworks sorted by name.
  std::map<std::string, std::vector<std::string>> controls;
  std::string pack;  ///< the directory under the policy dir ("soc2", "ml"); "" at the root
  SourceLoc loc;     ///< file:line of the `policy {` call
  bool mandatory() const { return enforcement == "mandatory"; }
  bool operator==(const PolicyInfo&) const = default;
};

/// NotApplicable: the check found nothing its policy is about (no backups, no
/// tier holding PHI, nothing leaving the EU/EEA); evidence of nothing, so a
/// control it maps to is never "pass" on its account. Kept last: isolated
/// runs send outcomes as numbers.
enum class Outcome { Pass, Fail, Waived, Error, NotApplicable };
const char* to_string(Outcome o);
/// Fail, Error or Waived: a verdict the user is shown (pass and not
/// applicable are evidence for the audit report only).
inline bool is_finding(Outcome o) { return o == Outcome::Fail || o == Outcome::Error || o == Outcome::Waived; }

/// One finding of one policy. A policy that reports nothing passes with one
/// verdict whose address is empty; one that calls not_applicable(address,
/// why) says it had nothing to check.
struct Verdict {
  std::string policy;  ///< policy ID
  Outcome outcome = Outcome::Pass;
  std::string address;  ///< resource address; "" when about the whole blueprint
  std::string message;  ///< fail: what is wrong; pass: evidence; error: the Lua error
  SourceLoc loc;        ///< the resource's blueprint source, or the policy file:line for errors
  // Set when outcome == Waived: the waiver that covered the failure.
  std::string waiver_justification;
  std::string waiver_approver;
  SourceLoc waiver_loc;
  bool operator==(const Verdict&) const = default;
};

/// Every policy found in a set of directories. Files are `*.lua` found
/// recursively (sorted), except `*_test.lua`; a file may declare several
/// policies. A pack's settings (`<dir>/<pack>/settings.yaml`, on disk or
/// compiled in: a map of names to scalars; a later directory's file overrides
/// an earlier one's names) are read first, so policy files see them through
/// `setting(name, default)`. Broken files and bad declarations are diagnostics
/// (POL001...) with file:line; the good policies still load.
struct PolicySet {
  std::vector<PolicyInfo> policies;           ///< in file order
  std::vector<std::string> files;             ///< every policy file read
  std::map<std::string, std::string> hashes;  ///< file -> sha256, for audit reports
  Diagnostics diagnostics;
};

PolicySet load_policies(const std::vector<std::string>& dirs, const Limits& limits = {});

/// The frameworks that gate packs: every framework named in some policy's
/// controls. A pack named after one of them applies only when the
/// blueprint's metadata.compliance lists it; other packs (ml, your own)
/// always apply.
std::vector<std::string> framework_names(const std::vector<PolicyInfo>& policies);
bool pack_applies(const std::string& pack, const std::vector<std::string>& frameworks,
                  const std::vector<std::string>& compliance);

/// What the policies see. `blueprint_json` is the blueprint in its YAML
/// shape; `blueprint` resolves addresses that are not resources (a burst
/// pool with no instances) to their source position.
struct Input {
  const bp::Blueprint* blueprint = nullptr;
  Json blueprint_json = Json::object();
  /// In graph::address_less order, as an expanded graph's resources are.
  const std::vector<Resource>* resources = nullptr;
  const plan::Plan* plan = nullptr;
  /// ctx.catalog: the GPU / instance-type facts (catalog::Catalog::to_json);
  /// null means the default catalog's.
  Json catalog;
};

struct Options {
  Limits limits;
  /// Run every loaded policy, ignoring metadata.compliance (policy unit tests).
  bool all_packs = false;
};

/// The result of running policies on one input.
struct Evaluation {
  std::vector<PolicyInfo> policies;  ///< the policies that ran, in load order
  std::vector<PolicyInfo> skipped;   ///< policies of packs the blueprint did not select
  std::vector<Verdict> verdicts;     ///< grouped by policy, in the order reported
  Diagnostics diagnostics;           ///< load errors; waiver problems (added by apply_waivers)
  std::map<std::string, std::string> hashes;  ///< policy file -> sha256

  const PolicyInfo* find(const std::string& id) const;
  /// True when a mandatory policy failed or errored, or a diagnostic is an error.
  bool blocked() const;
};

/// Loads the policies in `dirs` into one sandbox, builds the read-only
/// context once and runs each applicable policy's check under the limits.
/// A check that errors, exceeds a limit or returns anything but nothing /
/// true gets an Error verdict; the other policies still run.
Evaluation evaluate(const std::vector<std::string>& dirs, const Input& input, const Options& options = {});

}  // namespace plinth::policy
