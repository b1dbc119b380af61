#pragma once
#include <string>
#include <vector>

#include "engine/blueprint/blueprint.h"
#include "engine/core/result.h"
#include "engine/provider/resource.h"

namespace plinth::graph {

/// The order resources are listed in everywhere (graph, plan, DOT): by type,
/// then name, then index numerically, so POOL[2] comes before POOL[10].
bool address_less(const Resource& a, const Resource& b);

/// In `sorted` (address_less order, as ResourceGraph::resources): the
/// resource at `address`, or nullptr. O(log n).
const Resource* find_sorted(const std::vector<Resource>& sorted, const std::string& address);

/// The desired resources of a blueprint, sorted by address, each with its
/// dependencies (addresses that must exist first).
struct ResourceGraph {
  std::vector<Resource> resources;

  /// The resource at `address`, or nullptr. O(log n).
  const Resource* find(const std::string& address) const;
  /// Addresses in an order where every resource comes after its dependencies;
  /// among resources that are ready at the same time, address order. Edges to
  /// addresses outside the graph are ignored; resources caught in a dependency
  /// cycle (never produced by `expand`) come last, in address order.
  std::vector<std::string> topological_order() const;
};

/// Expands a valid blueprint into resources with stable addresses:
/// baremetal.node.POOL[i], aws.instance.POOL[i], gcp.instance.POOL[i],
/// azure.vm.POOL[i], net.vlan.NAME, net.fabric.NAME, storage.tier.NAME,
/// storage.backup.NAME, access.namespace.NAME, access.role.NAME, ...
/// Every node carries the hash of its pool's rendered cloud-init. BMC
/// endpoints come from the pool's `{index}` template (0-based, the node's
/// index) or its explicit list. Fails when a pool cannot be rendered or its
/// endpoints do not match its count (validation normally catches both).
Result<ResourceGraph> expand(const bp::Blueprint& blueprint);

/// Graphviz DOT of the graph: one quoted node per resource and an edge from
/// each resource to each of its dependencies, in address order (the same
/// graph always prints the same bytes). With `collapse_pools`, the members
/// POOL[0..n] of a counted pool become one node labelled with the count.
std::string to_dot(const ResourceGraph& graph, bool collapse_pools = false);

}  // namespace plinth::graph
