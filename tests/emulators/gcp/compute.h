#pragma once
// gcp-emulator's Compute Engine v1 subset: instances, their zonal operations,
// boot disks, machine/accelerator types, zones, regions and project quotas,
// with the paths and response shapes of the compute.v1 discovery document.
// Operations advance with time (PENDING -> RUNNING -> DONE over
// --operation-ms); nothing runs in the background: state catches up with the
// clock whenever a call or a control endpoint looks at it.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/emulators/gcp/api.h"
#include "tests/emulators/gcp/oauth.h"

namespace plinth::gcp_emulator {

using Clock = std::chrono::steady_clock;

struct ComputeSettings {
  std::string project = "plinth-test";
  std::string project_number = "123456789012";
  std::vector<std::string> zones;
  int operation_ms = 1000;
  int wait_timeout_ms = 120000;
  std::map<std::string, int> capacity;   ///< "ZONE/TYPE" or "TYPE" -> instances that fit
  std::map<std::string, double> quotas;  ///< "METRIC@REGION" or "METRIC" -> limit
  bool stockout_details = true;
};

/// One Compute API call whose caller is already authenticated.
struct ApiCall {
  std::string http_method;
  std::vector<std::string> path;  ///< the segments after /compute/v1/
  std::map<std::string, std::string> query;
  std::string body;
  Caller caller;
};

/// The discovery method id of a call ("compute.instances.insert"), or "" when
/// the emulator does not serve that path and method.
std::string compute_method(const std::string& http_method, const std::vector<std::string>& path);

/// The IAM permission a method needs ("compute.instances.create" for insert).
std::string compute_permission(const std::string& method);

class Compute {
 public:
  explicit Compute(ComputeSettings settings);

  /// https://HOST:PORT/compute/v1/ — the prefix of every selfLink.
  void set_base_url(const std::string& base);
  const ComputeSettings& settings() const { return s_; }

  /// Serves `method` (from compute_method) for `call`.
  ApiAnswer handle(const std::string& method, const ApiCall& call);

  // Control endpoints (docs/emulators.md, /__emulator/...).
  /// Every instance, disk and operation as the API renders them.
  nlohmann::json dump();
  /// Sets (or with nullopt removes) a capacity limit; "" or an error message.
  std::string set_capacity(const std::string& zone, const std::string& machine_type, std::optional<int> available);
  /// Sets (or removes) a quota limit ("" region: a global metric); "" or an error.
  std::string set_quota(const std::string& metric, const std::string& region, std::optional<double> limit);
  /// Preempts a RUNNING Spot/preemptible instance: a compute.instances.preempted
  /// operation by "system", STOPPING, then TERMINATED (termination action STOP)
  /// or gone (DELETE) after --operation-ms. Returns status and body.
  std::pair<int, nlohmann::json> preempt(const std::string& zone, const std::string& instance);
  /// Moves the emulator's clock forward by `by` (operations, their
  /// timestamps and zoneOperations.wait follow it; tokens keep real time), so
  /// tests step through PENDING -> RUNNING -> DONE without sleeping. Returns
  /// the total offset.
  Clock::duration advance_clock(Clock::duration by);
  /// Ends every zoneOperations.wait in progress (at shutdown).
  void shutdown();

 private:
  struct Instance {
    uint64_t id = 0;
    uint64_t seq = 0;
    std::string zone, name;
    std::string status;   ///< PROVISIONING STAGING RUNNING STOPPING TERMINATED
    nlohmann::json spec;  ///< the validated resource, rendered around
    std::string machine_type;
    bool spot = false;
    std::string termination_action;  ///< STOP or DELETE (Spot/preemptible)
    bool doomed = false;             ///< its insert will fail: holds no capacity or quota
    std::string busy_op;             ///< the operation in flight on it, if any
    std::string created, last_start, last_stop;
    std::map<std::string, std::string> labels;
    std::vector<std::string> disks;  ///< names of its attached disks
  };
  struct Disk {
    uint64_t id = 0;
    std::string zone, name, created, type, source_image;
    int64_t size_gb = 10;
    bool auto_delete = true;
    std::string user;  ///< the instance it is attached to
  };
  struct Operation {
    uint64_t id = 0;
    uint64_t seq = 0;
    std::string name, zone, type, user, target_kind, target_name;
    uint64_t target_id = 0;
    std::string status = "PENDING";
    Clock::time_point start_at, done_at;
    std::string insert_time, start_time, end_time;
    nlohmann::json error;  ///< set when the operation will fail (shown once DONE)
    int http_error = 0;
    std::string http_error_message;
    std::string status_message;
  };

