// plinth plan / apply / destroy end to end against kube-apiserver-emulator:
// the example cluster's access section (blueprints/examples/cluster.yaml with
// a clusters: entry) from a temporary directory, checked with the real
// kubectl; drift, field ownership, policies before any request, credentials.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/emulator_process.h"
#include "tests/support/run.h"

using nlohmann::json;
using namespace plinth::test;

namespace {

const char *kKubectl = "/usr/bin/kubectl";

/// The Kubernetes resources of the example with `clusters:` (its MIG
/// inference pool runs in the cluster).
const std::vector<std::string> kTargets = {"kubernetes.cluster.lab",        "kubernetes.namespace.serving",
                                           "kubernetes.namespace.team-nlp", "kubernetes.namespace.team-vision",
                                           "kubernetes.role.ml-engineer",   "kubernetes.role.serving-operator"};

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

std::string replaced(std::string text, const std::string &from, const std::string &to) {
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

/// The emulator, kubectl against it, and a blueprint directory outside the
/// source tree holding the example cluster blueprint.
class Fixture {
 public:
  explicit Fixture(std::string context = "admin", bool gpu_operator = true, std::vector<std::string> flags = {})
      : kube_(KUBE_EMULATOR_BINARY, with(flags, {"--token", "s3cret=alice", "--node", "infer-mig-0", "--node",
                                                 "infer-mig-1"})),
        context_(std::move(context)) {
    kubeconfig_ = kube_.dir() + "/tls/kubeconfig";
    // The GPU Operator is installed: its namespace exists.
    if (gpu_operator) ok({"create", "namespace", "gpu-operator"});
    set_blueprint(slurp(source_dir() + "/blueprints/examples/cluster.yaml"));
  }
  /// The blueprint's cluster uses kubeconfig context `context` from now on.
  void use_context(const std::string &context) {
    context_ = context;
    set_blueprint(slurp(source_dir() + "/blueprints/examples/cluster.yaml"));
  }

  void set_blueprint(const std::string &example) {
    bp_.write("cluster.yaml", example + "clusters:\n  - {name: lab, context: " + context_ + ", pools: [infer-mig]}\n");
  }
  std::string blueprint() const { return slurp(bp_.path() + "/cluster.yaml"); }

  RunResult plinth(std::vector<std::string> args, bool targeted = true) const {
    args.push_back(bp_.path());
    if (targeted)
      for (const auto &t : kTargets) args.insert(args.end(), {"-target", t});
    return run_plinth(args, bp_.path(), {{"KUBECONFIG", kubeconfig_}, {"HOME", home_.path()}});
  }
  RunResult apply(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {"apply", "--auto-approve", "--allow-dirty"};
    args.insert(args.end(), extra.begin(), extra.end());
    return plinth(args);
  }
  RunResult plan() const { return plinth({"plan", "--detailed-exitcode"}); }

  RunResult kubectl(std::vector<std::string> args, const std::string &input = "") const {
    args.insert(args.begin(), kKubectl);
    return run_program(args, "", {{"KUBECONFIG", kubeconfig_}, {"HOME", home_.path()}}, input);
  }
  std::string ok(std::vector<std::string> args, const std::string &input = "") const {
    RunResult r = kubectl(args, input);
    INFO("kubectl stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  }
  json get(std::vector<std::string> args) const {
    args.insert(args.end(), {"-o", "json"});
    return json::parse(ok(args));
  }
  std::string quota(const std::string &ns) const {
    return get({"-n", ns, "get", "resourcequota", "gpu-quota"})["spec"]["hard"]["requests.nvidia.com/gpu"];
  }
  /// The request log's lines so far.
  size_t mark() const { return requests_since(0).size(); }
  /// The requests logged after the first `from` (what plinth sent between two
  /// marks).
  std::vector<json> requests_since(size_t from) const {
    std::vector<json> out;
    std::istringstream in(kube_.log());
    size_t i = 0;
    for (std::string line; std::getline(in, line); ++i)
      if (i >= from) out.push_back(json::parse(line));
    return out;
  }
  const std::string &kubeconfig() const { return kubeconfig_; }
  std::string dir() const { return bp_.path(); }
  /// The name of the cluster the admin context uses.
  std::string cluster() const {
    return ok({"config", "view", "-o", "jsonpath={.contexts[?(@.name==\"admin\")].context.cluster}"});
  }

 private:
  static std::vector<std::string> with(std::vector<std::string> extra, std::vector<std::string> base) {
    base.insert(base.end(), extra.begin(), extra.end());
    return base;
  }
  EmulatorProcess kube_;
  std::string context_;
  std::string kubeconfig_;
  TempDir bp_, home_;
};

void require_ok(const RunResult &r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
}

}  // namespace

TEST_CASE(
    "apply of the example's access section: kubectl sees namespaces, quotas, "
    "accounts, roles, bindings, ClusterPolicy, and re-plan is clean") {
  Fixture f;
  RunResult plan = f.plan();
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out, "  + kubernetes.namespace.team-vision (create)\n"));
  CHECK_FALSE(contains(plan.out, "recorded only"));

  const size_t before = f.mark();
  RunResult applied = f.apply();
  require_ok(applied);
  CHECK(contains(applied.out, "apply: kubernetes.namespace.team-vision: created ("));
  CHECK(contains(applied.out, "apply: kubernetes.cluster.lab: created ("));
  // Every write was a server-side apply by fieldManager plinth, without force;
  // the one read was the list of nodes to label.
  auto sent = f.requests_since(before);
  REQUIRE(sent.size() == 22);
  // The one GET: apply's check, before any change, that the GPU Operator's namespace exists.
  auto check = std::find_if(sent.begin(), sent.end(), [](const json &r) { return r["verb"] == "get"; });
  REQUIRE(check != sent.end());
  CHECK((*check)["path"] == "/api/v1/namespaces/gpu-operator");
  sent.erase(check);
  auto list = std::find_if(sent.begin(), sent.end(), [](const json &r) { return r["verb"] == "list"; });
  REQUIRE(list != sent.end());
  CHECK((*list)["path"] == "/api/v1/nodes");
  sent.erase(list);
  // 3 namespaces, 3 quotas, 4 accounts, 3 roles + 3 bindings, config map,
  // policy, the 2 nodes that joined
  for (const auto &r : sent) {
    INFO(r.dump());
    CHECK(r["method"] == "PATCH");
    CHECK(r["verb"] == "apply");
    CHECK(contains(r["query"], "fieldManager=plinth"));
    CHECK(contains(r["query"], "force=false"));
  }

  // Namespaces with Plinth's label and address.
  json ns = f.get({"get", "namespace", "team-vision"});
  CHECK(ns["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "plinth");
  CHECK(ns["metadata"]["annotations"]["plinth.dev/address"] == "kubernetes.namespace.team-vision");
  CHECK(f.ok({"get", "ns", "-l", "app.kubernetes.io/managed-by=plinth", "-o", "name"}) ==
        "namespace/serving\nnamespace/team-nlp\nnamespace/team-vision\n");
  // GPU quotas.
  CHECK(f.quota("team-vision") == "128");
  CHECK(f.quota("team-nlp") == "192");
  CHECK(f.quota("serving") == "64");
  // Service accounts.
  CHECK(f.ok({"-n", "team-nlp", "get", "sa", "-l", "app.kubernetes.io/managed-by=plinth", "-o", "name"}) ==
        "serviceaccount/nlp-eval\nserviceaccount/nlp-train\n");
  CHECK(f.ok({"-n", "serving", "get", "sa", "triton", "-o", "name"}) == "serviceaccount/triton\n");
  // Roles with rules per API group, and their bindings.
  for (const char *n : {"team-vision", "team-nlp"}) {
    json role = f.get({"-n", n, "get", "role", "ml-engineer"});
    CHECK(role["rules"] == json::parse(R"([
      {"apiGroups":["batch"],"resources":["jobs"],"verbs":["get","list","watch","create","delete"]},
      {"apiGroups":[""],"resources":["pods","pods/log"],"verbs":["get","list","watch","create","delete"]}])"));
    json binding = f.get({"-n", n, "get", "rolebinding", "ml-engineer"});
    CHECK(binding["roleRef"]["name"] == "ml-engineer");
    CHECK(binding["subjects"][0]["kind"] == "Group");
    CHECK(binding["subjects"][0]["name"] == "vision");
    CHECK(binding["subjects"][1]["name"] == "nlp");
  }
  json sb = f.get({"-n", "serving", "get", "rolebinding", "serving-operator"});
  CHECK(sb["subjects"] == json::parse(R"([{"kind":"ServiceAccount","name":"triton","namespace":"serving"}])"));
  CHECK(f.kubectl({"-n", "serving", "get", "role", "ml-engineer"}).exit_code != 0);
  // The GPU Operator's ClusterPolicy: the infer stack's driver, MIG strategy,
  // DCGM exporter.
  CHECK(contains(f.ok({"get", "clusterpolicy"}), "cluster-policy"));
  json cp = f.get({"get", "clusterpolicy", "cluster-policy"});
  CHECK(cp["spec"]["driver"]["version"] == "595.58.03");
  CHECK(cp["spec"]["mig"]["strategy"] == "single");
  CHECK(cp["spec"]["dcgmExporter"]["enabled"] == true);
  CHECK(cp["spec"]["migManager"]["config"]["name"] == "plinth-mig-parted-config");
  // The pool's nodes that joined carry its labels; the MIG manager picks the
  // pool's layout.
  CHECK(f.ok({"get", "nodes", "-l", "plinth.dev/pool=infer-mig,plinth.dev/role=inference", "-o", "name"}) ==
        "node/infer-mig-0\nnode/infer-mig-1\n");
  json node = f.get({"get", "node", "infer-mig-1"});
  CHECK(node["metadata"]["labels"]["nvidia.com/mig.config"] == "plinth-infer-mig");
  CHECK(node["metadata"]["labels"]["plinth.dev/gpu"] == "H100-80GB");
  std::string mig =
      f.get({"-n", "gpu-operator", "get", "configmap", "plinth-mig-parted-config"})["data"]["config.yaml"];
  CHECK(contains(mig,
                 "  plinth-infer-mig:\n    - devices: all\n      "
                 "mig-enabled: true\n      mig-devices:\n"
                 "        \"3g.40gb\": 2\n"));

  // Re-plan: refresh reads the cluster by label selector and finds nothing to
  // do.
  RunResult again = f.plan();
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(contains(again.out, "No changes."));
}

TEST_CASE(
    "refresh pages through each kind with limit and continue: requests "
    "grow with pages, not resources") {
  Fixture f;
  require_ok(f.apply());
  const size_t before = f.mark();
  RunResult plan = f.plinth({"plan", "--detailed-exitcode", "--provider-option", "kubernetes.page_size=2"});
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 0);
  std::map<std::string, int> pages;
  for (const auto &r : f.requests_since(before)) {
    INFO(r.dump());
    REQUIRE(r["verb"] == "list");
    if (r["resource"] != "nodes")  // every node: one that lost Plinth's labels is drift
      CHECK(contains(r["query"], "labelSelector=app.kubernetes.io%2Fmanaged-by%3Dplinth"));
    CHECK(contains(r["query"], "limit=2"));
    ++pages[r["resource"].get<std::string>()];
  }
  std::string seen;
  for (const auto &[k, n] : pages) seen += k + "=" + std::to_string(n) + " ";
  INFO(seen);
  // One list per kind, a page per 2 labelled objects: 3 namespaces, 3 quotas,
  // 4 accounts, 3 roles, 3 bindings, no cluster roles, 1 policy, 1 config map.
  const std::string rbac = ".rbac.authorization.k8s.io";
  CHECK(pages == std::map<std::string, int>{{"namespaces", 2},
                                            {"resourcequotas", 2},
                                            {"serviceaccounts", 2},
                                            {"roles" + rbac, 2},
                                            {"rolebindings" + rbac, 2},
                                            {"clusterroles" + rbac, 1},
                                            {"clusterrolebindings" + rbac, 1},
                                            {"clusterpolicies.nvidia.com", 1},
                                            {"configmaps", 1},
                                            {"nodes", 1}});
}

TEST_CASE(
    "a quota edited with kubectl shows as drift in the plan and a "
    "re-apply restores it") {
  Fixture f;
  require_ok(f.apply());
  f.ok({"-n", "team-vision", "patch", "resourcequota", "gpu-quota", "--type", "merge", "-p",
        R"({"spec":{"hard":{"requests.nvidia.com/gpu":"999"}}})"});
  RunResult plan = f.plan();
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 2);
  CHECK(contains(plan.out,
                 "  ~ kubernetes.namespace.team-vision (update in "
                 "place)\n      gpu_quota: 999 -> 128\n"));
  CHECK(contains(plan.out, "Plan: 0 to create, 1 to update, 0 to replace, 0 to destroy."));
  RunResult applied = f.apply();
  require_ok(applied);
  CHECK(contains(applied.out, "apply: kubernetes.namespace.team-vision: updated ("));
  CHECK(f.quota("team-vision") == "128");
  CHECK(f.plan().exit_code == 0);

  // A node label removed by hand is drift of the cluster, restored the same
  // way.
  f.ok({"label", "node", "infer-mig-1", "plinth.dev/gpu-"});
  RunResult node_plan = f.plan();
  INFO(node_plan.out << node_plan.err);
  CHECK(node_plan.exit_code == 2);
  CHECK(contains(node_plan.out,
                 "  ~ kubernetes.cluster.lab (update in place)\n      "
                 "nodes.infer-mig.gpu: \"\" -> \"H100-80GB\"\n"));
  require_ok(f.apply());
  CHECK(f.get({"get", "node", "infer-mig-1"})["metadata"]["labels"]["plinth.dev/gpu"] == "H100-80GB");
  CHECK(f.plan().exit_code == 0);
}

TEST_CASE(
    "a field another manager applies is not overwritten without "
    "--force-conflicts") {
  Fixture f;
  require_ok(f.apply());
  f.ok({"apply", "--server-side", "--force-conflicts", "--field-manager", "other", "-f", "-"},
       "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: gpu-quota, "
       "namespace: team-nlp}\n"
       "spec: {hard: {requests.nvidia.com/gpu: \"500\"}}\n");
  CHECK(f.plan().exit_code == 2);
  RunResult refused = f.apply();
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.out, "apply: kubernetes.namespace.team-nlp: update failed"));
  CHECK(contains(refused.out,
                 "ResourceQuota team-nlp/gpu-quota: fields are "
                 "owned by another field manager (\"other\")"));
  CHECK(contains(refused.out, "conflict with \"other\": .spec.hard.requests.nvidia.com/gpu"));
  CHECK(contains(refused.out, "re-run plinth apply with --force-conflicts"));
  CHECK(f.quota("team-nlp") == "500");

  const size_t before = f.mark();
  RunResult forced = f.apply({"--force-conflicts"});
  require_ok(forced);
  CHECK(f.quota("team-nlp") == "192");
  int forced_applies = 0;
  for (const auto &r : f.requests_since(before))
    if (r["verb"] == "apply") forced_applies += contains(r["query"], "force=true") ? 1 : 1000;
  CHECK(forced_applies == 4);  // team-nlp's namespace, quota and two accounts, all with force=true
  CHECK(f.plan().exit_code == 0);
}

