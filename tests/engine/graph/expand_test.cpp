#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "engine/blueprint/loader.h"
#include "engine/graph/expand.h"
#include "engine/provider/registry.h"
#include "engine/render/render.h"
#include "tests/support/text.h"

using namespace plinth;
using plinth::test::replace_all;

namespace {

const char* kBlueprint = R"(apiVersion: plinth/v1
kind: Blueprint
metadata: {name: t, owner: me}
stacks:
  s:
    driver: "550.54.15"
    cuda: "12.4"
networks:
  vlans:
    - {name: v1, id: 100, cidr: 10.1.0.0/16, vrf: ml, purpose: training, mtu: 9000}
  fabrics:
    - {name: ib, kind: infiniband, speed_gbps: 400, topology: spine-leaf, oversubscription: "1:1"}
storage:
  tiers:
    - {name: hot, kind: nvme, capacity_tb: 10, classification: internal, encryption: {at_rest: aes-256-xts}}
    - {name: cold, kind: object, backend: s3, region: us-east-1, capacity_tb: 100, classification: internal,
       encryption: {at_rest: aes-256-gcm}, lifecycle: {transition_from: hot, after_days: 30}}
  backups:
    - {name: b, source: hot, target: cold, schedule: "0 * * * *", retention_days: 7}
node_pools:
  - name: gpu
    provider: baremetal
    count: 12
    role: training
    hardware: {gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96, memory_gb: 1024}
    stack: s
    fabric: ib
    boot: {method: pxe, image: "http://pxe/"}
    bios: {SriovEnable: Enabled}
    networks: [v1]
    storage: [hot]
    bmc: {endpoints: "https://bmc-{index}.example", credentials: env:BMC}
burst_pools:
  - {name: burst, provider: aws, region: us-east-1, instance_type: p5.48xlarge, desired: 2, max: 4,
     spot: true, stack: s, checkpointing: {interval_minutes: 30, target: cold}}
access:
  namespaces: [{name: ns1, quota: {gpus: 8}}, {name: ns2}]
  roles: [{name: r, subjects: ["group:g"], namespaces: [ns2, ns1], verbs: [get], resources: [jobs]}]
)";

bp::Blueprint load(const std::string& text) {
  auto r = bp::load_string(text, "bp.yaml");
  INFO((r.diagnostics.empty() ? std::string() : r.diagnostics.front().message));
  REQUIRE(r.ok());
  return r.blueprint;
}

graph::ResourceGraph expand_ok(const bp::Blueprint& b) {
  auto g = graph::expand(b);
  INFO((g.ok() ? std::string() : g.error().message));
  REQUIRE(g.ok());
  return *g;
}

std::vector<std::string> addresses(const graph::ResourceGraph& g) {
  std::vector<std::string> out;
  for (const auto& r : g.resources) out.push_back(r.address);
  return out;
}

}  // namespace

TEST_CASE("expand gives every entity a stable address, sorted with numeric indexes") {
  auto g = expand_ok(load(kBlueprint));
  std::vector<std::string> want = {"access.namespace.ns1", "access.namespace.ns2", "access.role.r",
                                   "aws.instance.burst[0]", "aws.instance.burst[1]"};
  for (int i = 0; i < 12; ++i) want.push_back("baremetal.node.gpu[" + std::to_string(i) + "]");
  for (const char* a : {"net.fabric.ib", "net.vlan.v1", "plinth.stack.s", "storage.backup.b", "storage.tier.cold",
                        "storage.tier.hot"})
    want.push_back(a);
  CHECK(addresses(g) == want);

  const Resource* n = g.find("baremetal.node.gpu[10]");
  REQUIRE(n);
  CHECK(n->type == "baremetal.node");
  CHECK(n->name == "gpu");
  CHECK(n->index == 10);
  CHECK(n->provider == "baremetal");
  CHECK(n->source.str() == "bp.yaml:21:5");
  CHECK(n->attributes["gpu"] == "H100-80GB");
  CHECK(n->attributes["bios"] == Json{{"SriovEnable", "Enabled"}});
  CHECK(n->attributes["boot_method"] == "pxe");
  CHECK(n->computed == Json::object());
  CHECK(g.find("baremetal.node.gpu[12]") == nullptr);
  CHECK(g.find("not an address") == nullptr);

  const Resource* ns1 = g.find("access.namespace.ns1");
  REQUIRE(ns1);
  CHECK(ns1->attributes == Json{{"gpu_quota", 8}, {"service_accounts", Json::array()}});
  CHECK_FALSE(g.find("access.namespace.ns2")->attributes.contains("gpu_quota"));
}

