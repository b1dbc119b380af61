#include <catch2/catch.hpp>
#include <memory>

#include "engine/plan/plan.h"
#include "tests/support/workspace.h"

namespace plinth::test::plan_diff {

using plan::Action;

namespace {

/// TYPE.NAME[INDEX] of the provider its type names.
Resource res(const std::string& type, const std::string& name, int index, Json attrs) {
  return make_resource(type, name, index, type.substr(0, type.find('.')), std::move(attrs));
}

Resource node(int i, Json overrides = Json::object()) {
  Json a = {{"gpu", "H100-80GB"},
            {"stack", "train"},
            {"user_data_hash", "aaa"},
            {"bios", {{"SriovEnable", "Enabled"}, {"ProcTurboMode", "Enabled"}}},
            {"bmc_endpoint", "https://bmc-" + std::to_string(i)},
            {"bmc_credentials", "env:BMC"},
            {"networks", {"v1"}}};
  a.merge_patch(overrides);
  return res("baremetal.node", "train", i, a);
}

const plan::ResourceChange& change(const plan::Plan& p, const std::string& address) {
  for (const auto& c : p.changes)
    if (c.address == address) return c;
  FAIL("no change for " << address);
  throw;
}

}  // namespace

TEST_CASE("identical desired and prior resources are no-ops") {
  std::vector<Resource> desired = {node(0), node(1)};
  auto prior = desired;
  prior[0].computed = {{"serial", "XYZ"}};  // provider-assigned values are not planned
  prior[1].depends_on = {"net.vlan.v1"};
  auto p = plan::diff(desired, prior);
  REQUIRE(p.changes.size() == 2);
  for (const auto& c : p.changes) {
    CHECK(c.action == Action::NoOp);
    CHECK(c.changes.empty());
    CHECK(c.before.has_value());
    CHECK(c.after.has_value());
  }
  CHECK(p.summary() == plan::Summary{0, 0, 0, 0, 2});
  CHECK_FALSE(p.has_changes());
}

TEST_CASE("resources only in the blueprint are created with every attribute listed") {
  auto p = plan::diff({res("net.vlan", "v1", -1, {{"id", 100}, {"mtu", 9000}})}, {});
  REQUIRE(p.changes.size() == 1);
  const auto& c = p.changes[0];
  CHECK(c.action == Action::Create);
  CHECK(c.type == "net.vlan");
  CHECK_FALSE(c.before.has_value());
  REQUIRE(c.changes.size() == 2);
  CHECK(c.changes[0] == plan::AttributeChange{"id", std::nullopt, Json(100), false, false});
  CHECK(c.changes[1] == plan::AttributeChange{"mtu", std::nullopt, Json(9000), false, false});
  CHECK(p.summary() == plan::Summary{1, 0, 0, 0, 0});
}

TEST_CASE("a nested attribute change is an in-place update reported as a dotted path") {
  auto p = plan::diff({node(0, {{"bios", {{"SriovEnable", "Disabled"}, {"NumaNodesPerSocket", "2"}}}})}, {node(0)});
  const auto& c = change(p, "baremetal.node.train[0]");
  CHECK(c.action == Action::Update);
  REQUIRE(c.changes.size() == 2);
  CHECK(c.changes[0] == plan::AttributeChange{"bios.NumaNodesPerSocket", std::nullopt, Json("2"), false, false});
  CHECK(c.changes[1] == plan::AttributeChange{"bios.SriovEnable", Json("Enabled"), Json("Disabled"), false, false});
  CHECK(c.forced_by().empty());

  // Removing a key from a nested object and dropping the object entirely.
  auto q = plan::diff({node(0, {{"bios", {{"ProcTurboMode", nullptr}}}})}, {node(0)});
  CHECK(change(q, "baremetal.node.train[0]").changes ==
        std::vector<plan::AttributeChange>{{"bios.ProcTurboMode", Json("Enabled"), std::nullopt, false, false}});
  auto dropped = node(0);
  dropped.attributes.erase("bios");
  auto r = plan::diff({dropped}, {node(0)});
  CHECK(change(r, "baremetal.node.train[0]").changes.size() == 2);
  CHECK(change(r, "baremetal.node.train[0]").action == Action::Update);
}

TEST_CASE("a force_new attribute turns the update into a replace and says which forced it") {
  auto p = plan::diff({node(0, {{"user_data_hash", "bbb"}, {"stack", "train2"}, {"networks", {"v1", "v2"}}})},
                      {node(0)});
  const auto& c = change(p, "baremetal.node.train[0]");
  CHECK(c.action == Action::Replace);
  CHECK(c.forced_by() == std::vector<std::string>{"stack", "user_data_hash"});
  REQUIRE(c.changes.size() == 3);
  CHECK(c.changes[0] == plan::AttributeChange{"networks", Json{"v1"}, Json{"v1", "v2"}, false, false});
  CHECK(p.summary() == plan::Summary{0, 0, 1, 0, 0});

  // A nested force_new path: storage.tier encryption.at_rest, but not encryption.kms_key.
  Json enc = {{"kind", "nvme"}, {"encryption", {{"at_rest", "aes-256-xts"}, {"kms_key", "k1"}}}};
  Json new_key = enc;
  new_key["encryption"]["kms_key"] = "k2";
  CHECK(plan::diff({res("storage.tier", "hot", -1, new_key)}, {res("storage.tier", "hot", -1, enc)}).changes[0].action ==
        Action::Update);
  Json new_cipher = enc;
  new_cipher["encryption"]["at_rest"] = "luks2";
  auto q = plan::diff({res("storage.tier", "hot", -1, new_cipher)}, {res("storage.tier", "hot", -1, enc)});
  CHECK(q.changes[0].action == Action::Replace);
  CHECK(q.changes[0].forced_by() == std::vector<std::string>{"encryption.at_rest"});
}

TEST_CASE("sensitive attributes are flagged on every kind of change") {
  auto p = plan::diff({node(0, {{"bmc_credentials", "file:/etc/new"}}), node(1)}, {node(0)});
  CHECK(change(p, "baremetal.node.train[0]").changes ==
        std::vector<plan::AttributeChange>{{"bmc_credentials", Json("env:BMC"), Json("file:/etc/new"), false, true}});
  for (const auto& a : change(p, "baremetal.node.train[1]").changes) CHECK(a.sensitive == (a.path == "bmc_credentials"));
}

TEST_CASE("removing a pool from the blueprint deletes its nodes, output is in address order") {
  std::vector<Resource> prior;
  for (int i = 0; i < 12; ++i) prior.push_back(node(i));
  prior.push_back(res("net.vlan", "v1", -1, {{"id", 100}}));
  auto p = plan::diff({res("net.vlan", "v1", -1, {{"id", 100}})}, prior);
  REQUIRE(p.changes.size() == 13);
  for (int i = 0; i < 12; ++i) {
    const auto& c = p.changes[static_cast<size_t>(i)];
    CHECK(c.address == "baremetal.node.train[" + std::to_string(i) + "]");
    CHECK(c.action == Action::Delete);
    CHECK_FALSE(c.after.has_value());
    CHECK(c.changes.size() == 8);  // every prior attribute leaves (bios has two keys)
    for (const auto& a : c.changes) CHECK_FALSE(a.forces_replacement);
  }
  CHECK(p.changes[12].action == Action::NoOp);
  CHECK(p.summary() == plan::Summary{0, 0, 0, 12, 1});
}

TEST_CASE("every action in one plan, attributes of unknown types are never force-new") {
  auto p = plan::diff({node(0), node(1, {{"bios", {{"SriovEnable", "Disabled"}}}}), node(2, {{"bmc_endpoint", "x"}}),
                       res("custom.thing", "a", -1, {{"id", 2}})},
                      {node(1), node(2), node(3), res("custom.thing", "a", -1, {{"id", 1}})});
  CHECK(change(p, "baremetal.node.train[0]").action == Action::Create);
  CHECK(change(p, "baremetal.node.train[1]").action == Action::Update);
  CHECK(change(p, "baremetal.node.train[2]").action == Action::Replace);
  CHECK(change(p, "baremetal.node.train[3]").action == Action::Delete);
  CHECK(change(p, "custom.thing.a").action == Action::Update);
  CHECK(p.summary() == plan::Summary{1, 2, 1, 1, 0});
  CHECK(p.summary().changes() == 5);
  CHECK(std::string(plan::to_string(Action::Replace)) == "replace");
  CHECK(std::string(plan::to_string(Action::NoOp)) == "no-op");
}

TEST_CASE("numbers compare by value whatever their JSON representation") {
  Json prior = {{"capacity_tb", 200.0}, {"kind", "nvme"}};
  Json desired = {{"capacity_tb", 200}, {"kind", "nvme"}};
  CHECK(plan::diff({res("storage.tier", "t", -1, desired)}, {res("storage.tier", "t", -1, prior)}).changes[0].action ==
        Action::NoOp);
}

TEST_CASE("diff_sharing: a plan's desired resources and created values are the graph's, not copies") {
  auto desired = std::make_shared<const std::vector<Resource>>(std::vector<Resource>{node(0), node(1)});
  plan::Plan shared = plan::diff_sharing(desired, {});
  CHECK(shared == plan::diff(*desired, {}));  // the same plan as diff's copies
  REQUIRE(shared.changes.size() == 2);
  const auto& rc = shared.changes[0];
  REQUIRE(rc.after);
  CHECK(&*rc.after == &(*desired)[0]);
  for (const auto& c : rc.changes) {
    REQUIRE(c.after);
    const Json* in_resource = c.path == "bios.SriovEnable" ? &(*desired)[0].attributes["bios"]["SriovEnable"]
                              : c.path == "bios.ProcTurboMode"
                                  ? &(*desired)[0].attributes["bios"]["ProcTurboMode"]
                                  : &(*desired)[0].attributes[c.path];
    CHECK(&*c.after == in_resource);
  }
  // The plan keeps the resources alive after the graph's last other owner lets go.
  std::weak_ptr<const std::vector<Resource>> watch = desired;
  desired.reset();
  CHECK_FALSE(watch.expired());
  CHECK(shared.changes[1].after->address == "baremetal.node.train[1]");
}

}  // namespace plinth::test::plan_diff
