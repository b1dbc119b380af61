#include "providers/logical/logical_provider.h"

namespace plinth::logical {
namespace {

ProviderSchema build() {
  using T = ValueType;
  ProviderSchema s;
  s.name = "plinth";
  s.version = PLINTH_VERSION;
  s.description = "Logical resources of the blueprint (stacks, networks, storage, access, monitoring), recorded in "
                  "state; no external API.";
  s.docs = "docs/resources.md";
  s.resource_types = {
      {"net.vlan", "plinth", "A VLAN declared under networks.vlans.",
       {
           force_new("id", "802.1Q VLAN id (1-4094).", T::Int),
           force_new("cidr", "IPv4 or IPv6 prefix of the VLAN.", T::String),
           attr("mtu", "Interface MTU (9000 for jumbo frames).", T::Int),
           attr("vrf", "VRF the VLAN belongs to.", T::String),
           attr("purpose", "What the VLAN carries: training | storage | management | inference | ...", T::String),
       }},
      {"net.fabric", "plinth", "A high-speed fabric declared under networks.fabrics.",
       {
           force_new("kind", "infiniband | roce-v2 | ethernet.", T::String),
           attr("speed_gbps", "Link speed in Gbit/s.", T::Int),
           attr("topology", "spine-leaf | fat-tree | rail-optimized | dragonfly.", T::String),
           attr("oversubscription", "Oversubscription ratio, e.g. \"1:1\".", T::String),
           attr("pfc", "RoCE priority flow control (absent when not set).", T::Bool),
           attr("ecn", "RoCE explicit congestion notification (absent when not set).", T::Bool),
       }},
      {"storage.tier", "plinth", "A storage tier declared under storage.tiers.",
       {
           force_new("kind", "nvme | parallel-fs | nfs | object.", T::String),
           attr("capacity_tb", "Capacity in TB; grown or shrunk in place.", T::Number),
           force_new("backend", "Object backend (s3 | gcs | azure-blob | ceph) or parallel-fs (lustre | gpfs | weka).",
                     T::String),
           force_new("region", "Region of an object tier.", T::String),
           attr("classification", "Data classification: public | internal | confidential | pii | phi.", T::String),
           attr("encryption", "Encryption settings: {at_rest, in_transit, kms_key}.", T::Object),
           force_new("encryption.at_rest",
                     "Cipher at rest (aes-256-xts | aes-256-gcm | luks2 | sed | none); data must be rewritten.",
                     T::String),
           attr("encryption.in_transit", "Transport encryption (tls1.3 | tls1.2 | none).", T::String),
           attr("encryption.kms_key", "Key reference used for encryption at rest.", T::String),
           attr("lifecycle", "Lifecycle rule: {transition_from, after_days, expire_days}.", T::Object),
       }},
      {"storage.backup", "plinth", "A backup job declared under storage.backups.",
       {
           force_new("source", "Tier the backup copies from.", T::String),
           force_new("target", "Tier the backup copies to.", T::String),
           attr("schedule", "Cron expression.", T::String),
           attr("retention_days", "Days a backup is kept.", T::Int),
           attr("dr_test_interval_days", "Days between disaster-recovery restore tests (0 = never).", T::Int),
       }},
      {"access.namespace", "plinth", "A tenant namespace declared under access.namespaces.",
       {
           attr("gpu_quota", "GPU quota (quota.gpus); absent when unlimited.", T::Int),
           attr("service_accounts", "Service accounts created in the namespace.", T::StringList),
       }},
      {"access.role", "plinth", "An RBAC role declared under access.roles.",
       {
           attr("subjects", "Who holds the role: group:x, user:y, serviceaccount:ns/z.", T::StringList),
           attr("namespaces", "Namespaces the role applies to.", T::StringList),
           attr("verbs", "Allowed verbs.", T::StringList),
           attr("resources", "Resources the verbs apply to.", T::StringList),
       }},
      {"access.audit_logging", "plinth",
       "Audit logging settings (access.audit_logging); address access.audit_logging.default.",
       {
           attr("api_server", "Audit log of the API server.", T::Bool),
           attr("storage", "Audit log of storage access.", T::Bool),
           attr("retention_days", "Days audit logs are kept.", T::Int),
       }},
      {"access.transport", "plinth", "Transport security settings (access.transport); address access.transport.default.",
       {
           attr("tls_min", "Minimum TLS version (\"1.2\" | \"1.3\").", T::String),
           attr("mtls", "Mutual TLS between services.", T::Bool),
       }},
      {"plinth.monitoring", "plinth", "GPU monitoring settings (monitoring); address plinth.monitoring.default.",
       {
           attr("dcgm", "NVIDIA DCGM exporter on every node.", T::Bool),
           attr("prometheus", "Prometheus scraping.", T::Bool),
           attr("grafana", "Grafana dashboards.", T::Bool),
       }},
      {"plinth.stack", "plinth", "A pinned software stack declared under stacks; nodes depend on it.",
       {
           attr("driver", "NVIDIA Linux driver version.", T::String),
           attr("cuda", "CUDA toolkit version.", T::String),
           attr("cudnn", "cuDNN version.", T::String),
           attr("frameworks", "Framework pins (name -> version).", T::Map),
           attr("images", "Container images, ideally pinned by digest.", T::StringList),
       }},
  };
  // Access resources reach a cluster only when the blueprint declares one
  // (clusters:); until then they are bookkeeping, and plans say so.
  for (auto& t : s.resource_types)
    if (t.type == "access.namespace" || t.type == "access.role") t.recorded_only = "recorded only: no cluster configured";
  s.sections = {
      {"stacks", "plinth.stack", true, {}},
      {"networks.vlans", "net.vlan", true, {}},
      {"networks.fabrics", "net.fabric", true, {}},
      {"storage.tiers", "storage.tier", true, {}},
      {"storage.backups", "storage.backup", true, {}},
      {"access.namespaces", "access.namespace", true, {}},
      {"access.roles", "access.role", true, {}},
      {"access.audit_logging", "access.audit_logging", true, {}},
      {"access.transport", "access.transport", true, {}},
      {"monitoring", "plinth.monitoring", true, {}},
  };
  // Recording in state takes no time; keep the deadlines short.
  s.deadlines = Deadlines{std::chrono::seconds(30), std::chrono::seconds(30), std::chrono::seconds(30),
                          std::chrono::seconds(30)};
  return s;
}

}  // namespace

const ProviderSchema& schema() {
  static const ProviderSchema s = build();
  return s;
}

std::vector<ReadResult> LogicalProvider::read(const std::vector<Resource>& resources, const Call&) {
  std::vector<ReadResult> out;
  out.reserve(resources.size());
  for (const auto& r : resources) {
    ReadResult rr;
    rr.address = r.address;
    rr.current = r;
    out.push_back(std::move(rr));
  }
  return out;
}

}  // namespace plinth::logical
