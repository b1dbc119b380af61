#pragma once
#include <string_view>

#include "engine/provider/schema.h"

namespace plinth::gcp {

/// The gcp provider's description: gcp.instance for burst pools.
const ProviderSchema& schema();

/// providers/gcp/instance_types.yaml, compiled in (providers/CMakeLists.txt).
std::string_view instance_types_yaml();

}  // namespace plinth::gcp
