#pragma once
// The kinds the emulator serves: how each is named in discovery, printed by
// `kubectl get` (server-side Table columns) and checked for unknown fields.
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace plinth::kube_emulator {

using json = nlohmann::json;

/// A column of the Table that `kubectl get` prints (meta.k8s.io/v1 TableColumnDefinition).
struct Column {
  std::string name;
  std::string type = "string";  ///< string, integer, date, ...
  std::string format;           ///< "name" for the Name column
  std::string description;
  int priority = 0;       ///< > 0: shown only with -o wide
  std::string json_path;  ///< CRD additionalPrinterColumns only
};

/// One served resource (an entry of an APIResourceList).
struct ResourceType {
  std::string group;  ///< "" for the core group
  std::string version;
  std::string kind;
  std::string plural;
  std::string singular;
  bool namespaced = false;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  bool status_subresource = false;
  bool from_crd = false;
  std::vector<Column> printer_columns;  ///< from the CRD; empty for built-in kinds

  /// "v1" or "rbac.authorization.k8s.io/v1"
  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
  /// "/api/v1" or "/apis/rbac.authorization.k8s.io/v1"
  std::string path_prefix() const { return group.empty() ? "/api/v1" : "/apis/" + group + "/" + version; }
  /// "namespaces" or "roles.rbac.authorization.k8s.io", as error messages name it
  std::string qualified() const { return group.empty() ? plural : plural + "." + group; }
};

/// The verbs every resource accepts.
const std::vector<std::string>& resource_verbs();

/// Namespace, ResourceQuota, ServiceAccount, ConfigMap, Node, Pod (with its
/// eviction subresource), PodDisruptionBudget, Role, RoleBinding, ClusterRole,
/// ClusterRoleBinding and CustomResourceDefinition.
std::vector<ResourceType> builtin_types();

/// The resource a CustomResourceDefinition serves (its served storage
/// version), or nothing when the definition is incomplete.
std::optional<ResourceType> type_from_crd(const json& crd);

/// The NVIDIA GPU Operator's `clusterpolicies.nvidia.com` definition
/// (nvidia.com/v1 ClusterPolicy, cluster-scoped, status subresource, the
/// operator's printer columns), without server-set metadata.
json clusterpolicy_crd();

/// A meta.k8s.io/v1 Table of `objects` with the kind's columns, as the API
/// server answers `Accept: application/json;as=Table;g=meta.k8s.io;v=v1`.
/// `include_object` is None, Metadata (the default) or Object.
json make_table(const ResourceType& type, const std::vector<json>& objects, const json& list_metadata,
                const std::string& include_object, std::chrono::system_clock::time_point now);

/// Fields of `object` the kind does not have ("spec.hardd",
/// "rules[0].verbz"), in document order. Custom resources keep any field.
std::vector<std::string> unknown_fields(const ResourceType& type, const json& object);

/// Removes the fields unknown_fields() reports, as decoding into the typed
/// object does when field validation is Warn or Ignore.
void prune_unknown(const ResourceType& type, json& object);

/// Kubernetes' short human durations: "45s", "3m20s", "5h", "12d".
std::string human_duration(std::chrono::seconds d);

}  // namespace plinth::kube_emulator
