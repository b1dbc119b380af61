#pragma once
#include <string_view>

#include "engine/provider/schema.h"

namespace plinth::azure {

/// The azure provider's description: azure.vm for burst pools.
const ProviderSchema& schema();

/// providers/azure/instance_types.yaml, compiled in (providers/CMakeLists.txt).
std::string_view instance_types_yaml();
/// Azure's NCCL topologies of ND A100 v4, ND H100/H200 v5 and NC A100 v4, and NC A100 v4's NCCL
/// graph (providers/azure/topology), compiled in.
std::string_view ndv4_topo_xml();
std::string_view ndv5_topo_xml();
std::string_view ncv4_topo_xml();
std::string_view ncv4_graph_xml();

}  // namespace plinth::azure
