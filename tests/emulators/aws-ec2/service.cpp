#include "tests/emulators/aws-ec2/service.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <regex>
#include <set>

#include "engine/core/gzip.h"
#include "providers/aws/ec2_protocol.h"

namespace plinth::aws_ec2_emulator {
namespace {

namespace ec2 = plinth::aws::ec2;

ApiError error(int status, std::string code, std::string message) {
  return ApiError{status, std::move(code), std::move(message)};
}
ApiError invalid(std::string message) { return error(400, "InvalidParameterValue", std::move(message)); }

int state_code(const std::string& state) {
  static const std::map<std::string, int> codes = {{"pending", 0},     {"running", 16},  {"shutting-down", 32},
                                                   {"terminated", 48}, {"stopping", 64}, {"stopped", 80}};
  return codes.at(state);
}

Json state_json(const std::string& state) { return {{"Code", state_code(state)}, {"Name", state}}; }

/// "2024-05-01 12:00:00 GMT", the form of EC2's StateTransitionReason.
std::string gmt(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S GMT", &tm);
  return buf;
}

std::string iso(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  return ec2::iso8601(static_cast<double>(duration_cast<milliseconds>(t.time_since_epoch()).count()) / 1000.0);
}

/// EC2 filter values match with * (any run) and ? (any one character).
bool glob(const std::string& pattern, const std::string& text) {
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

using Tags = std::vector<std::pair<std::string, std::string>>;

Json tags_json(const Tags& tags) {
  Json out = Json::array();
  for (const auto& [k, v] : tags) out.push_back({{"Key", k}, {"Value", v}});
  return out;
}

void set_tag(Tags& tags, const std::string& key, const std::string& value) {
  for (auto& [k, v] : tags)
    if (k == key) {
      v = value;
      return;
    }
  tags.emplace_back(key, value);
}

/// Checks tags as EC2 does; "" when fine.
std::optional<ApiError> check_tags(const Json& tags, size_t already = 0) {
  std::set<std::string> keys;
  for (const auto& t : tags) {
    std::string key = t.value("Key", ""), value = t.value("Value", "");
    if (key.empty()) return invalid("Tag keys may not be empty. Give each tag a Key.");
    if (key.size() > 128) return invalid("Tag key exceeds the maximum length of 128 characters: '" + key + "'");
    if (value.size() > 256)
      return invalid("Tag value exceeds the maximum length of 256 characters (key '" + key + "')");
    if (key.rfind("aws:", 0) == 0)
      return invalid("Value ( " + key +
                     " ) for parameter key is invalid. Tag keys starting with 'aws:' are reserved for internal use");
    keys.insert(key);
  }
  if (keys.size() + already > 50)
    return error(400, "TagLimitExceeded", "The maximum number of tags per resource is 50.");
  return std::nullopt;
}

/// The filters of a Describe call as (name, values).
using Filters = std::vector<std::pair<std::string, std::vector<std::string>>>;
Filters filters_of(const Json& in) {
  Filters out;
  for (const auto& f : in.value("Filters", Json::array())) {
    std::vector<std::string> values;
    for (const auto& v : f.value("Values", Json::array())) values.push_back(v.get<std::string>());
    out.emplace_back(f.value("Name", ""), values);
  }
  return out;
}

bool any_match(const std::vector<std::string>& patterns, const std::vector<std::string>& values) {
  for (const auto& p : patterns)
    for (const auto& v : values)
      if (glob(p, v)) return true;
  return false;
}

/// The values a tag filter sees (tag:KEY, tag-key, tag-value); nullopt when `name` is not one.
std::optional<std::vector<std::string>> tag_filter_values(const std::string& name, const Tags& tags) {
  std::vector<std::string> out;
  if (name.rfind("tag:", 0) == 0) {
    for (const auto& [k, v] : tags)
      if (k == name.substr(4)) out.push_back(v);
    return out;
  }
  if (name == "tag-key") {
    for (const auto& [k, v] : tags) out.push_back(k);
    return out;
  }
  if (name == "tag-value") {
    for (const auto& [k, v] : tags) out.push_back(v);
    return out;
  }
  return std::nullopt;
}

std::string list_ids(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out;
}

std::string not_found_message(const std::string& what, const std::vector<std::string>& ids) {
  return ids.size() == 1 ? "The " + what + " ID '" + ids[0] + "' does not exist"
                         : "The " + what + " IDs '" + list_ids(ids) + "' do not exist";
}

bool valid_instance_id(const std::string& id) {
  static const std::regex re("^i-([0-9a-f]{8}|[0-9a-f]{17})$");
  return std::regex_match(id, re);
}

/// x86_64, or arm64 for Graviton families (c7g, m6gd, t4g, g5g, ...).
std::string architecture_of(const std::string& type) {
  static const std::regex graviton("^[a-z]+[0-9]+g[a-z]*\\..*$");
  return std::regex_match(type, graviton) ? "arm64" : "x86_64";
}

std::string zero_id(const std::string& prefix, int n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%017d", n);
  return prefix + buf;
}

/// The pagination token: where the previous page stopped and what it was
/// asked for, so a token cannot be replayed against another query.
std::string make_token(uint64_t after, const std::string& query) {
  return ec2::base64_encode("v1:" + std::to_string(after) + ":" + std::to_string(std::hash<std::string>{}(query)));
}
std::optional<uint64_t> read_token(const std::string& token, const std::string& query) {
  auto raw = ec2::base64_decode(token);
  if (!raw || raw->rfind("v1:", 0) != 0) return std::nullopt;
  auto colon = raw->find(':', 3);
  if (colon == std::string::npos) return std::nullopt;
  if (raw->substr(colon + 1) != std::to_string(std::hash<std::string>{}(query))) return std::nullopt;
  try {
    return std::stoull(raw->substr(3, colon - 3));
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<int> efa_limit(const std::string& type, const std::map<std::string, int>& overrides) {
  if (auto it = overrides.find(type); it != overrides.end()) {
    if (it->second == 0) return std::nullopt;
    return it->second;
  }
  // EFA interfaces per type = its EFA-capable network cards (one EFA per card):
  // AWS's "Maximize network bandwidth on instances with multiple network cards"
  // (docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html: a P5
  // or P5e takes 32 EFA devices, one per network card; P5en 16 at 200 Gbps
  // each; P4d/P4de 4 at 100 Gbps; P6-B200 8 at 400 Gbps) and the instance
  // types' network specifications (Trn1 8, Trn1n 16, c5n.18xlarge 1). Types
  // not listed take no EFA unless --efa-limit names them.
  static const std::map<std::string, int> table = {
      {"p4d.24xlarge", 4},  {"p4de.24xlarge", 4},   {"p5.48xlarge", 32},
      {"p5e.48xlarge", 32}, {"p5en.48xlarge", 16},  {"p6-b200.48xlarge", 8},
      {"trn1.32xlarge", 8}, {"trn1n.32xlarge", 16}, {"c5n.18xlarge", 1},
  };
  if (auto it = table.find(type); it != table.end()) return it->second;
  return std::nullopt;
}

Region::Region(const Options& options) : options_(options), rng_(options.seed) {
  vpc_id_ = zero_id("vpc-", 1);
  if (options_.subnets.empty())
    for (size_t i = 0; i < options_.zones.size(); ++i)
      options_.subnets[zero_id("subnet-", static_cast<int>(i) + 1)] = options_.zones[i];
  if (options_.security_groups.empty()) options_.security_groups[zero_id("sg-", 1)] = "default";
  if (options_.key_pairs.empty()) options_.key_pairs.push_back("default");
  capacity_ = options_.capacity;
  for (const auto& r : options_.reservations) reservations_[r.id] = CapacityReservation{r, now(), {}};
}

const std::vector<std::string>& Region::actions() {
  static const std::vector<std::string> list = {"RunInstances",
                                                "DescribeInstances",
                                                "TerminateInstances",
                                                "CreateTags",
                                                "DeleteTags",
                                                "CreatePlacementGroup",
                                                "DeletePlacementGroup",
                                                "DescribePlacementGroups",
                                                "DescribeCapacityReservations",
                                                "DescribeAvailabilityZones"};
  return list;
}

Outcome Region::call(const std::string& action, const Json& input) {
  std::lock_guard<std::mutex> lock(mu_);
  tick();
  if (action == "RunInstances") return run_instances(input);
  if (action == "DescribeInstances") return describe_instances(input);
  if (action == "TerminateInstances") return terminate_instances(input);
  if (action == "CreateTags") return create_tags(input);
  if (action == "DeleteTags") return delete_tags(input);
  if (action == "CreatePlacementGroup") return create_placement_group(input);
  if (action == "DeletePlacementGroup") return delete_placement_group(input);
  if (action == "DescribePlacementGroups") return describe_placement_groups(input);
  if (action == "DescribeCapacityReservations") return describe_capacity_reservations(input);
  if (action == "DescribeAvailabilityZones") return describe_availability_zones(input);
  return error(400, "InvalidAction", "The action " + action + " is not valid for this web service.");
}

Region::Time Region::now() const { return std::chrono::system_clock::now() + offset_; }

void Region::advance(std::chrono::milliseconds by) {
  std::lock_guard<std::mutex> lock(mu_);
  offset_ += by;
  tick();
}

void Region::tick() {
  Time t = now();
  auto ms = [](int n) { return std::chrono::milliseconds(n); };
  for (auto& i : instances_) {
    if (i.state == "pending" && t >= i.launched + ms(options_.pending_ms)) {
      i.state = "running";
      i.state_changed = i.launched + ms(options_.pending_ms);
      i.reason_code.clear();
      i.reason_message.clear();
    }
    if (i.state == "shutting-down" && t >= i.state_changed + ms(options_.shutdown_ms)) {
      i.state = "terminated";
      i.state_changed += ms(options_.shutdown_ms);
    }
  }
  instances_.erase(std::remove_if(instances_.begin(), instances_.end(),
                                  [&](const Instance& i) {
                                    return i.state == "terminated" &&
                                           t >= i.state_changed + ms(options_.terminated_visible_ms);
                                  }),
                   instances_.end());
}

std::string Region::hex_id(const std::string& prefix, int digits) {
  static const char* hex = "0123456789abcdef";
  std::string out = prefix;
  for (int i = 0; i < digits; ++i) out += hex[rng_() & 0xf];
  return out;
}

std::string Region::ip_in(const std::string& zone) {
  auto z = std::find(options_.zones.begin(), options_.zones.end(), zone) - options_.zones.begin();
  int n = ++next_ip_[zone];
  return "10." + std::to_string(z) + "." + std::to_string(n / 250) + "." + std::to_string(n % 250 + 4);
}

Region::Instance* Region::find(const std::string& id) {
  for (auto& i : instances_)
    if (i.id == id) return &i;
  return nullptr;
}

std::optional<int> Region::limit_of(const std::string& type, const std::string& zone) const {
  for (const auto& key : {std::make_pair(type, zone), std::make_pair(type, std::string("*")),
                          std::make_pair(std::string("*"), zone), std::make_pair(std::string("*"), std::string("*"))})
    if (auto it = capacity_.find(key); it != capacity_.end()) return it->second;
  return options_.default_capacity;
}

int Region::used_in(const std::string& type, const std::string& zone) const {
  int n = 0;
  for (const auto& i : instances_)
    if (active(i) && i.type == type && i.zone == zone && i.capacity_reservation_id.empty()) ++n;
  return n;
}

int Region::used_of(const std::string& reservation_id) const {
  int n = 0;
  for (const auto& i : instances_)
    if (active(i) && i.capacity_reservation_id == reservation_id) ++n;
  return n;
}

std::optional<std::string> Region::zone_of(const PlacementGroup& g) const {
  for (const auto& i : instances_)
    if (active(i) && i.placement_group == g.name) return i.zone;
  return std::nullopt;
}

void Region::set_capacity(const std::string& type, const std::string& zone, std::optional<int> limit) {
  std::lock_guard<std::mutex> lock(mu_);
  if (limit)
    capacity_[{type, zone}] = *limit;
  else
    capacity_.erase({type, zone});
}

// ---- RunInstances ------------------------------------------------------------

Outcome Region::run_instances(const Json& in) {
  // Members this emulator does not model are refused rather than ignored.
  for (const char* member : {"LaunchTemplate", "Ipv6Addresses", "Ipv6AddressCount", "ElasticGpuSpecification",
                             "ElasticInferenceAccelerators", "LicenseSpecifications", "HibernationOptions",
                             "EnclaveOptions", "SecondaryInterfaces", "KernelId", "RamdiskId"})
    if (in.contains(member))
      return error(400, "UnsupportedOperation",
                   std::string("aws-ec2-emulator does not implement RunInstances' ") + member +
                       " (docs/emulators.md lists what it does)");

  long long min_count = in.at("MinCount"), max_count = in.at("MaxCount");
  if (min_count < 1)
    return invalid("Value (" + std::to_string(min_count) +
                   ") for parameter minCount is invalid. Expected a value greater than 0.");
  if (max_count < min_count)
    return invalid("Value (" + std::to_string(max_count) +
                   ") for parameter maxCount is invalid. MaxCount may not be less than MinCount (" +
                   std::to_string(min_count) + ").");

  if (!in.contains("ImageId")) return error(400, "MissingParameter", "The request must contain the parameter ImageId");
  std::string image = in["ImageId"];
  static const std::regex ami("^ami-([0-9a-f]{8}|[0-9a-f]{17})$");
  if (!std::regex_match(image, ami))
    return error(400, "InvalidAMIID.Malformed", "Invalid id: \"" + image + "\" (expecting \"ami-...\")");
  std::string type = in.value("InstanceType", "m1.small");

  // Idempotency: the same token and the same parameters (the zone aside)
  // answer the first launch's reservation; anything else is a mismatch.
  std::string token = in.value("ClientToken", "");
  if (token.size() > 64)
    return invalid("Value (" + token +
                   ") for parameter clientToken is invalid. The client token may be at most 64 characters.");
  Json print = in;
  print.erase("ClientToken");
  print.erase("DryRun");
  if (print.contains("Placement")) print["Placement"].erase("AvailabilityZone");
  std::string fingerprint = print.dump();
  if (!token.empty()) {
    if (auto it = tokens_.find(token); it != tokens_.end()) {
      if (it->second.fingerprint != fingerprint)
        return error(
            400, "IdempotentParameterMismatch",
            "Arguments on this idempotent request are inconsistent with arguments used in previous request(s).");
      std::vector<const Instance*> members;
      for (const auto& i : instances_)
        if (i.reservation_id == it->second.reservation_id) members.push_back(&i);
      bool alive = std::any_of(members.begin(), members.end(), [&](const Instance* i) { return active(*i); });
      if (!alive)
        return error(400, "IdempotentInstanceTerminated",
                     "The client token you have provided is associated with a terminated instance. Please use a "
                     "different client token.");
      return reservation_json(it->second.reservation_id, members);
    }
  }

  // Network: instance-level subnet and groups, or network interfaces.
  const Json nics = in.value("NetworkInterfaces", Json::array());
  if (!nics.empty() && in.contains("SubnetId"))
    return error(400, "InvalidParameterCombination",
                 "Network interfaces and an instance-level subnet ID may not be specified on the same request");
  if (!nics.empty() && (in.contains("SecurityGroupIds") || in.contains("SecurityGroups")))
    return error(400, "InvalidParameterCombination",
                 "Network interfaces and an instance-level security groups may not be specified on the same request");
  std::string subnet = in.value("SubnetId", "");
  for (const auto& n : nics)
    if (n.value("DeviceIndex", -1) == 0 && n.value("NetworkCardIndex", 0) == 0) subnet = n.value("SubnetId", subnet);
  Json placement = in.value("Placement", Json::object());
  std::string zone = placement.value("AvailabilityZone", "");
  if (!zone.empty() && std::find(options_.zones.begin(), options_.zones.end(), zone) == options_.zones.end())
    return invalid("Invalid availability zone: [" + zone + "]");
  if (!subnet.empty()) {
    auto it = options_.subnets.find(subnet);
    if (it == options_.subnets.end())
      return error(400, "InvalidSubnetID.NotFound", "The subnet ID '" + subnet + "' does not exist");
    if (!zone.empty() && zone != it->second)
      return invalid("The subnet '" + subnet + "' is in Availability Zone " + it->second + ", not " + zone + ".");
    zone = it->second;
  }
  for (const auto& n : nics)
    if (n.contains("SubnetId") && !options_.subnets.count(n["SubnetId"].get<std::string>()))
      return error(400, "InvalidSubnetID.NotFound",
                   "The subnet ID '" + n["SubnetId"].get<std::string>() + "' does not exist");

  std::vector<std::string> groups;
  for (const auto& g : in.value("SecurityGroupIds", Json::array())) groups.push_back(g);
  for (const auto& name : in.value("SecurityGroups", Json::array())) {
    auto it = std::find_if(options_.security_groups.begin(), options_.security_groups.end(),
                           [&](const auto& sg) { return sg.second == name.get<std::string>(); });
    if (it == options_.security_groups.end())
      return error(
          400, "InvalidGroup.NotFound",
          "The security group '" + name.get<std::string>() + "' does not exist in default VPC '" + vpc_id_ + "'");
    groups.push_back(it->first);
  }
  for (const auto& n : nics)
    for (const auto& g : n.value("Groups", Json::array())) groups.push_back(g);
  for (const auto& g : groups) {
    if (g.rfind("sg-", 0) != 0)
      return error(400, "InvalidGroupId.Malformed", "Invalid id: \"" + g + "\" (expecting \"sg-...\")");
    if (!options_.security_groups.count(g))
      return error(400, "InvalidGroup.NotFound", "The security group '" + g + "' does not exist");
  }
  if (groups.empty()) groups.push_back(options_.security_groups.begin()->first);

  std::string key_name = in.value("KeyName", "");
  if (!key_name.empty() &&
      std::find(options_.key_pairs.begin(), options_.key_pairs.end(), key_name) == options_.key_pairs.end())
    return error(400, "InvalidKeyPair.NotFound", "The key pair '" + key_name + "' does not exist");

  std::string iam_arn;
  if (in.contains("IamInstanceProfile")) {
    const Json& p = in["IamInstanceProfile"];
    if (p.contains("Arn") && p.contains("Name"))
      return error(
          400, "InvalidParameterCombination",
          "The parameter 'iamInstanceProfile.name' may not be used in combination with 'iamInstanceProfile.arn'");
    if (p.contains("Arn")) {
      iam_arn = p["Arn"];
      static const std::regex arn("^arn:aws[a-z-]*:iam::[0-9]{12}:instance-profile/.+$");
      if (!std::regex_match(iam_arn, arn))
        return invalid("Value (" + iam_arn +
                       ") for parameter iamInstanceProfile.arn is invalid. Invalid IAM Instance Profile ARN");
    } else if (p.contains("Name")) {
      iam_arn = "arn:aws:iam::" + options_.account_id + ":instance-profile/" + p["Name"].get<std::string>();
    }
  }

  std::string user_data;
  if (in.contains("UserData")) {
    auto decoded = ec2::base64_decode(in["UserData"].get<std::string>());
    if (!decoded) return invalid("Invalid BASE64 encoding of user data.");
    if (decoded->size() > 16384) return invalid("User data is limited to 16384 bytes");
    user_data = *decoded;
  }

  std::vector<Volume> volume_specs;
  for (const auto& m : in.value("BlockDeviceMappings", Json::array())) {
    if (!m.contains("DeviceName"))
      return error(400, "MissingParameter", "The request must contain the parameter BlockDeviceMapping.DeviceName");
    if (!m.contains("Ebs")) continue;  // instance store / NoDevice: nothing to create
    const Json& ebs = m["Ebs"];
    Volume v;
    v.device = m["DeviceName"];
    v.size_gib = static_cast<int>(ebs.value("VolumeSize", 8LL));
    v.type = ebs.value("VolumeType", "gp3");
    v.encrypted = ebs.value("Encrypted", false);
    v.kms_key_id = ebs.value("KmsKeyId", "");
    v.delete_on_termination = ebs.value("DeleteOnTermination", true);
    if (!v.kms_key_id.empty() && !v.encrypted)
      return error(400, "InvalidParameterDependency",
                   "The parameter KmsKeyId requires the parameter Encrypted to be set.");
    if (v.size_gib < 1 || v.size_gib > 65536)
      return invalid("Volume of " + std::to_string(v.size_gib) + " GiB is out of range for " + v.type +
                     " (1 to 65536 GiB).");
    volume_specs.push_back(v);
  }
  if (volume_specs.empty() || std::none_of(volume_specs.begin(), volume_specs.end(), [](const Volume& v) {
        return v.device == "/dev/xvda" || v.device == "/dev/sda1";
      })) {
    Volume root;
    root.device = "/dev/xvda";
    volume_specs.insert(volume_specs.begin(), root);
  }

  // Network interfaces and EFA.
  int efa_count = 0;
  std::set<std::pair<long long, long long>> slots;
  std::optional<int> efa = efa_limit(type, options_.efa_limits);
  int cards = efa.value_or(1);
  for (const auto& n : nics) {
    std::string itype = n.value("InterfaceType", "interface");
    long long card = n.value("NetworkCardIndex", 0LL), device = n.value("DeviceIndex", -1LL);
    if (device < 0) return error(400, "MissingParameter", "Each network interface requires a device index.");
    if (card < 0 || card >= cards)
      return invalid("Network card index " + std::to_string(card) + " is out of range: " + type + " has " +
                     std::to_string(cards) + " network card" + (cards == 1 ? "" : "s") + " (indexes 0 to " +
                     std::to_string(cards - 1) + ").");
    if (!slots.insert({card, device}).second)
      return invalid("Two network interfaces use network card " + std::to_string(card) + " device index " +
                     std::to_string(device) + "; each needs its own.");
    if (itype == "efa" || itype == "efa-only") {
      if (!efa)
        return error(400, "InvalidParameterCombination",
                     "EFA interfaces are not supported on instance type '" + type + "'.");
      if (itype == "efa-only" && card == 0 && device == 0)
        return error(
            400, "InvalidParameterCombination",
            "An EFA-only network interface cannot be the primary network interface (network card 0, device index 0).");
      ++efa_count;
    } else if (itype != "interface") {
      return invalid("Invalid value '" + itype + "' for InterfaceType. Use interface, efa or efa-only.");
    }
  }
  if (efa && efa_count > *efa)
    return invalid("You can attach up to " + std::to_string(*efa) + " EFA interfaces to a " + type +
                   " instance; the request has " + std::to_string(efa_count) + ".");

  // Market and capacity reservation.
  Json market = in.value("InstanceMarketOptions", Json::object());
  std::string market_type = market.value("MarketType", "");
  Json cr_spec = in.value("CapacityReservationSpecification", Json::object());
  std::string cr_id = cr_spec.value("CapacityReservationTarget", Json::object()).value("CapacityReservationId", "");
  std::string preference = cr_spec.value("CapacityReservationPreference", "open");
  CapacityReservation* cr = nullptr;
  if (!cr_id.empty()) {
    auto it = reservations_.find(cr_id);
    if (it == reservations_.end())
      return error(400, "InvalidCapacityReservationId.NotFound",
                   "The Capacity Reservation ID '" + cr_id + "' does not exist");
    cr = &it->second;
    if (cr->spec.type != type)
      return invalid("The instance type " + type + " does not match the instance type of Capacity Reservation " +
                     cr_id + " (" + cr->spec.type + ").");
    if (!zone.empty() && zone != cr->spec.zone)
      return invalid("Capacity Reservation " + cr_id + " is in " + cr->spec.zone + "; the request asks for " + zone +
                     ".");
    zone = cr->spec.zone;
  }
  if (market_type == "spot" && cr)
    return error(400, "InvalidParameterCombination", "Spot Instances cannot be launched into a Capacity Reservation.");
  if (market_type == "capacity-block" && (!cr || cr->spec.kind != "capacity-block"))
    return error(
        400, "InvalidParameterCombination",
        "MarketType capacity-block needs a CapacityReservationSpecification that targets a Capacity Block (cr-...).");
  if (cr && cr->spec.kind == "capacity-block" && market_type != "capacity-block")
    return error(400, "InvalidParameterCombination",
                 "Capacity Reservation " + cr_id +
                     " is a Capacity Block; launch into it with InstanceMarketOptions.MarketType capacity-block.");

  // Placement group.
  std::string group_name = placement.value("GroupName", "");
  PlacementGroup* group = nullptr;
  if (!group_name.empty()) {
    auto it = groups_.find(group_name);
    if (it == groups_.end())
      return error(400, "InvalidPlacementGroup.Unknown", "The Placement Group '" + group_name + "' is unknown.");
    group = &it->second;
    if (group->strategy == "cluster") {
      auto pinned = zone_of(*group);
      if (pinned && !zone.empty() && *pinned != zone)
        return error(400, "InvalidPlacementGroup.InUse",
                     "The placement group '" + group_name + "' is in use in another availability zone: " + *pinned);
      if (pinned) zone = *pinned;
    }
  }

  // Tags.
  Tags instance_tags, volume_tags;
  for (const auto& spec : in.value("TagSpecifications", Json::array())) {
    std::string rt = spec.value("ResourceType", "");
    const Json tags = spec.value("Tags", Json::array());
    if (auto e = check_tags(tags)) return *e;
    Tags* into = rt == "instance" ? &instance_tags : rt == "volume" ? &volume_tags : nullptr;
    if (!into && rt != "network-interface" && rt != "spot-instances-request")
      return invalid("'" + rt + "' is not a valid taggable resource type for this operation.");
    if (into)
      for (const auto& t : tags) set_tag(*into, t.value("Key", ""), t.value("Value", ""));
  }

  // Capacity: how many can start, and where.
  auto available = [&](const std::string& z) -> long long {
    if (cr) return cr->spec.count - used_of(cr->spec.id);
    auto limit = limit_of(type, z);
    return limit ? std::max(0, *limit - used_in(type, z)) : max_count;
  };
  std::string message_zone = zone;
  if (zone.empty()) {
    for (const auto& z : options_.zones)
      if (available(z) >= min_count) {
        zone = z;
        break;
      }
  }
  long long can = zone.empty() ? 0 : available(zone);
  if (can < min_count) {
    if (cr)
      return error(400, "ReservationCapacityExceeded",
                   "The requested number of instances exceeds the available capacity of Capacity Reservation " + cr_id +
                       " (" + std::to_string(can) + " of " + std::to_string(cr->spec.count) + " available).");
    if (market_type == "spot")
      return error(500, "InsufficientInstanceCapacity",
                   "There is no Spot capacity available that matches your request.");
    if (message_zone.empty())
      return error(
          500, "InsufficientInstanceCapacity",
          "We currently do not have sufficient " + type +
              " capacity in the Region you requested. Our system will be working on provisioning additional capacity.");
    std::vector<std::string> others;
    if (!group)
      for (const auto& z : options_.zones)
        if (z != message_zone && available(z) >= min_count) others.push_back(z);
    std::string msg = "We currently do not have sufficient " + type +
                      " capacity in the Availability Zone you requested (" + message_zone +
                      "). Our system will be working on provisioning additional capacity.";
    if (!others.empty())
      msg += " You can currently get " + type +
             " capacity by not specifying an Availability Zone in your request or choosing " + list_ids(others) + ".";
    return error(500, "InsufficientInstanceCapacity", msg);
  }
  long long count = std::min(max_count, can);
  if (subnet.empty())
    for (const auto& [id, z] : options_.subnets)
      if (z == zone) {
        subnet = id;
        break;
      }

  // Launch.
  Time t = now();
  std::string reservation_id = hex_id("r-");
  std::vector<const Instance*> launched;
  for (long long k = 0; k < count; ++k) {
    Instance i;
    i.seq = next_seq_++;
    i.id = hex_id("i-");
    i.reservation_id = reservation_id;
    i.image_id = image;
    i.type = type;
    i.zone = zone;
    i.subnet = subnet;
    i.vpc = vpc_id_;
    i.key_name = key_name;
    i.client_token = token;
    i.placement_group = group_name;
    if (group) i.placement_group_id = group->id;
    i.tenancy = placement.value("Tenancy", "default");
    i.security_groups = groups;
    i.iam_arn = iam_arn;
    if (!iam_arn.empty()) i.iam_id = "AIPA" + hex_id("", 17);
    for (auto& c : i.iam_id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    i.user_data = user_data;
    i.tags = instance_tags;
    i.lifecycle = market_type;
    if (market_type == "spot") i.spot_request_id = hex_id("sir-", 8);
    i.capacity_reservation_id = cr_id;
    i.reservation_preference = cr ? "" : preference;
    i.launched = i.state_changed = t;
    i.reason_code = i.reason_message = "pending";
    i.launch_index = static_cast<int>(k);
    i.private_ip = ip_in(zone);
    i.disable_api_termination = in.value("DisableApiTermination", false);
    i.monitoring = in.value("Monitoring", Json::object()).value("Enabled", false);
    for (auto v : volume_specs) {
      v.id = hex_id("vol-");
      v.tags = volume_tags;
      i.volumes.push_back(v);
    }
    i.root_device = i.volumes.front().device;
    std::vector<Json> nic_specs(nics.begin(), nics.end());
    if (nic_specs.empty()) nic_specs.push_back({{"DeviceIndex", 0}});
    for (const auto& n : nic_specs) {
      Eni e;
      e.id = hex_id("eni-");
      e.attachment_id = hex_id("eni-attach-");
      e.subnet = n.value("SubnetId", subnet);
      e.vpc = vpc_id_;
      e.private_ip = (&n == &nic_specs.front()) ? i.private_ip : ip_in(options_.subnets.at(e.subnet));
      char mac[32];
      std::snprintf(mac, sizeof mac, "0a:%02x:%02x:%02x:%02x:%02x", static_cast<int>(rng_() & 0xff),
                    static_cast<int>(rng_() & 0xff), static_cast<int>(rng_() & 0xff), static_cast<int>(rng_() & 0xff),
                    static_cast<int>(rng_() & 0xff));
      e.mac = mac;
      e.interface_type = n.value("InterfaceType", "interface");
      e.description = n.value("Description", "");
      e.device_index = static_cast<int>(n.value("DeviceIndex", 0LL));
      e.card_index = static_cast<int>(n.value("NetworkCardIndex", 0LL));
      e.delete_on_termination = n.value("DeleteOnTermination", true);
      e.groups = groups;
      i.enis.push_back(e);
    }
    instances_.push_back(std::move(i));
  }
  for (const auto& i : instances_)
    if (i.reservation_id == reservation_id) launched.push_back(&i);
  if (!token.empty()) tokens_[token] = TokenRecord{fingerprint, reservation_id};
  return reservation_json(reservation_id, launched);
}

// ---- DescribeInstances -------------------------------------------------------------

Outcome Region::describe_instances(const Json& in) {
  std::vector<std::string> ids;
  for (const auto& id : in.value("InstanceIds", Json::array())) ids.push_back(id);
  if (!ids.empty() && in.contains("MaxResults"))
    return error(400, "InvalidParameterCombination",
                 "The parameter instancesSet cannot be used with the parameter maxResults");
  std::optional<long long> max_results;
  if (in.contains("MaxResults")) {
    max_results = in["MaxResults"].get<long long>();
    if (*max_results < 5)
      return invalid("Value ( " + std::to_string(*max_results) +
                     " ) for parameter maxResults is invalid. Expecting a value greater than 5.");
    if (*max_results > 1000)
      return invalid("Value ( " + std::to_string(*max_results) +
                     " ) for parameter maxResults is invalid. Expecting a value less than 1000.");
  }
  for (const auto& id : ids)
    if (!valid_instance_id(id)) return error(400, "InvalidInstanceID.Malformed", "Invalid id: \"" + id + "\"");
  std::vector<std::string> missing;
  for (const auto& id : ids)
    if (!find(id)) missing.push_back(id);
  if (!missing.empty()) return error(400, "InvalidInstanceID.NotFound", not_found_message("instance", missing));

  Filters filters = filters_of(in);
  static const std::set<std::string> known = {"instance-id",
                                              "instance-state-name",
                                              "instance-state-code",
                                              "instance-type",
                                              "availability-zone",
                                              "image-id",
                                              "key-name",
                                              "subnet-id",
                                              "vpc-id",
                                              "placement-group-name",
                                              "reservation-id",
                                              "client-token",
                                              "instance-lifecycle",
                                              "spot-instance-request-id",
                                              "capacity-reservation-id",
                                              "iam-instance-profile.arn",
                                              "private-ip-address",
                                              "tenancy",
                                              "instance.group-id",
                                              "group-id",
                                              "architecture",
                                              "network-interface.interface-type",
                                              "launch-index",
                                              "owner-id"};
  for (const auto& [name, values] : filters) {
    if (!known.count(name) && name.rfind("tag:", 0) != 0 && name != "tag-key" && name != "tag-value")
      return invalid("The filter '" + name + "' is invalid");
    if (values.empty()) return invalid("The filter '" + name + "' needs at least one value");
  }

  auto values_of = [&](const Instance& i, const std::string& name) -> std::vector<std::string> {
    if (auto t = tag_filter_values(name, i.tags)) return *t;
    if (name == "instance-id") return {i.id};
    if (name == "instance-state-name") return {i.state};
    if (name == "instance-state-code") return {std::to_string(state_code(i.state))};
    if (name == "instance-type") return {i.type};
    if (name == "availability-zone") return {i.zone};
    if (name == "image-id") return {i.image_id};
    if (name == "key-name") return {i.key_name};
    if (name == "subnet-id") return {i.subnet};
    if (name == "vpc-id") return {i.vpc};
    if (name == "placement-group-name") return {i.placement_group};
    if (name == "reservation-id") return {i.reservation_id};
    if (name == "client-token") return {i.client_token};
    if (name == "instance-lifecycle")
      return i.lifecycle.empty() ? std::vector<std::string>{} : std::vector<std::string>{i.lifecycle};
    if (name == "spot-instance-request-id") return {i.spot_request_id};
    if (name == "capacity-reservation-id") return {i.capacity_reservation_id};
    if (name == "iam-instance-profile.arn") return {i.iam_arn};
    if (name == "private-ip-address") return {i.private_ip};
    if (name == "tenancy") return {i.tenancy};
    if (name == "instance.group-id" || name == "group-id") return i.security_groups;
    if (name == "architecture") return {architecture_of(i.type)};
    if (name == "launch-index") return {std::to_string(i.launch_index)};
    if (name == "owner-id") return {options_.account_id};
    if (name == "network-interface.interface-type") {
      std::vector<std::string> out;
      for (const auto& e : i.enis) out.push_back(e.interface_type);
      return out;
    }
    return {};
  };

  Json query = in;
  query.erase("NextToken");
  query.erase("MaxResults");
  std::string query_key = query.dump();
  uint64_t after = 0;
  if (in.contains("NextToken")) {
    auto t = read_token(in["NextToken"], query_key);
    if (!t)
      return invalid("The token '" + in["NextToken"].get<std::string>() +
                     "' is invalid for this request (a NextToken belongs to the filters it came with).");
    after = *t;
  }

  std::vector<const Instance*> page;
  bool more = false;
  for (const auto& i : instances_) {
    if (i.seq <= after) continue;
    if (!ids.empty() && std::find(ids.begin(), ids.end(), i.id) == ids.end()) continue;
    bool ok = true;
    for (const auto& [name, patterns] : filters)
      if (!any_match(patterns, values_of(i, name))) {
        ok = false;
        break;
      }
    if (!ok) continue;
    if (max_results && static_cast<long long>(page.size()) == *max_results) {
      more = true;
      break;
    }
    page.push_back(&i);
  }

  Json reservations = Json::array();
  for (size_t k = 0; k < page.size();) {
    std::vector<const Instance*> members;
    const std::string& rid = page[k]->reservation_id;
    while (k < page.size() && page[k]->reservation_id == rid) members.push_back(page[k++]);
    reservations.push_back(reservation_json(rid, members));
  }
  Json out = {{"Reservations", reservations}};
  if (more) out["NextToken"] = make_token(page.back()->seq, query_key);
  return out;
}

// ---- TerminateInstances ------------------------------------------------------------

Outcome Region::terminate_instances(const Json& in) {
  std::vector<std::string> ids;
  for (const auto& id : in.at("InstanceIds")) ids.push_back(id);
  if (ids.empty()) return error(400, "MissingParameter", "The request must contain the parameter InstanceId");
  for (const auto& id : ids)
    if (!valid_instance_id(id)) return error(400, "InvalidInstanceID.Malformed", "Invalid id: \"" + id + "\"");
  std::vector<std::string> missing;
  for (const auto& id : ids)
    if (!find(id)) missing.push_back(id);
  if (!missing.empty()) return error(400, "InvalidInstanceID.NotFound", not_found_message("instance", missing));
  for (const auto& id : ids)
    if (find(id)->disable_api_termination)
      return error(400, "OperationNotPermitted",
                   "The instance '" + id +
                       "' may not be terminated. Modify its 'disableApiTermination' instance attribute and try again.");
  Time t = now();
  Json out = Json::array();
  for (const auto& id : ids) {
    Instance* i = find(id);
    std::string previous = i->state;
    if (i->state == "pending" || i->state == "running") {
      i->state = "shutting-down";
      i->state_changed = t;
      i->reason_code = "Client.UserInitiatedShutdown";
      i->reason_message = "Client.UserInitiatedShutdown: User initiated shutdown";
      i->transition_reason = "User initiated (" + gmt(t) + ")";
    }
    out.push_back(
        {{"InstanceId", id}, {"CurrentState", state_json(i->state)}, {"PreviousState", state_json(previous)}});
  }
  return Json{{"TerminatingInstances", out}};
}

// ---- Tags -------------------------------------------------------------------------

Outcome Region::create_tags(const Json& in) {
  const Json& tags = in.at("Tags");
  std::vector<Tags*> targets;
  for (const auto& r : in.at("Resources")) {
    std::string id = r;
    Tags* into = nullptr;
    if (id.rfind("i-", 0) == 0) {
      if (!valid_instance_id(id)) return error(400, "InvalidInstanceID.Malformed", "Invalid id: \"" + id + "\"");
      if (Instance* i = find(id)) into = &i->tags;
      if (!into) return error(400, "InvalidInstanceID.NotFound", not_found_message("instance", {id}));
    } else if (id.rfind("vol-", 0) == 0) {
      for (auto& i : instances_)
        for (auto& v : i.volumes)
          if (v.id == id) into = &v.tags;
      if (!into) return error(400, "InvalidVolume.NotFound", "The volume '" + id + "' does not exist.");
    } else if (id.rfind("pg-", 0) == 0) {
      for (auto& [name, g] : groups_)
        if (g.id == id) into = &g.tags;
      if (!into)
        return error(400, "InvalidPlacementGroupId.NotFound", "The Placement Group ID '" + id + "' does not exist");
    } else if (id.rfind("cr-", 0) == 0) {
      if (auto it = reservations_.find(id); it != reservations_.end()) into = &it->second.tags;
      if (!into)
        return error(400, "InvalidCapacityReservationId.NotFound",
                     "The Capacity Reservation ID '" + id + "' does not exist");
    } else {
      return error(400, "InvalidID", "The ID '" + id + "' is not valid");
    }
    std::set<std::string> keys;
    for (const auto& [k, v] : *into) keys.insert(k);
    for (const auto& t : tags) keys.erase(t.value("Key", ""));
    if (auto e = check_tags(tags, keys.size())) return *e;
    targets.push_back(into);
  }
  for (Tags* into : targets)
    for (const auto& t : tags) set_tag(*into, t.value("Key", ""), t.value("Value", ""));
  return Json(nullptr);
}

Outcome Region::delete_tags(const Json& in) {
  std::vector<Tags*> targets;
  for (const auto& r : in.at("Resources")) {
    std::string id = r;
    Tags* from = nullptr;
    if (Instance* i = find(id)) from = &i->tags;
    for (auto& i : instances_)
      for (auto& v : i.volumes)
        if (v.id == id) from = &v.tags;
    for (auto& [name, g] : groups_)
      if (g.id == id) from = &g.tags;
    if (auto it = reservations_.find(id); it != reservations_.end()) from = &it->second.tags;
    if (!from) return error(400, "InvalidID", "The ID '" + id + "' is not valid");
    targets.push_back(from);
  }
  for (Tags* from : targets) {
    if (!in.contains("Tags")) {
      from->clear();
      continue;
    }
    for (const auto& t : in["Tags"]) {
      std::string key = t.value("Key", "");
      from->erase(std::remove_if(from->begin(), from->end(),
                                 [&](const auto& kv) {
                                   return kv.first == key && (!t.contains("Value") || kv.second == t["Value"]);
                                 }),
                  from->end());
    }
  }
  return Json(nullptr);
}

// ---- Placement groups ------------------------------------------------------------------

Outcome Region::create_placement_group(const Json& in) {
  if (!in.contains("GroupName"))
    return error(400, "MissingParameter", "The request must contain the parameter groupName");
  std::string name = in["GroupName"];
  if (name.empty() || name.size() > 255) return invalid("The placement group name must be 1 to 255 ASCII characters.");
  if (groups_.count(name))
    return error(400, "InvalidPlacementGroup.Duplicate", "The placement group '" + name + "' already exists.");
  PlacementGroup g;
  g.name = name;
  g.id = hex_id("pg-");
  g.strategy = in.value("Strategy", "cluster");
  if (g.strategy == "precision-time")
    return error(400, "UnsupportedOperation", "aws-ec2-emulator does not implement precision-time placement groups");
  if (in.contains("PartitionCount")) {
    if (g.strategy != "partition")
      return error(400, "InvalidParameterCombination", "PartitionCount is valid only with Strategy partition.");
    g.partition_count = static_cast<int>(in["PartitionCount"].get<long long>());
    if (g.partition_count < 1 || g.partition_count > 7) return invalid("PartitionCount must be from 1 to 7.");
  } else if (g.strategy == "partition") {
    g.partition_count = 2;
  }
  if (g.strategy == "spread") g.spread_level = in.value("SpreadLevel", "rack");
  for (const auto& spec : in.value("TagSpecifications", Json::array())) {
    if (spec.value("ResourceType", "") != "placement-group")
      return invalid("'" + spec.value("ResourceType", "") +
                     "' is not a valid taggable resource type for this operation.");
    if (auto e = check_tags(spec.value("Tags", Json::array()))) return *e;
    for (const auto& t : spec.value("Tags", Json::array())) set_tag(g.tags, t.value("Key", ""), t.value("Value", ""));
  }
  groups_[name] = g;
  return Json{{"PlacementGroup", placement_group_json(g)}};
}

Outcome Region::delete_placement_group(const Json& in) {
  std::string name = in.at("GroupName");
  auto it = groups_.find(name);
  if (it == groups_.end())
    return error(400, "InvalidPlacementGroup.Unknown", "The Placement Group '" + name + "' is unknown.");
  for (const auto& i : instances_)
    if (active(i) && i.placement_group == name)
      return error(400, "InvalidPlacementGroup.InUse",
                   "The placement group '" + name + "' is in use and may not be deleted.");
  groups_.erase(it);
  return Json(nullptr);
}

Outcome Region::describe_placement_groups(const Json& in) {
  std::vector<std::string> names, ids;
  for (const auto& n : in.value("GroupNames", Json::array())) names.push_back(n);
  for (const auto& n : in.value("GroupIds", Json::array())) ids.push_back(n);
  for (const auto& n : names)
    if (!groups_.count(n))
      return error(400, "InvalidPlacementGroup.Unknown", "The Placement Group '" + n + "' is unknown.");
  for (const auto& id : ids)
    if (std::none_of(groups_.begin(), groups_.end(), [&](const auto& g) { return g.second.id == id; }))
      return error(400, "InvalidPlacementGroupId.NotFound", "The Placement Group ID '" + id + "' does not exist");
  Filters filters = filters_of(in);
  for (const auto& [name, values] : filters)
    if (name != "group-name" && name != "group-arn" && name != "strategy" && name != "state" &&
        name != "spread-level" && !tag_filter_values(name, {}))
      return invalid("The filter '" + name + "' is invalid");
  Json out = Json::array();
  for (const auto& [name, g] : groups_) {
    if (!names.empty() && std::find(names.begin(), names.end(), name) == names.end()) continue;
    if (!ids.empty() && std::find(ids.begin(), ids.end(), g.id) == ids.end()) continue;
    Json j = placement_group_json(g);
    bool ok = true;
    for (const auto& [fname, patterns] : filters) {
      std::vector<std::string> values;
      if (auto t = tag_filter_values(fname, g.tags))
        values = *t;
      else if (fname == "group-name")
        values = {g.name};
      else if (fname == "group-arn")
        values = {j["GroupArn"]};
      else if (fname == "strategy")
        values = {g.strategy};
      else if (fname == "state")
        values = {"available"};
      else if (fname == "spread-level")
        values = {g.spread_level};
      ok = ok && any_match(patterns, values);
    }
    if (ok) out.push_back(j);
  }
  return Json{{"PlacementGroups", out}};
}

// ---- Capacity reservations and zones ------------------------------------------------------

Outcome Region::describe_capacity_reservations(const Json& in) {
  std::vector<std::string> ids;
  for (const auto& n : in.value("CapacityReservationIds", Json::array())) ids.push_back(n);
  std::vector<std::string> missing;
  for (const auto& id : ids)
    if (!reservations_.count(id)) missing.push_back(id);
  if (!missing.empty())
    return error(400, "InvalidCapacityReservationId.NotFound", not_found_message("Capacity Reservation", missing));
  Filters filters = filters_of(in);
  Json out = Json::array();
  for (const auto& [id, c] : reservations_) {
    if (!ids.empty() && std::find(ids.begin(), ids.end(), id) == ids.end()) continue;
    bool ok = true;
    for (const auto& [fname, patterns] : filters) {
      std::vector<std::string> values;
      if (auto t = tag_filter_values(fname, c.tags))
        values = *t;
      else if (fname == "instance-type")
        values = {c.spec.type};
      else if (fname == "availability-zone")
        values = {c.spec.zone};
      else if (fname == "state")
        values = {"active"};
      else if (fname == "owner-id")
        values = {options_.account_id};
      else if (fname == "instance-match-criteria")
        values = {"targeted"};
      else if (fname == "tenancy")
        values = {"default"};
      else
        return invalid("The filter '" + fname + "' is invalid");
      ok = ok && any_match(patterns, values);
    }
    if (ok) out.push_back(capacity_reservation_json(c));
  }
  return Json{{"CapacityReservations", out}};
}

Outcome Region::describe_availability_zones(const Json& in) {
  std::vector<std::string> names;
  for (const auto& n : in.value("ZoneNames", Json::array())) names.push_back(n);
  for (const auto& n : names)
    if (std::find(options_.zones.begin(), options_.zones.end(), n) == options_.zones.end())
      return invalid("Invalid availability zone: [" + n + "]");
  Json out = Json::array();
  for (size_t k = 0; k < options_.zones.size(); ++k) {
    const std::string& z = options_.zones[k];
    if (!names.empty() && std::find(names.begin(), names.end(), z) == names.end()) continue;
    out.push_back({{"OptInStatus", "opt-in-not-required"},
                   {"Messages", Json::array()},
                   {"RegionName", options_.region},
                   {"ZoneName", z},
                   {"ZoneId", options_.region.substr(0, 2) + "-az" + std::to_string(k + 1)},
                   {"GroupName", options_.region},
                   {"NetworkBorderGroup", options_.region},
                   {"ZoneType", "availability-zone"},
                   {"State", "available"}});
  }
  return Json{{"AvailabilityZones", out}};
}

// ---- Control ---------------------------------------------------------------------------------

Outcome Region::reclaim(const std::vector<std::string>& ids) {
  std::lock_guard<std::mutex> lock(mu_);
  tick();
  for (const auto& id : ids) {
    Instance* i = find(id);
    if (!i) return error(404, "InvalidInstanceID.NotFound", not_found_message("instance", {id}));
    if (i->lifecycle != "spot")
      return error(409, "NotSpot", "Instance " + id + " is not a spot instance; only spot instances are reclaimed.");
    if (!active(*i)) return error(409, "AlreadyTerminated", "Instance " + id + " is already terminated.");
  }
  Time t = now();
  Json out = Json::array();
  for (const auto& id : ids) {
    Instance* i = find(id);
    std::string previous = i->state;
    if (i->state != "shutting-down") {
      i->state = "shutting-down";
      i->state_changed = t;
    }
    i->reason_code = "Server.SpotInstanceTermination";
    i->reason_message = "Server.SpotInstanceTermination: Spot instance termination";
    i->transition_reason = "Service initiated (" + gmt(t) + ")";
    out.push_back({{"instance_id", id}, {"previous_state", previous}, {"state", i->state}});
  }
  tick();
  return Json{{"reclaimed", out}};
}

Json Region::dump() {
  std::lock_guard<std::mutex> lock(mu_);
  tick();
  Json instances = Json::array();
  for (const auto& i : instances_) {
    Json tags = Json::object();
    for (const auto& [k, v] : i.tags) tags[k] = v;
    Json volumes = Json::array();
    for (const auto& v : i.volumes) {
      Json vt = Json::object();
      for (const auto& [k, val] : v.tags) vt[k] = val;
      volumes.push_back({{"id", v.id},
                         {"device", v.device},
                         {"size_gib", v.size_gib},
                         {"type", v.type},
                         {"encrypted", v.encrypted},
                         {"kms_key_id", v.kms_key_id},
                         {"tags", vt}});
    }
    Json nics = Json::array();
    for (const auto& e : i.enis)
      nics.push_back({{"id", e.id},
                      {"network_card_index", e.card_index},
                      {"device_index", e.device_index},
                      {"interface_type", e.interface_type},
                      {"subnet", e.subnet},
                      {"private_ip", e.private_ip}});
    instances.push_back({{"instance_id", i.id},
                         {"reservation_id", i.reservation_id},
                         {"state", i.state},
                         {"state_reason", i.reason_code},
                         {"instance_type", i.type},
                         {"availability_zone", i.zone},
                         {"subnet_id", i.subnet},
                         {"image_id", i.image_id},
                         {"lifecycle", i.lifecycle.empty() ? "on-demand" : i.lifecycle},
                         {"client_token", i.client_token},
                         {"capacity_reservation_id", i.capacity_reservation_id},
                         {"placement_group", i.placement_group},
                         {"security_groups", i.security_groups},
                         {"key_name", i.key_name},
                         {"iam_instance_profile_arn", i.iam_arn},
                         // As cloud-init reads it: gzip-compressed user data decompressed.
                         {"user_data", is_gzip(i.user_data) ? gunzip(i.user_data).value_or("") : i.user_data},
                         {"user_data_gzip", is_gzip(i.user_data)},
                         {"launch_time", iso(i.launched)},
                         {"tags", tags},
                         {"volumes", volumes},
                         {"network_interfaces", nics}});
  }
  Json groups = Json::array();
  for (const auto& [name, g] : groups_) {
    Json j = placement_group_json(g);
    auto z = zone_of(g);
    j["InUseZone"] = z ? Json(*z) : Json(nullptr);
    groups.push_back(j);
  }
  Json capacity = Json::array();
  std::set<std::pair<std::string, std::string>> pools;
  for (const auto& [k, v] : capacity_) pools.insert(k);
  for (const auto& i : instances_)
    if (active(i) && i.capacity_reservation_id.empty()) pools.insert({i.type, i.zone});
  for (const auto& [type, zone] : pools) {
    auto limit = limit_of(type, zone);
    Json used = (type == "*" || zone == "*") ? Json(nullptr) : Json(used_in(type, zone));
    capacity.push_back({{"instance_type", type},
                        {"availability_zone", zone},
                        {"limit", limit ? Json(*limit) : Json(nullptr)},
                        {"in_use", used}});
  }
  Json crs = Json::array();
  for (const auto& [id, c] : reservations_) crs.push_back(capacity_reservation_json(c));
  Json subnets = Json::object();
  for (const auto& [id, z] : options_.subnets) subnets[id] = z;
  Json sgs = Json::object();
  for (const auto& [id, n] : options_.security_groups) sgs[id] = n;
  return {{"region", options_.region},   {"zones", options_.zones},    {"vpc_id", vpc_id_},
          {"subnets", subnets},          {"security_groups", sgs},     {"key_pairs", options_.key_pairs},
          {"instances", instances},      {"placement_groups", groups}, {"capacity", capacity},
          {"capacity_reservations", crs}};
}

// ---- JSON in the model's shapes ---------------------------------------------------------------

Json Region::instance_json(const Instance& i) const {
  std::string dns_suffix =
      options_.region == "us-east-1" ? ".ec2.internal" : "." + options_.region + ".compute.internal";
  std::string dns_name = "ip-" + i.private_ip + dns_suffix;
  std::replace(dns_name.begin(), dns_name.begin() + static_cast<long>(3 + i.private_ip.size()), '.', '-');
  bool gone = i.state == "terminated";
  Json groups = Json::array();
  for (const auto& g : i.security_groups)
    groups.push_back({{"GroupId", g}, {"GroupName", options_.security_groups.at(g)}});
  Json j = {
      {"InstanceId", i.id},
      {"ImageId", i.image_id},
      {"State", state_json(i.state)},
      {"PrivateDnsName", gone ? "" : dns_name},
      {"PublicDnsName", ""},
      {"StateTransitionReason", i.transition_reason},
      {"AmiLaunchIndex", i.launch_index},
      {"ProductCodes", Json::array()},
      {"InstanceType", i.type},
      {"LaunchTime", iso(i.launched)},
      {"Placement", {{"AvailabilityZone", i.zone}, {"GroupName", i.placement_group}, {"Tenancy", i.tenancy}}},
      {"Monitoring", {{"State", i.monitoring ? "enabled" : "disabled"}}},
      {"Architecture", architecture_of(i.type)},
      {"ClientToken", i.client_token},
      {"EbsOptimized", true},
      {"EnaSupport", true},
      {"Hypervisor", "xen"},
      {"RootDeviceName", i.root_device},
      {"RootDeviceType", "ebs"},
      {"SecurityGroups", gone ? Json::array() : groups},
      {"SourceDestCheck", true},
      {"VirtualizationType", "hvm"},
      {"PlatformDetails", "Linux/UNIX"},
      {"UsageOperation", "RunInstances"},
      {"BootMode", "uefi-preferred"},
  };
  if (!i.placement_group_id.empty()) j["Placement"]["GroupId"] = i.placement_group_id;
  if (!i.key_name.empty()) j["KeyName"] = i.key_name;
  if (!gone) {
    j["SubnetId"] = i.subnet;
    j["VpcId"] = i.vpc;
    j["PrivateIpAddress"] = i.private_ip;
  }
  if (!i.reason_code.empty()) j["StateReason"] = {{"Code", i.reason_code}, {"Message", i.reason_message}};
  if (!i.tags.empty()) j["Tags"] = tags_json(i.tags);
  if (!i.lifecycle.empty()) j["InstanceLifecycle"] = i.lifecycle;
  if (!i.spot_request_id.empty()) j["SpotInstanceRequestId"] = i.spot_request_id;
  if (!i.iam_arn.empty()) j["IamInstanceProfile"] = {{"Arn", i.iam_arn}, {"Id", i.iam_id}};
  if (!i.capacity_reservation_id.empty()) {
    j["CapacityReservationId"] = i.capacity_reservation_id;
    j["CapacityReservationSpecification"] = {
        {"CapacityReservationTarget", {{"CapacityReservationId", i.capacity_reservation_id}}}};
  } else {
    j["CapacityReservationSpecification"] = {{"CapacityReservationPreference", i.reservation_preference}};
  }
  Json bdm = Json::array();
  if (!gone)
    for (const auto& v : i.volumes)
      bdm.push_back({{"DeviceName", v.device},
                     {"Ebs",
                      {{"AttachTime", iso(i.launched)},
                       {"DeleteOnTermination", v.delete_on_termination},
                       {"Status", i.state == "shutting-down" ? "detaching" : "attached"},
                       {"VolumeId", v.id}}}});
  j["BlockDeviceMappings"] = bdm;
  Json nics = Json::array();
  if (!gone)
    for (const auto& e : i.enis) {
      Json eg = Json::array();
      for (const auto& g : e.groups) eg.push_back({{"GroupId", g}, {"GroupName", options_.security_groups.at(g)}});
      nics.push_back({{"Attachment",
                       {{"AttachTime", iso(i.launched)},
                        {"AttachmentId", e.attachment_id},
                        {"DeleteOnTermination", e.delete_on_termination},
                        {"DeviceIndex", e.device_index},
                        {"NetworkCardIndex", e.card_index},
                        {"Status", i.state == "pending" ? "attaching" : "attached"}}},
                      {"Description", e.description},
                      {"Groups", eg},
                      {"Ipv6Addresses", Json::array()},
                      {"MacAddress", e.mac},
                      {"NetworkInterfaceId", e.id},
                      {"OwnerId", options_.account_id},
                      {"PrivateIpAddress", e.private_ip},
                      {"PrivateIpAddresses", {{{"Primary", true}, {"PrivateIpAddress", e.private_ip}}}},
                      {"SourceDestCheck", true},
                      {"Status", "in-use"},
                      {"SubnetId", e.subnet},
                      {"VpcId", e.vpc},
                      {"InterfaceType", e.interface_type}});
    }
  j["NetworkInterfaces"] = nics;
  return j;
}

Json Region::reservation_json(const std::string& reservation_id, const std::vector<const Instance*>& members) const {
  Json instances = Json::array();
  for (const Instance* i : members) instances.push_back(instance_json(*i));
  return {{"ReservationId", reservation_id},
          {"OwnerId", options_.account_id},
          {"Groups", Json::array()},
          {"Instances", instances}};
}

Json Region::placement_group_json(const PlacementGroup& g) const {
  Json j = {{"GroupName", g.name},
            {"State", "available"},
            {"Strategy", g.strategy},
            {"GroupId", g.id},
            {"GroupArn", "arn:aws:ec2:" + options_.region + ":" + options_.account_id + ":placement-group/" + g.name}};
  if (g.partition_count) j["PartitionCount"] = g.partition_count;
  if (!g.spread_level.empty()) j["SpreadLevel"] = g.spread_level;
  if (!g.tags.empty()) j["Tags"] = tags_json(g.tags);
  return j;
}

Json Region::capacity_reservation_json(const CapacityReservation& c) const {
  Json j = {{"CapacityReservationId", c.spec.id},
            {"OwnerId", options_.account_id},
            {"CapacityReservationArn",
             "arn:aws:ec2:" + options_.region + ":" + options_.account_id + ":capacity-reservation/" + c.spec.id},
            {"InstanceType", c.spec.type},
            {"InstancePlatform", "Linux/UNIX"},
            {"AvailabilityZone", c.spec.zone},
            {"Tenancy", "default"},
            {"TotalInstanceCount", c.spec.count},
            {"AvailableInstanceCount", std::max(0, c.spec.count - used_of(c.spec.id))},
            {"EbsOptimized", true},
            {"EphemeralStorage", false},
            {"State", "active"},
            {"StartDate", iso(c.created)},
            {"EndDateType", c.spec.kind == "capacity-block" ? "limited" : "unlimited"},
            {"InstanceMatchCriteria", "targeted"},
            {"CreateDate", iso(c.created)},
            {"ReservationType", c.spec.kind}};
  if (c.spec.kind == "capacity-block") j["EndDate"] = iso(c.created + std::chrono::hours(24));
  if (!c.tags.empty()) j["Tags"] = tags_json(c.tags);
  return j;
}

}  // namespace plinth::aws_ec2_emulator
