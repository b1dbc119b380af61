#pragma once
// What a provider says about itself: its resource types and their
// attributes, the blueprint sections it serves, and its typed options. The
// engine learns everything about providers from these descriptions and names
// none of them (docs/architecture.md, "Providers describe themselves").
#include <chrono>
#include <initializer_list>
#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.h"
#include "engine/provider/resource.h"

namespace plinth {

/// The type of an attribute, option or blueprint setting.
enum class ValueType { Any, String, Bool, Int, Number, Duration, StringList, Map, Object };
/// "any", "string", "bool", "integer", "number", "duration", "list of strings", "map", "object".
const char* to_string(ValueType t);
/// The inverse of to_string; also accepts the protocol's short names
/// ("int", "list"). nullopt for anything else.
std::optional<ValueType> parse_value_type(std::string_view text);

/// How one attribute of a resource type behaves in a plan.
struct AttributeSpec {
  std::string name;  ///< dotted for a nested key with its own marks ("encryption.at_rest")
  bool force_new = false;  ///< a change replaces the resource instead of updating it
  bool sensitive = false;  ///< shown as (sensitive) in plans, never printed
  std::string description;
  ValueType type = ValueType::Any;
  /// Non-empty: the attribute holds a credential reference (env:NAME or
  /// file:PATH) whose secret the provider sends to the URL in this other
  /// attribute ("bmc_endpoint"). Under --untrusted a plan may use the pair
  /// only as the trust file allows (docs/security.md).
  std::string sends_to;
  /// An in-place change takes the object down for a while (a BIOS setting a
  /// reset applies): such updates roll out within the pool's
  /// rollout.max_unavailable, as replaces do.
  bool disruptive = false;
  bool operator==(const AttributeSpec&) const = default;
};

/// An attribute a change updates in place.
AttributeSpec attr(std::string name, std::string description, ValueType type = ValueType::Any);
/// An attribute a change replaces the resource for (force_new).
AttributeSpec force_new(std::string name, std::string description, ValueType type = ValueType::Any);

/// One kind of resource a provider manages ("baremetal.node").
struct ResourceType {
  std::string type;      ///< two dot-separated words: PREFIX.KIND
  std::string provider;  ///< the provider that declared it
  std::string description;
  std::vector<AttributeSpec> attributes;
  /// The attribute `plinth import ADDRESS ID` sets to ID before reading the
  /// resource through its provider ("bmc_endpoint"); "" when the type cannot
  /// be imported.
  std::string import_id;
  /// The real object exists before Plinth manages it (a server behind a
  /// BMC): read() of a *desired* resource checks it against the blueprint
  /// and reports mismatches as diagnostics. The engine then reads every
  /// desired resource of this type during plan, creates included, and an
  /// error diagnostic stops the plan before anything changes.
  bool inventory = false;
  /// Non-empty: resources of this type reach no external system, they are
  /// only recorded in state. Plans and apply print this note with the
  /// action ("recorded only: no cluster configured"), never a bare
  /// "create"/"created" that reads as done.
  std::string recorded_only;
  /// A replacement is created before the object it replaces is removed
  /// (burst instances: the pool never shrinks while a replacement is
  /// refused). The executor journals the old object as deposed in between;
  /// when the create fails the old object stays and is still recorded.
  bool create_before_destroy = false;
  /// Keys of `computed` that say where the provider placed an object it
  /// created (e.g. the instance type and zone a capacity fallback picked);
  /// the apply summary shows them per created resource.
  std::vector<std::string> placement;
  /// Keys of `computed` that name the real object itself (a server's UUID and
  /// serial number): no two addresses of the state hold the same one, so
  /// `plinth import` refuses an object already recorded under another address.
  std::vector<std::string> identity;

