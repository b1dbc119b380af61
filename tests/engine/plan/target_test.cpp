// plan::restrict_to_targets: -target keeps the targets, what they need, and
// for deletes what depended on them.
#include <catch2/catch.hpp>

#include "engine/plan/target.h"
#include "tests/support/workspace.h"

namespace plinth::test::plan_target {

namespace {

Resource res(const std::string& type, const std::string& name, int index = -1, std::vector<std::string> deps = {}) {
  Resource r = make_resource(type, name, index, "plinth", {{"x", 1}});
  r.depends_on = std::move(deps);
  return r;
}

std::vector<std::string> addresses(const plan::Plan& p) {
  std::vector<std::string> out;
  for (const auto& c : p.changes) out.push_back(c.address);
  return out;
}

}  // namespace

TEST_CASE("a targeted create brings what it depends on, transitively") {
  std::vector<Resource> desired = {
      res("plinth.stack", "train"),
      res("storage.tier", "cold", -1, {"storage.tier.hot"}),
      res("storage.tier", "hot"),
      res("baremetal.node", "gpu", 0, {"plinth.stack.train", "storage.tier.cold"}),
      res("baremetal.node", "gpu", 1, {"plinth.stack.train"}),
      res("net.vlan", "other"),
  };
  auto full = plan::diff(desired, {});
  auto t = plan::restrict_to_targets(full, {"baremetal.node.gpu[0]"});
  REQUIRE(t.ok());
  CHECK(addresses(t->plan) == std::vector<std::string>{"baremetal.node.gpu[0]", "plinth.stack.train",
                                                       "storage.tier.cold", "storage.tier.hot"});
  CHECK(t->added == std::vector<std::string>{"plinth.stack.train", "storage.tier.cold", "storage.tier.hot"});
  CHECK(t->changes_left_out == 2);

  auto pool = plan::restrict_to_targets(full, {"baremetal.node.gpu"});  // every index
  REQUIRE(pool.ok());
  CHECK(pool->plan.summary().create == 5);
}

TEST_CASE("a targeted delete brings the deletes of what depended on it") {
  std::vector<Resource> prior = {res("storage.tier", "hot"), res("storage.backup", "b", -1, {"storage.tier.hot"}),
                                 res("net.vlan", "v")};
  auto full = plan::diff({}, prior);
  auto t = plan::restrict_to_targets(full, {"storage.tier.hot"});
  REQUIRE(t.ok());
  CHECK(addresses(t->plan) == std::vector<std::string>{"storage.backup.b", "storage.tier.hot"});
  CHECK(t->changes_left_out == 1);
}

TEST_CASE("an unknown target is an error with a did-you-mean") {
  auto full = plan::diff({res("storage.tier", "hot")}, {});
  auto t = plan::restrict_to_targets(full, {"storage.tier.hto"});
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().message ==
        "-target storage.tier.hto names no resource of the blueprint or the state; did you mean 'storage.tier.hot'?");
}

}  // namespace plinth::test::plan_target
