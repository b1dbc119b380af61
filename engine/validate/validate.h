#pragma once
#include <string>
#include <vector>

#include "engine/blueprint/blueprint.h"
#include "engine/catalog/catalog.h"
#include "engine/core/diagnostic.h"

namespace plinth::validate {

/// A domain rule's stable description (docs/rules.md lists every one).
struct RuleInfo {
  std::string id;  ///< e.g. "GPU001"
  Severity severity;
  std::string title;
  std::string checks;     ///< what triggers it and the position it reports (Markdown)
  std::string rationale;  ///< why it matters, with the source of the fact (Markdown)
  std::string fix;        ///< how to fix it (Markdown)
};

/// Every domain rule, sorted by id.
const std::vector<RuleInfo>& rules();

/// docs/rules.md: the loader codes and every domain rule with what it checks,
/// why (with sources) and how to fix it. `plinth rules --markdown` prints it;
/// a test keeps the file equal to it.
std::string rules_markdown();

/// Runs every domain rule over a blueprint that loaded without errors.
/// Each diagnostic names the field's file:line:column and says how to fix it.
Diagnostics validate(const bp::Blueprint& blueprint, const catalog::Catalog& catalog);

/// The domain rules over a blueprint whose loading reported `load`'s errors,
/// so that one run reports both: only what the rules say of entities (stacks,
/// VLANs, pools, tiers, roles, ...) that hold no loader error and use none
/// that does. Empty when an error is not local to one entity (YAML syntax, a
/// duplicate name, a dangling reference, apiVersion, a top-level key, the
/// metadata).
Diagnostics validate_beside_load_errors(const bp::Blueprint& blueprint, const catalog::Catalog& catalog,
                                        const Diagnostics& load);

}  // namespace plinth::validate