TEST_CASE(
    "a wildcard-verb role or a namespace without a GPU quota is blocked "
    "by the policies before any request") {
  Fixture f;
  const std::string example = slurp(source_dir() + "/blueprints/examples/cluster.yaml");
  const size_t before = f.mark();
  SECTION("wildcard verbs") {
    f.set_blueprint(replaced(example, "verbs: [get, list, update]", "verbs: [\"*\"]"));
    RunResult r = f.apply();
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err,
                   "error[SOC2-RBAC-001]: role 'serving-operator' "
                   "grants every verb ('*')"));
  }
  SECTION("no GPU quota") {
    f.set_blueprint(replaced(example, "{name: serving, quota: {gpus: 64}, service_accounts: [triton]}",
                             "{name: serving, service_accounts: [triton]}"));
    RunResult r = f.apply();
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err,
                   "error[ML-QUOTA-003]: namespace 'serving' would be "
                   "created on cluster 'lab' without a GPU quota"));
  }
  // The request log proves plinth sent nothing.
  for (const auto &r : f.requests_since(before)) FAIL("plinth sent " << r.dump());
  CHECK(f.ok({"get", "ns", "-l", "app.kubernetes.io/managed-by=plinth", "-o", "name"}).empty());
}

TEST_CASE(
    "wrong credentials give the API server's message, naming the context "
    "and user") {
  Fixture f("alice-token");
  const std::string good = slurp(f.kubeconfig());
  const std::string wrong = replaced(good, "token: \"s3cret\"", "token: \"wrong\"");
  const std::string said = ": 401 Unauthorized (kubeconfig " + f.kubeconfig() +
                           ", context alice-token, user alice-token; check "
                           "that user's credentials and permissions)";
  // Creating: the check of what apply will need is refused, before any change.
  std::ofstream(f.kubeconfig(), std::ios::trunc) << wrong;
  const size_t before = f.mark();
  RunResult create = f.apply();
  INFO(create.out << create.err);
  CHECK(create.exit_code == 1);
  CHECK(contains(create.err, "error[K8S001]: kubernetes.cluster.lab: the API server of cluster 'alice-token' refuses "
                             "the kubeconfig user: GET "));
  CHECK(contains(create.err, said));
  for (const auto &r : f.requests_since(before)) CHECK(r["method"] == "GET");
  // The right bearer token works (the other tests' admin context uses a client
  // certificate: mTLS).
  std::ofstream(f.kubeconfig(), std::ios::trunc) << good;
  require_ok(f.plinth({"apply", "--auto-approve", "--allow-dirty", "-target", "kubernetes.namespace.serving"}, false));
  // Refreshing what is in state: the list is refused first.
  std::ofstream(f.kubeconfig(), std::ios::trunc) << wrong;
  RunResult refresh = f.apply();
  INFO(refresh.out << refresh.err);
  CHECK(refresh.exit_code == 1);
  CHECK(contains(refresh.err, "plinth apply: refresh kubernetes.namespace.serving: GET "));
  CHECK(contains(refresh.err, said));
}

