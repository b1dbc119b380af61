#pragma once
#include <nlohmann/json.hpp>

#include "engine/blueprint/blueprint.h"

namespace plinth {

using Json = nlohmann::json;

namespace bp {

/// The blueprint as JSON, with the same shape and key names as the YAML
/// (stacks is an object keyed by name; every entity also carries "name").
/// Each entity has "_source": "file:line:col" (where it is declared). Unset
/// optional fields and empty strings are left out, so a Lua policy can test
/// `if not tier.encryption then ... end`; numbers, booleans and lists are
/// always present. Used to give policies a read-only view of the blueprint.
Json to_json(const Blueprint& bp);
/// One node pool in that form (with its provider settings).
Json to_json(const NodePool& pool);

}  // namespace bp
}  // namespace plinth
