#pragma once
// The emulated EC2 region behind aws-ec2-emulator: instances and their state
// machine, placement groups, capacity pools and capacity reservations. It
// takes and returns JSON in the botocore model's member names (the HTTP layer
// in main.cpp turns it into and out of the Query protocol with
// providers/aws/ec2_protocol.h), so every answer has the model's exact shape.
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "tests/emulators/aws-ec2/options.h"

namespace plinth::aws_ec2_emulator {

using Json = nlohmann::json;

/// An EC2 error answer: HTTP status, code and message in AWS's words.
struct ApiError {
  int status = 400;
  std::string code;
  std::string message;
};

/// The output of an action (JSON of its output shape) or its error.
using Outcome = std::variant<Json, ApiError>;

/// The EFA interfaces (= EFA-capable network cards) an instance type allows:
/// a small built-in table from AWS's documentation, overridden by
/// --efa-limit. nullopt: the type does not support EFA.
std::optional<int> efa_limit(const std::string& instance_type, const std::map<std::string, int>& overrides);

/// One region. Thread-safe: every call takes the region's lock.
class Region {
 public:
  explicit Region(const Options& options);

  /// The actions `call` implements (model names).
  static const std::vector<std::string>& actions();
  /// Runs `action` with `input` (JSON of the model's input shape, already
  /// checked against the model: types, enums, required members).
  Outcome call(const std::string& action, const Json& input);

  // ---- Control (/__emulator/...) ----
  /// Everything, terminated instances included, in the emulator's own JSON
  /// (docs/emulators.md): instances, placement_groups, capacity, capacity_reservations.
  Json dump();
  /// Spot reclaim: each spot instance goes to shutting-down, then terminated,
  /// with StateReason Server.SpotInstanceTermination. Refuses unknown and
  /// non-spot instances.
  Outcome reclaim(const std::vector<std::string>& instance_ids);
  /// Sets (or, with nullopt, lifts) the limit of one pool; TYPE or ZONE may be "*".
  void set_capacity(const std::string& type, const std::string& zone, std::optional<int> limit);
  /// Moves the region's clock forward (state transitions, timestamps).
  void advance(std::chrono::milliseconds by);

 private:
  using Time = std::chrono::system_clock::time_point;
  struct Volume {
    std::string id, device, type;
    int size_gib = 8;
    bool encrypted = false;
    std::string kms_key_id;
    bool delete_on_termination = true;
    std::vector<std::pair<std::string, std::string>> tags;
  };
  struct Eni {
    std::string id, attachment_id, subnet, vpc, private_ip, mac, interface_type, description;
    int device_index = 0, card_index = 0;
    std::vector<std::string> groups;
    bool delete_on_termination = true;
  };
  struct Instance {
    uint64_t seq = 0;
    std::string id, reservation_id, image_id, type, zone, subnet, vpc, key_name, client_token;
    std::string placement_group, placement_group_id, tenancy = "default";
    std::vector<std::string> security_groups;
    std::string iam_arn, iam_id;
    std::string user_data;
    std::vector<std::pair<std::string, std::string>> tags;
    std::string lifecycle;  ///< "", "spot" or "capacity-block"
    std::string spot_request_id;
    std::string capacity_reservation_id, reservation_preference = "open";
    std::string state = "pending";
    Time launched, state_changed;
    std::string reason_code, reason_message, transition_reason;
    int launch_index = 0;
    std::vector<Volume> volumes;
    std::vector<Eni> enis;
    std::string private_ip, root_device = "/dev/xvda";
    bool disable_api_termination = false;
    bool monitoring = false;
  };
  struct PlacementGroup {
    std::string name, id, strategy, spread_level;
    int partition_count = 0;
    std::vector<std::pair<std::string, std::string>> tags;
  };
  struct CapacityReservation {
    ReservationSpec spec;
    Time created;
    std::vector<std::pair<std::string, std::string>> tags;
  };
  struct TokenRecord {
    std::string fingerprint;
    std::string reservation_id;
  };

  Time now() const;
  void tick();  ///< applies due state transitions and forgets long-terminated instances
  std::string hex_id(const std::string& prefix, int digits = 17);
  std::string ip_in(const std::string& zone);

  Outcome run_instances(const Json& in);
  Outcome describe_instances(const Json& in);
  Outcome terminate_instances(const Json& in);
  Outcome create_tags(const Json& in);
  Outcome delete_tags(const Json& in);
  Outcome create_placement_group(const Json& in);
  Outcome delete_placement_group(const Json& in);
  Outcome describe_placement_groups(const Json& in);
  Outcome describe_capacity_reservations(const Json& in);
  Outcome describe_availability_zones(const Json& in);

  std::optional<int> limit_of(const std::string& type, const std::string& zone) const;
  int used_in(const std::string& type, const std::string& zone) const;
  int used_of(const std::string& reservation_id) const;
  std::optional<std::string> zone_of(const PlacementGroup& g) const;
  bool active(const Instance& i) const { return i.state != "terminated"; }

  Json instance_json(const Instance& i) const;
  Json reservation_json(const std::string& reservation_id, const std::vector<const Instance*>& members) const;
  Json placement_group_json(const PlacementGroup& g) const;
  Json capacity_reservation_json(const CapacityReservation& c) const;
  Instance* find(const std::string& id);

  Options options_;
  std::mutex mu_;
  std::chrono::milliseconds offset_{0};
  std::mt19937_64 rng_;
  uint64_t next_seq_ = 1;
  std::vector<Instance> instances_;  ///< in launch order
  std::map<std::string, PlacementGroup> groups_;
  std::map<std::string, CapacityReservation> reservations_;
  std::map<std::string, TokenRecord> tokens_;
  std::map<std::pair<std::string, std::string>, int> capacity_;
  std::map<std::string, int> next_ip_;  ///< zone -> last host number handed out
  std::string vpc_id_;
};

}  // namespace plinth::aws_ec2_emulator