  const AttributeSpec* find(std::string_view attr) const;
  bool operator==(const ResourceType&) const = default;
};

/// One option of a provider, set by --provider-option NAME.KEY=VALUE,
/// PLINTH_<NAME>_<KEY>, the blueprint's providers.NAME.options or one of the
/// vendor's own environment variables (`env`).
struct OptionSpec {
  std::string name;  ///< lower case, [a-z0-9_]
  ValueType type = ValueType::String;
  std::string default_value;         ///< as it would be written; "" = none
  std::vector<std::string> env;      ///< vendor variables read, first set wins (e.g. AWS_REGION, AWS_DEFAULT_REGION)
  std::string description;
  bool secret = false;               ///< never printed, written to state, plan files or reports
  std::vector<std::string> allowed;  ///< allowed values; empty = any of the type
  /// Says where requests (and the credentials they carry) go, or which
  /// secret is read: an endpoint, an authority, a CA bundle, a credentials
  /// file. Under --untrusted it is taken from the environment, flags and the
  /// trust file only, never from the blueprint (docs/security.md).
  bool operator_only = false;
  bool operator==(const OptionSpec&) const = default;
};

/// Marks the options `names` of `options` operator_only.
void operator_only(std::vector<OptionSpec>& options, std::initializer_list<std::string_view> names);

/// A key a provider accepts on the blueprint entities it serves, beyond the
/// section's own keys (e.g. `image` and `subnets` on an AWS burst pool). The
/// loader checks them against this description (type, allowed values,
/// required) with file:line:column; expand copies them into the resource's
/// attributes under the same name.
struct SettingSpec {
  std::string name;
  ValueType type = ValueType::String;
  bool required = false;
  std::vector<std::string> allowed;
  std::string description;
  std::vector<SettingSpec> fields;  ///< an Object's keys (checked the same way)
  bool operator==(const SettingSpec&) const = default;
};

/// An attribute a provider takes from a block of the blueprint entity that
/// only it reads (the bare-metal provider: a node pool's `bmc:`), so the
/// engine expands it without knowing the block. `from` is a dotted path in
/// the entity's blueprint form (bp::to_json: "bmc.credentials"); the field
/// applies only when the entity has the block (the path's first word).
struct FieldSpec {
  std::string from;
  std::string to;   ///< the attribute
  Json value;       ///< non-null: this constant instead of the value at `from` (power "On")
  Json fallback;    ///< non-null: written when the block has no such key ("" for an unset CA bundle)
  /// The value holds one entry per member (a list as long as the pool), or
  /// one string template in which "{index}" becomes the member's index.
  bool per_member = false;
  bool operator==(const FieldSpec&) const = default;
};

/// A blueprint section whose entities the provider turns into resources.
/// Sections are fixed by the blueprint format: "node_pools", "burst_pools",
/// "stacks", "networks.vlans", "networks.fabrics", "storage.tiers",
/// "storage.backups", "access.namespaces", "access.roles",
/// "access.audit_logging", "access.transport", "monitoring", "clusters".
/// When a blueprint declares a cluster, the provider serving `clusters`
/// also takes every other section it serves (not only as default).
struct SectionSpec {
  std::string section;
  std::string resource_type;  ///< one of the provider's own types
  /// Serves the section's entities that name no provider (sections without a
  /// `provider` key, or a node pool that leaves it out).
  bool is_default = false;
  std::vector<SettingSpec> settings;
  /// For a single-entity section (monitoring): the resource also gets the
  /// attribute `nodes`, every machine of the blueprint as {address, pool,
  /// index, provider, gpu, role}, and depends on them, so a provider that
  /// watches the fleet is applied after it and learns what to watch.
  bool fleet = false;
  /// For burst_pools: the setting that lists the instance types a pool may
  /// fall back on ("instance_types" on AWS, "machine_types" on GCP). The
  /// rules check those types too, and their facts reach the resource.
  std::string fallback_types;
  /// For burst_pools: the list settings that say where a pool's instances may
  /// go ("zones", "subnets"), and the boolean settings that tie instances to
  /// one zone, each with why ("placement_group": a cluster placement group
  /// lives in one Availability Zone). A pool that turns one of the latter on
  /// and lists more than one place gets the warning BURST003.
  std::vector<std::string> zone_settings;
  std::map<std::string, std::string> one_zone_settings;
  /// For burst_pools: the list setting that names where each GPU NIC goes, one
  /// entry per NIC ("gpu_subnetworks" on GCP). The provider attaches the first
  /// `gpu_nics` entries to an instance of a type with a `gpu_network` it does
  /// not set up through the render: a pool that lists enough has its GPU
  /// network attached (no BURST004), one that lists too few gets BURST005.
  std::string gpu_nic_setting;
  /// Attributes taken from blocks of the entity only this provider reads.
  std::vector<FieldSpec> fields;
  bool operator==(const SectionSpec&) const = default;
};

/// One machine shape a provider rents out (a cloud instance type), with the
/// facts the GPU rules check a burst pool against. Declared by the provider
/// that sells it, built-in or plugin, never by the engine.
struct InstanceType {
  std::string name;     ///< as the provider's API spells it ("p5.48xlarge")
  std::string gpu;      ///< a catalog GPU: name, alias or product name ("H100-80GB")
  int gpu_count = 0;    ///< GPUs per instance, at least 1
  int vcpus = 0;
  int memory_gb = 0;    ///< as the provider documents it (GiB or GB)
  bool nvswitch = false;        ///< the GPUs are joined by NVSwitch
  bool fabric_manager = false;  ///< the instance itself must run NVIDIA Fabric Manager
  /// How its GPUs reach other instances' for NCCL: "efa" (AWS Elastic Fabric
  /// Adapter), "infiniband" (Azure ND), "gpudirect-tcpx" / "gpudirect-tcpxo" /
  /// "gpudirect-rdma" (Google A3 High / A3 Mega / A3 Ultra and A4); "" when
  /// only the ordinary network joins them.
  std::string gpu_network;
  int gpu_nics = 0;  ///< the network interfaces that fabric needs (0 when gpu_network is "")
  /// Facts of the provider's own that a burst instance carries: each key K
  /// (one of the burst resource type's attributes) becomes the attribute
  /// K = {TYPE: value} over the types the pool may launch ("efa_interfaces"
  /// on AWS: how many EFA interfaces to attach).
  Json facts = Json::object();
  /// The NCCL topology (an XML file) the instance's virtualised PCIe hides
  /// from NCCL, where the provider's own images put it
  /// ("/opt/microsoft/ndv5-topo.xml"), and its contents; both "" for none.
  /// The render writes it and points NCCL_TOPO_FILE at it in /etc/nccl.conf.
  std::string nccl_topology_path;
  std::string nccl_topology_xml;
  /// With a topology, the NCCL graph (rings and trees) the provider's images
  /// give NCCL for the type (Azure's NC A100 v4: "/opt/microsoft/ncv4-graph.xml"),
  /// and its contents; NCCL_GRAPH_FILE points at it. Both "" for none.
  std::string nccl_graph_path;
  std::string nccl_graph_xml;
  std::vector<std::string> sources;  ///< where the figures come from (each a document and its URL)
  bool operator==(const InstanceType&) const = default;
};

/// Whether the render sets up GPU network `gpu_network` on a burst instance:
/// EFA (the EFA installer with aws-ofi-nccl) and InfiniBand (the RDMA stack
/// with nvidia-peermem). GPUDirect-TCPX/TCPXO/RDMA are NICs the provider
/// attaches at creation (SectionSpec::gpu_nic_setting) and software the job
/// brings in its container; without the NICs rule BURST004 warns. The one
/// place both the render and the rules ask.
bool render_sets_up_gpu_network(const std::string& gpu_network);

/// The default time one operation may take, all attempts included; each is
/// an option (read_deadline, create_deadline, ...) users can change.
struct Deadlines {
  std::chrono::milliseconds read{std::chrono::minutes(2)};
  std::chrono::milliseconds create{std::chrono::minutes(30)};
  std::chrono::milliseconds update{std::chrono::minutes(30)};
  std::chrono::milliseconds remove{std::chrono::minutes(10)};
  bool operator==(const Deadlines&) const = default;
};

/// Everything a provider says about itself.
struct ProviderSchema {
  std::string name;     ///< [a-z][a-z0-9_-]*; what blueprints write in `provider:`
  std::string version;  ///< the provider's own version
  std::string description;
  std::string docs;     ///< its documentation page, e.g. docs/providers/baremetal.md
  std::vector<ResourceType> resource_types;
  std::vector<SectionSpec> sections;
  std::vector<OptionSpec> options;  ///< its own; common_options() come on top
  Deadlines deadlines;
  /// The instance types its burst pools may use (a provider serving
  /// burst_pools), in the order it lists them.
  std::vector<InstanceType> instance_types;
  /// Where it came from: "built-in", or the plugin executable's path. Set
  /// by whoever registers the schema, not by the provider.
  std::string source = "built-in";

