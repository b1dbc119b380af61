#pragma once
#include "engine/provider/schema.h"

namespace plinth::azure {

/// The azure provider's description: azure.vm for burst pools.
const ProviderSchema& schema();

}  // namespace plinth::azure
