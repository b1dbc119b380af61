#pragma once
#include <string>
#include <vector>

#include "engine/blueprint/blueprint.h"
#include "engine/core/result.h"
#include "engine/provider/resource.h"

namespace plinth::graph {

/// The desired resources of a blueprint, sorted by address, each with its
/// dependencies (addresses that must exist first).
struct ResourceGraph {
  std::vector<Resource> resources;

  const Resource* find(const std::string& address) const;
  /// Addresses in an order where every resource comes after its dependencies.
  std::vector<std::string> topological_order() const;
};

/// Expands a valid blueprint into resources with stable addresses:
/// baremetal.node.POOL[i], aws.instance.POOL[i], gcp.instance.POOL[i],
/// azure.vm.POOL[i], net.vlan.NAME, net.fabric.NAME, storage.tier.NAME,
/// storage.backup.NAME, access.namespace.NAME, access.role.NAME, ...
/// Every node carries the hash of its pool's rendered cloud-init.
Result<ResourceGraph> expand(const bp::Blueprint& blueprint);

/// Graphviz DOT of the graph (one node per resource; counted pools may be
/// collapsed into one node with a count when `collapse_pools`).
std::string to_dot(const ResourceGraph& graph, bool collapse_pools = false);

}  // namespace plinth::graph
