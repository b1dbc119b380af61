// The Kubernetes provider's pure parts: RBAC rules, the objects of a
// resource, 409 conflict causes and kubeconfig resolution.
#include "providers/kubernetes/kubernetes_provider.h"

#include <catch2/catch.hpp>

#include "tests/support/run.h"

using namespace plinth;
using namespace plinth::kubernetes;

TEST_CASE("RBAC rules: one rule per API group, and back to the blueprint's resources") {
  Json rules = rbac_rules({"get", "list"}, {"jobs", "pods", "pods/log", "deployments", "widgets.example.com/status"});
  REQUIRE(rules.size() == 4);
  CHECK(rules[0] == Json{{"apiGroups", {"batch"}}, {"resources", {"jobs"}}, {"verbs", {"get", "list"}}});
  CHECK(rules[1]["apiGroups"] == Json{""});
  CHECK(rules[1]["resources"] == Json{"pods", "pods/log"});
  CHECK(rules[2]["apiGroups"] == Json{"apps"});
  CHECK(rules[3] ==
        Json{{"apiGroups", {"example.com"}}, {"resources", {"widgets/status"}}, {"verbs", {"get", "list"}}});
  std::vector<std::string> verbs, resources;
  from_rbac_rules(rules, verbs, resources);
  CHECK(verbs == std::vector<std::string>{"get", "list"});
  CHECK(resources == std::vector<std::string>{"jobs", "pods", "pods/log", "deployments", "widgets.example.com/status"});
  CHECK(rbac_rules({"*"}, {"*"}) == Json::array({{{"apiGroups", {"*"}}, {"resources", {"*"}}, {"verbs", {"*"}}}}));
}

