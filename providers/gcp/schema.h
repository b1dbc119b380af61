#pragma once
#include "engine/provider/schema.h"

namespace plinth::gcp {

/// The gcp provider's description: gcp.instance for burst pools.
const ProviderSchema& schema();

}  // namespace plinth::gcp
