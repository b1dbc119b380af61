#include "providers/common/cloud_instance.h"

namespace plinth::cloud {

std::vector<AttributeSpec> instance_attributes() {
  using T = ValueType;
  return {
      force_new("instance_type", "Cloud instance type, e.g. p5.48xlarge; a new type means a new instance.", T::String),
      force_new("region", "Cloud region the instance runs in.", T::String),
      force_new("zone", "Availability zone (GCP zone, Azure zone); empty when the cloud picks one.", T::String),
      force_new("spot", "Spot / preemptible capacity (true) or on-demand (false).", T::Bool),
      force_new("stack", "Name of the pinned software stack the instance boots with.", T::String),
      force_new("user_data_hash", "SHA-256 of the pool's rendered cloud-init; a new stack or pin means a new instance.",
                T::String),
      attr("checkpointing", "Checkpoint policy: {interval_minutes, target} (target is a storage tier).", T::Object),
      attr("networks", "VLAN names the instance joins.", T::StringList),
      attr("storage", "Storage tier names the instance mounts.", T::StringList),
  };
}

}  // namespace plinth::cloud
