#pragma once
// The blueprint's outputs (`outputs:`, docs/blueprint.md "Outputs"): values
// of the nodes of some pools, evaluated against a state's resources at
// apply and recorded in the state, where `plinth output` reads them.
#include <string>
#include <vector>

#include "engine/blueprint/blueprint.h"
#include "engine/provider/resource.h"

namespace plinth::run {

/// What `blueprint.outputs` give against `resources` (a state's):
/// NAME -> {"description", "sensitive", "value"}. A value maps each of the
/// output's pools (every node and burst pool when it names none) that has
/// nodes in `resources` to {NODE: value}, NODE being
/// node_name() (engine/provider/resource.h); value is the node's attribute (what its provider reported,
/// else what the blueprint asked for; "a.b" reads into an object), null when
/// the node has none or its provider marks it sensitive; `attributes:` gives
/// an object per node. An output none of whose pools has a node is left out.
Json evaluate_outputs(const bp::Blueprint& blueprint, const std::vector<Resource>& resources);

}  // namespace plinth::run
