#pragma once
#include <string_view>

#include "engine/provider/schema.h"

namespace plinth::azure {

/// The azure provider's description: azure.vm for burst pools.
const ProviderSchema& schema();

/// providers/azure/instance_types.yaml, compiled in (providers/CMakeLists.txt).
std::string_view instance_types_yaml();

}  // namespace plinth::azure
