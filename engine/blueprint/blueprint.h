#pragma once
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/source_location.h"

namespace plinth::bp {

/// Where an entity and each of its fields were written. `fields` is keyed by
/// the field's dotted path inside the entity ("driver", "hardware.gpu",
/// "encryption.at_rest"); `at()` falls back to the entity's own position.
struct Origin {
  SourceLoc loc;
  std::map<std::string, SourceLoc> fields;

  const SourceLoc& at(const std::string& field) const {
    auto it = fields.find(field);
    return it == fields.end() ? loc : it->second;
  }
  bool operator==(const Origin&) const = default;
};

/// A contract the blueprint's owner signed with a provider that stores or
/// processes regulated data (metadata.agreements): evidence for the HIPAA
/// and GDPR policies, which cannot see contracts otherwise.
struct Agreement {
  std::string provider;   ///< aws | gcp | azure | a third-party provider's name
  std::string kind;       ///< baa (HIPAA business associate agreement) | dpa (GDPR Art. 28 processing agreement)
  std::string reference;  ///< where the signed document is, e.g. "AWS BAA via AWS Artifact, accepted 2026-02-10"
  bool operator==(const Agreement&) const = default;
};

struct Metadata {
  std::string name;
  std::string owner;
  std::vector<std::string> compliance;  ///< frameworks: soc2, hipaa, gdpr, ...
  std::map<std::string, std::string> labels;
  std::vector<Agreement> agreements;
  /// The data protection impact assessment (GDPR Art. 35) covering the
  /// processing, e.g. "DPIA-2026-014, approved by the DPO 2026-03-02".
  std::string dpia;
  Origin origin;
  bool operator==(const Metadata&) const = default;
};

/// A pinned software stack; rendered into cloud-init for every provider.
struct Stack {
  std::string name;
  std::string driver;  ///< NVIDIA Linux driver, e.g. "550.54.15"
  std::string cuda;    ///< CUDA toolkit, e.g. "12.4"
  std::string cudnn;
  std::map<std::string, std::string> frameworks;  ///< pytorch: "2.3.1"
  std::vector<std::string> images;                ///< container images, ideally by digest
  /// NVIDIA kernel module flavour: open | proprietary ("" = NVIDIA's default for
  /// the driver branch and GPU: open from R560 on Turing and newer).
  std::string kernel_modules;
  std::string container_toolkit;  ///< NVIDIA Container Toolkit release ("" = the catalog's default)
  /// CUDA forward compatibility: run a CUDA newer than the driver through the
  /// cuda-compat package (data-center GPUs, listed driver branches only).
  bool cuda_compat = false;
  std::string precision;  ///< numeric format the workloads use: fp32 | tf32 | bf16 | fp16 | fp8 | int8 | int4 | fp4 ("" = not declared)
  Origin origin;
  bool operator==(const Stack&) const = default;
};

struct Vlan {
  std::string name;
  int id = 0;
  std::string cidr;
  std::string vrf;
  std::string purpose;  ///< training | storage | management | inference | ...
  int mtu = 1500;
  Origin origin;
  bool operator==(const Vlan&) const = default;
};

struct Fabric {
  std::string name;
  std::string kind;  ///< infiniband | roce-v2 | ethernet
  int speed_gbps = 0;
  std::string topology;          ///< spine-leaf | fat-tree | rail-optimized | dragonfly
  std::string oversubscription;  ///< "1:1", "2:1"
  std::optional<bool> pfc;       ///< RoCE: priority flow control
  std::optional<bool> ecn;       ///< RoCE: explicit congestion notification
  /// Host RDMA stack: doca-ofed (NVIDIA DOCA-OFED, loads nvidia-peermem) | inbox
  /// (the distribution's rdma-core; GPUDirect RDMA through dma-buf) ("" = doca-ofed).
  std::string rdma_stack;
  Origin origin;
  bool operator==(const Fabric&) const = default;
};

struct Encryption {
  std::string at_rest;     ///< aes-256-xts | aes-256-gcm | luks2 | sed | none ("" = not set)
  std::string in_transit;  ///< tls1.3 | tls1.2 | none ("" = not set)
  std::string kms_key;     ///< optional key reference
  bool operator==(const Encryption&) const = default;
};

struct Lifecycle {
  std::string transition_from;  ///< tier name
  int after_days = 0;
  int expire_days = 0;  ///< 0 = never
  bool operator==(const Lifecycle&) const = default;
};

/// The GDPR Chapter V basis for storing or processing personal data outside
/// the EU/EEA (Art. 45 adequacy decision, Art. 46 safeguards, Art. 47 binding
/// corporate rules, Art. 49 derogations).
struct Transfer {
  std::string basis;      ///< adequacy | scc | bcr | derogation
  std::string reference;  ///< where it is documented, e.g. "SCC module 2, signed 2026-03-01"
  bool operator==(const Transfer&) const = default;
};

struct StorageTier {
  std::string name;
  std::string kind;  ///< nvme | parallel-fs | nfs | object
  double capacity_tb = 0;
  std::string backend;         ///< object: s3 | gcs | azure-blob | ceph; parallel-fs: lustre | gpfs | weka
  std::string region;          ///< object tiers
  std::string classification;  ///< public | internal | confidential | pii | phi
  std::optional<Encryption> encryption;
  std::optional<Lifecycle> lifecycle;
  /// What nodes mount (YAML key `export`): nfs "server:/path"; lustre "mgs@o2ib:/fsname";
  /// gpfs the file system device ("fs1"); weka "backend/fs". "" = not mounted by Plinth.
  std::string remote;
  std::string mount_point;  ///< "" = /mnt/<name>
  std::optional<Transfer> transfer;  ///< GDPR transfer basis for a region outside the EU/EEA
  Origin origin;
  bool operator==(const StorageTier&) const = default;
};

struct Backup {
  std::string name;
  std::string source;    ///< tier name
  std::string target;    ///< tier name
  std::string schedule;  ///< cron expression
  int retention_days = 0;
  int dr_test_interval_days = 0;  ///< 0 = never tested
  Origin origin;
  bool operator==(const Backup&) const = default;
};

struct Hardware {
  std::string gpu;  ///< catalog GPU model, e.g. "H100-80GB"
  int gpus_per_node = 0;
  int cpu_cores = 0;
  int memory_gb = 0;
  int rdma_nics = 0;  ///< NICs on the RDMA fabric per node (0 = not declared)
  bool operator==(const Hardware&) const = default;
};

struct Boot {
  std::string method;  ///< pxe | uefi-http | virtual-media
  std::string image;
  bool operator==(const Boot&) const = default;
};

struct Bmc {
  /// Either one template containing "{index}" or one endpoint per node.
  std::vector<std::string> endpoints;
  std::string credentials;  ///< env:NAME or file:PATH holding "user:password"
  std::string ca_bundle;
  bool operator==(const Bmc&) const = default;
};

struct Mig {
  std::string profile = "none";  ///< "none" or a catalog profile such as "3g.40gb"
  int instances = 0;             ///< per GPU
  std::string layout;            ///< a named mixed layout: "all-balanced" (mig-parted's)
  /// A mixed layout: profile -> instances per GPU, in file order.
  std::vector<std::pair<std::string, int>> profiles;
  /// True when the pool partitions its GPUs (a profile other than "none", a layout or profiles).
  bool enabled() const { return (!profile.empty() && profile != "none") || !layout.empty() || !profiles.empty(); }
  bool operator==(const Mig&) const = default;
};

/// The largest model a pool runs, by size and numeric format, so memory can
/// be estimated per role (training needs optimizer state, inference a KV cache).
struct ModelSize {
  double params_b = 0;    ///< billions of parameters
  std::string precision;  ///< fp32 | tf32 | bf16 | fp16 | fp8 | int8 | int4 | fp4
  std::string training = "full";  ///< training pools: full | lora (fine-tuning adapters on a frozen model)
  bool operator==(const ModelSize&) const = default;
};

/// Which network interfaces of a node do what (names or netplan globs).
struct Interfaces {
  std::vector<std::string> bond;  ///< bonded into bond0 for the VLANs (default: ["eno*"], the on-board ports)
  std::vector<std::string> rdma;  ///< the RDMA rails, never bonded (default per fabric: "ib*" or none)
  bool operator==(const Interfaces&) const = default;
};

/// The IMEX domain of a multi-node NVLink pool (`imex:`, GB200/GB300 NVL racks):
/// the IPv4 addresses of the compute trays whose IMEX daemons share GPU memory
/// over NVLink, written to /etc/nvidia-imex/nodes_config.cfg on every node.
struct Imex {
  std::vector<std::string> nodes;
  bool operator==(const Imex&) const = default;
};

/// How a node pool's reprovisioning rolls (`rollout:`): at most this many of
/// its nodes down at once during replaces and disruptive updates.
struct Rollout {
  int max_unavailable = 1;  ///< nodes, or a percentage of `count` when `percent`
  bool percent = false;
  /// How long draining one node's Kubernetes workloads (and waiting for it to
  /// be Ready again) may take; 0 = the default, kDrainTimeout.
  std::chrono::milliseconds drain_timeout{0};
  bool operator==(const Rollout&) const = default;
};

/// rollout.drain_timeout when the pool sets none.
inline constexpr std::chrono::milliseconds kDrainTimeout = std::chrono::minutes(10);

struct NodePool {
  std::string name;
  /// The provider serving this pool: as written, else the registry's default
  /// provider for node_pools (filled in when the loader checks providers).
  std::string provider;
  int count = 0;
  std::string role = "training";  ///< training | inference | preprocessing
  Hardware hardware;
  std::optional<double> largest_model_gb;
  std::optional<ModelSize> largest_model;
  std::string stack;
  std::string fabric;  ///< "" = none
  std::optional<Boot> boot;
  std::map<std::string, std::string> bios;  ///< Redfish BIOS attribute -> value
  std::vector<std::string> networks;        ///< VLAN names
  std::vector<std::string> storage;         ///< tier names
  std::optional<Bmc> bmc;
  Mig mig;
  /// Keys the pool's provider declares for node pools (SectionSpec::settings),
  /// checked against its schema; positions are in origin.fields.
  nlohmann::json settings = nlohmann::json::object();
  std::optional<Interfaces> interfaces;
  std::optional<Imex> imex;
  /// Operating system: ubuntu-22.04 | ubuntu-24.04 | rhel-8 | rhel-9 | rocky-8 | rocky-9
  /// ("" = from the boot image's name, else ubuntu-22.04).
  std::string os;
  std::optional<Rollout> rollout;
  Origin origin;
  bool operator==(const NodePool&) const = default;
};

/// How many nodes of `p` may be down at once while it is reprovisioned:
/// rollout.max_unavailable (a percentage of count rounded down), at least 1;
/// 1 without a rollout.
int max_unavailable(const NodePool& p);

/// rollout.drain_timeout, else kDrainTimeout.
std::chrono::milliseconds drain_timeout(const NodePool& p);

struct Checkpointing {
  int interval_minutes = 0;
  std::string target;  ///< tier name
  bool operator==(const Checkpointing&) const = default;
};

struct BurstPool {
  std::string name;
  std::string provider;  ///< a provider serving burst_pools (aws, gcp, azure, a plugin)
  std::string region;
  std::string zone;      ///< optional
  std::string instance_type;
  int desired = 0;
  int max = 0;
  bool spot = false;
  /// false: each job fits one instance, so the instance type's cross-instance
  /// GPU network is not needed (rule BURST004 stays quiet).
  bool multi_node = true;
  std::string stack;
  std::optional<Checkpointing> checkpointing;
  std::vector<std::string> networks;
  std::vector<std::string> storage;
  /// Keys the pool's provider declares for burst pools (e.g. AWS `image`,
  /// `subnets`; Azure `resource_group`), checked against its schema.
  nlohmann::json settings = nlohmann::json::object();
  std::string os;  ///< as NodePool::os ("" = ubuntu-22.04)
  std::optional<Transfer> transfer;  ///< GDPR transfer basis when it reaches personal data outside the EU/EEA
  Origin origin;
  bool operator==(const BurstPool&) const = default;
};

struct Namespace {
  std::string name;
  std::optional<int> gpu_quota;  ///< quota.gpus
  std::string cpu_quota;         ///< quota.cpu as written ("64", "500m"); "" = none
  std::string memory_quota;      ///< quota.memory as written ("512Gi"); "" = none
  std::vector<std::string> service_accounts;
  Origin origin;
  bool operator==(const Namespace&) const = default;
};

struct Role {
  std::string name;
  std::vector<std::string> subjects;  ///< "group:x", "user:y", "serviceaccount:ns/z"
  std::vector<std::string> namespaces;
  std::vector<std::string> verbs;
  std::vector<std::string> resources;
  /// "namespace" (a role in each of `namespaces`) or "cluster" (one
  /// cluster-wide role; `namespaces` must then be empty).
  std::string scope = "namespace";
  Origin origin;
  bool operator==(const Role&) const = default;
};

struct AuditLogging {
  bool api_server = false;
  bool storage = false;
  int retention_days = 0;
  Origin origin;
  bool operator==(const AuditLogging&) const = default;
};

struct Transport {
  std::string tls_min;  ///< "1.2" | "1.3"
  bool mtls = false;
  Origin origin;
  bool operator==(const Transport&) const = default;
};

struct Access {
  std::vector<Namespace> namespaces;
  std::vector<Role> roles;
  std::optional<AuditLogging> audit_logging;
  std::optional<Transport> transport;
  bool operator==(const Access&) const = default;
};

struct Monitoring {
  bool dcgm = false;
  bool prometheus = false;
  bool grafana = false;
  /// The Prometheus `plinth verify` queries (its base URL); "" = none declared.
  std::string prometheus_url;
  std::string provider;  ///< "" = the section's default provider
  /// Keys the provider declares for monitoring (SectionSpec::settings).
  nlohmann::json settings = nlohmann::json::object();
  Origin origin;
  bool operator==(const Monitoring&) const = default;
};

/// A cluster the blueprint's access section and GPU stack are applied to
/// (`clusters:`). Its provider serves the `clusters` section; when a
/// blueprint declares one, every other section that provider serves
/// (access.namespaces, access.roles) goes to it instead of being recorded.
struct Cluster {
  std::string name;
  /// The kubeconfig context to use; "" = the kubeconfig's current-context.
  std::string context;
  /// Node pools whose nodes run in the cluster; empty = every node pool.
  std::vector<std::string> pools;
  std::string provider;  ///< "" = the section's default provider
  Origin origin;
  bool operator==(const Cluster&) const = default;
};

/// A provider the blueprint declares (`providers: {NAME: {exec, sha256, options}}`):
/// a plugin executable pinned by its SHA-256, and options for it.
struct ProviderDecl {
  std::string name;
  std::string exec;    ///< as written; relative paths are relative to `base_dir`
  std::string sha256;  ///< lower-case hex; "" = not pinned
  std::string base_dir;  ///< directory of the file that declares it
  std::map<std::string, std::string> options;  ///< option -> value as written
  Origin origin;
  bool operator==(const ProviderDecl&) const = default;
};

/// A value `plinth output` prints (`outputs: {NAME: {...}}`): one or more
/// attributes of every node of some pools, recorded in the state at apply
/// (docs/blueprint.md, "Outputs").
struct Output {
  std::string name;
  std::string description;
  std::vector<std::string> pools;       ///< node and burst pools; empty = every pool
  std::vector<std::string> attributes;  ///< what each node gives (attribute, else attributes)
  bool single = true;                   ///< `attribute:` (a value per node), not `attributes:` (an object)
  bool sensitive = false;               ///< hidden when every output is listed
  Origin origin;
  bool operator==(const Output&) const = default;
};

/// One blueprint source file, as loaded.
struct SourceFile {
  std::string path;
  std::string sha256;
  bool operator==(const SourceFile&) const = default;
};

/// A whole blueprint: one file or several merged. Vectors keep file order.
struct Blueprint {
  std::string api_version = "plinth/v1";
  Metadata metadata;
  std::vector<Stack> stacks;
  std::vector<Vlan> vlans;
  std::vector<Fabric> fabrics;
  std::vector<StorageTier> tiers;
  std::vector<Backup> backups;
  std::vector<NodePool> node_pools;
  std::vector<BurstPool> burst_pools;
  Access access;
  std::optional<Monitoring> monitoring;
  std::vector<Cluster> clusters;
  std::vector<ProviderDecl> providers;
  std::vector<Output> outputs;
  std::vector<SourceFile> files;