  const ResourceType* resource_type(const std::string& type) const;
  /// The instance type `name`, or nullptr.
  const InstanceType* instance_type(const std::string& name) const;
  /// Its own option or a common one; nullopt when neither.
  std::optional<OptionSpec> option(const std::string& name) const;
  /// Own options followed by the common ones (what users can set).
  std::vector<OptionSpec> all_options() const;
  bool operator==(const ProviderSchema&) const = default;
};

/// Options every provider has, applied by the engine: concurrency, rate,
/// burst (the executor's limits), retry_attempts, retry_base_ms,
/// retry_max_ms (the one retry owner) and read/create/update/delete
/// deadlines with `defaults`.
std::vector<OptionSpec> common_options(const Deadlines& defaults);

/// Checks that a schema is well formed: names, no duplicate types,
/// attributes or options, types that start with a word and have two parts,
/// sections that are known and name the provider's own types. The error
/// names the provider and the offending entry.
Status check_schema(const ProviderSchema& schema);

/// The blueprint sections a provider may serve, in blueprint order.
const std::vector<std::string>& blueprint_sections();

// JSON (the plugin handshake and `plinth providers --json`): the field names
// of docs/plugins.md. from_json throws nlohmann::json::exception on a
// missing or mistyped field; callers at a boundary catch it.
void to_json(Json& j, const AttributeSpec& a);
void from_json(const Json& j, AttributeSpec& a);
void to_json(Json& j, const ResourceType& t);
void from_json(const Json& j, ResourceType& t);
void to_json(Json& j, const OptionSpec& o);
void from_json(const Json& j, OptionSpec& o);
void to_json(Json& j, const SettingSpec& s);
void from_json(const Json& j, SettingSpec& s);
void to_json(Json& j, const SectionSpec& s);
void from_json(const Json& j, SectionSpec& s);
void to_json(Json& j, const FieldSpec& f);
void from_json(const Json& j, FieldSpec& f);
void to_json(Json& j, const InstanceType& t);
void from_json(const Json& j, InstanceType& t);
void to_json(Json& j, const ProviderSchema& s);
void from_json(const Json& j, ProviderSchema& s);

}  // namespace plinth