TEST_CASE("expand records dependencies of nodes, instances, backups, tiers and roles") {
  auto g = expand_ok(load(kBlueprint));
  CHECK(g.find("baremetal.node.gpu[0]")->depends_on ==
        std::vector<std::string>{"net.fabric.ib", "net.vlan.v1", "plinth.stack.s", "storage.tier.hot"});
  CHECK(g.find("aws.instance.burst[1]")->depends_on ==
        std::vector<std::string>{"plinth.stack.s", "storage.tier.cold"});
  CHECK(g.find("storage.backup.b")->depends_on == std::vector<std::string>{"storage.tier.cold", "storage.tier.hot"});
  CHECK(g.find("storage.tier.cold")->depends_on == std::vector<std::string>{"storage.tier.hot"});
  CHECK(g.find("access.role.r")->depends_on ==
        std::vector<std::string>{"access.namespace.ns1", "access.namespace.ns2"});
  CHECK(g.find("net.vlan.v1")->depends_on.empty());
}

TEST_CASE("BMC endpoints come from the {index} template or the explicit list") {
  auto g = expand_ok(load(kBlueprint));
  CHECK(g.find("baremetal.node.gpu[0]")->attributes["bmc_endpoint"] == "https://bmc-0.example");
  CHECK(g.find("baremetal.node.gpu[11]")->attributes["bmc_endpoint"] == "https://bmc-11.example");
  CHECK(g.find("baremetal.node.gpu[3]")->attributes["bmc_credentials"] == "env:BMC");

  auto b = load(replace_all(replace_all(kBlueprint, "count: 12", "count: 2"), "\"https://bmc-{index}.example\"",
                            "[\"https://10.0.0.7\", \"https://10.0.0.9\"]"));
  auto g2 = expand_ok(b);
  CHECK(g2.find("baremetal.node.gpu[0]")->attributes["bmc_endpoint"] == "https://10.0.0.7");
  CHECK(g2.find("baremetal.node.gpu[1]")->attributes["bmc_endpoint"] == "https://10.0.0.9");

  b.node_pools[0].count = 3;
  auto bad = graph::expand(b);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message ==
        "node pool 'gpu' lists 2 value(s) of 'bmc.endpoints' for 3 member(s); give one per member or one template "
        "containing {index}");
}

TEST_CASE("every node of a pool carries the pool's rendered user-data hash, a new driver pin changes it") {
  auto b = load(kBlueprint);
  auto g = expand_ok(b);
  auto rendered = render::render_pool(b, "gpu");
  REQUIRE(rendered.ok());
  for (int i = 0; i < 12; ++i)
    CHECK(g.find("baremetal.node.gpu[" + std::to_string(i) + "]")->attributes["user_data_hash"] == rendered->hash);
  auto burst = render::render_pool(b, "burst");
  REQUIRE(burst.ok());
  CHECK(g.find("aws.instance.burst[0]")->attributes["user_data_hash"] == burst->hash);

  auto g2 = expand_ok(load(replace_all(kBlueprint, "550.54.15", "550.90.07")));
  CHECK(g2.find("baremetal.node.gpu[0]")->attributes["user_data_hash"] != rendered->hash);
  CHECK(g2.find("aws.instance.burst[0]")->attributes["user_data_hash"] != burst->hash);
  CHECK(g2.find("plinth.stack.s")->attributes["driver"] == "550.90.07");
}

TEST_CASE("a GPU alias or nvidia-smi name expands to exactly the resources of the catalog name") {
  // Issue 9: writing "NVIDIA H100 80GB HBM3" instead of H100-80GB replaced every node of the pool.
  auto canonical = expand_ok(load(kBlueprint));
  for (const char* spelling : {"\"NVIDIA H100 80GB HBM3\"", "H100-SXM5-80GB", "H100"}) {
    INFO(spelling);
    auto g = expand_ok(load(replace_all(kBlueprint, "gpu: H100-80GB", std::string("gpu: ") + spelling)));
    REQUIRE(g.resources.size() == canonical.resources.size());
    for (size_t i = 0; i < g.resources.size(); ++i) {
      INFO(g.resources[i].address);
      CHECK(g.resources[i].attributes == canonical.resources[i].attributes);
    }
    CHECK(g.find("baremetal.node.gpu[0]")->attributes["gpu"] == "H100-80GB");
  }
}

TEST_CASE("expand emits only attributes declared in the resource type table") {
  for (const char* file : {"blueprints/examples/lab.yaml", "blueprints/examples/cluster.yaml",
                           "blueprints/examples/regulated.yaml"}) {
    auto loaded = bp::load_files({file});
    REQUIRE(loaded.ok());
    auto g = expand_ok(loaded.blueprint);
    REQUIRE_FALSE(g.resources.empty());
    for (const auto& r : g.resources) {
      const ResourceType* t = find_resource_type(r.type, r.provider);
      INFO(r.address);
      REQUIRE(t);
      CHECK(r.provider == t->provider);
      for (const auto& [key, value] : r.attributes.items()) {
        INFO(key);
        CHECK(t->find(key));
        if (key == "encryption")
          for (const auto& [sub, v] : value.items()) CHECK(t->find(key + "." + sub) != nullptr);
      }
    }
  }
}

