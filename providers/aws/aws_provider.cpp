// aws.instance over the EC2 Query API: what each call sends is described in
// docs/providers/aws.md.
#include "providers/aws/aws_provider.h"

#include <algorithm>
#include <cstdlib>

#include "engine/core/gzip.h"
#include "engine/core/hash.h"
#include "engine/core/strings.h"
#include "providers/aws/ec2_model.h"
#include "providers/aws/schema.h"
#include "providers/common/config.h"
#include "providers/common/json_fields.h"

namespace plinth::aws {

namespace {

using cloud::str;
using cloud::strings;
using cloud::at;
using cloud::attributes_hash;

/// The most user data RunInstances takes (bytes, before base64).
constexpr size_t kUserDataLimit = 16384;

std::string tag(const Json& instance, const std::string& key) {
  for (const auto& t : instance.value("Tags", Json::array()))
    if (str(t, "Key") == key) return str(t, "Value");
  return "";
}

Json filter(const std::string& name, std::vector<std::string> values) {
  return {{"Name", name}, {"Values", std::move(values)}};
}

/// What Plinth records of an instance (computed).
Json observed(const Json& i) {
  const Json placement = i.value("Placement", Json::object());
  std::string lifecycle = str(i, "InstanceLifecycle");
  Json c = {{"id", str(i, "InstanceId")},
            {"instance_type", str(i, "InstanceType")},
            {"zone", str(placement, "AvailabilityZone")},
            {"state", str(i.value("State", Json::object()), "Name")},
            {"lifecycle", lifecycle.empty() ? "on-demand" : lifecycle}};
  for (auto [from, to] : {std::pair<const char*, const char*>{"SubnetId", "subnet_id"},
                          {"PrivateIpAddress", "private_ip"},
                          {"ImageId", "image_id"},
                          {"LaunchTime", "launch_time"},
                          {"SpotInstanceRequestId", "spot_request_id"},
                          {"CapacityReservationId", "capacity_reservation_id"}})
    if (auto v = str(i, from); !v.empty()) c[to] = v;
  if (auto g = str(placement, "GroupName"); !g.empty()) c["placement_group"] = g;
  return c;
}

/// The instances of a DescribeInstances or RunInstances answer.
std::vector<Json> instances_of(const Json& answer) {
  std::vector<Json> out;
  if (answer.contains("Instances"))
    for (const auto& i : answer["Instances"]) out.push_back(i);
  for (const auto& r : answer.value("Reservations", Json::array()))
    for (const auto& i : r.value("Instances", Json::array())) out.push_back(i);
  return out;
}

bool active_state(const std::string& s) { return s != "terminated" && s != "shutting-down"; }

/// One place an instance may go: a zone, or a subnet (its zone follows).
struct Slot {
  std::string zone, subnet;
  std::string label() const { return subnet.empty() ? zone : subnet; }
};

}  // namespace

std::string client_token(const std::string& lineage, const std::string& address, const Json& attributes,
                         int generation) {
  // 40 hex digits + "-" + generation: well within EC2's 64 characters.
  return sha256_hex(lineage + "\n" + address + "\n" + attributes.dump()).substr(0, 40) + "-" +
         std::to_string(generation);
}

const ProviderSchema& AwsProvider::schema() const { return aws::schema(); }

Status AwsProvider::configure(const ProviderConfig& config) {
  const char* home_env = std::getenv("HOME");
  const std::string home = home_env ? home_env : "";
  auto rates = parse_rates(config.values.value("request_rates", Json::object()));
  if (!rates) return rates.error();
  options_.region = config.str("region");
  if (options_.region.empty()) options_.region = config_file_region(config, home);
  options_.endpoint = config.str("endpoint");
  options_.poll_ms = cloud::clamp_int(config, "poll_ms", 2000, 1, 600000);
  options_.wait = config.has("wait") ? config.flag("wait") : true;
  options_.page_size = cloud::clamp_int(config, "page_size", 200, 5, 1000);
  http_ = std::make_unique<net::Client>(cloud::http_options(config));
  auto creds = find_credentials(config, {home, http_.get(), options_.region});
  if (!creds) return creds.error();
  // Fetched now, so a refused token or an unreachable metadata service stops the run before
  // anything is planned or changed (PLAN001), not at its first request.
  if (auto first = (*creds)->get(Deadline::after(std::chrono::seconds(30))); !first) return first.error();
  ClientSettings cs;
  cs.endpoint = options_.endpoint;
  cs.credentials = *creds;
  cs.rates = std::move(*rates);
  ec2_ = std::make_unique<Ec2Client>(*http_, client_model(), std::move(cs), &stopped_);
  return {};
}

void AwsProvider::bind(const StateBinding& binding) {
  binding_.set(binding);
}

std::string AwsProvider::region_of(const Resource& r) const {
  std::string region = str(r.attributes, "region");
  return region.empty() ? options_.region : region;
}

Status AwsProvider::ensure_group(const std::string& name, const std::string& region, Call& call) {
  const std::string key = region + "/" + name;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (groups_.count(key)) return {};
  }
  const std::string lineage = binding_.get().lineage;
  Json params = {{"GroupName", name},
                 {"Strategy", "cluster"},
                 {"TagSpecifications",
                  {{{"ResourceType", "placement-group"}, {"Tags", {{{"Key", kTagLineage}, {"Value", lineage}}}}}}}};
  auto out = ec2_->send("CreatePlacementGroup", params, region, call);
  if (auto* f = std::get_if<ApiFailure>(&out); f && f->code != "InvalidPlacementGroup.Duplicate") return f->error;
  std::lock_guard<std::mutex> lock(mu_);
  groups_.insert(key);
  return {};
}

