// The declarative table of resource types (osquery's table specs idea): which
// attributes each type has, which of them force a replacement and which are
// sensitive. The planner reads it; docs/resources.md lists the same table and a
// test keeps the two in step.
#include <algorithm>

#include "engine/provider/resource.h"

namespace plinth {
namespace {

AttributeSpec attr(std::string name, std::string description) {
  return {std::move(name), false, false, std::move(description)};
}
AttributeSpec force_new(std::string name, std::string description) {
  return {std::move(name), true, false, std::move(description)};
}
AttributeSpec sensitive(std::string name, std::string description) {
  return {std::move(name), false, true, std::move(description)};
}

/// Attributes every cloud instance type shares (aws.instance, gcp.instance, azure.vm).
std::vector<AttributeSpec> instance_attributes(bool azure = false) {
  std::vector<AttributeSpec> a = {
      force_new("instance_type", "Cloud instance type, e.g. p5.48xlarge; a new type means a new instance."),
      force_new("region", "Cloud region the instance runs in."),
      force_new("zone", "Availability zone (GCP zone, Azure zone); empty when the cloud picks one."),
      force_new("spot", "Spot / preemptible capacity (true) or on-demand (false)."),
      force_new("stack", "Name of the pinned software stack the instance boots with."),
      force_new("user_data_hash", "SHA-256 of the pool's rendered cloud-init; a new stack or pin means a new instance."),
      attr("checkpointing", "Checkpoint policy: {interval_minutes, target} (target is a storage tier)."),
      attr("networks", "VLAN names the instance joins."),
      attr("storage", "Storage tier names the instance mounts."),
  };
  if (azure) a.push_back(force_new("resource_group", "Azure resource group the VM lives in."));
  return a;
}

std::vector<ResourceType> build_table() {
  std::vector<ResourceType> t = {
      {"baremetal.node", "baremetal", "One bare-metal GPU server of a node pool, managed through its BMC (Redfish).",
       {
           attr("role", "Workload role of the pool: training | inference | preprocessing."),
           attr("gpu", "Expected GPU model (catalog name, e.g. H100-80GB); checked against the BMC inventory."),
           attr("gpu_product_names",
                "Names the BMC may report for that GPU (the catalog's product name, then its aliases)."),
           attr("gpus_per_node", "Expected number of GPUs in the server."),
           attr("cpu_cores", "Expected CPU cores."),
           attr("memory_gb", "Expected system memory in GB."),
           force_new("stack", "Name of the pinned software stack; a different stack means reprovisioning."),
           force_new("user_data_hash",
                     "SHA-256 of the pool's rendered cloud-init; a new image or stack pin means reprovisioning."),
           force_new("boot_method", "How the node boots its installer: pxe | uefi-http | virtual-media."),
           attr("boot_image", "Installer image URL; used at the next provisioning boot."),
           attr("bios", "Redfish BIOS attributes (name -> value), applied in place at the next reboot."),
           attr("fabric", "Name of the high-speed fabric (InfiniBand / RoCE) the node attaches to; empty for none."),
           attr("networks", "VLAN names the node joins."),
           attr("storage", "Storage tier names the node mounts."),
           attr("mig_profile", "MIG profile applied to every GPU (\"none\" disables MIG)."),
           attr("mig_instances", "MIG instances per GPU (0 when MIG is off)."),
           force_new("bmc_endpoint", "Redfish endpoint of this node's BMC; a different BMC is a different machine."),
           sensitive("bmc_credentials",
                     "Reference (env:NAME or file:PATH) to the BMC user:password; never printed in plans."),
           attr("bmc_ca_bundle", "CA bundle used to verify the BMC's TLS certificate; empty for the system store."),
       },
       "bmc_endpoint"},
      {"aws.instance", "aws", "One EC2 instance of an AWS burst pool (the pool's `desired` count).",
       instance_attributes()},
      {"gcp.instance", "gcp", "One Compute Engine instance of a GCP burst pool (the pool's `desired` count).",
       instance_attributes()},
      {"azure.vm", "azure", "One virtual machine of an Azure burst pool (the pool's `desired` count).",
       instance_attributes(true)},
      {"net.vlan", "plinth", "A VLAN declared under networks.vlans.",
       {
           force_new("id", "802.1Q VLAN id (1-4094)."),
           force_new("cidr", "IPv4 or IPv6 prefix of the VLAN."),
           attr("mtu", "Interface MTU (9000 for jumbo frames)."),
           attr("vrf", "VRF the VLAN belongs to."),
           attr("purpose", "What the VLAN carries: training | storage | management | inference | ..."),
       }},
      {"net.fabric", "plinth", "A high-speed fabric declared under networks.fabrics.",
       {
           force_new("kind", "infiniband | roce-v2 | ethernet."),
           attr("speed_gbps", "Link speed in Gbit/s."),
           attr("topology", "spine-leaf | fat-tree | rail-optimized | dragonfly."),
           attr("oversubscription", "Oversubscription ratio, e.g. \"1:1\"."),
           attr("pfc", "RoCE priority flow control (absent when not set)."),
           attr("ecn", "RoCE explicit congestion notification (absent when not set)."),
       }},
      {"storage.tier", "plinth", "A storage tier declared under storage.tiers.",
       {
           force_new("kind", "nvme | parallel-fs | nfs | object."),
           attr("capacity_tb", "Capacity in TB; grown or shrunk in place."),
           force_new("backend", "Object backend (s3 | gcs | azure-blob | ceph) or parallel-fs (lustre | gpfs | weka)."),
           force_new("region", "Region of an object tier."),
           attr("classification", "Data classification: public | internal | confidential | pii | phi."),
           attr("encryption", "Encryption settings: {at_rest, in_transit, kms_key}."),
           force_new("encryption.at_rest",
                     "Cipher at rest (aes-256-xts | aes-256-gcm | luks2 | sed | none); data must be rewritten."),
           attr("encryption.in_transit", "Transport encryption (tls1.3 | tls1.2 | none)."),
           attr("encryption.kms_key", "Key reference used for encryption at rest."),
           attr("lifecycle", "Lifecycle rule: {transition_from, after_days, expire_days}."),
       }},
      {"storage.backup", "plinth", "A backup job declared under storage.backups.",
       {
           force_new("source", "Tier the backup copies from."),
           force_new("target", "Tier the backup copies to."),
           attr("schedule", "Cron expression."),
           attr("retention_days", "Days a backup is kept."),
           attr("dr_test_interval_days", "Days between disaster-recovery restore tests (0 = never)."),
       }},
      {"access.namespace", "plinth", "A tenant namespace declared under access.namespaces.",
       {
           attr("gpu_quota", "GPU quota (quota.gpus); absent when unlimited."),
           attr("service_accounts", "Service accounts created in the namespace."),
       }},
      {"access.role", "plinth", "An RBAC role declared under access.roles.",
       {
           attr("subjects", "Who holds the role: group:x, user:y, serviceaccount:ns/z."),
           attr("namespaces", "Namespaces the role applies to."),
           attr("verbs", "Allowed verbs."),
           attr("resources", "Resources the verbs apply to."),
       }},
      {"access.audit_logging", "plinth", "Audit logging settings (access.audit_logging); address access.audit_logging.default.",
       {
           attr("api_server", "Audit log of the API server."),
           attr("storage", "Audit log of storage access."),
           attr("retention_days", "Days audit logs are kept."),
       }},
      {"access.transport", "plinth", "Transport security settings (access.transport); address access.transport.default.",
       {
           attr("tls_min", "Minimum TLS version (\"1.2\" | \"1.3\")."),
           attr("mtls", "Mutual TLS between services."),
       }},
      {"plinth.monitoring", "plinth", "GPU monitoring settings (monitoring); address plinth.monitoring.default.",
       {
           attr("dcgm", "NVIDIA DCGM exporter on every node."),
           attr("prometheus", "Prometheus scraping."),
           attr("grafana", "Grafana dashboards."),
       }},
      {"plinth.stack", "plinth", "A pinned software stack declared under stacks; nodes depend on it.",
       {
           attr("driver", "NVIDIA Linux driver version."),
           attr("cuda", "CUDA toolkit version."),
           attr("cudnn", "cuDNN version."),
           attr("frameworks", "Framework pins (name -> version)."),
           attr("images", "Container images, ideally pinned by digest."),
       }},
  };
  std::sort(t.begin(), t.end(), [](const ResourceType& a, const ResourceType& b) { return a.type < b.type; });
  return t;
}

}  // namespace

const std::vector<ResourceType>& resource_types() {
  static const std::vector<ResourceType> table = build_table();
  return table;
}

}  // namespace plinth
