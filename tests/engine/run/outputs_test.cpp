// engine/run/outputs.h: the blueprint's outputs evaluated on a state's resources.
#include "engine/run/outputs.h"

#include <catch2/catch.hpp>

#include "engine/blueprint/loader.h"
#include "tests/support/text.h"

namespace plinth::test::run_outputs {

namespace {

bp::Blueprint blueprint(const std::string& outputs) {
  auto r = bp::load_string(R"(apiVersion: plinth/v1
kind: Blueprint
stacks:
  train: {driver: "550.54.15", cuda: "12.4"}
node_pools:
  - name: train
    count: 2
    hardware: {gpu: L40S, gpus_per_node: 4}
    stack: train
    bios: {SriovEnable: Enabled}
    bmc: {endpoints: "https://b{index}", credentials: env:B}
  - name: idle
    count: 1
    hardware: {gpu: L40S, gpus_per_node: 4}
    stack: train
    bmc: {endpoints: "https://i{index}", credentials: env:B}
outputs:
)" + outputs, "t.yaml");
  INFO(diagnostics_text(r.diagnostics));
  REQUIRE(r.ok());
  return r.blueprint;
}

Resource node(const std::string& pool, int index, Json attributes, Json computed) {
  Resource r;
  r.type = "baremetal.node";
  r.provider = "baremetal";
  r.name = pool;
  r.index = index;
  r.address = make_address(r.type, pool, index);
  r.attributes = std::move(attributes);
  r.computed = std::move(computed);
  return r;
}

}  // namespace

TEST_CASE("outputs: each node's value by pool, computed values first, dotted names, absent as null") {
  auto b = blueprint(R"(  bmcs: {attribute: bmc_endpoint, description: BMCs}
  sriov: {attribute: bios.SriovEnable, pools: [train]}
  facts: {attributes: [serial_number, gpu, nothing], pools: [train]}
  idle_only: {attribute: bmc_endpoint, pools: [idle]}
)");
  // Index 10 before 2 as the state sorts them; the stack shares the pool's name.
  std::vector<Resource> state = {
      node("train", 10, {{"bmc_endpoint", "https://b10"}, {"bios", {{"SriovEnable", "Enabled"}}}, {"gpu", "L40S"}},
           {{"serial_number", "SN10"}, {"gpu", "NVIDIA L40S"}}),
      node("train", 2, {{"bmc_endpoint", "https://b2"}, {"bios", {{"SriovEnable", "Disabled"}}}}, Json::object()),
  };
  Resource stack;
  stack.type = "plinth.stack";
  stack.name = "train";
  stack.address = "plinth.stack.train";
  stack.attributes = {{"bmc_endpoint", "not a node"}};
  state.push_back(stack);

  Json out = run::evaluate_outputs(b, state);
  CHECK(out["bmcs"] == Json({{"description", "BMCs"},
                             {"sensitive", false},
                             {"value", {{"train", {{"train-10", "https://b10"}, {"train-2", "https://b2"}}}}}}));
  CHECK(out["sriov"]["value"]["train"] == Json({{"train-10", "Enabled"}, {"train-2", "Disabled"}}));
  CHECK(out["facts"]["value"]["train"]["train-10"] ==
        Json({{"serial_number", "SN10"}, {"gpu", "NVIDIA L40S"}, {"nothing", nullptr}}));
  CHECK(out["facts"]["value"]["train"]["train-2"]["serial_number"].is_null());
  CHECK_FALSE(out.contains("idle_only"));  // none of its pools has a node in state
  CHECK(run::evaluate_outputs(b, {}).empty());
  CHECK(node_name("train", 3) == "train-3");
}

}  // namespace plinth::test::run_outputs
