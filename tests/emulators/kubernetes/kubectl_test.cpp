// Drives the built kube-apiserver-emulator with the real kubectl
// (/usr/bin/kubectl) and the kubeconfig the emulator writes, as a user would.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/emulator_process.h"
#include "tests/support/run.h"

using nlohmann::json;
using plinth::test::RunResult;

namespace {

const char* kKubectl = "/usr/bin/kubectl";

/// The GPU team's access section as a provider would render it: namespace,
/// quota, service account, role and binding, and the GPU Operator's policy.
const char* kManifest = R"(apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels:
    app.kubernetes.io/managed-by: plinth
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpu-quota
  namespace: team-a
  labels:
    app.kubernetes.io/managed-by: plinth
spec:
  hard:
    requests.nvidia.com/gpu: "8"
    requests.cpu: "64"
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: trainer
  namespace: team-a
  labels:
    app.kubernetes.io/managed-by: plinth
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: gpu-user
  namespace: team-a
  labels:
    app.kubernetes.io/managed-by: plinth
rules:
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: gpu-user
  namespace: team-a
  labels:
    app.kubernetes.io/managed-by: plinth
subjects:
- kind: ServiceAccount
  name: trainer
  namespace: team-a
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: gpu-user
---
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
  labels:
    app.kubernetes.io/managed-by: plinth
spec:
  driver:
    enabled: true
    version: "550.90.07"
  mig:
    strategy: mixed
  migManager:
    config:
      name: plinth-mig-parted
  dcgmExporter:
    enabled: true
)";

const char* kOtherQuota = R"(apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpu-quota
  namespace: team-a
spec:
  hard:
    requests.nvidia.com/gpu: "2"
)";

/// A running emulator (3 nodes, a read-only and a no-access token user) and
/// a HOME of its own for kubectl's discovery cache.
class Cluster : public plinth::test::EmulatorProcess {
 public:
  explicit Cluster(std::vector<std::string> extra = {})
      : EmulatorProcess(KUBE_EMULATOR_BINARY, with_defaults(std::move(extra))) {}

  std::string kubeconfig() const { return dir() + "/tls/kubeconfig"; }

  /// Runs kubectl with the emulator's kubeconfig; `input` goes to stdin.
  RunResult kubectl(std::vector<std::string> args, const std::string& input = "") const {
    args.insert(args.begin(), kKubectl);
    return plinth::test::run_program(args, "", {{"KUBECONFIG", kubeconfig()}, {"HOME", home_.path()}}, input);
  }
  /// kubectl that must succeed; returns stdout.
  std::string ok(std::vector<std::string> args, const std::string& input = "") const {
    RunResult r = kubectl(args, input);
    INFO("kubectl " << join(args) << "\nstdout: " << r.out << "\nstderr: " << r.err << "\nemulator: " << stderr_text());
    REQUIRE(r.exit_code == 0);
    return r.out;
  }
  json json_of(std::vector<std::string> args) const {
    args.insert(args.end(), {"-o", "json", "--show-managed-fields"});
    return json::parse(ok(args));
  }
  std::vector<json> requests() const {
    std::vector<json> out;
    std::istringstream in(log());
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
    return out;
  }