TEST_CASE("a namespace resource is a Namespace, a gpu-quota ResourceQuota and its ServiceAccounts, labelled") {
  Resource r;
  r.address = "kubernetes.namespace.team-a";
  r.type = "kubernetes.namespace";
  r.name = "team-a";
  r.attributes = {{"gpu_quota", 16}, {"cpu_quota", "64"}, {"service_accounts", {"trainer"}}};
  auto objs = objects_for(r);
  REQUIRE(objs.size() == 3);
  CHECK(objs[0].path() == "/api/v1/namespaces/team-a");
  CHECK(objs[1].path() == "/api/v1/namespaces/team-a/resourcequotas/gpu-quota");
  CHECK(objs[1].body["spec"]["hard"] == Json{{"requests.nvidia.com/gpu", "16"}, {"requests.cpu", "64"}});
  CHECK(objs[2].path() == "/api/v1/namespaces/team-a/serviceaccounts/trainer");
  for (const auto& o : objs) {
    CHECK(o.body["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "plinth");
    CHECK(o.body["metadata"]["annotations"]["plinth.dev/address"] == "kubernetes.namespace.team-a");
  }
  r.attributes.erase("gpu_quota");
  r.attributes.erase("cpu_quota");
  CHECK(objects_for(r).size() == 2);  // no quota at all
}

TEST_CASE("a cluster-scoped role is a ClusterRole and ClusterRoleBinding, and subjects keep their kinds") {
  Resource r;
  r.address = "kubernetes.role.auditor";
  r.type = "kubernetes.role";
  r.name = "auditor";
  r.attributes = {{"scope", "cluster"},
                  {"subjects", {"group:qa", "user:ann", "serviceaccount:ops/bot"}},
                  {"verbs", {"get"}},
                  {"resources", {"nodes"}}};
  auto objs = objects_for(r);
  REQUIRE(objs.size() == 2);
  CHECK(objs[0].path() == "/apis/rbac.authorization.k8s.io/v1/clusterroles/auditor");
  CHECK(objs[1].body["roleRef"]["kind"] == "ClusterRole");
  CHECK(objs[1].body["subjects"] ==
        Json::array({{{"kind", "Group"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", "qa"}},
                     {{"kind", "User"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", "ann"}},
                     {{"kind", "ServiceAccount"}, {"name", "bot"}, {"namespace", "ops"}}}));
}

TEST_CASE("409 causes name the managers, and an Update manager says 'using'") {
  Json status = Json::parse(R"({"kind":"Status","code":409,"reason":"Conflict","details":{"causes":[
    {"reason":"FieldManagerConflict","message":"conflict with \"kubectl-edit\" using v1","field":".spec.hard.a"},
    {"reason":"FieldManagerConflict","message":"conflict with \"helm\"","field":".spec.hard.b"},
    {"reason":"FieldManagerConflict","message":"conflict with \"helm\"","field":".spec.hard.c"}]}})");
  auto m = conflict_managers(status);
  REQUIRE(m.size() == 2);
  CHECK(m[0] == ConflictManager{"kubectl-edit", true});
  CHECK(m[1] == ConflictManager{"helm", false});
  CHECK(conflict_managers(Json::object()).empty());
}

TEST_CASE("kubeconfig: merged files, the named context, refusals that say what to do") {
  test::TempDir dir;
  const std::string a = dir.write("a.yaml", R"(apiVersion: v1
kind: Config
current-context: one
contexts: [{name: one, context: {cluster: c1, user: u1}}]
clusters: [{name: c1, cluster: {server: "https://10.0.0.1:6443/", certificate-authority-data: "UEVN"}}]
users: [{name: u1, user: {token: abc}}]
)");
  const std::string b = dir.write("b.yaml", R"(apiVersion: v1
kind: Config
current-context: two
contexts: [{name: two, context: {cluster: c2, user: u2}}, {name: one, context: {cluster: c2, user: u2}}]
clusters: [{name: c2, cluster: {server: "https://10.0.0.2:6443", insecure-skip-tls-verify: true}}]
users: [{name: u2, user: {exec: {command: aws}}}]
)");
  auto one = load_kubeconfig(a + ":" + dir.path() + "/missing.yaml:" + b, "");
  REQUIRE(one.ok());
  CHECK(one->context == "one");  // the first file's current-context and context win
  CHECK(one->server == "https://10.0.0.1:6443");
  CHECK(one->ca_pem == "PEM");
  CHECK(one->token == "abc");
  auto two = load_kubeconfig(a + ":" + b, "two");
  REQUIRE_FALSE(two.ok());
  CHECK(two.error().message.find("insecure-skip-tls-verify; plinth always verifies TLS") != std::string::npos);
  auto none = load_kubeconfig(a, "three");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message == "kubeconfig " + a + " has no context 'three' (contexts: one)");
  auto missing = load_kubeconfig(dir.path() + "/nope.yaml", "");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("no kubeconfig found at " + dir.path() + "/nope.yaml") == 0);
}

TEST_CASE("kubeconfig: an exec user is read as kubectl reads it, and what it cannot run is refused") {
  test::TempDir dir;
  auto config = [&](const std::string& user) {
    return dir.write("k.yaml", "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                               "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                               "clusters: [{name: k, cluster: {server: \"https://10.0.0.1:6443\"}}]\n"
                               "users: [{name: u, user: " + user + "}]\n");
  };
  auto eks = load_kubeconfig(config("{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: aws, "
                                    "args: [eks, get-token, --cluster-name, gpu], env: [{name: AWS_PROFILE, value: ci}], "
                                    "installHint: 'install the AWS CLI'}}"), "");
  REQUIRE(eks.ok());
  REQUIRE(eks->exec);
  CHECK(eks->exec->command == "aws");  // a bare name is looked up on PATH
  CHECK(eks->exec->args == std::vector<std::string>{"eks", "get-token", "--cluster-name", "gpu"});
  CHECK(eks->exec->env == std::vector<std::pair<std::string, std::string>>{{"AWS_PROFILE", "ci"}});
  auto relative = load_kubeconfig(config("{exec: {apiVersion: client.authentication.k8s.io/v1, command: "
                                         "./bin/get-token, interactiveMode: Never, args: null, env: null}}"), "");
  REQUIRE(relative.ok());
  CHECK(relative->exec->command == dir.path() + "/bin/get-token");  // relative to the kubeconfig, as kubectl does
  for (const auto& [user, words] : std::vector<std::pair<std::string, std::string>>{
           {"{exec: {apiVersion: client.authentication.k8s.io/v1, command: x}}", "has no interactiveMode"},
           {"{exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}}", "v1alpha1 was removed"},
           {"{exec: {apiVersion: client.authentication.k8s.io/v1, command: x, interactiveMode: Always}}",
            "needs a terminal"},
           {"{auth-provider: {name: gcp}}", "auth-provider plugin (gcp), which Kubernetes removed in 1.26"}}) {
    auto r = load_kubeconfig(config(user), "");
    INFO(user);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find(words) != std::string::npos);
  }
}
