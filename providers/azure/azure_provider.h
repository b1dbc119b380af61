#pragma once
// azure.vm over Azure Resource Manager (docs/providers/azure.md).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "engine/net/http.h"
#include "engine/provider/provider.h"
#include "providers/common/burst_pool.h"
#include "providers/azure/arm_client.h"

namespace plinth::azure {

inline constexpr const char* kComputeApi = "2024-07-01";
inline constexpr const char* kNetworkApi = "2024-05-01";
inline constexpr const char* kResourcesApi = "2021-04-01";

/// Tag names Plinth puts on what it creates.
inline constexpr const char* kTagAddress = "plinth:address";
inline constexpr const char* kTagLineage = "plinth:lineage";
inline constexpr const char* kTagBlueprint = "plinth:blueprint";
inline constexpr const char* kTagAttributes = "plinth:attributes";

/// The VM name of the resource at `address` (pool `name`, `index`) made
/// from `attributes` in the state of `lineage`: the same inputs always give
/// the same name, so a retried or re-run create PUTs the same VM instead of
/// making a second one; a change of a forcing attribute gives another name,
/// so a create-before-destroy replacement never collides with the VM it
/// replaces. At most 64 characters of [a-z0-9-].
std::string vm_name(const std::string& lineage, const std::string& address, const std::string& name, int index,
                    const Json& attributes);

/// What the VM PUT sends for `desired` as size `size` in zone `zone` ("" =
/// regional): location, tags, zones and properties (hardwareProfile,
/// storageProfile, osProfile with customData, networkProfile,
/// securityProfile, priority/evictionPolicy/billingProfile). Exposed so tests
/// can check it against Azure's API description.
Json vm_body(const Resource& desired, const std::string& location, const std::string& size, const std::string& zone,
             const std::string& nic_id, const std::string& computer_name, const Json& tags);

/// The NIC PUT body: one dynamic IP configuration in `subnet_id`,
/// accelerated networking unless the pool turns it off.
Json nic_body(const Resource& desired, const std::string& location, const std::string& subnet_id, const Json& tags);

/// `azure.vm` resources of burst pools: a NIC and a VM per resource, Spot
/// when the pool says so, with a capacity fallback over sizes and zones;
/// refreshed by listing each resource group's VMs (O(pages)). Thread-safe.
class AzureProvider : public Provider {
 public:
  const ProviderSchema& schema() const override;
  /// Options and credentials; no request is sent. Errors name the missing
  /// option and the variable that sets it.
  Status configure(const ProviderConfig& config) override;
  void bind(const StateBinding& binding) override;
  /// Lists the VMs of each resource group (with their instance view), page
  /// by page: O(pages) requests for any number of VMs. A Spot VM found
  /// deallocated, or gone with evictionPolicy Delete, is gone with reason
  /// "evicted by Azure".
  std::vector<ReadResult> read(const std::vector<Resource>& resources, const Call& call) override;
  /// VMs tagged with this state's lineage whose address the state lacks.
  Result<std::vector<Resource>> discover(const std::vector<Resource>& known, const std::vector<Resource>& desired,
                                         const Call& call) override;
  /// The network (unless subnet_id), then NIC + VM PUTs over the candidates
  /// (each size in order, each zone in order starting at the resource's
  /// index), waiting for each long-running operation; moves on at
  /// SkuNotAvailable, AllocationFailed, ZonalAllocationFailed and quota
  /// errors. An existing VM of the same name and address is taken (and
  /// started when it was deallocated).
  Result<Resource> create(const Resource& desired, Call& call) override;
  /// Tags only (everything else forces a new VM).
  Result<Resource> update(const Resource& prior, const Resource& desired, Call& call) override;
  /// DELETE of the VM (its NIC goes with it), then of the NIC if it stayed.
  Status remove(const Resource& prior, Call& call) override;
  void stop() override { stopped_ = true; }
  void close() override {}

 private:
  struct Where {
    std::string subscription, resource_group, location;
  };
  Result<Where> where_of(const Resource& r, bool for_create) const;
  std::string vm_path(const Where& w, const std::string& name) const;
  std::string nic_path(const Where& w, const std::string& name) const;
  /// The subnet id for `desired`: its subnet_id, else Plinth's VNet
  /// plinth-LOCATION in the resource group (resource group and VNet made
  /// once when missing).
  Result<std::string> subnet_for(const Resource& desired, const Where& w, Call& call);
  /// Every VM of the resource group (all pages, with the instance view), by
  /// lower-case name; an empty map when the group does not exist.
  Result<std::map<std::string, Json>> list(const Where& w, Call& call);
  /// DELETE `path` and wait for it; a missing object is success.
  Status delete_and_wait(const std::string& path, const std::string& api, const std::string& what, Call& call);
  /// GET of a VM with its instance view; nullopt-like null Json when missing.
  Result<Json> get_vm(const std::string& path, const std::string& what, Call& call);

  ProviderConfig config_;
  std::string location_;
  std::unique_ptr<net::Client> http_;
  std::unique_ptr<ArmClient> arm_;
  std::atomic<bool> stopped_{false};
  cloud::Binding binding_;                    ///< lineage and blueprint for the tags
  std::mutex net_mu_;                         ///< one network set-up at a time
  std::map<std::string, std::string> nets_;  ///< subscription/rg/location -> subnet id
};

}  // namespace plinth::azure
