#pragma once
#include "engine/provider/schema.h"

namespace plinth::aws {

/// The aws provider's description: aws.instance for burst pools.
const ProviderSchema& schema();

}  // namespace plinth::aws