  // All members below are guarded by mu_.
  ApiAnswer dispatch(const std::string& method, const ApiCall& call);
  void advance(Clock::time_point now);
  void transition(Operation& op, bool to_done);
  Operation& new_operation(const std::string& zone, const std::string& type, const std::string& user,
                           const std::string& target_kind, const std::string& target_name, uint64_t target_id);
  void finish_now_if_instant(Operation& op);

  ApiAnswer project_get() const;
  ApiAnswer regions(const std::string& method, const ApiCall& c) const;
  ApiAnswer zones_list() const;
  ApiAnswer zone_get(const std::string& zone) const;
  ApiAnswer machine_type_call(const std::string& method, const ApiCall& c, const std::string& zone) const;
  ApiAnswer accelerator_type_call(const std::string& method, const ApiCall& c, const std::string& zone) const;
  ApiAnswer insert(const ApiCall& c, const std::string& zone);
  ApiAnswer get(const std::string& zone, const std::string& name);
  ApiAnswer remove(const ApiCall& c, const std::string& zone, const std::string& name);
  ApiAnswer stop_start(const ApiCall& c, const std::string& zone, const std::string& name, bool start);
  ApiAnswer set_labels(const ApiCall& c, const std::string& zone, const std::string& name);
  ApiAnswer list(const ApiCall& c, const std::string& zone);
  ApiAnswer aggregated(const ApiCall& c);
  ApiAnswer operation_get(const std::string& zone, const std::string& name);
  ApiAnswer operation_wait(const std::string& zone, const std::string& name, std::unique_lock<std::mutex>& lock);
  ApiAnswer operation_list(const ApiCall& c, const std::string& zone);
  ApiAnswer disk_get(const std::string& zone, const std::string& name);
  ApiAnswer disk_delete(const ApiCall& c, const std::string& zone, const std::string& name);

  /// The answer of a replayed requestId, or nullopt; an invalid id is a 400.
  std::optional<ApiAnswer> replay(const ApiCall& c, std::string& request_id);
  void remember(const std::string& request_id, const std::string& op);

  /// "" when the spec fits the zone, else the error object of a failed operation.
  nlohmann::json capacity_error(const Instance& inst, const std::string& project_zone) const;
  nlohmann::json quota_error(const Instance& inst) const;
  std::map<std::string, double> usage_of(const Instance& inst) const;
  std::map<std::string, double> usage() const;
  std::optional<int> capacity_limit(const std::string& zone, const std::string& type) const;
  int capacity_used(const std::string& zone, const std::string& type) const;

  nlohmann::json render(const Instance& inst) const;
  nlohmann::json render(const Operation& op) const;
  nlohmann::json render(const Disk& d) const;
  std::string link(const std::string& rest) const { return base_ + rest; }
  std::string zone_link(const std::string& zone) const { return base_ + "projects/" + s_.project + "/zones/" + zone; }
  bool known_zone(const std::string& zone) const;
  /// The emulator's clock: the real one plus what /__emulator/clock added.
  Clock::time_point now() const { return Clock::now() + offset_; }
  /// Emulator time `t` as a timestamp in Google's format.
  std::string stamp(Clock::time_point t) const;
  uint64_t next_id();

  ComputeSettings s_;
  std::string base_ = "https://compute.googleapis.com/compute/v1/";
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  Clock::duration offset_{0};
  uint64_t seq_ = 0;
  uint64_t ip_seq_ = 1;
  std::map<std::pair<std::string, std::string>, Instance> instances_;  ///< (zone, name)
  std::map<std::pair<std::string, std::string>, Disk> disks_;          ///< (zone, name)
  std::map<std::string, Operation> ops_;                               ///< by name
  std::set<std::string> active_;                                       ///< operations not DONE
  std::map<std::string, std::string> request_ids_;                     ///< requestId -> operation name
};

}  // namespace plinth::gcp_emulator
