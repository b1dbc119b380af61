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
  bool operator==(const CloudInit&) const = default;
};

/// Versions the renderer pins on top of the stack (they are not blueprint
/// fields); changing one changes every pool's hash.
inline constexpr const char* kContainerToolkitVersion = "1.15.0";
/// The DCGM exporter run when monitoring.dcgm is on and the stack lists no
/// image of its own whose repository ends in "/dcgm-exporter".
inline constexpr const char* kDefaultDcgmExporterImage = "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.1-ubuntu22.04";

/// Renders the pool's stack into cloud-init for Ubuntu 22.04 / 24.04 with the
/// NVIDIA CUDA apt repository: the driver, CUDA toolkit, cuDNN and container
/// toolkit pinned with apt preferences, the stack's images pulled, the DCGM
/// exporter (monitoring.dcgm), LUKS2 for the pool's encrypted NVMe tiers, the
/// MIG layout, /etc/plinth/node.json; and, for node pools with networks, a
/// network config v2 with one VLAN interface per network. Deterministic: same
/// blueprint, same bytes. Errors: an unknown pool (listing the names / "did
/// you mean"), a dangling stack, or a name/image that cannot be used safely in
/// file names and commands.
Result<CloudInit> render_pool(const bp::Blueprint& blueprint, const std::string& pool);

}  // namespace plinth::render