TEST_CASE(
    "removing service accounts deletes Plinth's own only, and without a "
    "cluster the access section is recorded only") {
  Fixture f;
  require_ok(f.apply());
  // nlp-train loses Plinth's label: no longer Plinth's to delete.
  f.ok({"-n", "team-nlp", "label", "serviceaccount", "nlp-train", "app.kubernetes.io/managed-by-"});
  const std::string example = slurp(source_dir() + "/blueprints/examples/cluster.yaml");
  f.set_blueprint(replaced(example, "service_accounts: [nlp-train, nlp-eval]", "service_accounts: []"));
  RunResult applied = f.apply();
  require_ok(applied);
  CHECK(f.ok({"-n", "team-nlp", "get", "sa", "-o", "name"}) == "serviceaccount/default\nserviceaccount/nlp-train\n");

  // The same access section without clusters: nothing reaches a cluster, and
  // the output says so.
  TempDir plain;
  plain.write("cluster.yaml", example);
  RunResult r = run_plinth({"apply", "--auto-approve", "--allow-dirty", plain.path(), "-target",
                            "access.namespace.team-vision", "-target", "access.role.ml-engineer"},
                           plain.path(), {{"HOME", plain.path()}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out,
                 "  + access.namespace.team-vision (create; recorded "
                 "only: no cluster configured)\n"));
  CHECK(contains(r.out,
                 "apply: access.namespace.team-vision: recorded in "
                 "state (recorded only: no cluster configured) ("));
  CHECK_FALSE(contains(r.out, ": created ("));
}

