#pragma once
// What every cloud burst-pool instance has, whichever cloud runs it.
#include <vector>

#include "engine/provider/schema.h"

namespace plinth::cloud {

/// The attributes of one instance of a burst pool that every cloud provider
/// declares (instance_type, region, zone, spot, stack, user_data_hash,
/// checkpointing, networks, storage); a provider appends its own.
std::vector<AttributeSpec> instance_attributes();

}  // namespace plinth::cloud
