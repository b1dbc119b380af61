#pragma once
// aws.instance over the EC2 Query API (docs/providers/aws.md).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "engine/net/http.h"
#include "engine/provider/provider.h"
#include "providers/common/burst_pool.h"
#include "providers/aws/ec2_client.h"

namespace plinth::aws {

/// The provider's own options, from its ProviderConfig.
struct AwsOptions {
  std::string region;  ///< for pools that name none
  std::string endpoint;
  int poll_ms = 2000;
  bool wait = true;
  int page_size = 200;
};

/// The ClientToken of a RunInstances for the resource at `address`, made
/// from `attributes`, in the state of `lineage`: the same inputs always give
/// the same token, so a retried or re-run create never launches twice.
/// `generation` moves on once EC2 answers IdempotentInstanceTerminated (the
/// token's instance is gone: reclaimed, or removed when the pool shrank).
/// At most 64 characters, as EC2 requires.
std::string client_token(const std::string& lineage, const std::string& address, const Json& attributes,
                         int generation);

/// Tag keys Plinth puts on what it creates.
inline constexpr const char* kTagAddress = "plinth:address";
inline constexpr const char* kTagLineage = "plinth:lineage";
inline constexpr const char* kTagBlueprint = "plinth:blueprint";
inline constexpr const char* kTagAttributes = "plinth:attributes";

/// `aws.instance` resources of burst pools. One instance per resource:
/// RunInstances with a capacity fallback over instance types and zones,
/// tagged with its address, the state's lineage and the blueprint;
/// refreshed by DescribeInstances pages filtered on the lineage tag; removed
/// with TerminateInstances. Thread-safe.
class AwsProvider : public Provider {
 public:
  const ProviderSchema& schema() const override;
  /// Options, credentials (environment, then shared files) and the HTTP
  /// client; no request is sent.
  Status configure(const ProviderConfig& config) override;
  void bind(const StateBinding& binding) override;
  /// DescribeInstances filtered on this state's lineage tag, page by page
  /// (page_size), once per region: O(pages) requests for any number of
  /// instances. A terminated spot instance with StateReason
  /// Server.SpotInstanceTermination is gone with reason "reclaimed by AWS".
  std::vector<ReadResult> read(const std::vector<Resource>& resources, const Call& call) override;
  /// Running instances tagged with this state's lineage whose address and
  /// id the state lacks.
  Result<std::vector<Resource>> discover(const std::vector<Resource>& known, const std::vector<Resource>& desired,
                                         const Call& call) override;
  /// Placement group (when asked), then RunInstances over the candidates:
  /// each instance type in order, each zone (or subnet) in order starting at
  /// the resource's index, moving on at InsufficientInstanceCapacity; waits
  /// for `running`. computed: id, instance_type, zone, subnet_id, ...
  Result<Resource> create(const Resource& desired, Call& call) override;
  /// Tags only (everything else forces a new instance).
  Result<Resource> update(const Resource& prior, const Resource& desired, Call& call) override;
  /// TerminateInstances, waits for `terminated`, then deletes the pool's
  /// placement group in that zone once no instance uses it.
  Status remove(const Resource& prior, Call& call) override;
  void stop() override { stopped_ = true; }
  void close() override {}

 private:
  std::string region_of(const Resource& r) const;
  /// Creates the cluster placement group `name` once per provider lifetime.
  Status ensure_group(const std::string& name, const std::string& region, Call& call);
  /// Every instance in `region` that `filters` select (all pages of
  /// page_size), by id.
  Result<std::map<std::string, Json>> list(const std::string& region, const Json& filters, Call& call);
  /// Polls until instance `id` is in state `want` (or terminated).
  Result<Json> wait_for(const std::string& id, const std::string& want, const std::string& region, Call& call);

  AwsOptions options_;
  std::unique_ptr<net::Client> http_;
  std::unique_ptr<Ec2Client> ec2_;
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  cloud::Binding binding_;  ///< lineage and blueprint for the tags
  std::set<std::string> groups_;  ///< placement groups known to exist (region/name)
};

}  // namespace plinth::aws
