#include "providers/common/cloud_instance.h"

namespace plinth::cloud {

std::vector<AttributeSpec> instance_attributes() {
  using T = ValueType;
  return {
      {"instance_type", true, false, "Cloud instance type, e.g. p5.48xlarge; a new type means a new instance.", T::String},
      {"region", true, false, "Cloud region the instance runs in.", T::String},
      {"zone", true, false, "Availability zone (GCP zone, Azure zone); empty when the cloud picks one.", T::String},
      {"spot", true, false, "Spot / preemptible capacity (true) or on-demand (false).", T::Bool},
      {"stack", true, false, "Name of the pinned software stack the instance boots with.", T::String},
      {"user_data_hash", true, false,
       "SHA-256 of the pool's rendered cloud-init; a new stack or pin means a new instance.", T::String},
      {"checkpointing", false, false, "Checkpoint policy: {interval_minutes, target} (target is a storage tier).",
       T::Object},
      {"networks", false, false, "VLAN names the instance joins.", T::StringList},
      {"storage", false, false, "Storage tier names the instance mounts.", T::StringList},
  };
}

}  // namespace plinth::cloud