TEST_CASE("burst pools of every cloud expand to their instance types, desired 0 gives none") {
  auto b = load(kBlueprint);
  b.burst_pools[0].provider = "gcp";
  b.burst_pools[0].zone = "us-central1-a";
  CHECK(addresses(expand_ok(b))[3] == "baremetal.node.gpu[0]");  // the aws ones are gone
  auto g = expand_ok(b);
  REQUIRE(g.find("gcp.instance.burst[1]"));
  CHECK(g.find("gcp.instance.burst[1]")->attributes["zone"] == "us-central1-a");
  b.burst_pools[0].provider = "azure";
  b.burst_pools[0].settings["resource_group"] = "rg-ml";
  g = expand_ok(b);
  REQUIRE(g.find("azure.vm.burst[0]"));
  CHECK(g.find("azure.vm.burst[0]")->attributes["resource_group"] == "rg-ml");
  b.burst_pools[0].desired = 0;
  g = expand_ok(b);
  CHECK(std::none_of(g.resources.begin(), g.resources.end(), [](const Resource& r) { return r.name == "burst"; }));
}

TEST_CASE("topological order puts every resource after its dependencies, ties in address order") {
  auto g = expand_ok(load(kBlueprint));
  auto order = g.topological_order();
  REQUIRE(order.size() == g.resources.size());
  std::map<std::string, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  for (const auto& r : g.resources)
    for (const auto& d : r.depends_on) CHECK(pos.at(d) < pos.at(r.address));
  std::vector<std::string> head(order.begin(), order.begin() + 7);
  CHECK(head == std::vector<std::string>{"access.namespace.ns1", "access.namespace.ns2", "access.role.r",
                                         "net.fabric.ib", "net.vlan.v1", "plinth.stack.s", "storage.tier.hot"});
  CHECK(order[7] == "baremetal.node.gpu[0]");
  CHECK(pos.at("storage.tier.cold") < pos.at("aws.instance.burst[0]"));
}

TEST_CASE("topological order survives cycles and dangling edges") {
  graph::ResourceGraph g;
  auto mk = [](const std::string& name, std::vector<std::string> deps) {
    Resource r;
    r.type = "storage.tier";
    r.name = name;
    r.address = make_address(r.type, name);
    r.depends_on = std::move(deps);
    return r;
  };
  g.resources = {mk("a", {"storage.tier.b"}), mk("b", {"storage.tier.a"}), mk("c", {"storage.tier.zzz"})};
  CHECK(g.topological_order() == std::vector<std::string>{"storage.tier.c", "storage.tier.a", "storage.tier.b"});
}

TEST_CASE("a node-pool provider of its own, in a scoped registry, takes the bmc block through its schema's fields") {
  // Every built-in schema but the bare-metal one, plus "rackd": a made-up
  // provider whose servers take the BMC endpoint under another name.
  const auto builtins = schema_registry().providers();
  ScopedSchemaRegistry scoped;
  for (const ProviderSchema* s : builtins)
    if (s->name != "baremetal") REQUIRE(scoped.registry().add(*s).ok());
  ProviderSchema rackd;
  rackd.name = "rackd";
  rackd.version = "1";
  rackd.resource_types = {{"rackd.server", "", "A server.",
                           {attr("gpu", "GPU."), attr("redfish", "BMC URL."), attr("secret_ref", "Credentials."),
                            attr("state", "Power.")}}};
  rackd.sections = {{"node_pools", "rackd.server", true, {}}};
  rackd.sections[0].fields = {{"bmc.endpoints", "redfish", nullptr, nullptr, true},
                              {"bmc.credentials", "secret_ref", nullptr, nullptr, false},
                              {"bmc", "state", "running", nullptr, false}};
  REQUIRE(scoped.registry().add(rackd).ok());
  CHECK(schema_registry().provider("baremetal") == nullptr);

  auto b = load(replace_all(kBlueprint, "    provider: baremetal\n", ""));
  auto g = expand_ok(b);
  const Resource* n = g.find("rackd.server.gpu[11]");
  REQUIRE(n != nullptr);
  CHECK(n->attributes["redfish"] == "https://bmc-11.example");
  CHECK(n->attributes["secret_ref"] == "env:BMC");
  CHECK(n->attributes["state"] == "running");
  CHECK_FALSE(n->attributes.contains("bmc_endpoint"));
  CHECK_FALSE(n->attributes.contains("power"));
  // A pool without the block gets none of its fields.
  b.node_pools[0].bmc.reset();
  const auto without = expand_ok(b);
  const Resource* bare = without.find("rackd.server.gpu[0]");
  REQUIRE(bare != nullptr);
  CHECK_FALSE(bare->attributes.contains("redfish"));
  CHECK_FALSE(bare->attributes.contains("state"));
}
