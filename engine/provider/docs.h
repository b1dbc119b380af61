#pragma once
// Documentation generated from provider schemas: the resource-type tables
// of docs/resources.md, and the option and instance-type tables of each
// docs/providers/NAME.md.
// Both live between markers in hand-written pages:
//   <!-- BEGIN GENERATED: KIND -->
//   ...
//   <!-- END GENERATED: KIND -->
// `plinth providers --write-docs DIR` rewrites them; a test fails when a
// page and the schemas disagree.
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/provider/schema.h"

namespace plinth {

/// One "## `TYPE`" section per resource type of `schemas` (sorted by type),
/// each with its provider, description and an attribute table (force new,
/// sensitive, type, description).
std::string resource_types_markdown(const std::vector<const ProviderSchema*>& schemas);

/// The option table of one provider: its own options, then the common ones,
/// with type, default, the environment variables read and the meaning.
std::string options_markdown(const ProviderSchema& schema);

/// The instance-type table of a provider serving burst pools: each type
/// with its GPUs, vCPUs, memory, NVSwitch, Fabric Manager and the
/// provider's own facts, then the sources cited. "" when it declares none.
std::string instance_types_markdown(const ProviderSchema& schema);

/// The JSON Schema (draft 2020-12) of the settings the providers of `schemas`
/// declare for blueprint section `section` ("burst_pools"):
/// {"properties": {NAME: schema, ...}}, the union over providers (a setting
/// two providers declare alike once, its description prefixed by who takes
/// it; declared differently, anyOf). docs/plinth-v1.schema.json holds it as
/// $defs.burst_pool_settings, so the editors' schema takes the keys the
/// loader takes (plinth providers --write-docs).
Json settings_json_schema(const std::vector<const ProviderSchema*>& schemas, const std::string& section);

/// `page` with the block KIND replaced by `content`. Error when the page has
/// no such block.
Result<std::string> replace_generated(const std::string& page, const std::string& kind, const std::string& content);

/// The content of block KIND of `page`, or an error when it has none.
Result<std::string> generated_block(const std::string& page, const std::string& kind);

}  // namespace plinth
