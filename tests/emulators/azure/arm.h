#pragma once
// The Azure Resource Manager side of azure-emulator: subscriptions, resource
// groups, Microsoft.Compute virtualMachines and Microsoft.Network
// networkInterfaces / virtualNetworks, with api-version checks, bearer-token
// checks, long-running operations, capacity, quota, Spot eviction,
// per-subscription throttling and fault injection; and the test-only control
// endpoints under /__emulator/. docs/emulators.md describes the behaviour.
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/emulators/azure/entra.h"
#include "tests/emulators/azure/http.h"
#include "tests/emulators/azure/options.h"

namespace plinth::azure_emulator {

/// Request counters kept for /__emulator/counters (control requests excluded).
class Counters {
 public:
  void count(const std::string& operation, int status, const std::string& fault);
  void count_event(const std::string& name);
  json snapshot() const;
  void reset();

 private:
  mutable std::mutex mu_;
  int requests_ = 0;
  std::map<std::string, int> by_operation_;
  std::map<std::string, int> by_status_;
  std::map<std::string, int> faults_;
  std::map<std::string, int> events_;
};

class Arm {
 public:
  Arm(const Options& options, Entra& entra, Counters& counters);

  /// True for /__emulator/... paths.
  static bool is_control(const std::string& path);

  /// Answers one Resource Manager request (everything Entra does not own).
  Response handle(const Request& r);
  /// Answers one /__emulator/ control request.
  Response control(const Request& r);

 private:
  using Clock = std::chrono::steady_clock;
  using SysClock = std::chrono::system_clock;

  enum class Kind {
    kUnknown,
    kMetadata,
    kTenants,
    kSubscriptions,
    kSubscription,
    kProviders,
    kProvider,
    kResourceGroups,
    kResourceGroup,
    kRgResources,
    kSubResources,
    kRgOperationResult,
    kVmListAll,
    kVmList,
    kVm,
    kVmInstanceView,
    kVmAction,
    kComputeOperation,
    kNetworkOperation,
    kNetworkOperationResult,
    kUsages,
    kSkus,
    kNicList,
    kNic,
    kVnetList,
    kVnet,
    kSubnetList,
    kSubnet,
    kBadNamespace,
    kBadType,
  };
  enum class Family { kNone, kResources, kSubscriptions, kCompute, kNetwork };

  /// A parsed Resource Manager path.
  struct Route {
    Kind kind = Kind::kUnknown;
    Family family = Family::kNone;
    std::string sub, rg, name, child, action, location, op;
    std::string ns, type;  ///< for InvalidResourceType / InvalidResourceNamespace
  };

  struct ResourceGroup {
    json model;
    std::string sub;
    bool deleting = false;
  };
  struct Vm {
    json model;               ///< the ARM representation without instanceView
    std::string sub, rg;      ///< as created
    std::string custom_data;  ///< osProfile.customData: write-only in ARM, kept here
    std::string power;        ///< starting, running, stopping, stopped, deallocating, deallocated ("" unknown)
    bool allocated = false;   ///< holds capacity in its location/zone
    std::string failure_code, failure_message;  ///< last provisioning failure
    std::string op;                             ///< operation in flight ("" for none)
    std::string evicted;                        ///< "" or the time of the last Spot eviction
  };
  struct Nic {
    json model;
    std::string sub, rg;
    std::string vm;  ///< lower-case id of the VM it is attached to ("" for none)
    std::string ip;
    std::string mac;
  };
  struct Vnet {
    json model;
    std::string sub, rg;
  };
  struct Operation {
    std::string id, sub, provider, location, api_version, kind, target;
    SysClock::time_point started;
    std::optional<SysClock::time_point> ended;
    Clock::time_point due;
    std::string status = "InProgress";  ///< Succeeded, Failed, Canceled
    json error;                         ///< set when Failed or Canceled
    std::function<void()> on_success;
    std::function<void()> on_failure;
    uint64_t seq = 0;
  };
  struct BucketState {
    double reads = 0, writes = 0, deletes = 0;
    Clock::time_point last;
    bool init = false;
  };