TEST_CASE(
    "clusters: entries are checked at file:line:column: unknown pools, "
    "pools of two drivers, a second cluster") {
  TempDir dir;
  const std::string example = slurp(source_dir() + "/blueprints/examples/cluster.yaml");
  const size_t lines = static_cast<size_t>(std::count(example.begin(), example.end(), '\n'));
  dir.write("cluster.yaml", example +
                                "clusters:\n"
                                "  - {name: lab, context: admin, pools: [infer-mig, nope]}\n"
                                "  - {name: lab2, context: other}\n"
                                "  - name: all\n");
  RunResult r = run_plinth({"validate", dir.path() + "/cluster.yaml"}, dir.path(), {{"HOME", dir.path()}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  const std::string file = dir.path() + "/cluster.yaml:";
  const std::string l1 = std::to_string(lines + 2), l2 = std::to_string(lines + 3);
  CHECK(contains(r.out + r.err, file + l1 +
                                    ":52: error[BP007]: cluster 'lab' "
                                    "references unknown node pool 'nope'"));
  CHECK(contains(r.out + r.err, file + l2 + ":5: error[BP005]: cluster 'lab2' is a second cluster"));

  // Every node pool by default: train-a (580.126.20) and infer-mig (595.58.03)
  // pin different drivers.
  dir.write("cluster.yaml", example + "clusters:\n  - {name: all}\n");
  RunResult two = run_plinth({"validate", dir.path() + "/cluster.yaml"}, dir.path(), {{"HOME", dir.path()}});
  INFO(two.out << two.err);
  CHECK(two.exit_code == 1);
  CHECK(contains(two.out + two.err,
                 "error[BP005]: cluster 'all' runs node pools that pin different drivers: "
                 "'train-a' "
                 "580.126.20 (stack train) and 'infer-mig' 595.58.03 (stack infer)"));
}

TEST_CASE("plan fails, with a hint, when the GPU Operator's namespace is missing or the kubeconfig user runs an exec "
          "plugin, before apply changes anything") {
  SECTION("no gpu-operator namespace") {
    Fixture f("admin", /*gpu_operator=*/false);
    const size_t before = f.mark();
    RunResult plan = f.plan();
    INFO(plan.out << plan.err);
    CHECK(plan.exit_code == 1);
    CHECK(contains(plan.err, "error[K8S002]: kubernetes.cluster.lab: namespace 'gpu-operator' does not exist in "
                             "cluster 'admin', and apply writes the GPU Operator's mig-parted config there"));
    CHECK(contains(plan.err, "hint: install the NVIDIA GPU Operator first (helm install gpu-operator "
                             "nvidia/gpu-operator -n gpu-operator --create-namespace)"));
    CHECK(contains(plan.err, "problem(s) above would stop the apply half-way; nothing was changed"));
    for (const auto &r : f.requests_since(before)) CHECK(r["method"] == "GET");  // a plan only reads
    RunResult apply = f.apply();
    CHECK(apply.exit_code == 1);
    CHECK(contains(apply.err, "error[K8S002]"));
    CHECK(f.ok({"get", "ns", "-l", "app.kubernetes.io/managed-by=plinth", "-o", "name"}).empty());
  }
  SECTION("an exec user whose plugin is not installed, or needs a terminal") {
    Fixture f;
    const std::string cluster = f.cluster();
    REQUIRE_FALSE(cluster.empty());
    f.ok({"config", "set-credentials", "eks-user", "--exec-command=plinth-test-no-such-plugin",
          "--exec-api-version=client.authentication.k8s.io/v1beta1", "--exec-arg=eks", "--exec-arg=get-token"});
    f.ok({"config", "set-context", "eks", "--cluster=" + cluster, "--user=eks-user"});
    f.use_context("eks");
    const size_t before = f.mark();
    RunResult plan = f.plan();
    INFO(plan.out << plan.err);
    CHECK(plan.exit_code == 1);
    CHECK(contains(plan.err, "error[K8S001]: kubernetes.cluster.lab: apply cannot use the kubeconfig: "));
    CHECK(contains(plan.err, "user 'eks-user': exec plugin 'plinth-test-no-such-plugin': cannot start "
                             "'plinth-test-no-such-plugin': not found"));
    CHECK(f.requests_since(before).empty());  // nothing reached the cluster

    f.ok({"config", "set-credentials", "eks-user", "--exec-interactive-mode=Always",
          "--exec-api-version=client.authentication.k8s.io/v1"});
    RunResult interactive = f.plan();
    CHECK(interactive.exit_code == 1);
    CHECK(contains(interactive.err, "has interactiveMode Always: it needs a terminal"));
  }
}

TEST_CASE("an exec plugin's token: run without a terminal, run again on 401 and before it expires") {
  // The plugin prints the tokens of tokens.txt in turn (the last one again once they run out), each living
  // EXPIRES_IN seconds, and records what kubectl's protocol tells it.
  TempDir plugin;
  plugin.write("get-token.sh", R"sh(#!/bin/sh
set -e
dir=$(dirname "$0")
n=$(($(cat "$dir/runs" 2>/dev/null || echo 0) + 1))
echo "$n" > "$dir/runs"
printf '%s\n' "$KUBERNETES_EXEC_INFO" > "$dir/exec-info.json"
token=$(sed -n "${n}p" "$dir/tokens.txt"); [ -n "$token" ] || token=$(tail -n 1 "$dir/tokens.txt")
expires=$(date -u -d "+${EXPIRES_IN} seconds" +%Y-%m-%dT%H:%M:%SZ)
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}\n' "$token" "$expires"
)sh");
  REQUIRE(run_program({"/bin/chmod", "+x", plugin.path() + "/get-token.sh"}).exit_code == 0);
  auto runs = [&] { return std::stoi(slurp(plugin.path() + "/runs")); };
  auto use_plugin = [&](Fixture& f, const std::string& expires_in) {
    f.ok({"config", "set-credentials", "ci-exec", "--exec-command=" + plugin.path() + "/get-token.sh",
          "--exec-api-version=client.authentication.k8s.io/v1", "--exec-interactive-mode=Never",
          "--exec-env=EXPIRES_IN=" + expires_in});
    f.ok({"config", "set-context", "ci", "--cluster=" + f.cluster(), "--user=ci-exec"});
    f.use_context("ci");
  };

  SECTION("a token the server refuses is asked for again, once") {
    Fixture f("admin", true, {"--token", "exec-token-1=ci-bot"});
    use_plugin(f, "3600");
    // After kubectl's own calls (the dispatcher asks the server's /version, running the plugin too).
    plugin.write("tokens.txt", "revoked-token\nexec-token-1\n");
    plugin.write("runs", "0\n");
    const size_t before = f.mark();
    require_ok(f.apply());
    CHECK(runs() == 2);
    auto requests = f.requests_since(before);
    REQUIRE_FALSE(requests.empty());
    CHECK(requests.front()["status"] == 401);
    for (size_t i = 1; i < requests.size(); ++i) CHECK(requests[i]["user"] == "ci-bot");
    json info = json::parse(slurp(plugin.path() + "/exec-info.json"));
    CHECK(info["apiVersion"] == "client.authentication.k8s.io/v1");
    CHECK(info["kind"] == "ExecCredential");
    CHECK(info["spec"]["interactive"] == false);
    CHECK(f.get({"get", "ns", "team-nlp"})["metadata"]["name"] == "team-nlp");
  }
  SECTION("a token that lives 2 s is replaced before it expires, through a slow apply") {
    // Each answer takes 400 ms, so the apply outlasts the 1.5 s before the
    // token's refresh (a quarter of its life): at 150 ms a fast apply could
    // finish first (it did under CI's sanitizers once saves got cheaper).
    Fixture f("admin", true, {"--token", "exec-token-1=ci-bot", "--token", "exec-token-2=ci-bot-2", "--latency-ms",
                              "400"});
    use_plugin(f, "2");
    plugin.write("tokens.txt", "exec-token-1\nexec-token-2\n");
    plugin.write("runs", "0\n");
    const size_t before = f.mark();
    require_ok(f.apply());
    CHECK(runs() >= 2);
    for (const auto& r : f.requests_since(before)) CHECK(r["status"] != 401);
  }
}

TEST_CASE("an exec plugin's client certificate, with the cluster's info it asked for") {
  // ci-cert's certificate and key, issued by the emulator, handed out by a plugin as EKS Anywhere or
  // Teleport's tsh hand out theirs; the plugin records what it was told.
  Fixture f("admin", true, {"--cert-user", "admin,system:masters", "--cert-user", "ci-cert,system:masters"});
  auto pem = [&](const std::string& field) {
    const std::string b64 =
        f.ok({"config", "view", "--raw", "-o", "jsonpath={.users[?(@.name==\"ci-cert\")].user." + field + "}"});
    REQUIRE_FALSE(b64.empty());
    return run_program({"/usr/bin/base64", "-d"}, "", {}, b64).out;
  };
  TempDir plugin;
  plugin.write("credential.json", json{{"apiVersion", "client.authentication.k8s.io/v1beta1"},
                                       {"kind", "ExecCredential"},
                                       {"status",
                                        {{"clientCertificateData", pem("client-certificate-data")},
                                         {"clientKeyData", pem("client-key-data")}}}}
                                      .dump());
  plugin.write("get-cert.sh", R"sh(#!/bin/sh
set -e
dir=$(dirname "$0")
echo run >> "$dir/runs"
printf '%s\n' "$KUBERNETES_EXEC_INFO" > "$dir/exec-info.json"
cat "$dir/credential.json"
)sh");
  REQUIRE(run_program({"/bin/chmod", "+x", plugin.path() + "/get-cert.sh"}).exit_code == 0);
  f.ok({"config", "set-credentials", "cert-exec", "--exec-command=" + plugin.path() + "/get-cert.sh",
        "--exec-api-version=client.authentication.k8s.io/v1beta1"});
  {
    // kubectl has no flag for provideClusterInfo and writes it false: set it in the file.
    std::string cfg = slurp(f.kubeconfig());
    const size_t at = cfg.find("provideClusterInfo: false", cfg.find(plugin.path() + "/get-cert.sh"));
    REQUIRE(at != std::string::npos);
    cfg.replace(at, std::string("provideClusterInfo: false").size(), "provideClusterInfo: true");
    std::ofstream(f.kubeconfig(), std::ios::trunc) << cfg;
  }
  f.ok({"config", "set-context", "cert", "--cluster=" + f.cluster(), "--user=cert-exec"});
  f.use_context("cert");
  plugin.write("runs", "");
  const size_t before = f.mark();
  require_ok(f.apply());
  CHECK(slurp(plugin.path() + "/runs") == "run\n");  // once for the run: a certificate without an expiry is kept
  auto requests = f.requests_since(before);
  REQUIRE_FALSE(requests.empty());
  for (const auto& r : requests) CHECK(r["user"] == "ci-cert");
  json info = json::parse(slurp(plugin.path() + "/exec-info.json"));
  CHECK(info["apiVersion"] == "client.authentication.k8s.io/v1beta1");
  CHECK(info["spec"]["interactive"] == false);
  CHECK(info["spec"]["cluster"]["server"].get<std::string>().rfind("https://127.0.0.1:", 0) == 0);
  const std::string ca = run_program({"/usr/bin/base64", "-d"}, "", {},
                                     info["spec"]["cluster"]["certificate-authority-data"].get<std::string>())
                             .out;
  CHECK(contains(ca, "-----BEGIN CERTIFICATE-----"));
  CHECK(f.get({"get", "ns", "team-nlp"})["metadata"]["name"] == "team-nlp");
}

TEST_CASE("a role of scope cluster is a ClusterRole and ClusterRoleBinding") {
  Fixture f;
  const std::string example = slurp(source_dir() + "/blueprints/examples/cluster.yaml");
  f.set_blueprint(replaced(example, "  audit_logging:",
                           "    - {name: gpu-viewer, subjects: [\"group:ops\"], scope: "
                           "cluster, verbs: [get, list],\n"
                           "       resources: [nodes, clusterpolicies.nvidia.com]}\n  "
                           "audit_logging:"));
  RunResult r = f.plinth({"apply", "--auto-approve", "--allow-dirty", "-target", "kubernetes.role.gpu-viewer"}, false);
  require_ok(r);
  json role = f.get({"get", "clusterrole", "gpu-viewer"});
  CHECK(role["rules"] == json::parse(
                             R"([{"apiGroups":[""],"resources":["nodes"],"verbs":["get","list"]},
                                        {"apiGroups":["nvidia.com"],"resources":["clusterpolicies"],"verbs":["get","list"]}])"));
  json binding = f.get({"get", "clusterrolebinding", "gpu-viewer"});
  CHECK(binding["roleRef"]["kind"] == "ClusterRole");
  CHECK(binding["subjects"][0]["name"] == "ops");
  CHECK(f.plinth({"plan", "--detailed-exitcode", "-target", "kubernetes.role.gpu-viewer"}, false).exit_code == 0);
  // destroy deletes what it applied.
  require_ok(f.plinth({"destroy", "--auto-approve", "-target", "kubernetes.role.gpu-viewer"}, false));
  CHECK(f.kubectl({"get", "clusterrole", "gpu-viewer"}).exit_code != 0);
  CHECK(f.kubectl({"get", "clusterrolebinding", "gpu-viewer"}).exit_code != 0);
}