Result<Json> AwsProvider::wait_for(const std::string& id, const std::string& want, const std::string& region,
                                   Call& call) {
  for (;;) {
    auto out = ec2_->send("DescribeInstances", {{"InstanceIds", {id}}}, region, call);
    if (auto* f = std::get_if<ApiFailure>(&out)) {
      // Eventual consistency: a new instance may not be listed yet.
      if (f->code != "InvalidInstanceID.NotFound") return f->error;
    } else {
      auto list = instances_of(std::get<Json>(out));
      if (!list.empty()) {
        const std::string state = str(list[0].value("State", Json::object()), "Name");
        if (state == want) return list[0];
        if (state == "terminated" && want != "terminated") {
          const Json reason = list[0].value("StateReason", Json::object());
          return Error::fatal("instance " + id + " was terminated while starting (" + str(reason, "Code") + ": " +
                              str(reason, "Message") + ")");
        }
      } else if (want == "terminated") {
        return Json::object();  // already gone from the listing
      }
    }
    if (auto st = net::pause(options_.poll_ms, call.deadline(), &stopped_,
                             "waiting for instance " + id + " to be " + want);
        !st)
      return st.error();
  }
}

Result<Resource> AwsProvider::create(const Resource& desired, Call& call) {
  if (!ec2_) return Error::fatal("the aws provider was used before configure()");
  const Json& a = desired.attributes;
  const std::string image = str(a, "image");
  if (image.empty())
    return Error::invalid(desired.address + ": burst pool '" + desired.name +
                          "' sets no image; add `image: ami-...` (the AMI to boot) to the pool (" +
                          desired.source.str() + ")");
  const std::string region = region_of(desired);
  if (region.empty())
    return Error::invalid(desired.address + ": no region; set `region:` on burst pool '" + desired.name +
                          "' or AWS_REGION");
  const StateBinding binding = binding_.get();

  // Candidates: the pool's type, then its fallbacks; zones (or subnets) in
  // order starting at this instance's index, so a pool spreads over them.
  const std::vector<std::string> types = cloud::candidate_types(a, "instance_types");
  std::vector<Slot> slots;
  for (const auto& s : strings(a, "subnets")) slots.push_back({"", s});
  if (slots.empty()) {
    auto zones = strings(a, "zones");
    if (zones.empty() && !str(a, "zone").empty()) zones = {str(a, "zone")};
    for (const auto& z : zones) slots.push_back({z, ""});
  }
  if (slots.empty()) slots.push_back({});
  cloud::spread(slots, desired.index);

  const Json tags = Json::array({{{"Key", "Name"}, {"Value", desired.name + "-" + std::to_string(desired.index)}},
                                 {{"Key", kTagAddress}, {"Value", desired.address}},
                                 {{"Key", kTagLineage}, {"Value", binding.lineage}},
                                 {{"Key", kTagBlueprint}, {"Value", binding.blueprint}},
                                 {{"Key", kTagAttributes}, {"Value", attributes_hash(a)}}});
  const auto groups = strings(a, "security_groups");
  const Json efa = a.value("efa_interfaces", Json::object());
  const Json root = a.value("root_volume", Json::object());
  const Json capacity = a.value("capacity", Json::object());
  const bool spot = a.value("spot", false);
  const bool placement_group = a.value("placement_group", false);
  // EC2 takes at most 16 KiB of user data; cloud-init reads it gzip-compressed
  // too, so a longer document is sent compressed (the plan's user_data_hash is
  // of the document, not of what travels).
  std::string user_data = str(desired.computed, "user_data");
  if (user_data.size() > kUserDataLimit) {
    const size_t plain = user_data.size();
    user_data = gzip(user_data);
    if (user_data.size() > kUserDataLimit)
      return Error::invalid(desired.address + ": the rendered user data of burst pool '" + desired.name + "' is " +
                            std::to_string(plain) + " bytes, " + std::to_string(user_data.size()) +
                            " gzip-compressed; EC2 takes at most 16384: pin fewer images or frameworks in its stack");
  }

  int generation = 0;
  auto launch = [&](const std::string& type, size_t place) -> cloud::Launched {
    const Slot& slot = slots[place];
    Json p = {{"ImageId", image},
              {"InstanceType", type},
              {"MinCount", 1},
              {"MaxCount", 1},
              {"TagSpecifications",
               {{{"ResourceType", "instance"}, {"Tags", tags}}, {{"ResourceType", "volume"}, {"Tags", tags}}}}};
    Json placement = Json::object();
    if (!slot.zone.empty()) placement["AvailabilityZone"] = slot.zone;
    if (placement_group) {
      const std::string group = "plinth-" + desired.name + "-" + (slot.label().empty() ? region : slot.label()) +
                                "-" + binding.lineage.substr(0, 8);
      if (auto st = ensure_group(group, region, call); !st) return at(desired.address, st.error());
      placement["GroupName"] = group;
    }
    if (!placement.empty()) p["Placement"] = placement;
    const int efa_count = efa.is_object() && efa.contains(type) && efa[type].is_number_integer() ? efa[type].get<int>() : 0;
    if (efa_count > 0) {
      // One EFA per network card: ENA + EFA on card 0, EFA-only on the others.
      Json nics = Json::array();
      for (int card = 0; card < efa_count; ++card) {
        Json n = {{"DeviceIndex", card == 0 ? 0 : 1},
                  {"NetworkCardIndex", card},
                  {"InterfaceType", card == 0 ? "efa" : "efa-only"},
                  {"DeleteOnTermination", true}};
        if (!slot.subnet.empty()) n["SubnetId"] = slot.subnet;
        if (!groups.empty()) n["Groups"] = groups;
        nics.push_back(std::move(n));
      }
      p["NetworkInterfaces"] = std::move(nics);
    } else {
      if (!slot.subnet.empty()) p["SubnetId"] = slot.subnet;
      if (!groups.empty()) p["SecurityGroupIds"] = groups;
    }
    if (auto prof = str(a, "iam_instance_profile"); !prof.empty())
      p["IamInstanceProfile"] = prof.rfind("arn:", 0) == 0 ? Json{{"Arn", prof}} : Json{{"Name", prof}};
    if (auto key = str(a, "key_name"); !key.empty()) p["KeyName"] = key;
    if (!user_data.empty()) p["UserData"] = ec2::base64_encode(user_data);
    if (root.is_object() && !root.empty()) {
      Json ebs = {{"VolumeType", root.value("type", "gp3")}, {"DeleteOnTermination", true}};
      if (root.contains("size_gb")) ebs["VolumeSize"] = root["size_gb"];
      if (root.contains("encrypted")) ebs["Encrypted"] = root["encrypted"];
      if (auto k = str(root, "kms_key_id"); !k.empty()) ebs["KmsKeyId"] = k;
      p["BlockDeviceMappings"] = {{{"DeviceName", "/dev/sda1"}, {"Ebs", ebs}}};
    }
    const std::string block = str(capacity, "capacity_block");
    const std::string reservation = block.empty() ? str(capacity, "reservation") : block;
    if (!block.empty()) p["InstanceMarketOptions"] = {{"MarketType", "capacity-block"}};
    else if (spot)
      p["InstanceMarketOptions"] = {
          {"MarketType", "spot"},
          {"SpotOptions", {{"SpotInstanceType", "one-time"}, {"InstanceInterruptionBehavior", "terminate"}}}};
    if (!reservation.empty())
      p["CapacityReservationSpecification"] = {{"CapacityReservationTarget", {{"CapacityReservationId", reservation}}}};

    for (;;) {
      p["ClientToken"] = client_token(binding.lineage, desired.address, a, generation);
      auto out = ec2_->send("RunInstances", p, region, call);
      if (auto* f = std::get_if<ApiFailure>(&out)) {
        if (f->code == "IdempotentInstanceTerminated" && generation < 1000) {
          ++generation;  // that token's instance is gone: launch anew
          continue;
        }
        if (f->error.kind == Error::Kind::Conflict)  // no capacity here: next zone, then next type
          return cloud::NoCapacity{type + " in " + (slot.label().empty() ? region : slot.label()), f->error.message};
        return at(desired.address, f->error);
      }
      auto list = instances_of(std::get<Json>(out));
      if (list.empty()) return Error::fatal(desired.address + ": RunInstances answered without an instance");
      Json instance = list[0];
      const std::string id = str(instance, "InstanceId");
      if (options_.wait) {
        auto running = wait_for(id, "running", region, call);
        if (!running) return at(desired.address, running.error());
        instance = *running;
      }
      Resource r = desired;
      r.computed = observed(instance);
      return r;
    }
  };
  return cloud::first_with_capacity(
      desired, types, slots.size(), launch,
      ". List fallbacks in the pool (instance_types, zones or subnets) to let Plinth try elsewhere");
}

