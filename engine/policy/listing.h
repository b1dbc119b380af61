#pragma once
#include <string>
#include <vector>

#include "engine/policy/policy.h"

namespace plinth::policy {

/// "soc2/encryption.lua": the policy's file relative to its policy
/// directory (pack folder + file name).
std::string pack_file(const PolicyInfo& p);

/// "soc2 CC6.1, CC6.7; hipaa 164.312(a)(2)(iv)" (frameworks sorted).
std::string controls_text(const PolicyInfo& p);

/// docs/policies.md: every policy grouped by pack, with severity,
/// enforcement, controls and description. Depends only on the policies, so
/// the same packs always give the same bytes.
std::string policies_markdown(const std::vector<PolicyInfo>& policies);

}  // namespace plinth::policy
