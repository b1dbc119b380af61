// References between the entities of every file read (BP007): pools to
// stacks, fabrics, VLANs and tiers, backups and lifecycles to tiers, roles to
// namespaces, clusters to node pools, outputs to pools, and the checks that need two entities
// at once (a tier that transitions from itself, a backup onto its source, a
// cluster whose pools pin different drivers).
#include <algorithm>

#include "engine/blueprint/loader_internal.h"

namespace plinth::bp::detail {

void Loader::check_ref(const NameTable& table, const std::string& name, const SourceLoc& at, const std::string& who,
                       const char* define_hint) {
  if (table.has(name)) return;
  std::string hint = suggest(name, table.names());
  if (hint.empty() || table.first.empty()) hint = define_hint;
  diags_.push_back({"BP007", Severity::Error,
                    who + " references unknown " + table.kind + " '" + name + "'", at, "", std::move(hint)});
}

void Loader::check_references() {
  auto each = [&](const std::vector<std::string>& names, const Origin& o, const char* field, const NameTable& t,
                  const std::string& who, const char* hint) {
    for (size_t i = 0; i < names.size(); ++i)
      check_ref(t, names[i], o.at(std::string(field) + "." + std::to_string(i)), who, hint);
  };
  const char* kDefStack = "define it under stacks:";
  const char* kDefVlan = "define it under networks.vlans:";
  const char* kDefFabric = "define it under networks.fabrics:";
  const char* kDefTier = "define it under storage.tiers:";
  const char* kDefNs = "define it under access.namespaces:";
  for (const NodePool& p : bp_.node_pools) {
    std::string who = "node pool '" + p.name + "'";
    if (!p.stack.empty()) check_ref(stacks_, p.stack, p.origin.at("stack"), who, kDefStack);
    if (!p.fabric.empty()) check_ref(fabrics_, p.fabric, p.origin.at("fabric"), who, kDefFabric);
    each(p.networks, p.origin, "networks", vlans_, who, kDefVlan);
    each(p.storage, p.origin, "storage", tiers_, who, kDefTier);
  }
  for (const BurstPool& p : bp_.burst_pools) {
    std::string who = "burst pool '" + p.name + "'";
    if (!p.stack.empty()) check_ref(stacks_, p.stack, p.origin.at("stack"), who, kDefStack);
    if (p.checkpointing && !p.checkpointing->target.empty())
      check_ref(tiers_, p.checkpointing->target, p.origin.at("checkpointing.target"), who, kDefTier);
    each(p.networks, p.origin, "networks", vlans_, who, kDefVlan);
    each(p.storage, p.origin, "storage", tiers_, who, kDefTier);
  }
  for (const StorageTier& t : bp_.tiers) {
    if (!t.lifecycle || t.lifecycle->transition_from.empty()) continue;
    const SourceLoc& at = t.origin.at("lifecycle.transition_from");
    if (t.lifecycle->transition_from == t.name)
      diags_.push_back({"BP005", Severity::Error, "storage tier '" + t.name + "' transitions from itself", at, "",
                        "name the tier whose data moves into this one"});
    else
      check_ref(tiers_, t.lifecycle->transition_from, at, "storage tier '" + t.name + "'", kDefTier);
  }
  for (const Backup& b : bp_.backups) {
    std::string who = "backup '" + b.name + "'";
    if (!b.source.empty()) check_ref(tiers_, b.source, b.origin.at("source"), who, kDefTier);
    if (!b.target.empty()) check_ref(tiers_, b.target, b.origin.at("target"), who, kDefTier);
    if (!b.source.empty() && b.source == b.target)
      diags_.push_back({"BP005", Severity::Error, who + " has the same source and target '" + b.source + "'",
                        b.origin.at("target"), "", "back up to a different tier, ideally in another location"});
  }
  for (const Role& r : bp_.access.roles)
    each(r.namespaces, r.origin, "namespaces", namespaces_, "role '" + r.name + "'", kDefNs);
  for (const Output& o : bp_.outputs)
    each(o.pools, o.origin, "pools", pools_, "output '" + o.name + "'", "define it under node_pools: or burst_pools:");
  for (const Cluster& cl : bp_.clusters) {
    std::string who = "cluster '" + cl.name + "'";
    NameTable node_pools{"node pool", "node_pools", {}};
    for (const NodePool& p : bp_.node_pools) node_pools.first.try_emplace(p.name, p.origin.loc, "node pool");
    each(cl.pools, cl.origin, "pools", node_pools, who, "define it under node_pools:");
    // One ClusterPolicy pins one driver: the cluster's pools must agree.
    const NodePool* first = nullptr;
    for (const NodePool& p : bp_.node_pools) {
      if (!cl.pools.empty() && std::find(cl.pools.begin(), cl.pools.end(), p.name) == cl.pools.end()) continue;
      const Stack* st = bp_.find_stack(p.stack);
      if (!st || st->driver.empty()) continue;
      if (!first) {
        first = &p;
        continue;
      }
      const std::string& want = bp_.find_stack(first->stack)->driver;
      if (st->driver != want)
        diags_.push_back({"BP005", Severity::Error,
                          who + " runs node pools that pin different drivers: '" + first->name + "' " + want +
                              " (stack " + first->stack + ") and '" + p.name + "' " + st->driver + " (stack " +
                              p.stack + "); the GPU Operator's ClusterPolicy pins one driver.version",
                          cl.origin.at(cl.pools.empty() ? "name" : "pools"), "",
                          "list the pools of one driver under pools: of the cluster"});
    }
  }
}

}  // namespace plinth::bp::detail