Result<Resource> AwsProvider::update(const Resource& prior, const Resource& desired, Call& call) {
  if (!ec2_) return Error::fatal("the aws provider was used before configure()");
  const std::string id = str(prior.computed, "id");
  Resource r = desired;
  r.computed = prior.computed;
  if (id.empty()) return r;
  Json params = {{"Resources", {id}},
                 {"Tags", {{{"Key", kTagAttributes}, {"Value", attributes_hash(desired.attributes)}}}}};
  auto out = ec2_->send("CreateTags", params, region_of(prior), call);
  if (auto* f = std::get_if<ApiFailure>(&out)) return at(desired.address, f->error);
  return r;
}

Status AwsProvider::remove(const Resource& prior, Call& call) {
  if (!ec2_) return Error::fatal("the aws provider was used before configure()");
  const std::string id = str(prior.computed, "id");
  if (id.empty()) return {};
  const std::string region = region_of(prior);
  auto out = ec2_->send("TerminateInstances", {{"InstanceIds", {id}}}, region, call);
  if (auto* f = std::get_if<ApiFailure>(&out)) {
    if (f->code == "InvalidInstanceID.NotFound") return {};
    return at(prior.address, f->error);
  }
  if (!options_.wait) return {};
  if (auto done = wait_for(id, "terminated", region, call); !done) return at(prior.address, done.error());
  // The pool's placement group in this zone goes with its last instance.
  const std::string group = str(prior.computed, "placement_group");
  if (group.empty()) return {};
  auto users = ec2_->send("DescribeInstances",
                          {{"Filters", {filter("placement-group-name", {group}),
                                        filter("instance-state-name",
                                               {"pending", "running", "shutting-down", "stopping", "stopped"})}}},
                          region, call);
  if (auto* f = std::get_if<ApiFailure>(&users)) return at(prior.address, f->error);
  if (!instances_of(std::get<Json>(users)).empty()) return {};
  auto del = ec2_->send("DeletePlacementGroup", {{"GroupName", group}}, region, call);
  if (auto* f = std::get_if<ApiFailure>(&del);
      f && f->code != "InvalidPlacementGroup.Unknown" && f->code != "InvalidPlacementGroup.InUse")
    return at(prior.address, f->error);
  std::lock_guard<std::mutex> lock(mu_);
  groups_.erase(region + "/" + group);
  return {};
}

