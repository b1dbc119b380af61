#pragma once
// NoCloud seeds: what cloud-init's NoCloud datasource reads from a volume
// labelled "cidata" (user-data, meta-data, network-config), built as an
// ISO 9660 image for a BMC's virtual media (docs/providers/baremetal.md, "Seed").
#include <string>

#include "engine/core/result.h"
#include "engine/provider/resource.h"

namespace plinth {

/// The three files of one node's seed. `network_config` may be empty (not written).
struct NoCloudSeed {
  std::string user_data;
  std::string meta_data;
  std::string network_config;
};

/// The meta-data of `node` (a counted resource whose attributes carry its
/// pool's user_data_hash): `local-hostname` is node_name(), `instance-id` that
/// name and the first 12 hex digits of the hash, so a new stack makes
/// cloud-init run its per-instance modules again.
std::string nocloud_meta_data(const Resource& node);

/// The seed as an ISO 9660 image with Rock Ridge and Joliet names and volume
/// id "cidata" (what cloud-localds and genisoimage -V cidata -J -r make).
/// Deterministic: the same files give the same bytes (fixed timestamps and
/// modes). Errors only when libisofs fails.
Result<std::string> nocloud_iso(const NoCloudSeed& seed);

}  // namespace plinth