  // arm.cpp: routing, auth, api-version, throttling, faults, headers.
  Route route(const Request& r) const;
  Route parse_route(const Request& r) const;
  std::string operation_name(const Request& r, const Route& route) const;
  Response dispatch(const Request& r, const Route& route, const TokenCheck& who);
  std::string check_api_version(const Request& r, const Route& route, Response& error) const;
  Response throttled(const std::string& sub, const std::string& bucket_kind, int retry_after, const TokenCheck& who);
  void advance(Clock::time_point now);
  void finish(Operation& op);
  void preempt(const std::string& target);
  std::string start_op(const std::string& sub, const std::string& provider, const std::string& location,
                       const std::string& api_version, const std::string& kind, const std::string& target, int delay_ms,
                       json error, std::function<void()> on_success, std::function<void()> on_failure = nullptr);
  void lro_headers(const Request& r, Response& out, const std::string& op_id, bool location_header,
                   bool async_header = true);
  std::string op_url(const Request& r, const Operation& op, bool monitor) const;
  Response operation_status(const Request& r, const Route& route);
  Response page(const Request& r, const std::vector<json>& items, const std::string& next_key_of_last = "");
  Response subscriptions(const Request& r, const Route& route);
  Response providers(const Request& r, const Route& route);
  Response resource_group(const Request& r, const Route& route);
  Response rg_resources(const Request& r, const Route& route);
  Response metadata(const Request& r);
  std::string rg_id(const std::string& sub, const std::string& rg) const;
  const ResourceGroup* find_rg(const std::string& sub, const std::string& rg) const;
  Response rg_not_found(const std::string& rg) const;
  Response not_found(const std::string& type, const std::string& name, const std::string& rg) const;
  bool location_known(const std::string& location) const;
  /// The `location` of a PUT body for a resource of `type` named `name` in
  /// resource group `rg`, checked as ARM does, in its order: missing (400
  /// LocationRequired), not offered for the type (400, listing the regions
  /// when `list_regions`), or not where the existing resource is (409
  /// InvalidResourceLocation). Sets `location`, or returns the error answer.
  std::optional<Response> check_location(const nlohmann::json& body, const std::string& type,
                                         const nlohmann::json* existing, const std::string& name,
                                         const std::string& rg, bool list_regions, std::string& location) const;

  // compute.cpp: virtual machines, SKUs, usages, capacity and quota.
  Response vm_put(const Request& r, const Route& route, bool patch);
  Response vm_get(const Request& r, const Route& route);
  Response vm_delete(const Request& r, const Route& route);
  Response vm_list(const Request& r, const Route& route);
  Response vm_action(const Request& r, const Route& route);
  Response skus(const Request& r, const Route& route);
  Response usages(const Request& r, const Route& route);
  json vm_view(const Vm& vm, bool instance_view) const;
  json instance_view(const Vm& vm) const;
  const VmSize* size_of(const std::string& name) const;
  bool sku_restricted(const std::string& location, const std::string& zone, const std::string& size) const;
  /// "" when `vcpus` more of `size` fit sub's quota in `location`, else ARM's OperationNotAllowed message.
  std::string quota_check(const std::string& sub, const std::string& location, const VmSize& size, bool spot,
                          int extra_vcpus, const std::string& except_vm) const;
  /// "" when one more `size` VM can be allocated there, else the error code (AllocationFailed / ZonalAllocationFailed).
  std::string capacity_check(const std::string& location, const std::string& zone, const std::string& size,
                             const std::string& except_vm) const;
  json allocation_error(const std::string& code) const;
  void remove_vm(const std::string& id);
  void evict(Vm& vm, const std::string& id);

  // network.cpp: network interfaces and virtual networks.
  Response nic_put(const Request& r, const Route& route);
  Response nic_get(const Request& r, const Route& route);
  Response nic_delete(const Request& r, const Route& route);
  Response nic_list(const Request& r, const Route& route);
  Response vnet_put(const Request& r, const Route& route);
  Response vnet_get(const Request& r, const Route& route);
  Response vnet_delete(const Request& r, const Route& route);
  Response vnet_list(const Request& r, const Route& route);
  Response subnet(const Request& r, const Route& route);
  json nic_view(const Nic& nic) const;
  json vnet_view(const Vnet& vnet) const;
  /// The subnet object inside its vnet, or null.
  json* find_subnet(const std::string& subnet_id, Vnet** vnet);
  std::string allocate_ip(const std::string& subnet_id, const std::string& prefix) const;
  Response network_lro(const Request& r, const Route& route, int status, json body, const std::string& kind,
                       const std::string& target, const std::string& location);

  // control.cpp
  json dump_vm(const std::string& id, const Vm& vm) const;

  const Options options_;
  Entra& entra_;
  Counters& counters_;
  std::map<std::string, VmSize> catalog_;  ///< lower-case name -> size
  std::map<std::pair<Place, std::string>, int> capacity_;
  std::set<std::pair<Place, std::string>> sku_unavailable_;
  std::map<std::pair<std::string, std::string>, int> quota_;

  mutable std::mutex mu_;
  std::map<std::string, ResourceGroup> rgs_;  ///< lower-case id -> group
  std::map<std::string, Vm> vms_;
  std::map<std::string, Nic> nics_;
  std::map<std::string, Vnet> vnets_;
  std::map<std::string, Operation> ops_;
  std::map<std::string, BucketState> buckets_;
  std::mt19937_64 fault_rng_;
  std::mt19937_64 id_rng_;
  uint64_t op_seq_ = 0;
  int lose_next_ = 0;
  int throttle_next_ = 0;
  std::set<std::string> lose_methods_;
};

}  // namespace plinth::azure_emulator
