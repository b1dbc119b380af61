#pragma once
#include <string_view>

#include "engine/provider/schema.h"

namespace plinth::aws {

/// The aws provider's description: aws.instance for burst pools.
const ProviderSchema& schema();

/// providers/aws/instance_types.yaml, compiled in (providers/CMakeLists.txt).
std::string_view instance_types_yaml();

}  // namespace plinth::aws