Result<std::map<std::string, Json>> AwsProvider::list(const std::string& region, const Json& filters, Call& call) {
  std::map<std::string, Json> out;
  std::string token;
  std::set<std::string> seen;  // a NextToken answered twice would page forever
  do {
    if (!token.empty() && !seen.insert(token).second)
      return Error::fatal("EC2 answered the same NextToken twice (" + token + ") to DescribeInstances in " + region +
                          "; refusing to loop");
    Json params = {{"Filters", filters}, {"MaxResults", options_.page_size}};
    if (!token.empty()) params["NextToken"] = token;
    auto page = ec2_->send("DescribeInstances", params, region, call);
    if (auto* f = std::get_if<ApiFailure>(&page)) {
      Error e = f->error;
      if (e.message.find("bytes; refusing to read more") != std::string::npos)
        e.message += "; a page of " + std::to_string(options_.page_size) +
                     " instances is too large: lower page_size (PLINTH_AWS_PAGE_SIZE)";
      return e;
    }
    const Json& j = std::get<Json>(page);
    for (auto& i : instances_of(j)) {
      const std::string id = str(i, "InstanceId");  // before the move: the assignment moves first
      out[id] = std::move(i);
    }
    token = str(j, "NextToken");
  } while (!token.empty());
  return out;
}

