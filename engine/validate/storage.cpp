// The rules on storage tiers as pools use them: an export to mount, transport
// encryption the file system can give, and NFS serving many training nodes.
#include <algorithm>

#include "engine/validate/checker.h"

namespace plinth::validate {

const RuleInfo STO001{
    "STO001", Severity::Warning, "NFS tier serving more than 20 training nodes",
    "The training pools that list an `nfs` tier in `storage` have more than 20 nodes in total. Position: the tier's "
    "`kind`.",
    "One NFS server becomes the bottleneck when many training nodes read data and write checkpoints at once; parallel "
    "file systems (Lustre, GPFS, WEKA) scale out.",
    "serve training data and checkpoints from a parallel-fs or nvme tier; keep NFS for home directories"};
const RuleInfo STO003{
    "STO003", Severity::Error, "network file system tier without an export to mount",
    "A pool lists an `nfs` or `parallel-fs` tier that has no `export`. Position: the pool's `storage` entry.",
    "A node cannot mount a file system it is not told the address of; rendering it would leave the tier unmounted while "
    "the node reports ready.",
    "set the tier's `export` (nfs \"server:/path\", lustre \"mgs@o2ib:/fsname\", gpfs the device, weka \"backend/fs\", "
    "beegfs the management host)"};
const RuleInfo STO004{
    "STO004", Severity::Error, "transport encryption the tier's file system cannot give the pool",
    "A tier sets `encryption.in_transit`, but its file system cannot encrypt in transit for a pool that mounts it: NFS "
    "RPC-with-TLS (`xprtsec=tls`) on an OS other than Ubuntu 24.04, or WEKA / BeeGFS, whose client traffic is not "
    "encrypted by a mount option. Position: the tier's `encryption.in_transit`.",
    "RFC 9289 RPC-with-TLS needs Linux 6.5 and ktls-utils (tlshd); WEKA and BeeGFS document no per-mount encryption. "
    "Lustre (shared-key SSK, `skpath`) and GPFS (cluster cipherList) are rendered with theirs.",
    "run the pool on os: ubuntu-24.04, use a file system that encrypts in transit, or drop in_transit"};
const RuleInfo STO005{
    "STO005", Severity::Error, "Lustre over o2ib on a pool without an RDMA fabric",
    "A pool lists a Lustre tier whose export names only `@o2ib` NIDs, and the pool has no InfiniBand or RoCE fabric: a "
    "burst pool, a node pool without `fabric`, or one on an `ethernet` fabric. Position: the pool's `storage` entry.",
    "o2ib is LNet over RDMA verbs (the ko2iblnd driver): a client reaches an o2ib NID only through an RDMA interface with "
    "an address on the server's IPoIB (or RoCE) network. Without one the mount times out at boot and the node comes up "
    "without its data.",
    "give the server a tcp NID too (export: \"10.210.0.10@o2ib,10.110.0.10@tcp:/fs\": each client uses the network it "
    "has), or put the pool on an infiniband or roce-v2 fabric"};
const RuleInfo STO006{
    "STO006", Severity::Warning, "o2ib NID inside an Ethernet VLAN's subnet",
    "A Lustre export names an `@o2ib` NID whose address lies in the `cidr` of a VLAN the blueprint declares. Position: "
    "the tier's `export`.",
    "An o2ib NID is the server's IPoIB (or RoCE) address, on the RDMA fabric's own IP network; the VLANs are the Ethernet "
    "networks on the bonded uplinks. An address from a VLAN's subnet is the server's Ethernet address written as o2ib, "
    "which no client reaches over LNet o2ib.",
    "write the server's IPoIB address as the o2ib NID, or `@tcp` for its address on the VLAN"};

/// STO003 / STO004 / STO005 for the network tiers a pool mounts.
void Checker::check_mounts(const std::vector<std::string>& storage, const bp::Origin& origin, const std::string& os,
                           const std::string& addr, const std::string& who, const bp::Fabric* fabric) {
  for (size_t i = 0; i < storage.size(); ++i) {
    const auto* t = find(tiers_, storage[i]);
    if (!t || (t->kind != "nfs" && t->kind != "parallel-fs")) continue;
    if (t->remote.empty()) {
      add(STO003, origin.at("storage." + std::to_string(i)), addr,
          who + " lists " + t->kind + " tier '" + t->name + "', which has no export to mount",
          "set export: on tier '" + t->name + "' (nfs \"server:/path\", lustre \"mgs@o2ib:/fsname\", gpfs the device, "
          "weka \"backend/fs\", beegfs the management host)");
      continue;
    }
    if (t->kind == "parallel-fs" && t->backend == "lustre") {
      const auto nids = bp::lustre_nids(t->remote);
      const bool o2ib_only = !nids.empty() && std::all_of(nids.begin(), nids.end(), [](const bp::LustreNid& n) {
        return n.lnd == "o2ib";
      });
      if (o2ib_only && !rdma_kind(fabric))
        add(STO005, origin.at("storage." + std::to_string(i)), addr,
            who + " mounts Lustre tier '" + t->name + "' over o2ib (" + t->remote + ") but has no RDMA fabric" +
                (fabric ? " (fabric '" + fabric->name + "' is " + fabric->kind + ")" : std::string()) +
                ", so LNet cannot reach the server",
            "give the server a tcp NID too (e.g. export: \"" + nids.front().address + "@o2ib,SERVER-ETH-ADDRESS@tcp:" +
                t->remote.substr(t->remote.find(":/") + 1) + "\"), or put the pool on an infiniband or roce-v2 fabric");
    }
    if (!t->encryption || (t->encryption->in_transit != "tls1.3" && t->encryption->in_transit != "tls1.2")) continue;
    std::string problem;
    if (t->kind == "nfs" && os != "ubuntu-24.04")
      problem = "NFS RPC-with-TLS (xprtsec=tls) needs Linux 6.5 and ktls-utils, and " + who + " runs " + os;
    else if (t->kind == "parallel-fs" && (t->backend == "weka" || t->backend == "beegfs"))
      problem = t->backend + " has no per-mount encryption in transit for " + who;
    if (!problem.empty())
      add(STO004, t->origin.at("encryption.in_transit"), "storage.tier." + t->name,
          "tier '" + t->name + "' asks for encryption in transit (" + t->encryption->in_transit + "), but " + problem,
          t->kind == "nfs" ? "run the pool on os: ubuntu-24.04, or drop encryption.in_transit"
                           : "use lustre (SSK) or gpfs (cipherList) for encrypted transport, or drop encryption.in_transit");
  }
}

// STO006: o2ib NIDs written with an address of a declared (Ethernet) VLAN.
void Checker::check_lustre_nids() {
  for (const auto& t : bp_.tiers) {
    if (t.kind != "parallel-fs" || t.backend != "lustre") continue;
    for (const auto& nid : bp::lustre_nids(t.remote)) {
      if (nid.lnd != "o2ib") continue;
      for (const auto& v : bp_.vlans) {
        if (!bp::vlan_holds(v, nid.address)) continue;
        add(STO006, t.origin.at("export"), "storage.tier." + t.name,
            "tier '" + t.name + "' names o2ib NID " + nid.address + "@" + nid.net + ", an address in VLAN '" + v.name +
                "' (" + v.cidr + "), an Ethernet network; an o2ib NID is the server's IPoIB address",
            "write the server's IPoIB address as the o2ib NID, or " + nid.address + "@tcp to mount over VLAN '" + v.name +
                "'");
        break;
      }
    }
  }
}

// STO001: NFS tiers against the training nodes they serve in total.
void Checker::check_nfs_use() {
  for (const auto& t : bp_.tiers) {
    if (t.kind != "nfs") continue;
    auto it = tier_training_nodes_.find(t.name);
    if (it == tier_training_nodes_.end() || it->second <= 20) continue;
    add(STO001, t.origin.at("kind"), "storage.tier." + t.name,
        "NFS tier '" + t.name + "' serves " + std::to_string(it->second) + " training nodes (more than 20)",
        "serve training data and checkpoints from a parallel-fs or nvme tier; keep NFS for home directories");
  }
}

}  // namespace plinth::validate
