#include "engine/blueprint/blueprint.h"

#include <algorithm>

namespace plinth::bp {

namespace {
template <typename T>
const T* find_named(const std::vector<T>& v, const std::string& name) {
  auto it = std::find_if(v.begin(), v.end(), [&](const T& x) { return x.name == name; });
  return it == v.end() ? nullptr : &*it;
}
}  // namespace

const Stack* Blueprint::find_stack(const std::string& n) const { return find_named(stacks, n); }
const Vlan* Blueprint::find_vlan(const std::string& n) const { return find_named(vlans, n); }
const Fabric* Blueprint::find_fabric(const std::string& n) const { return find_named(fabrics, n); }
const StorageTier* Blueprint::find_tier(const std::string& n) const { return find_named(tiers, n); }
const NodePool* Blueprint::find_node_pool(const std::string& n) const { return find_named(node_pools, n); }
const BurstPool* Blueprint::find_burst_pool(const std::string& n) const { return find_named(burst_pools, n); }
const ProviderDecl* Blueprint::find_provider(const std::string& n) const { return find_named(providers, n); }

}  // namespace plinth::bp
