// Reprovisioning a bare-metal pool that runs in a Kubernetes cluster: each
// node is drained (cordoned, its pods evicted through the Eviction API) before
// its BMC powers it off, and uncordoned once it is back; a PodDisruptionBudget
// that forbids an eviction stops the pool's rollout. Against the Redfish and
// Kubernetes emulators together, from a blueprint directory outside the tree.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/providers/baremetal/emulator.h"
#include "tests/support/blueprints.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"
#include "tests/support/text.h"

namespace plinth::test::e2e_drain {

namespace {

using nlohmann::json;

std::vector<json> json_lines(const std::string& text, size_t from = 0) {
  std::vector<json> out;
  std::istringstream in(text);
  size_t i = 0;
  for (std::string line; std::getline(in, line); ++i)
    if (i >= from && !line.empty()) out.push_back(json::parse(line));
  return out;
}

/// Pods of ReplicaSet APP-rs labelled app=APP on `node`.
std::string pod(const std::string& name, const std::string& app, const std::string& node) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: default\n  labels: {app: " + app +
         "}\n  ownerReferences:\n  - {apiVersion: apps/v1, kind: ReplicaSet, name: " + app +
         "-rs, uid: 6f1c2a8e-0000-4000-8000-000000000001, controller: true}\nspec:\n  nodeName: " + node +
         "\n  containers: [{name: main, image: registry.k8s.io/pause:3.9}]\nstatus: {phase: Running}\n---\n";
}

}  // namespace

TEST_CASE("drain: each node of a pool in a cluster is cordoned and drained before its power-off and uncordoned "
          "after, and a PodDisruptionBudget stops the rollout",
          "[e2e][apply][rollout][drain][habits]") {
  TempDir site, home;
  const std::string power = site.path() + "/power.jsonl";
  Emulator bmcs(h100_emulator_args(2, {"--power-log", power, "--power-delay-ms", "100"}));
  EmulatorProcess kube(KUBE_EMULATOR_BINARY, {"--node", "train-a-0", "--node", "train-a-1"});
  const std::string kubeconfig = kube.dir() + "/tls/kubeconfig";
  const std::map<std::string, std::string> kube_env = {{"KUBECONFIG", kubeconfig}, {"HOME", home.path()}};
  auto kubectl = [&](std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), "/usr/bin/kubectl");
    RunResult r = run_program(args, "", kube_env, input);
    INFO("kubectl: " << r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  kubectl({"create", "namespace", "gpu-operator"});  // the GPU Operator is installed

  std::string text = baremetal_blueprint(
                         "drain", baremetal_pool({.count = 2,
                                                  .extra = "    rollout: {max_unavailable: 1, drain_timeout: 3s}\n",
                                                  .endpoints = bmc_endpoints(bmcs.base()),
                                                  .ca = bmcs.ca()})) +
                     "clusters:\n  - {name: lab, context: admin, pools: [train-a]}\n";
  site.write("fleet/fleet.yaml", text);
  const std::string bp = site.path() + "/fleet";
  std::map<std::string, std::string> env = kBmcEnv;
  env.insert(kube_env.begin(), kube_env.end());
  env["PLINTH_KUBERNETES_POLL_MS"] = "100";
  const std::vector<std::string> apply = {"apply", "fleet.yaml", "--auto-approve", "--allow-dirty"};
  auto created = run_plinth(apply, bp, env);
  INFO(created.out << created.err);
  REQUIRE(created.exit_code == 0);
  CHECK_FALSE(contains(created.err, "drained"));  // creates drain nothing

  // Work on both nodes; db-a is protected by a budget that allows no disruption.
  kubectl({"apply", "-f", "-"},
          pod("web-a", "web", "train-a-0") + pod("web-b", "web", "train-a-1") + pod("db-a", "db", "train-a-1") +
              "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db-pdb, namespace: default}\n"
              "spec:\n  minAvailable: 1\n  selector: {matchLabels: {app: db}}\n");
  const size_t power_mark = json_lines(slurp(power)).size();
  const size_t kube_mark = json_lines(kube.log()).size();

  // A new driver pin reprovisions both nodes, one at a time.
  text = repinned(text);
  REQUIRE_FALSE(text.empty());
  site.write("fleet/fleet.yaml", text);
  auto rolled = run_plinth(apply, bp, env);
  INFO(rolled.out << rolled.err);
  CHECK(rolled.exit_code == 1);
  CHECK(contains(rolled.out, "baremetal.node.train-a[0]: replaced ("));
  CHECK(contains(rolled.err, "drained Kubernetes node train-a-0 of cluster lab (cordoned, pods evicted) before "
                             "baremetal.node.train-a[0] goes down"));
  CHECK(contains(rolled.err, "uncordoned Kubernetes node train-a-0 of cluster lab: Ready again"));
  // train-a-1: web-b went, db-a's budget refused for the 3 s drain timeout; the node was never touched.
  CHECK(contains(rolled.out, "baremetal.node.train-a[1]: draining Kubernetes node train-a-1 of cluster lab failed: "
                             "1 pod(s) still on node train-a-1 after 3s (default/db-a); pod default/db-a: Cannot "
                             "evict pod as it would violate the pod's disruption budget. (The disruption budget "
                             "db-pdb needs 1 healthy pods and has 1 currently)"));
  CHECK(contains(rolled.out, "the node was not touched (uncordoned again) and its pool's rollout stops"));

  // The timelines: train-a-0 cordoned before its BMC powered it off, uncordoned after it was On again;
  // train-a-1's BMC saw no power change.
  std::string off0, on0;
  for (const auto& l : json_lines(slurp(power), power_mark)) {
    CHECK(l["bmc"] == 0);
    if (l["bmc"] == 0 && l["state"] != "On" && off0.empty()) off0 = l["time"];
    if (l["bmc"] == 0 && l["state"] == "On") on0 = l["time"];
  }
  std::vector<std::string> patches0, patches1;
  bool evicted_web_a = false;
  for (const auto& l : json_lines(kube.log(), kube_mark)) {
    if (l["method"] == "PATCH" && l["path"] == "/api/v1/nodes/train-a-0") patches0.push_back(l["time"]);
    if (l["method"] == "PATCH" && l["path"] == "/api/v1/nodes/train-a-1") patches1.push_back(l["time"]);
    evicted_web_a = evicted_web_a || (l["method"] == "POST" && l["path"] == "/api/v1/namespaces/default/pods/web-a/eviction" &&
                                      l["status"] == 201);
  }
  CHECK(evicted_web_a);
  REQUIRE(patches0.size() == 2);  // cordon, uncordon
  REQUIRE_FALSE(off0.empty());
  CHECK(patches0.front() < off0);
  CHECK(patches0.back() > on0);
  CHECK(patches1.size() == 2);  // cordoned, then uncordoned again when the drain failed
  json nodes = json::parse(kubectl({"get", "nodes", "-o", "json"}));
  for (const auto& n : nodes["items"]) CHECK_FALSE(n["spec"].contains("unschedulable"));
  CHECK(kubectl({"get", "pods", "-o", "name"}) == "pod/db-a\n");

  // With the budget gone the rollout finishes: train-a-1 is drained and reprovisioned.
  kubectl({"delete", "pdb", "db-pdb"});
  auto finished = run_plinth(apply, bp, env);
  INFO(finished.out << finished.err);
  CHECK(finished.exit_code == 0);
  CHECK(contains(finished.out, "baremetal.node.train-a[1]: replaced ("));
  CHECK(contains(finished.err, "uncordoned Kubernetes node train-a-1 of cluster lab: Ready again"));
  CHECK(kubectl({"get", "pods", "-o", "name"}).empty());
}

}  // namespace plinth::test::e2e_drain