  const Stack* find_stack(const std::string& name) const;
  const Vlan* find_vlan(const std::string& name) const;
  const Fabric* find_fabric(const std::string& name) const;
  const StorageTier* find_tier(const std::string& name) const;
  const NodePool* find_node_pool(const std::string& name) const;
  const BurstPool* find_burst_pool(const std::string& name) const;
  const ProviderDecl* find_provider(const std::string& name) const;

  bool operator==(const Blueprint&) const = default;
};

/// One entity of a blueprint and where it was written: its kind ("metadata",
/// "stack", "vlan", "fabric", "tier", "backup", "pool", "burst", "namespace",
/// "role", "audit_logging", "transport", "monitoring", "cluster", "provider", "output"),
/// its name ("" for a single-entity section) and its Origin (in `blueprint`).
struct EntityOrigin {
  std::string kind;
  std::string name;
  const Origin* origin = nullptr;
};
/// Every entity of `blueprint`, in section order.
std::vector<EntityOrigin> entity_origins(const Blueprint& blueprint);

/// The OS a boot image's file name announces ("rocky-9.4-ml.iso" -> "rocky-9",
/// "ubuntu-24.04.iso" / "noble" -> "ubuntu-24.04"); "" when it does not say.
std::string os_from_image(std::string image);
/// The OS a pool's nodes run: its `os`, else its boot image's, else "ubuntu-22.04".
std::string operating_system(const NodePool& p);
std::string operating_system(const BurstPool& p);
/// The instance types a burst pool may launch: its `instance_type`, then each
/// string its provider setting `fallback_setting` lists ("" for none), once
/// each (the rules check them all; expand takes their facts).
std::vector<std::string> candidate_types(const BurstPool& p, const std::string& fallback_setting);
/// True for rhel-* and rocky-*.
bool rhel_family(const std::string& os);
/// One network identifier of a Lustre server in an export ("10.110.0.10@o2ib"):
/// its address and its LNet network type and number.
struct LustreNid {
  std::string address;  ///< "10.110.0.10" (or a host name for tcp)
  std::string lnd;      ///< "o2ib" (LNet over RDMA verbs: InfiniBand, RoCE) | "tcp" | ...
  std::string net;      ///< the LNet network as written: "o2ib", "o2ib1", "tcp0"
  bool operator==(const LustreNid&) const = default;
};
/// The MGS NIDs of a Lustre export "nid[,nid][:nid[,nid]]:/fsname" (',' separates
/// the NIDs of one server, ':' its failover partners), in written order; empty
/// when `export_` has no ":/".
std::vector<LustreNid> lustre_nids(const std::string& export_);

/// True when `address` is an IPv4 address inside VLAN `v`'s subnet (its cidr).
bool vlan_holds(const Vlan& v, const std::string& address);

/// The BIOS attribute that turns Secure Boot on for a pool's nodes: a key
/// starting with "secureboot" (any case: SecureBoot, SecureBootEnable) set to
/// Enabled, On, true or 1; "" when none does.
std::string secure_boot_attribute(const NodePool& p);

/// The host RDMA stack of fabric `f` on `os`: its rdma_stack, else doca-ofed
/// on Ubuntu and inbox (rdma-core) on RHEL-family systems.
std::string rdma_stack(const Fabric& f, const std::string& os);

}  // namespace plinth::bp
