#pragma once
// gcp.instance over the Compute Engine v1 REST API (docs/providers/gcp.md).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "engine/net/http.h"
#include "engine/provider/provider.h"
#include "providers/common/burst_pool.h"
#include "providers/gcp/compute_client.h"

namespace plinth::gcp {

/// Label keys Plinth puts on what it creates (GCP labels: [a-z0-9_-], at
/// most 63 characters, so the address travels in metadata instead).
inline constexpr const char* kLabelLineage = "plinth-lineage";
inline constexpr const char* kLabelPool = "plinth-pool";
inline constexpr const char* kLabelIndex = "plinth-index";
inline constexpr const char* kLabelBlueprint = "plinth-blueprint";
inline constexpr const char* kLabelAttributes = "plinth-attributes";
/// Metadata keys: the resource address, and the rendered cloud-init.
inline constexpr const char* kMetadataAddress = "plinth-address";
inline constexpr const char* kMetadataUserData = "user-data";

/// `text` as a GCP label value: lower case, [a-z0-9_-] (anything else
/// becomes '-'), at most 63 characters.
std::string label_value(const std::string& text);

/// The instance name of the resource at `address` (pool `pool`, index
/// `index`) made from `attributes` in the state of `lineage`: RFC 1035
/// (starts with a letter, [a-z0-9-], at most 63 characters), POOL-INDEX-HASH
/// where HASH covers lineage, address and attributes, so a replacement
/// (other attributes) gets another name and two states never share one.
std::string instance_name(const std::string& pool, int index, const std::string& lineage, const std::string& address,
                          const Json& attributes);

/// A requestId (a UUID, as Compute requires) made from `parts`: the same
/// parts always give the same id, so a retried insert or delete whose answer
/// was lost is answered with the first one's operation instead of acting twice.
std::string request_id(const std::vector<std::string>& parts);

/// Where and what one insert creates.
struct InsertTarget {
  std::string project, zone, machine_type, name, lineage, blueprint;
};

/// The compute.instances.insert body (an Instance resource) for `desired`
/// at `target`: machine type, SPOT or STANDARD scheduling (onHostMaintenance
/// TERMINATE: GPUs cannot live-migrate), boot disk from `image`, network
/// and subnetwork, service account and scopes, Plinth's labels plus the
/// pool's, and the `user-data` and `plinth-address` metadata items.
Json insert_body(const Resource& desired, const InsertTarget& target);

/// The provider's own options, from its ProviderConfig.
struct GcpOptions {
  std::string project;
  std::string endpoint;
  int poll_ms = 1000;
  bool wait = true;
  int page_size = 500;
};

/// `gcp.instance` resources of burst pools. One Compute Engine instance per
/// resource: instances.insert with a fallback over zones and machine types,
/// labelled with the state's lineage; refreshed by aggregatedList pages
/// filtered on that label; removed with instances.delete. Thread-safe.
class GcpProvider : public Provider {
 public:
  const ProviderSchema& schema() const override;
  /// Options, credentials (access token, else the key file) and the HTTP
  /// client; no request is sent.
  Status configure(const ProviderConfig& config) override;
  void bind(const StateBinding& binding) override;
  /// aggregatedList filtered on this state's lineage label, page by page
  /// (page_size): O(pages) requests for any number of instances. A SPOT
  /// instance that is gone or stopped and has a compute.instances.preempted
  /// operation is gone with reason "preempted by GCP (...)".
  std::vector<ReadResult> read(const std::vector<Resource>& resources, const Call& call) override;
  /// Running instances labelled with this state's lineage whose address
  /// and name the state lacks.
  Result<std::vector<Resource>> discover(const std::vector<Resource>& known, const std::vector<Resource>& desired,
                                         const Call& call) override;
  /// instances.insert over the candidates: each machine type in order, each
  /// zone in order starting at the resource's index, moving on at
  /// ZONE_RESOURCE_POOL_EXHAUSTED* and QUOTA_EXCEEDED; waits for the
  /// operation. computed: id, name, instance_type, zone, status, ...
  Result<Resource> create(const Resource& desired, Call& call) override;
  /// setLabels with the new attributes hash and the pool's labels.
  Result<Resource> update(const Resource& prior, const Resource& desired, Call& call) override;
  /// instances.delete (a missing instance is success), waits for the operation.
  Status remove(const Resource& prior, Call& call) override;
  void stop() override { stopped_ = true; }
  void close() override {}

 private:
  /// Every instance the filter selects (aggregatedList, all pages), by "zone/name".
  Result<std::map<std::string, Json>> list(const std::string& filter, Call& call);
  /// Names and ids of the instances preempted in `zone` (zoneOperations.list), with the operation.
  Result<std::map<std::string, Json>> preempted(const std::string& zone, Call& call);
  /// Deletes instance `name` in `zone` and waits for it to be gone.
  Status delete_instance(const std::string& zone, const std::string& name, const std::string& rid,
                         const std::string& address, Call& call);
  /// The answer of instances.insert for `body`, waited for: the instance,
  /// or a failure (a Conflict failure is a capacity or quota refusal).
  std::variant<Json, ApiFailure> insert(const Resource& desired, const Json& body, const std::string& zone,
                                        const std::string& rid_base, Call& call);

  GcpOptions options_;
  std::unique_ptr<net::Client> http_;
  std::unique_ptr<ComputeClient> compute_;
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  cloud::Binding binding_;  ///< lineage and blueprint for the tags
  std::string run_id_;                     ///< random per configure(): requestIds never replay an earlier run's failure
  std::map<std::string, int> generation_;  ///< requestId base -> failed operations so far
};

}  // namespace plinth::gcp
