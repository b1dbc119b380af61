#pragma once
// Shared by the policy engine tests: write policies to a temp dir and run
// them against a blueprint loaded from YAML text.
#include <map>
#include <string>
#include <catch2/catch.hpp>

#include "engine/blueprint/json.h"
#include "engine/graph/expand.h"
#include "engine/plan/plan.h"
#include "engine/blueprint/loader.h"
#include "engine/policy/policy.h"
#include "tests/support/run.h"

namespace plinth::test {

/// A small valid blueprint: one stack, one encrypted tier, one VLAN, a
/// two-node pool and the access/monitoring sections.
inline const char* const kSmallBlueprint = R"(apiVersion: plinth/v1
kind: Blueprint
metadata: {name: small, owner: tests, compliance: [soc2]}
stacks:
  train:
    driver: "550.54.15"
    cuda: "12.4"
    images: ["registry.example/train@sha256:92bc2e412115876270c842f18eede00e752babbb9bf6f402ee8c5ab3b6746af2"]
networks:
  vlans:
    - {name: ml, id: 100, cidr: 10.100.0.0/16, vrf: ml, purpose: training, mtu: 9000}
storage:
  tiers:
    - {name: hot, kind: nvme, capacity_tb: 10, classification: internal, encryption: {at_rest: aes-256-xts}}
node_pools:
  - name: train-a
    provider: baremetal
    count: 2
    role: training
    hardware: {gpu: H100-80GB, gpus_per_node: 8, cpu_cores: 96, memory_gb: 1024}
    stack: train
    networks: [ml]
    storage: [hot]
    bmc: {endpoints: "https://bmc-{index}.example", credentials: env:BMC}
access:
  namespaces: [{name: team, quota: {gpus: 16}, service_accounts: [team-train]}]
  audit_logging: {api_server: true, storage: true, retention_days: 365}
  transport: {tls_min: "1.3", mtls: true}
monitoring: {dcgm: true, prometheus: true}
)";

/// A loaded blueprint with its graph and a create-everything plan, kept
/// together so policy::Input can point into it.
struct Loaded {
  bp::Blueprint blueprint;
  graph::ResourceGraph graph;
  plan::Plan plan;
  policy::Input input() const;
};

inline policy::Input Loaded::input() const {
  policy::Input in;
  in.blueprint = &blueprint;
  in.blueprint_json = bp::to_json(blueprint);
  in.resources = &graph.resources;
  in.plan = &plan;
  return in;
}

/// Loads `yaml` (fails the test on load or expand errors).
inline Loaded load(const std::string& yaml, const std::string& name = "bp.yaml") {
  auto r = bp::load_string(yaml, name);
  for (const auto& d : r.diagnostics) UNSCOPED_INFO(format_diagnostic(d));
  REQUIRE(r.ok());
  auto g = graph::expand(r.blueprint);
  if (!g) FAIL(g.error().message);
  Loaded l{std::move(r.blueprint), std::move(*g), {}};
  l.plan = plan::diff(l.graph.resources, {});
  return l;
}

/// Writes `files` (relative path -> Lua text) into `dir`/policies and
/// evaluates them against `yaml`.
inline policy::Evaluation run_policies(const TempDir& dir, const std::map<std::string, std::string>& files,
                                       const std::string& yaml = kSmallBlueprint,
                                       const policy::Options& options = {}) {
  for (const auto& [path, text] : files) dir.write("policies/" + path, text);
  Loaded l = load(yaml);
  policy::Input in = l.input();
  return policy::evaluate({dir.path() + "/policies"}, in, options);
}

/// A policy file declaring `id` whose check body is `body` (line 3 of its file).
inline std::string policy_with(const std::string& id, const std::string& body,
                               const std::string& enforcement = "mandatory") {
  return "policy {\n  id = \"" + id + "\", title = \"t\", severity = \"low\", enforcement = \"" + enforcement +
         "\",\n  check = function(ctx) " + body + " end,\n}\n";
}

/// The one verdict of policy `id` (the test fails when there is none or more).
inline const policy::Verdict& only_verdict(const policy::Evaluation& e, const std::string& id) {
  const policy::Verdict* found = nullptr;
  for (const auto& v : e.verdicts)
    if (v.policy == id) {
      REQUIRE(found == nullptr);
      found = &v;
    }
  INFO("no verdict of " << id);
  REQUIRE(found != nullptr);
  return *found;
}

/// "ID outcome address" per verdict, one per line, for exact comparisons.
inline std::string summarize(const policy::Evaluation& eval) {
  std::string out;
  for (const auto& v : eval.verdicts) {
    if (!out.empty()) out += "\n";
    out += v.policy + " " + policy::to_string(v.outcome) + (v.address.empty() ? "" : " " + v.address);
  }
  return out;
}

}  // namespace plinth::test