 private:
  static std::vector<std::string> with_defaults(std::vector<std::string> extra) {
    std::vector<std::string> args = {"--nodes",          "3",     "--token", "alice-secret=alice",
                                     "--read-only-user", "alice", "--token", "bob-secret=bob,dev",
                                     "--no-access-user", "bob"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += x + " ";
    return s;
  }
  plinth::test::TempDir home_;
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

json managers(const json& obj) {
  json m = json::object();
  for (const auto& e : obj["metadata"]["managedFields"]) m[e["manager"].get<std::string>()] = e;
  return m;
}

}  // namespace

TEST_CASE("kubectl discovers the API and lists the seeded namespaces, nodes and the ClusterPolicy CRD") {
  Cluster k;
  REQUIRE(k.lines()[0] == "listening " + k.base() + " kubeconfig=" + k.kubeconfig());
  std::string ns = k.ok({"get", "ns"});
  auto rows = lines(ns);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].rfind("NAME", 0) == 0);
  CHECK(rows[0].find("STATUS") != std::string::npos);
  CHECK(rows[1].rfind("default ", 0) == 0);
  CHECK(rows[1].find("Active") != std::string::npos);
  CHECK(rows[4].rfind("kube-system ", 0) == 0);

  CHECK(k.ok({"get", "nodes", "-o", "name"}) == "node/node-0\nnode/node-1\nnode/node-2\n");
  std::string nodes = k.ok({"get", "nodes"});
  CHECK(nodes.find("ROLES") != std::string::npos);
  CHECK(nodes.find("Ready") != std::string::npos);
  CHECK(k.ok({"get", "crd", "-o", "name"}) ==
        "customresourcedefinition.apiextensions.k8s.io/clusterpolicies.nvidia.com\n");

  std::string resources = k.ok({"api-resources", "--api-group", "nvidia.com", "--no-headers"});
  CHECK(resources.find("clusterpolicies") != std::string::npos);
  CHECK(resources.find("nvidia.com/v1") != std::string::npos);
  CHECK(resources.find("ClusterPolicy") != std::string::npos);
  std::string core = k.ok({"api-resources", "--api-group", "", "--no-headers", "-o", "name"});
  CHECK(core == "configmaps\nnamespaces\nnodes\npods\nresourcequotas\nserviceaccounts\n");

  json node = k.json_of({"get", "node", "node-1"});
  CHECK(node["status"]["capacity"]["nvidia.com/gpu"] == "8");
  CHECK(node["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3");
  CHECK(k.ok({"version", "-o", "json"}).find("\"gitVersion\": \"v1.32.0\"") != std::string::npos);
}

