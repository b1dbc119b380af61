#pragma once
// The Kubernetes provider: the blueprint's access section and the GPU
// Operator's ClusterPolicy, written by server-side apply
// (docs/providers/kubernetes.md).
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/net/http.h"
#include "engine/provider/provider.h"
#include "providers/kubernetes/kubeconfig.h"

namespace plinth::kubernetes {

/// The provider's description: kubernetes.cluster (clusters),
/// kubernetes.namespace (access.namespaces), kubernetes.role (access.roles).
const ProviderSchema& schema();

/// The label every object Plinth applies carries, and its value.
inline constexpr const char* kManagedBy = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "plinth";
/// The annotation holding the Plinth address an object belongs to.
inline constexpr const char* kAddressAnnotation = "plinth.dev/address";

/// One Kubernetes object a Plinth resource consists of.
struct KubeObject {
  std::string collection;  ///< "/api/v1/namespaces/team-a/resourcequotas"
  std::string name;
  std::string what;  ///< "ResourceQuota team-a/gpu-quota", for messages
  Json body;         ///< the apply configuration
  std::string path() const { return collection + "/" + name; }
  bool operator==(const KubeObject&) const = default;
};

/// The objects `r` asks for, in apply order (a namespace before what is in
/// it). Pure: the same resource always gives the same objects. The
/// mig-parted ConfigMap of a cluster goes to `operator_ns`.
std::vector<KubeObject> objects_for(const Resource& r, const std::string& operator_ns = "gpu-operator");

/// The labels a cluster resource puts on the nodes of its pools: the node
/// named POOL-INDEX (its hostname) gets plinth.dev/pool, plinth.dev/gpu,
/// plinth.dev/role and nvidia.com/mig.config (plinth-POOL for a MIG pool,
/// else all-disabled), so pods can select GPU types and the GPU Operator's
/// MIG manager picks the pool's layout.
struct NodeLabels {
  std::string node, pool;
  Json labels;
  bool operator==(const NodeLabels&) const = default;
};
std::vector<NodeLabels> node_labels_for(const Resource& r);

/// The RBAC rules of a role's verbs and resources: one rule per API group
/// (pods -> "", jobs -> batch, deployments -> apps, RESOURCE.GROUP as
/// written; an unknown plain name is taken as core), and back.
Json rbac_rules(const std::vector<std::string>& verbs, const std::vector<std::string>& resources);
void from_rbac_rules(const Json& rules, std::vector<std::string>& verbs, std::vector<std::string>& resources);

/// The managers a server-side apply 409 names, from the Status' causes:
/// {name, imperative} where imperative means an Update (`... using v1`).
struct ConflictManager {
  std::string name;
  bool imperative = false;
  bool operator==(const ConflictManager&) const = default;
};
std::vector<ConflictManager> conflict_managers(const Json& status);

class KubernetesProvider : public Provider {
 public:
  const ProviderSchema& schema() const override { return kubernetes::schema(); }
  Status configure(const ProviderConfig& config) override;
  /// Lists each kind once per cluster by the label selector
  /// app.kubernetes.io/managed-by=plinth with limit/continue pages, then
  /// rebuilds every resource's attributes from what the cluster holds.
  std::vector<ReadResult> read(const std::vector<Resource>& resources, const Call& call) override;
  /// The kubeconfig context of each cluster resource is usable (no exec or
  /// auth-provider user), and the GPU Operator's namespace exists there.
  Diagnostics preflight(const std::vector<Resource>& changes, const Call& call) override;
  /// Server-side apply of every object of the resource.
  Result<Resource> create(const Resource& desired, Call& call) override;
  /// Server-side apply of `desired`'s objects, then deletes the objects of
  /// `prior` that `desired` no longer has (Plinth's own only).
  Result<Resource> update(const Resource& prior, const Resource& desired, Call& call) override;
  /// Deletes the resource's objects that carry Plinth's label; an object
  /// other managers also own is released (an empty apply) instead.
  Status remove(const Resource& prior, Call& call) override;
  /// Cordons the node (spec.unschedulable), then evicts every pod on it but
  /// DaemonSet and static ones through the Eviction API (policy/v1): a pod a
  /// PodDisruptionBudget protects is asked again until the call's deadline,
  /// then the error names the budget; then waits, every poll_ms, until none is left.
  Result<bool> drain(const Resource& cluster, const std::string& node, Call& call) override;
  /// Waits, every poll_ms, for the node's Ready condition, then clears spec.unschedulable.
  Status uncordon(const Resource& cluster, const std::string& node, Call& call) override;
  void stop() override { stopped_ = true; }
  void close() override {}

 private:
  struct Conn {
    ClusterAccess access;
    std::mutex mu;  ///< guards what follows: an exec plugin's credential changes during a run
    std::shared_ptr<net::Client> http;
    std::string token;
    bool fetched = false;  ///< the exec plugin ran and its credential is held
    std::chrono::system_clock::time_point refresh_at = std::chrono::system_clock::time_point::max();
    std::optional<Error> refused;  ///< the plugin failed: said again, not run again, for the run
  };
  /// The client and bearer token to send with now: for an exec user, the plugin's credential, run
  /// again when less than a quarter of its life (at most a minute) is left, or when the server
  /// refused `refused` (a token sent) and no other request has run the plugin since.
  Result<std::pair<std::shared_ptr<net::Client>, std::string>> credential(Conn& c, const Deadline& deadline,
                                                                          const std::string* refused = nullptr);
  Result<Conn*> connect(const Resource& r);
  std::shared_ptr<net::Client> make_client(const ClusterAccess& access, const std::string& cert,
                                           const std::string& key) const;
  /// One request, sent again only when `retry` and call.retry() allows (429,
  /// 5xx, transport errors); any final status is a Response.
  Result<net::Response> exchange(Conn& c, const std::string& method, const std::string& path, const std::string& body,
                                 const std::string& content_type, Call& call, bool retry = true);
  /// exchange(), with a status of 400 and above as an Error.
  Result<net::Response> send(Conn& c, const std::string& method, const std::string& path, const std::string& body,
                             const std::string& content_type, Call& call);
  /// The error of a failed answer, in the API server's words.
  Error error_of(const Conn& c, const std::string& method, const std::string& path, const net::Response& r) const;
  Status apply_object(Conn& c, const KubeObject& o, Call& call);
  Status delete_object(Conn& c, const KubeObject& o, Call& call);
  /// Every object of `collection` (with `selector`, "" for none), page by page.
  Result<std::vector<Json>> list(Conn& c, const std::string& collection, const std::string& selector, Call& call);
  /// Labels the nodes of desired's pools that are in the cluster, and
  /// releases the labels of nodes prior had and desired has not.
  Status label_nodes(Conn& c, const Resource* desired, const Resource* prior, Call& call);
  Status apply_all(const Resource& desired, const Resource* prior, Call& call);
  /// Sleeps poll_ms (less when the deadline is closer); false when the call
  /// was stopped or its deadline passed.
  bool nap(const Call& call);

  std::string kubeconfig_;
  std::string default_context_;
  std::string field_manager_ = "plinth";
  std::string operator_ns_ = "gpu-operator";
  bool force_conflicts_ = false;
  int page_size_ = 500;
  long timeout_ms_ = 30000, connect_timeout_ms_ = 10000;
  long poll_ms_ = 1000;
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Conn>> conns_;  // by context
};

}  // namespace plinth::kubernetes
