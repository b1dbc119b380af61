// The readers of the infrastructure sections: networks (VLANs, fabrics) and
// storage (tiers, backups).
#include "engine/blueprint/loader_internal.h"
#include "engine/core/strings.h"

namespace plinth::bp::detail {
namespace {

// Allowed keys (in the order docs/blueprint.md lists them) and values of
// enumerated fields, per section.
const Keys kNetworksKeys{"vlans", "fabrics"};
const Keys kVlanKeys{"name", "id", "cidr", "vrf", "purpose", "mtu"};
const Keys kFabricKeys{"name", "kind", "speed_gbps", "topology", "oversubscription", "pfc", "ecn", "rdma_stack"};
const Keys kFabricKinds{"infiniband", "roce-v2", "ethernet"};
const Keys kTopologies{"spine-leaf", "fat-tree", "rail-optimized", "dragonfly"};
const Keys kRdmaStacks{"doca-ofed", "inbox"};

const Keys kStorageKeys{"tiers", "backups"};
const Keys kTierKeys{"name",           "kind",       "capacity_tb", "backend", "region",
                     "classification", "encryption", "lifecycle",   "export",  "mount_point",
                     "transfer"};
const Keys kEncryptionKeys{"at_rest", "in_transit", "kms_key"};
const Keys kLifecycleKeys{"transition_from", "after_days", "expire_days"};
const Keys kBackupKeys{"name", "source", "target", "schedule", "retention_days", "dr_test_interval_days"};
const Keys kTierKinds{"nvme", "parallel-fs", "nfs", "object"};
const Keys kObjectBackends{"s3", "gcs", "azure-blob", "ceph"};
const Keys kParallelFsBackends{"lustre", "gpfs", "weka", "beegfs"};
const Keys kClassifications{"public", "internal", "confidential", "pii", "phi"};
const Keys kAtRest{"aes-256-xts", "aes-256-gcm", "luks2", "sed", "none"};
const Keys kInTransit{"tls1.3", "tls1.2", "none"};

}  // namespace

void Loader::load_networks(const Obj& top) {
  auto net = top.sub("networks", kNetworksKeys);
  if (!net) return;
  const Ctx& c = top.ctx();
  if (auto vlans = net->list("vlans")) {
    int i = 0;
    for (const Node& item : *vlans) {
      Vlan v;
      Obj o(c, item, c.loc(item), "VLAN #" + std::to_string(++i), "", &v.origin, kVlanKeys);
      if (!o.ok()) continue;
      v.origin.loc = o.loc();
      bool named = read_name(o, v.name, vlans_, "VLAN");
      o.integer("id", v.id, true, kNoMin);  // range 1-4094 is a domain rule (NET001)
      o.str("cidr", v.cidr, true);
      o.str("vrf", v.vrf);
      o.str("purpose", v.purpose);
      o.integer("mtu", v.mtu, false, kNoMin);
      if (named) bp_.vlans.push_back(std::move(v));
    }
  }
  if (auto fabrics = net->list("fabrics")) {
    int i = 0;
    for (const Node& item : *fabrics) {
      Fabric f;
      Obj o(c, item, c.loc(item), "fabric #" + std::to_string(++i), "", &f.origin, kFabricKeys);
      if (!o.ok()) continue;
      f.origin.loc = o.loc();
      bool named = read_name(o, f.name, fabrics_, "fabric");
      o.enumeration("kind", f.kind, kFabricKinds, true);
      o.integer("speed_gbps", f.speed_gbps);
      o.enumeration("topology", f.topology, kTopologies);
      if (o.str("oversubscription", f.oversubscription)) {
        const std::string& r = f.oversubscription;
        size_t colon = r.find(':');
        if (colon == std::string::npos || !parse_number(r.substr(0, colon)) || !parse_number(r.substr(colon + 1)))
          o.invalid(*o.get("oversubscription"),
                    "invalid oversubscription '" + r + "' in " + o.label() + " (expected a ratio such as \"1:1\")",
                    "write it quoted as downlink:uplink, e.g. oversubscription: \"2:1\"");
      }
      o.opt_bool("pfc", f.pfc);
      o.opt_bool("ecn", f.ecn);
      if (o.enumeration("rdma_stack", f.rdma_stack, kRdmaStacks) && f.kind == "ethernet")
        o.invalid(*o.get("rdma_stack"), "'rdma_stack' in " + o.label() + " applies to infiniband and roce-v2 fabrics",
                  "remove it, or set kind: infiniband or roce-v2");
      if (named) bp_.fabrics.push_back(std::move(f));
    }
  }
}

void Loader::load_storage(const Obj& top) {
  auto st = top.sub("storage", kStorageKeys);
  if (!st) return;
  const Ctx& c = top.ctx();
  if (auto tiers = st->list("tiers")) {
    int i = 0;
    for (const Node& item : *tiers) {
      StorageTier t;
      Obj o(c, item, c.loc(item), "storage tier #" + std::to_string(++i), "", &t.origin, kTierKeys);
      if (!o.ok()) continue;
      t.origin.loc = o.loc();
      bool named = read_name(o, t.name, tiers_, "storage tier");
      o.enumeration("kind", t.kind, kTierKinds, true);
      o.number("capacity_tb", t.capacity_tb);
      if (o.str("backend", t.backend)) {
        const Keys* allowed = t.kind == "object" ? &kObjectBackends
                              : t.kind == "parallel-fs" ? &kParallelFsBackends : nullptr;
        if (allowed && std::find(allowed->begin(), allowed->end(), t.backend) == allowed->end())
          o.invalid(*o.get("backend"),
                    "invalid backend '" + t.backend + "' for " + t.kind + " " + o.label() + " (expected one of: " +
                        join(*allowed, ", ") + ")",
                    suggest(t.backend, *allowed));
      }
      o.str("region", t.region);
      o.enumeration("classification", t.classification, kClassifications);
      if (auto enc = o.sub("encryption", kEncryptionKeys)) {
        Encryption en;
        enc->enumeration("at_rest", en.at_rest, kAtRest);
        enc->enumeration("in_transit", en.in_transit, kInTransit);
        enc->str("kms_key", en.kms_key);
        t.encryption = en;
      }
      if (auto lc = o.sub("lifecycle", kLifecycleKeys)) {
        Lifecycle l;
        lc->str("transition_from", l.transition_from, true);
        lc->integer("after_days", l.after_days, true);
        lc->integer("expire_days", l.expire_days);
        t.lifecycle = l;
      }
      if (o.str("export", t.remote) && (t.kind == "nvme" || t.kind == "object"))
        o.invalid(*o.get("export"), "'export' in " + o.label() + " applies to nfs and parallel-fs tiers, not " + t.kind,
                  "remove it; " + t.kind + " tiers are not mounted from a server");
      if (o.str("mount_point", t.mount_point) && (t.mount_point.empty() || t.mount_point[0] != '/'))
        o.invalid(*o.get("mount_point"), "'mount_point' in " + o.label() + " must be an absolute path, not '" + t.mount_point + "'",
                  "write e.g. mount_point: /mnt/" + t.name);
      if (auto tr = o.sub("transfer", kTransferKeys)) {
        Transfer x;
        tr->enumeration("basis", x.basis, kTransferBases, true);
        tr->str("reference", x.reference);
        t.transfer = x;
      }
      if (named) bp_.tiers.push_back(std::move(t));
    }
  }
  if (auto backups = st->list("backups")) {
    int i = 0;
    for (const Node& item : *backups) {
      Backup b;
      Obj o(c, item, c.loc(item), "backup #" + std::to_string(++i), "", &b.origin, kBackupKeys);
      if (!o.ok()) continue;
      b.origin.loc = o.loc();
      bool named = read_name(o, b.name, backups_, "backup");
      o.str("source", b.source, true);
      o.str("target", b.target, true);
      if (o.str("schedule", b.schedule, true)) {
        size_t fields = 0;
        bool in_field = false;
        for (char ch : b.schedule) {
          bool space = ch == ' ' || ch == '\t';
          if (!space && !in_field) ++fields;
          in_field = !space;
        }
        if (fields != 5 && !starts_with(b.schedule, "@"))
          o.invalid(*o.get("schedule"),
                    "invalid schedule '" + b.schedule + "' in " + o.label() +
                        " (expected a cron expression with 5 fields)",
                    "write minute hour day-of-month month day-of-week, e.g. \"0 */6 * * *\", or @daily");
      }
      o.integer("retention_days", b.retention_days, true);
      o.integer("dr_test_interval_days", b.dr_test_interval_days);
      if (named) bp_.backups.push_back(std::move(b));
    }
  }
}

}  // namespace plinth::bp::detail