TEST_CASE("kubectl create namespace and server-side apply of the access manifest") {
  Cluster k;
  CHECK(k.ok({"create", "namespace", "scratch"}) == "namespace/scratch created\n");
  json scratch = k.json_of({"get", "ns", "scratch"});
  CHECK(scratch["metadata"]["labels"]["kubernetes.io/metadata.name"] == "scratch");
  CHECK(scratch["status"]["phase"] == "Active");
  CHECK(managers(scratch).contains("kubectl-create"));
  CHECK(k.ok({"get", "sa", "-n", "scratch", "-o", "name"}) == "serviceaccount/default\n");

  std::string applied = k.ok({"apply", "--server-side", "-f", "-"}, kManifest);
  CHECK(applied ==
        "namespace/team-a serverside-applied\n"
        "resourcequota/gpu-quota serverside-applied\n"
        "serviceaccount/trainer serverside-applied\n"
        "role.rbac.authorization.k8s.io/gpu-user serverside-applied\n"
        "rolebinding.rbac.authorization.k8s.io/gpu-user serverside-applied\n"
        "clusterpolicy.nvidia.com/cluster-policy serverside-applied\n");

  json quotas = k.json_of({"get", "resourcequota", "-n", "team-a"});
  REQUIRE(quotas["items"].size() == 1);
  const json& q = quotas["items"][0];
  CHECK(q["spec"]["hard"]["requests.nvidia.com/gpu"] == "8");
  CHECK(q["status"]["hard"]["requests.nvidia.com/gpu"] == "8");
  CHECK(q["status"]["used"]["requests.nvidia.com/gpu"] == "0");
  CHECK(q["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "plinth");
  CHECK(q["metadata"]["uid"].get<std::string>().size() == 36);
  json owner = managers(q)["kubectl"];
  CHECK(owner["operation"] == "Apply");
  CHECK(owner["fieldsType"] == "FieldsV1");
  CHECK(owner["fieldsV1"]["f:spec"]["f:hard"].contains("f:requests.nvidia.com/gpu"));
  std::string quota_table = k.ok({"get", "quota", "-n", "team-a"});
  CHECK(quota_table.find("requests.cpu: 0/64, requests.nvidia.com/gpu: 0/8") != std::string::npos);

  std::string policies = k.ok({"get", "clusterpolicy"});
  REQUIRE(lines(policies).size() == 2);
  CHECK(lines(policies)[0].find("STATUS") != std::string::npos);
  CHECK(lines(policies)[1].rfind("cluster-policy ", 0) == 0);
  json policy = k.json_of({"get", "clusterpolicy", "cluster-policy"});
  CHECK(policy["apiVersion"] == "nvidia.com/v1");
  CHECK(policy["spec"]["driver"]["version"] == "550.90.07");
  CHECK(policy["spec"]["mig"]["strategy"] == "mixed");
  CHECK(policy["spec"]["migManager"]["config"]["name"] == "plinth-mig-parted");
  CHECK(policy["metadata"]["generation"] == 1);

  json binding = k.json_of({"get", "rolebinding", "gpu-user", "-n", "team-a"});
  CHECK(binding["roleRef"]["name"] == "gpu-user");
  CHECK(binding["subjects"][0]["name"] == "trainer");
  CHECK(k.json_of({"get", "role", "gpu-user", "-n", "team-a"})["rules"][0]["verbs"] ==
        json::array({"get", "list", "create"}));
  CHECK(k.ok({"get", "sa", "-n", "team-a", "-o", "name"}) == "serviceaccount/default\nserviceaccount/trainer\n");

  // Re-applying the same manifest changes nothing: no new resourceVersion.
  std::string rv = q["metadata"]["resourceVersion"];
  k.ok({"apply", "--server-side", "-f", "-"}, kManifest);
  CHECK(k.json_of({"get", "quota", "gpu-quota", "-n", "team-a"})["metadata"]["resourceVersion"] == rv);

  // A changed quota is a new generation with a new resourceVersion.
  std::string more = kManifest;
  more.replace(more.find("\"8\""), 3, "\"16\"");
  k.ok({"apply", "--server-side", "-f", "-"}, more);
  json changed = k.json_of({"get", "quota", "gpu-quota", "-n", "team-a"});
  CHECK(changed["spec"]["hard"]["requests.nvidia.com/gpu"] == "16");
  CHECK(changed["metadata"]["resourceVersion"] != rv);
  CHECK(changed["metadata"]["generation"] == 2);
}

TEST_CASE("a field owned by another manager is not overwritten without --force-conflicts") {
  Cluster k;
  k.ok({"apply", "--server-side", "-f", "-"}, kManifest);
  RunResult refused = k.kubectl({"apply", "--server-side", "--field-manager", "other", "-f", "-"}, kOtherQuota);
  CHECK(refused.exit_code == 1);
  CHECK(
      refused.err.find("Apply failed with 1 conflict: conflict with \"kubectl\": .spec.hard.requests.nvidia.com/gpu") !=
      std::string::npos);
  CHECK(refused.err.find("--force-conflicts") != std::string::npos);
  CHECK(k.requests().back()["status"] == 409);
  CHECK(k.requests().back()["verb"] == "apply");
  CHECK(k.json_of({"get", "quota", "gpu-quota", "-n", "team-a"})["spec"]["hard"]["requests.nvidia.com/gpu"] == "8");

  k.ok({"apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-f", "-"}, kOtherQuota);
  json q = k.json_of({"get", "quota", "gpu-quota", "-n", "team-a"});
  CHECK(q["spec"]["hard"]["requests.nvidia.com/gpu"] == "2");
  CHECK(q["spec"]["hard"]["requests.cpu"] == "64");
  json m = managers(q);
  CHECK(m["other"]["fieldsV1"] == json::parse(R"({"f:spec":{"f:hard":{"f:requests.nvidia.com/gpu":{}}}})"));
  CHECK_FALSE(m["kubectl"]["fieldsV1"]["f:spec"]["f:hard"].contains("f:requests.nvidia.com/gpu"));

  // Now kubectl's own manifest conflicts with "other".
  RunResult back = k.kubectl({"apply", "--server-side", "-f", "-"}, kManifest);
  CHECK(back.exit_code == 1);
  CHECK(back.err.find("conflict with \"other\": .spec.hard.requests.nvidia.com/gpu") != std::string::npos);
}

TEST_CASE("kubectl label node, then select nodes by label and by name") {
  Cluster k;
  CHECK(k.ok({"label", "node", "node-1", "gpu-pool=h100"}) == "node/node-1 labeled\n");
  CHECK(k.ok({"label", "node", "node-2", "gpu-pool=a100"}) == "node/node-2 labeled\n");
  CHECK(k.ok({"get", "nodes", "-l", "gpu-pool=h100", "-o", "name"}) == "node/node-1\n");
  CHECK(k.ok({"get", "nodes", "-l", "gpu-pool==a100", "-o", "name"}) == "node/node-2\n");
  CHECK(k.ok({"get", "nodes", "-l", "gpu-pool!=h100", "-o", "name"}) == "node/node-0\nnode/node-2\n");
  CHECK(k.ok({"get", "nodes", "-l", "gpu-pool in (h100,a100)", "-o", "name"}) == "node/node-1\nnode/node-2\n");
  CHECK(k.ok({"get", "nodes", "-l", "gpu-pool notin (h100)", "-o", "name"}) == "node/node-0\nnode/node-2\n");
  CHECK(k.ok({"get", "nodes", "-l", "gpu-pool", "-o", "name"}) == "node/node-1\nnode/node-2\n");
  CHECK(k.ok({"get", "nodes", "-l", "!gpu-pool", "-o", "name"}) == "node/node-0\n");
  CHECK(k.ok({"get", "nodes", "--field-selector", "metadata.name=node-2", "-o", "name"}) == "node/node-2\n");
  CHECK(k.ok({"get", "nodes", "-l", "gpu-pool=v100"}) == "");

  RunResult bad = k.kubectl({"get", "nodes", "-l", "gpu-pool in h100"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("unable to parse requirement") != std::string::npos);

  json node = k.json_of({"get", "node", "node-1"});
  CHECK(node["metadata"]["labels"]["gpu-pool"] == "h100");
  CHECK(managers(node)["kubectl-label"]["operation"] == "Update");
  CHECK(managers(node)["kubectl-label"]["fieldsV1"]["f:metadata"]["f:labels"].contains("f:gpu-pool"));
  auto patches = 0;
  for (const auto& r : k.requests())
    if (r["method"] == "PATCH" && r["path"] == "/api/v1/nodes/node-1") {
      ++patches;
      CHECK(r["query"].get<std::string>().find("fieldManager=kubectl-label") != std::string::npos);
    }
  CHECK(patches == 1);
}

TEST_CASE("kubectl get --chunk-size pages through continue tokens") {
  Cluster k;
  for (const char* ns : {"team-b", "team-c", "team-d"}) k.ok({"create", "namespace", ns});
  std::string all = k.ok({"get", "ns", "--chunk-size", "2", "-o", "name"});
  CHECK(all ==
        "namespace/default\nnamespace/kube-node-lease\nnamespace/kube-public\nnamespace/kube-system\n"
        "namespace/team-b\nnamespace/team-c\nnamespace/team-d\n");
  std::vector<json> lists;
  for (const auto& r : k.requests())
    if (r["verb"] == "list" && r["path"] == "/api/v1/namespaces") lists.push_back(r);
  REQUIRE(lists.size() == 4);  // 7 namespaces, 2 per page
  CHECK(lists[0]["query"] == "limit=2");
  for (size_t i = 1; i < lists.size(); ++i) {
    CHECK(lists[i]["query"].get<std::string>().find("continue=") != std::string::npos);
    CHECK(lists[i]["status"] == 200);
  }
  // The table output pages the same way, and the list's resourceVersion stays that of the first page.
  CHECK(lines(k.ok({"get", "ns", "--chunk-size", "3"})).size() == 8);
  json page = json::parse(k.ok({"get", "--raw", "/api/v1/namespaces?limit=3"}));
  CHECK(page["metadata"]["remainingItemCount"] == 4);
  std::string token = page["metadata"]["continue"];
  k.ok({"create", "namespace", "team-e"});
  json next = json::parse(k.ok({"get", "--raw", "/api/v1/namespaces?limit=3&continue=" + token}));
  CHECK(next["metadata"]["resourceVersion"] == page["metadata"]["resourceVersion"]);
  CHECK(next["items"][0]["metadata"]["name"] == "kube-system");
}

TEST_CASE("kubectl delete removes objects, a namespace with everything in it") {
  Cluster k;
  k.ok({"apply", "--server-side", "-f", "-"}, kManifest);
  CHECK(k.ok({"delete", "rolebinding", "gpu-user", "-n", "team-a"}) ==
        "rolebinding.rbac.authorization.k8s.io \"gpu-user\" deleted\n");
  CHECK(k.ok({"delete", "ns", "team-a"}) == "namespace \"team-a\" deleted\n");
  RunResult gone = k.kubectl({"get", "ns", "team-a"});
  CHECK(gone.exit_code == 1);
  CHECK(gone.err == "Error from server (NotFound): namespaces \"team-a\" not found\n");
  CHECK(k.ok({"get", "quota,sa,role", "-A", "-o", "name"}) ==
        "serviceaccount/default\nserviceaccount/default\nserviceaccount/default\nserviceaccount/default\n");
  CHECK(k.ok({"delete", "clusterpolicy", "cluster-policy"}) == "clusterpolicy.nvidia.com \"cluster-policy\" deleted\n");
  CHECK(k.kubectl({"get", "clusterpolicy"}).err == "No resources found\n");
  bool propagation = false;
  for (const auto& r : k.requests()) propagation = propagation || (r["verb"] == "delete" && r["status"] == 200);
  CHECK(propagation);
}

TEST_CASE("replace with a stale resourceVersion answers 409 Conflict") {
  Cluster k;
  k.ok({"apply", "--server-side", "-f", "-"}, kManifest);
  json q = k.json_of({"get", "quota", "gpu-quota", "-n", "team-a"});
  k.ok({"label", "quota", "gpu-quota", "-n", "team-a", "edited=by-hand"});
  q["spec"]["hard"]["requests.nvidia.com/gpu"] = "1";
  RunResult stale = k.kubectl({"replace", "-f", "-"}, q.dump());
  CHECK(stale.exit_code == 1);
  CHECK(stale.err.find("Error from server (Conflict): error when replacing \"STDIN\": Operation cannot be fulfilled on "
                       "resourcequotas \"gpu-quota\": the object has been modified; please apply your changes to the "
                       "latest version and try again") != std::string::npos);
  json fresh = k.json_of({"get", "quota", "gpu-quota", "-n", "team-a"});
  fresh["spec"]["hard"]["requests.nvidia.com/gpu"] = "1";
  CHECK(k.ok({"replace", "-f", "-"}, fresh.dump()) == "resourcequota/gpu-quota replaced\n");
  CHECK(k.json_of({"get", "quota", "gpu-quota", "-n", "team-a"})["status"]["hard"]["requests.nvidia.com/gpu"] == "1");

  RunResult typo = k.kubectl({"apply", "--server-side", "-f", "-"},
                             "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q2, namespace: team-a}\n"
                             "spec: {hardd: {cpu: '1'}}\n");
  CHECK(typo.exit_code == 1);
  CHECK(typo.err.find(".spec.hardd: field not declared in schema") != std::string::npos);
}

TEST_CASE("wrong credentials get the API server's 401, restricted users its 403") {
  Cluster k;
  RunResult wrong = k.kubectl({"--context", "alice-token", "--token", "wrong", "get", "ns"});
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.err.find("error: You must be logged in to the server (the server has asked for the client to provide "
                       "credentials)") != std::string::npos);
  bool unauthorized = false;
  for (const auto& r : k.requests()) unauthorized = unauthorized || (r["status"] == 401 && r["user"].is_null());
  CHECK(unauthorized);

  // alice may read, not write.
  CHECK(k.ok({"--context", "alice-token", "get", "ns", "default", "-o", "name"}) == "namespace/default\n");
  RunResult create = k.kubectl({"--context", "alice-token", "create", "namespace", "x"});
  CHECK(create.exit_code == 1);
  CHECK(create.err ==
        "Error from server (Forbidden): namespaces is forbidden: User \"alice\" cannot create resource "
        "\"namespaces\" in API group \"\" at the cluster scope\n");
  // bob may do nothing.
  RunResult list = k.kubectl({"--context", "bob-token", "get", "ns"});
  CHECK(list.exit_code == 1);
  CHECK(list.err ==
        "Error from server (Forbidden): namespaces is forbidden: User \"bob\" cannot list resource "
        "\"namespaces\" in API group \"\" at the cluster scope\n");
  RunResult roles = k.kubectl({"--context", "bob-token", "get", "roles", "-n", "kube-system"});
  CHECK(roles.err ==
        "Error from server (Forbidden): roles.rbac.authorization.k8s.io is forbidden: User \"bob\" cannot "
        "list resource \"roles\" in API group \"rbac.authorization.k8s.io\" in the namespace "
        "\"kube-system\"\n");

  // Who each credential is: the client certificate's CN and O, the token's user.
  json admin = json::parse(k.ok({"auth", "whoami", "-o", "json"}));
  CHECK(admin["status"]["userInfo"]["username"] == "admin");
  CHECK(admin["status"]["userInfo"]["groups"] == json::array({"system:masters", "system:authenticated"}));
  json bob = json::parse(k.ok({"--context", "bob-token", "auth", "whoami", "-o", "json"}));
  CHECK(bob["status"]["userInfo"]["username"] == "bob");
  CHECK(bob["status"]["userInfo"]["groups"] == json::array({"dev", "system:authenticated"}));
}

TEST_CASE("kubectl with an exec credential plugin: the token it prints is the one the server sees") {
  Cluster k({"--token", "exec-issued-token=ci-exec-bot"});
  plinth::test::TempDir plugin;
  // What aws eks get-token and gke-gcloud-auth-plugin print: an ExecCredential on stdout.
  plugin.write("plugin.sh", "#!/bin/sh\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$(dirname \"$0\")/info.json\"\n"
                            "echo '{\"apiVersion\": \"client.authentication.k8s.io/v1\", \"kind\": \"ExecCredential\", "
                            "\"status\": {\"token\": \"exec-issued-token\", \"expirationTimestamp\": "
                            "\"2099-01-01T00:00:00Z\"}}'\n");
  REQUIRE(plinth::test::run_program({"/bin/chmod", "+x", plugin.path() + "/plugin.sh"}).exit_code == 0);
  const std::string cluster =
      k.ok({"config", "view", "-o", "jsonpath={.contexts[?(@.name==\"admin\")].context.cluster}"});
  k.ok({"config", "set-credentials", "exec-user", "--exec-command=" + plugin.path() + "/plugin.sh",
        "--exec-api-version=client.authentication.k8s.io/v1", "--exec-interactive-mode=Never"});
  k.ok({"config", "set-context", "exec", "--cluster=" + cluster, "--user=exec-user"});
  json who = json::parse(k.ok({"--context", "exec", "auth", "whoami", "-o", "json"}));
  CHECK(who["status"]["userInfo"]["username"] == "ci-exec-bot");
  json info = json::parse(plinth::test::slurp(plugin.path() + "/info.json"));
  CHECK(info["apiVersion"] == "client.authentication.k8s.io/v1");
  CHECK(info["spec"]["interactive"] == false);
}

TEST_CASE("the kubeconfig holds the CA, one client-certificate user and one token user per flag") {
  Cluster k({"--cert-user", "ops,platform,gpu-admins"});
  YAML::Node cfg = YAML::LoadFile(k.kubeconfig());
  CHECK(cfg["kind"].as<std::string>() == "Config");
  CHECK(cfg["current-context"].as<std::string>() == "ops");
  CHECK(cfg["clusters"][0]["cluster"]["server"].as<std::string>() == k.base());
  CHECK(cfg["clusters"][0]["cluster"]["certificate-authority-data"].as<std::string>().size() > 100);
  std::vector<std::string> users;
  for (const auto& u : cfg["users"]) users.push_back(u["name"].as<std::string>());
  CHECK(users == std::vector<std::string>{"ops", "alice-token", "bob-token"});
  CHECK(cfg["users"][0]["user"]["client-certificate-data"].IsDefined());
  CHECK(cfg["users"][0]["user"]["client-key-data"].IsDefined());
  CHECK(cfg["users"][1]["user"]["token"].as<std::string>() == "alice-secret");
  CHECK(cfg["contexts"].size() == 3);
  CHECK(plinth::test::slurp(k.dir() + "/tls/client-ops.pem").rfind("-----BEGIN CERTIFICATE-----", 0) == 0);
  json who = json::parse(k.ok({"auth", "whoami", "-o", "json"}));
  CHECK(who["status"]["userInfo"]["groups"] == json::array({"platform", "gpu-admins", "system:authenticated"}));
}

TEST_CASE("faults: 429 from an empty token bucket, 500s from a seed, and lost responses") {
  SECTION("kubectl retries 429 with Retry-After, then reports the throttling") {
    Cluster k({"--rate-limit-burst", "2", "--retry-after", "0"});
    RunResult r = k.kubectl({"get", "--raw", "/api/v1/namespaces"});
    CHECK(r.exit_code == 0);  // the first two requests pass
    RunResult throttled = k.kubectl({"get", "--raw", "/api/v1/namespaces"});
    CHECK(throttled.exit_code == 1);
    CHECK(throttled.err == "Error from server (TooManyRequests): Too many requests, please try again later.\n");
    int n429 = 0;
    for (const auto& line : k.requests()) n429 += line["status"] == 429 && line["fault"] == "429";
    CHECK(n429 >= 2);  // client-go retried on Retry-After
  }
  SECTION("the same seed gives the same 500s") {
    auto statuses = [](const std::string& seed) {
      Cluster k({"--rate-500", "0.5", "--seed", seed});
      std::string seen;
      for (int i = 0; i < 12; ++i) seen += k.kubectl({"get", "--raw", "/api/v1/nodes"}).exit_code == 0 ? "o" : "x";
      return seen;
    };
    std::string a = statuses("7");
    CHECK(a == statuses("7"));
    CHECK(a.find('o') != std::string::npos);
    CHECK(a.find('x') != std::string::npos);
  }
  SECTION("a lost response: the namespace exists although kubectl saw no answer") {
    Cluster k({"--lose-response-rate", "1"});
    RunResult lost = k.kubectl({"create", "namespace", "ghost"});
    CHECK(lost.exit_code == 1);
    CHECK(k.ok({"get", "ns", "ghost", "-o", "name"}) == "namespace/ghost\n");
    bool logged = false;
    for (const auto& line : k.requests()) logged = logged || (line["fault"] == "lost" && line["status"].is_null());
    CHECK(logged);
  }
}

TEST_CASE("control endpoints dump objects and count requests, SIGTERM exits 0, bad flags exit 2") {
  Cluster k;
  k.ok({"apply", "--server-side", "-f", "-"}, kManifest);
  json dump = json::parse(k.ok({"get", "--raw", "/__emulator/objects"}));
  bool policy = false;
  for (const auto& o : dump["objects"]) policy = policy || o["kind"] == "ClusterPolicy";
  CHECK(policy);
  CHECK(std::stoi(dump["resourceVersion"].get<std::string>()) > 10);
  json counters = json::parse(k.ok({"get", "--raw", "/__emulator/counters"}));
  CHECK(counters["byVerb"]["apply"] == 6);
  CHECK(counters["byResource"]["clusterpolicies.nvidia.com"] == 1);
  CHECK(k.kubectl({"get", "--raw", "/__emulator/counters/reset"}).exit_code == 1);  // GET does not reset
  json reset = json::parse(k.ok({"create", "--raw", "/__emulator/counters/reset", "-f", "-"}, "{}"));
  CHECK(reset["total"] == 0);
  json after = json::parse(k.ok({"get", "--raw", "/__emulator/counters"}));
  CHECK_FALSE(after["byVerb"].contains("apply"));
  CHECK(after["total"] < counters["total"]);
  CHECK(k.stop() == 0);
  CHECK(k.stderr_text().find("stopped by signal 15") != std::string::npos);

  RunResult bad = plinth::test::run_program({KUBE_EMULATOR_BINARY, "--nodes", "x"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "kube-apiserver-emulator: --nodes needs a whole number from 0 to 100000, got 'x'\n");
}

TEST_CASE("a created CRD is served at once, quota usage is written through the status subresource") {
  Cluster k;
  const char* crd = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: nvidiadrivers.nvidia.com
spec:
  group: nvidia.com
  scope: Cluster
  names: {kind: NVIDIADriver, listKind: NVIDIADriverList, plural: nvidiadrivers, singular: nvidiadriver, shortNames: [nvd]}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
)";
  CHECK(k.ok({"apply", "--server-side", "-f", "-"}, crd) ==
        "customresourcedefinition.apiextensions.k8s.io/nvidiadrivers.nvidia.com serverside-applied\n");
  json established = k.json_of({"get", "crd", "nvidiadrivers.nvidia.com"});
  CHECK(established["status"]["conditions"][1]["type"] == "Established");
  CHECK(k.ok({"apply", "--server-side", "-f", "-"},
             "apiVersion: nvidia.com/v1alpha1\nkind: NVIDIADriver\nmetadata: {name: h100}\nspec: {version: "
             "550.90.07}\n") == "nvidiadriver.nvidia.com/h100 serverside-applied\n");
  CHECK(k.json_of({"get", "nvd", "h100"})["spec"]["version"] == "550.90.07");
  CHECK(lines(k.ok({"get", "nvidiadrivers"}))[0].find("AGE") != std::string::npos);
  k.ok({"delete", "crd", "nvidiadrivers.nvidia.com"});
  CHECK(k.kubectl({"get", "--raw", "/apis/nvidia.com/v1alpha1/nvidiadrivers"}).exit_code == 1);

  k.ok({"apply", "--server-side", "-f", "-"}, kManifest);
  CHECK(k.ok({"patch", "quota", "gpu-quota", "-n", "team-a", "--subresource=status", "--type=merge", "-p",
              R"({"status":{"used":{"requests.nvidia.com/gpu":"3"}}})"}) == "resourcequota/gpu-quota patched\n");
  json q = k.json_of({"get", "quota", "gpu-quota", "-n", "team-a"});
  CHECK(q["status"]["used"]["requests.nvidia.com/gpu"] == "3");
  CHECK(q["metadata"]["generation"] == 1);  // status is not spec
  CHECK(k.ok({"get", "quota", "-n", "team-a"}).find("requests.nvidia.com/gpu: 3/8") != std::string::npos);
  // A spec write keeps the usage.
  k.ok({"patch", "quota", "gpu-quota", "-n", "team-a", "--type=merge", "-p",
        R"({"spec":{"hard":{"requests.nvidia.com/gpu":"4"}}})"});
  q = k.json_of({"get", "quota", "gpu-quota", "-n", "team-a"});
  CHECK(q["status"]["used"]["requests.nvidia.com/gpu"] == "3");
  CHECK(q["status"]["hard"]["requests.nvidia.com/gpu"] == "4");
}

/// Pods `names` of ReplicaSet `rs` in namespace `ns` on node `node`, labelled app=`app`.
std::string pods_manifest(const std::string& ns, const std::string& node, const std::string& app,
                          const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names)
    out += "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + n + "\n  namespace: " + ns +
           "\n  labels: {app: " + app + "}\n  ownerReferences:\n  - {apiVersion: apps/v1, kind: ReplicaSet, name: " +
           app + "-rs, uid: 6f1c2a8e-0000-4000-8000-00000000000" + std::to_string(out.size() % 10) +
           ", controller: true}\nspec:\n  nodeName: " + node +
           "\n  containers: [{name: main, image: registry.k8s.io/pause:3.9}]\nstatus: {phase: Running}\n---\n";
  return out;
}

TEST_CASE("kubectl drain cordons a node and evicts its pods, and a PodDisruptionBudget stops it") {
  Cluster k;
  k.ok({"apply", "-f", "-"}, pods_manifest("default", "node-0", "web", {"web-a", "web-b"}) +
                                 pods_manifest("default", "node-1", "web", {"web-c"}) +
                                 pods_manifest("default", "node-1", "db", {"db-a"}));
  CHECK(k.ok({"get", "pods", "--field-selector", "spec.nodeName=node-0", "-o", "name"}) == "pod/web-a\npod/web-b\n");
  RunResult bad = k.kubectl({"get", "nodes", "--field-selector", "spec.nodeName=node-0"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("field label not supported: spec.nodeName") != std::string::npos);

  std::string drained = k.ok({"drain", "node-0", "--ignore-daemonsets", "--timeout=20s"});
  CHECK(drained.find("node/node-0 cordoned") != std::string::npos);
  CHECK(drained.find("pod/web-a evicted") != std::string::npos);
  CHECK(drained.find("node/node-0 drained") != std::string::npos);
  CHECK(k.json_of({"get", "node", "node-0"})["spec"]["unschedulable"] == true);
  CHECK(k.ok({"get", "pods", "--field-selector", "spec.nodeName=node-0", "-o", "name"}).empty());
  int evictions = 0;
  for (const auto& r : k.requests())
    if (r["method"] == "POST" && r["path"].get<std::string>().ends_with("/eviction")) ++evictions;
  CHECK(evictions == 2);

  // A budget that allows no disruption: the eviction is refused with 429, and drain times out naming it.
  k.ok({"apply", "-f", "-"}, "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db-pdb, namespace: "
                             "default}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: db}}\n");
  RunResult refused = k.kubectl({"drain", "node-1", "--ignore-daemonsets", "--timeout=3s"});
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code != 0);
  CHECK((refused.out + refused.err).find("Cannot evict pod as it would violate the pod's disruption budget") !=
        std::string::npos);
  CHECK(k.ok({"get", "pods", "--field-selector", "spec.nodeName=node-1", "-o", "name"}) == "pod/db-a\n");
  CHECK(k.ok({"uncordon", "node-0"}).find("node/node-0 uncordoned") != std::string::npos);
  CHECK_FALSE(k.json_of({"get", "node", "node-0"})["spec"].contains("unschedulable"));
}
