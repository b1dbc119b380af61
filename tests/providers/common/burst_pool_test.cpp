// The burst-pool base (providers/common/burst_pool.h) with a made-up cloud:
// which tagged instances are adopted and as what, and the order, refusals
// and final message of the capacity fallback.
#include "providers/common/burst_pool.h"

#include <catch2/catch.hpp>

#include "providers/common/json_fields.h"

using namespace plinth;

namespace {

Resource wanted(int index, const std::string& type = "m8.gpu") {
  Resource r;
  r.type = "cloud.instance";
  r.name = "burst";
  r.index = index;
  r.address = "cloud.instance.burst[" + std::to_string(index) + "]";
  r.provider = "cloud";
  r.attributes = {{"instance_type", type}, {"zone", "z1"}};
  return r;
}

}  // namespace

TEST_CASE("adopt: an instance made from the blueprint's attributes is kept, another is described by the cloud",
          "[burst_pool]") {
  const std::vector<Resource> desired = {wanted(0), wanted(1)};
  const std::vector<cloud::Tagged> listed = {
      {"cloud.instance.burst[0]", cloud::attributes_hash(desired[0].attributes), false, {{"instance_type", "x"}},
       {{"id", "i-0"}}},
      {"cloud.instance.burst[1]", "stale-hash", false, {{"instance_type", "m7.gpu"}}, {{"id", "i-1"}}},
      {"cloud.instance.burst[2]", "", true, {}, {{"id", "i-2"}}},       // recorded in state already
      {"", "", false, {}, {{"id", "i-untagged"}}},                     // not Plinth's
      {"other.thing.burst[0]", "", false, {}, {{"id", "i-other"}}},    // another type
      {"cloud.instance.gone[4]", "", false, {{"instance_type", "m8.gpu"}}, {{"id", "i-4"}}},  // not in the blueprint
  };
  auto found = cloud::adopt(listed, "cloud.instance", "cloud", desired);
  REQUIRE(found.size() == 3);
  CHECK(found[0].attributes == desired[0].attributes);  // the plan keeps it
  CHECK(found[0].computed["id"] == "i-0");
  CHECK(found[1].attributes == Json{{"instance_type", "m7.gpu"}});  // the plan replaces it
  CHECK(found[1].provider == "cloud");
  CHECK(found[1].index == 1);
  CHECK(found[2].address == "cloud.instance.gone[4]");  // the plan deletes it
  CHECK(found[2].name == "gone");
}

TEST_CASE("candidate_types and spread: the pool's type first, fallbacks once each, places from the index",
          "[burst_pool]") {
  Json a = {{"instance_type", "big"}, {"instance_types", {"big", "medium", "small", "medium"}}};
  CHECK(cloud::candidate_types(a, "instance_types") == std::vector<std::string>{"big", "medium", "small"});
  std::vector<std::string> zones = {"a", "b", "c"};
  cloud::spread(zones, 4);
  CHECK(zones == std::vector<std::string>{"b", "c", "a"});
  cloud::spread(zones, 0);
  CHECK(zones == std::vector<std::string>{"b", "c", "a"});
}

TEST_CASE("first_with_capacity: types outer, places inner, stops at the first launch or other error",
          "[burst_pool]") {
  const Resource r = wanted(0);
  std::vector<std::string> tried;
  auto launch = [&](const std::string& type, size_t place) -> cloud::Launched {
    tried.push_back(type + "@" + std::to_string(place));
    if (type == "small" && place == 1) {
      Resource made = r;
      made.computed = {{"zone", "z2"}};
      return made;
    }
    return cloud::NoCapacity{type + " in z" + std::to_string(place + 1), "InsufficientCapacity"};
  };
  auto made = cloud::first_with_capacity(r, {"big", "small"}, 2, launch, " hint");
  REQUIRE(made.ok());
  CHECK(made->computed["zone"] == "z2");
  CHECK(tried == std::vector<std::string>{"big@0", "big@1", "small@0", "small@1"});

  auto fails = [&](const std::string&, size_t) -> cloud::Launched { return Error::fatal("AuthFailure"); };
  auto failed = cloud::first_with_capacity(r, {"big", "small"}, 2, fails, " hint");
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message == "AuthFailure");
}

TEST_CASE("first_with_capacity: every refusal named, then the cloud's last answer, the hint only for one candidate",
          "[burst_pool]") {
  const Resource r = wanted(0);
  auto refuse = [](const std::string& type, size_t place) -> cloud::Launched {
    return cloud::NoCapacity{type + " in z" + std::to_string(place + 1), "no " + type};
  };
  auto all = cloud::first_with_capacity(r, {"big", "small"}, 2, refuse, ". List fallbacks");
  REQUIRE_FALSE(all.ok());
  CHECK(all.error().kind == Error::Kind::Conflict);
  CHECK(all.error().message ==
        "cloud.instance.burst[0]: no capacity for big in z1, then big in z2, then small in z1, then small in z2: no small");
  auto one = cloud::first_with_capacity(r, {"big"}, 1, refuse, ". List fallbacks");
  REQUIRE_FALSE(one.ok());
  CHECK(one.error().message == "cloud.instance.burst[0]: no capacity for big in z1: no big. List fallbacks");
}