std::vector<ReadResult> AwsProvider::read(const std::vector<Resource>& resources, const Call& call) {
  std::vector<ReadResult> results(resources.size());
  std::map<std::string, std::vector<size_t>> by_region;
  for (size_t i = 0; i < resources.size(); ++i) {
    results[i].address = resources[i].address;
    by_region[region_of(resources[i])].push_back(i);
  }
  if (!ec2_) {
    for (auto& r : results) r.error = Error::fatal("the aws provider was used before configure()");
    return results;
  }
  const std::string lineage = binding_.get().lineage;
  for (const auto& [region, idx] : by_region) {
    auto c = call.fork();
    // This state's instances, by its lineage tag; without a lineage, by id.
    Json filters = Json::array({filter(std::string("tag:") + kTagLineage, {lineage})});
    if (lineage.empty()) {
      std::vector<std::string> ids;
      for (size_t i : idx)
        if (auto id = str(resources[i].computed, "id"); !id.empty()) ids.push_back(id);
      if (ids.empty()) continue;
      filters = Json::array({filter("instance-id", ids)});
    }
    auto listed = list(region, filters, *c);
    for (size_t i : idx) {
      const Resource& res = resources[i];
      ReadResult& out = results[i];
      if (!listed) {
        out.error = at(res.address, listed.error());
        continue;
      }
      const std::string id = str(res.computed, "id");
      auto it = listed->find(id);
      if (id.empty() || it == listed->end()) continue;  // gone (terminated long ago, or never made)
      const Json& inst = it->second;
      const std::string state = str(inst.value("State", Json::object()), "Name");
      if (!active_state(state)) {
        const Json reason = inst.value("StateReason", Json::object());
        const std::string code = str(reason, "Code"), message = str(reason, "Message");
        if (code == "Server.SpotInstanceTermination")  // EC2's message repeats the code
          out.gone_reason =
              "reclaimed by AWS (" + (message.rfind(code, 0) == 0 ? message : code + ": " + message) + ")";
        continue;
      }
      out.current = cloud::with_computed(res, observed(inst));
    }
  }
  return results;
}

Result<std::vector<Resource>> AwsProvider::discover(const std::vector<Resource>& known,
                                                    const std::vector<Resource>& desired, const Call& call) {
  return cloud::discover(binding_, ec2_ != nullptr, schema(), desired,
                         [&](const std::string& lineage) -> Result<std::vector<cloud::Tagged>> {
    std::set<std::string> regions, ids;
    for (const auto& r : known) {
      regions.insert(region_of(r));
      ids.insert(str(r.computed, "id"));
    }
    for (const auto& r : desired) regions.insert(region_of(r));
    regions.erase("");
    std::vector<cloud::Tagged> tagged;
    for (const auto& region : regions) {
      auto c = call.fork();
      auto listed = list(region,
                         Json::array({filter(std::string("tag:") + kTagLineage, {lineage}),
                                      filter("instance-state-name", {"pending", "running"})}),
                         *c);
      if (!listed) return listed.error();
      for (const auto& [id, inst] : *listed)
        tagged.push_back({tag(inst, kTagAddress), tag(inst, kTagAttributes), ids.count(id) > 0,
                          {{"instance_type", str(inst, "InstanceType")},
                           {"region", region},
                           {"spot", str(inst, "InstanceLifecycle") == "spot"}},
                          observed(inst)});
    }
    return tagged;
  });
}

}  // namespace plinth::aws
