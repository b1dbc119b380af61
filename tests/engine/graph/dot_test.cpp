#include <catch2/catch.hpp>

#include "engine/blueprint/loader.h"
#include "engine/graph/expand.h"

using namespace plinth;

namespace {

graph::ResourceGraph small_graph() {
  auto r = bp::load_string(R"(apiVersion: plinth/v1
kind: Blueprint
metadata: {name: small, owner: me}
stacks:
  s: {driver: "550.54.15", cuda: "12.4"}
networks:
  vlans: [{name: v, id: 10, cidr: 10.0.0.0/24, vrf: x, purpose: training}]
node_pools:
  - name: p
    count: 2
    hardware: {gpu: L40S, gpus_per_node: 4, cpu_cores: 32, memory_gb: 256}
    stack: s
    networks: [v]
    bmc: {endpoints: ["https://a", "https://b"], credentials: "env:X"}
)",
                           "small.yaml");
  REQUIRE(r.ok());
  auto g = graph::expand(r.blueprint);
  REQUIRE(g.ok());
  return *g;
}

}  // namespace

TEST_CASE("to_dot prints one quoted node per resource and sorted edges") {
  CHECK(graph::to_dot(small_graph()) == R"dot(digraph plinth {
  rankdir = "LR";
  node [shape = "box"];
  "baremetal.node.p[0]";
  "baremetal.node.p[1]";
  "net.vlan.v";
  "plinth.stack.s";
  "baremetal.node.p[0]" -> "net.vlan.v";
  "baremetal.node.p[0]" -> "plinth.stack.s";
  "baremetal.node.p[1]" -> "net.vlan.v";
  "baremetal.node.p[1]" -> "plinth.stack.s";
}
)dot");
}

TEST_CASE("to_dot collapses a counted pool into one node labelled with its count") {
  CHECK(graph::to_dot(small_graph(), true) == R"dot(digraph plinth {
  rankdir = "LR";
  node [shape = "box"];
  "baremetal.node.p[*]" [label = "baremetal.node.p[0..1] (2)"];
  "net.vlan.v";
  "plinth.stack.s";
  "baremetal.node.p[*]" -> "net.vlan.v";
  "baremetal.node.p[*]" -> "plinth.stack.s";
}
)dot");
}

TEST_CASE("to_dot escapes quotes and backslashes in ids") {
  graph::ResourceGraph g;
  Resource r;
  r.type = "net.vlan";
  r.name = "a\"b\\c";
  r.address = make_address(r.type, r.name);
  g.resources.push_back(r);
  CHECK(graph::to_dot(g).find("  \"net.vlan.a\\\"b\\\\c\";\n") != std::string::npos);
}
