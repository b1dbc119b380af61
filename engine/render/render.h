#pragma once
#include <string>

#include "engine/blueprint/blueprint.h"
#include "engine/core/result.h"

namespace plinth::render {

/// The cloud-init files for one pool (node pool or burst pool).
struct CloudInit {
  std::string user_data;       ///< "#cloud-config" document
  std::string network_config;  ///< network config version 2 ("" when the pool has no VLANs)
  std::string hash;            ///< sha256 of user_data + network_config
};

/// Renders the pool's stack into cloud-init: pinned NVIDIA driver and CUDA
/// packages, VLAN interfaces (network config v2), LUKS for encrypted NVMe
/// tiers, the DCGM exporter. Deterministic: same blueprint, same bytes.
Result<CloudInit> render_pool(const bp::Blueprint& blueprint, const std::string& pool);

}  // namespace plinth::render
