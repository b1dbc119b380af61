// to_json: the policies' read-only view of a blueprint.
#include <catch2/catch.hpp>

#include "engine/blueprint/json.h"
#include "engine/blueprint/loader.h"

namespace plinth::test::blueprint_json {

TEST_CASE("to_json keeps the YAML shape and key names with _source positions", "[blueprint][json]") {
  auto r = bp::load_string(R"(apiVersion: plinth/v1
kind: Blueprint
metadata: {name: demo, compliance: [hipaa]}
stacks:
  train: {driver: "550.54.15", cuda: "12.4"}
storage:
  tiers:
    - {name: hot, kind: nvme, classification: phi, encryption: {at_rest: aes-256-xts}}
    - {name: scratch, kind: nvme}
node_pools:
  - name: a
    count: 2
    hardware: {gpu: H100-80GB, gpus_per_node: 8}
    stack: train
    storage: [hot]
    bmc: {endpoints: "https://bmc-{index}", credentials: env:BMC}
access:
  transport: {tls_min: "1.3", mtls: true}
)", "demo.yaml");
  REQUIRE(r.ok());
  Json j = bp::to_json(r.blueprint);
  CHECK(j["apiVersion"] == "plinth/v1");
  CHECK(j["metadata"]["compliance"] == Json::array({"hipaa"}));
  CHECK(j["metadata"]["_source"] == "demo.yaml:3:11");
  CHECK(j["stacks"]["train"]["cuda"] == "12.4");
  CHECK(j["stacks"]["train"]["_source"] == "demo.yaml:5:3");
  const Json& tiers = j["storage"]["tiers"];
  REQUIRE(tiers.size() == 2);
  CHECK(tiers[0]["encryption"]["at_rest"] == "aes-256-xts");
  CHECK(tiers[0]["_source"] == "demo.yaml:8:7");
  CHECK_FALSE(tiers[1].contains("encryption"));    // unset optional: absent
  CHECK_FALSE(tiers[1].contains("classification"));  // empty string: absent
  const Json& pool = j["node_pools"][0];
  CHECK(pool["name"] == "a");
  CHECK(pool["provider"] == "baremetal");
  CHECK(pool["role"] == "training");
  CHECK(pool["count"] == 2);
  CHECK(pool["hardware"]["gpus_per_node"] == 8);
  CHECK(pool["bmc"]["credentials"] == "env:BMC");
  CHECK(pool["mig"]["profile"] == "none");
  CHECK(pool["_source"] == "demo.yaml:11:5");
  CHECK(j["access"]["transport"]["mtls"] == true);
  CHECK(j["access"]["namespaces"].is_array());
  CHECK_FALSE(j.contains("monitoring"));
  CHECK(j["_files"][0]["path"] == "demo.yaml");
}

TEST_CASE("to_json of every example round-trips its counts", "[blueprint][json]") {
  auto r = bp::load_files({"blueprints/examples/cluster.yaml"});
  REQUIRE(r.ok());
  Json j = bp::to_json(r.blueprint);
  CHECK(j["node_pools"].size() == r.blueprint.node_pools.size());
  CHECK(j["burst_pools"].size() == r.blueprint.burst_pools.size());
  CHECK(j["stacks"].size() == r.blueprint.stacks.size());
  CHECK(j["burst_pools"][2]["resource_group"] == "rg-ml-burst");
  CHECK(j["networks"]["fabrics"][1]["pfc"] == true);
}

}  // namespace plinth::test::blueprint_json
