#include "providers/kubernetes/kubernetes_provider.h"
#include "engine/core/duration.h"

#include <thread>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "engine/core/strings.h"
#include "providers/kubernetes/exec_credential.h"
#include "engine/core/wire.h"

namespace plinth::kubernetes {
namespace {

constexpr const char* kRbac = "/apis/rbac.authorization.k8s.io/v1";
constexpr const char* kRbacGroup = "rbac.authorization.k8s.io";
constexpr const char* kQuotaName = "gpu-quota";
constexpr const char* kClusterPolicyName = "cluster-policy";  // the GPU Operator chart's name
constexpr const char* kMigConfigName = "plinth-mig-parted-config";
constexpr const char* kGpuResource = "requests.nvidia.com/gpu";

ProviderSchema build_schema() {
  using T = ValueType;
  ProviderSchema s;
  s.name = "kubernetes";
  s.version = PLINTH_VERSION;
  s.description =
      "Namespaces with GPU quotas, service accounts, RBAC and the NVIDIA GPU Operator's ClusterPolicy on a "
      "Kubernetes cluster, by server-side apply.";
  s.docs = "docs/providers/kubernetes.md";
  const auto cluster =
      attr("cluster", "Name of the blueprint's cluster (clusters:) the resource is applied to.", T::String);
  const auto context = force_new(
      "context", "kubeconfig context of the cluster (\"\" = current-context); another context is another cluster.",
      T::String);
  s.resource_types = {
      {"kubernetes.cluster",
       "kubernetes",
       "The GPU Operator's ClusterPolicy `cluster-policy` (nvidia.com/v1) for a blueprint cluster, and the mig-parted "
       "config it reads (ConfigMap plinth-mig-parted-config).",
       {
           context,
           attr("pools", "Node pools whose nodes run in the cluster.", T::StringList),
           attr("driver", "spec.driver.version: the driver the pools' stacks pin.", T::String),
           attr("mig_strategy", "spec.mig.strategy: none | single | mixed, from the pools' MIG layouts.", T::String),
           attr("mig_layouts", "MIG layout per pool (profile -> instances per GPU), as mig-parted configs plinth-POOL.",
                T::Map),
           attr("dcgm_exporter", "spec.dcgmExporter.enabled: monitoring.dcgm.", T::Bool),
           attr("nodes",
                "Each pool's nodes {count, gpu, role}: the nodes named POOL-INDEX get the labels plinth.dev/pool, "
                "plinth.dev/gpu, plinth.dev/role and nvidia.com/mig.config.",
                T::Map),
       }},
      {"kubernetes.namespace",
       "kubernetes",
       "A Namespace, its ResourceQuota gpu-quota (requests.nvidia.com/gpu, requests.cpu, requests.memory) and its "
       "ServiceAccounts.",
       {
           cluster,
           context,
           attr("gpu_quota", "hard requests.nvidia.com/gpu of ResourceQuota gpu-quota; absent: no GPU quota.", T::Int),
           attr("cpu_quota", "hard requests.cpu of ResourceQuota gpu-quota, as a Kubernetes quantity.", T::String),
           attr("memory_quota", "hard requests.memory of ResourceQuota gpu-quota, as a Kubernetes quantity.",
                T::String),
           attr("service_accounts", "ServiceAccounts in the namespace.", T::StringList),
       }},
      {"kubernetes.role",
       "kubernetes",
       "A Role and RoleBinding of the same name in each namespace, or a ClusterRole and ClusterRoleBinding for "
       "scope: cluster.",
       {
           cluster,
           context,
           attr("subjects", "Bound subjects: group:x (Group), user:y (User), serviceaccount:ns/z (ServiceAccount).",
                T::StringList),
           attr("namespaces", "Namespaces holding the Role and RoleBinding.", T::StringList),
           attr("verbs", "The rules' verbs.", T::StringList),
           attr("resources", "The rules' resources; the API group is known for common kinds, else RESOURCE.GROUP.",
                T::StringList),
           force_new("scope", "cluster: a ClusterRole and ClusterRoleBinding (absent: namespace).", T::String),
       }},
  };
  s.sections = {
      {"clusters", "kubernetes.cluster", true, {}},
      {"access.namespaces", "kubernetes.namespace", false, {}},
      {"access.roles", "kubernetes.role", false, {}},
  };
  s.options = {
      {"kubeconfig",
       T::String,
       "",
       {"KUBECONFIG"},
       "kubeconfig file(s), colon-separated, merged as kubectl merges them; empty: ~/.kube/config."},
      {"context",
       T::String,
       "",
       {},
       "Context used when the blueprint's cluster names none; empty: the kubeconfig's current-context."},
      {"field_manager", T::String, "plinth", {}, "fieldManager of every server-side apply."},
      {"force_conflicts",
       T::Bool,
       "false",
       {},
       "Take over fields other managers own (force=true); set by plinth apply --force-conflicts."},
      {"gpu_operator_namespace",
       T::String,
       "gpu-operator",
       {},
       "Namespace of the GPU Operator, where the mig-parted ConfigMap goes."},
      {"page_size", T::Int, "500", {}, "Objects per list page during refresh (limit/continue)."},
      {"timeout_ms", T::Int, "30000", {}, "Longest one HTTP request may take (cut to the operation's deadline)."},
      {"connect_timeout_ms", T::Int, "10000", {}, "Longest a TCP + TLS connection may take."},
      {"poll_ms", T::Int, "1000", {},
       "Interval between checks while draining a node (its pods gone) and waiting for it to be Ready again."},
  };
  // Where requests and credentials go: never from a pull request's blueprint (--untrusted).
  operator_only(s.options, {"kubeconfig", "context"});
  s.deadlines =
      Deadlines{std::chrono::minutes(2), std::chrono::minutes(5), std::chrono::minutes(5), std::chrono::minutes(5)};
  return s;
}

std::vector<std::string> strings(const Json& attrs, const char* key) {
  std::vector<std::string> out;
  if (auto it = attrs.find(key); it != attrs.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string text(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

Json metadata(const Resource& r, const std::string& name, const std::string& ns = "") {
  Json m = {
      {"name", name}, {"labels", {{kManagedBy, kManagedByValue}}}, {"annotations", {{kAddressAnnotation, r.address}}}};
  if (!ns.empty()) m["namespace"] = ns;
  return m;
}

KubeObject object(std::string collection, std::string name, std::string what, Json body) {
  return {std::move(collection), std::move(name), std::move(what), std::move(body)};
}

/// The API group of well-known resources (the part before any '/').
std::string known_group(const std::string& resource) {
  static const std::map<std::string, std::string> groups = {
      {"pods", ""},
      {"services", ""},
      {"endpoints", ""},
      {"configmaps", ""},
      {"secrets", ""},
      {"persistentvolumeclaims", ""},
      {"serviceaccounts", ""},
      {"events", ""},
      {"resourcequotas", ""},
      {"limitranges", ""},
      {"namespaces", ""},
      {"nodes", ""},
      {"persistentvolumes", ""},
      {"deployments", "apps"},
      {"statefulsets", "apps"},
      {"daemonsets", "apps"},
      {"replicasets", "apps"},
      {"jobs", "batch"},
      {"cronjobs", "batch"},
      {"ingresses", "networking.k8s.io"},
      {"networkpolicies", "networking.k8s.io"},
      {"horizontalpodautoscalers", "autoscaling"},
      {"poddisruptionbudgets", "policy"},
      {"roles", kRbacGroup},
      {"rolebindings", kRbacGroup},
      {"clusterroles", kRbacGroup},
      {"clusterrolebindings", kRbacGroup},
      {"pytorchjobs", "kubeflow.org"},
      {"tfjobs", "kubeflow.org"},
      {"mpijobs", "kubeflow.org"},
      {"notebooks", "kubeflow.org"},
      {"rayclusters", "ray.io"},
      {"rayjobs", "ray.io"},
      {"rayservices", "ray.io"},
      {"clusterpolicies", "nvidia.com"},
  };
  auto it = groups.find(resource.substr(0, resource.find('/')));
  return it == groups.end() ? "" : it->second;
}

Json subject(const std::string& s) {
  const std::string kind = s.substr(0, s.find(':'));
  const std::string rest = s.substr(s.find(':') + 1);
  if (kind == "serviceaccount") {
    const size_t slash = rest.find('/');
    return {{"kind", "ServiceAccount"}, {"name", rest.substr(slash + 1)}, {"namespace", rest.substr(0, slash)}};
  }
  return {{"kind", kind == "group" ? "Group" : "User"}, {"apiGroup", kRbacGroup}, {"name", rest}};
}

std::string subject_text(const Json& s) {
  const std::string kind = text(s, "kind");
  if (kind == "ServiceAccount") return "serviceaccount:" + text(s, "namespace") + "/" + text(s, "name");
  return (kind == "Group" ? "group:" : "user:") + text(s, "name");
}

Json subjects(const std::vector<std::string>& list) {
  Json out = Json::array();
  for (const auto& s : list) out.push_back(subject(s));
  return out;
}

/// The mig-parted config (mig-parted's config file, version v1) of the pools'
/// layouts: one config per pool, plinth-POOL, and all-disabled as default.
std::string mig_parted_config(const Json& layouts) {
  std::string y = "version: v1\nmig-configs:\n  all-disabled:\n    - devices: all\n      mig-enabled: false\n";
  for (const auto& [pool, layout] : layouts.items()) {
    y += "  plinth-" + pool + ":\n    - devices: all\n      mig-enabled: true\n      mig-devices:\n";
    for (const auto& [profile, n] : layout.items()) y += "        \"" + profile + "\": " + n.dump() + "\n";
  }
  return y;
}

/// The layouts back from a mig-parted config (the configs named plinth-POOL).
Json layouts_from(const std::string& config) {
  Json out = Json::object();
  try {
    YAML::Node doc = YAML::Load(config);
    for (const auto& c : doc["mig-configs"]) {
      const std::string name = c.first.Scalar();
      if (name.rfind("plinth-", 0) != 0 || !c.second.IsSequence() || c.second.size() == 0) continue;
      Json l = Json::object();
      for (const auto& d : c.second[0]["mig-devices"]) l[d.first.Scalar()] = d.second.as<int>();
      out[name.substr(7)] = std::move(l);
    }
  } catch (const YAML::Exception&) {
    return Json::object();  // unreadable: shows as drift
  }
  return out;
}

/// The server's Status message, or the start of the body.
std::string status_message(const std::string& body) {
  Json j = parse_json_or_discard(body);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  std::string line = body.substr(0, 200);
  std::replace(line.begin(), line.end(), '\n', ' ');
  return line;
}

/// Why an eviction was refused: the Status message and its causes (the
/// disruption budget that forbids it, in the API server's words).
std::string refusal(const std::string& body) {
  std::string out = status_message(body);
  Json j = parse_json_or_discard(body);
  if (j.is_object() && j.contains("details") && j["details"].is_object())
    for (const auto& c : j["details"].value("causes", Json::array()))
      if (c.is_object() && c.contains("message") && c["message"].is_string())
        out += " (" + c["message"].get<std::string>() + ")";
  return out;
}

/// True when the pod is not drained: a DaemonSet's (it would come back, as
/// kubectl drain --ignore-daemonsets leaves them) or a static (mirror) pod.
bool stays(const Json& pod) {
  const Json meta = pod.value("metadata", Json::object());
  if (meta.value("annotations", Json::object()).contains("kubernetes.io/config.mirror")) return true;
  for (const auto& o : meta.value("ownerReferences", Json::array()))
    if (o.is_object() && o.value("controller", false) && o.value("kind", "") == "DaemonSet") return true;
  return false;
}

}  // namespace

const ProviderSchema& schema() {
  static const ProviderSchema s = build_schema();
  return s;
}

Json rbac_rules(const std::vector<std::string>& verbs, const std::vector<std::string>& resources) {
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> by_group;
  for (const auto& res : resources) {
    std::string group, name = res;
    if (res == "*") {
      group = "*";
    } else if (size_t dot = res.substr(0, res.find('/')).find('.'); dot != std::string::npos) {
      // RESOURCE.GROUP[/SUBRESOURCE]
      size_t slash = res.find('/');
      group = res.substr(dot + 1, slash == std::string::npos ? std::string::npos : slash - dot - 1);
      name = res.substr(0, dot) + (slash == std::string::npos ? "" : res.substr(slash));
    } else {
      group = known_group(res);
    }
    if (!by_group.count(group)) groups.push_back(group);
    by_group[group].push_back(name);
  }
  Json rules = Json::array();
  for (const auto& g : groups) rules.push_back({{"apiGroups", {g}}, {"resources", by_group[g]}, {"verbs", verbs}});
  return rules;
}

void from_rbac_rules(const Json& rules, std::vector<std::string>& verbs, std::vector<std::string>& resources) {
  verbs.clear();
  resources.clear();
  if (!rules.is_array()) return;
  for (const auto& rule : rules) {
    for (const auto& v : rule.value("verbs", Json::array()))
      if (v.is_string() && std::find(verbs.begin(), verbs.end(), v.get<std::string>()) == verbs.end())
        verbs.push_back(v.get<std::string>());
    for (const auto& g : rule.value("apiGroups", Json::array()))
      for (const auto& r : rule.value("resources", Json::array())) {
        if (!g.is_string() || !r.is_string()) continue;
        const std::string group = g.get<std::string>(), res = r.get<std::string>();
        if (group == "*" || group == known_group(res)) {
          resources.push_back(res);
        } else {
          size_t slash = res.find('/');
          resources.push_back(res.substr(0, slash) + "." + group +
                              (slash == std::string::npos ? "" : res.substr(slash)));
        }
      }
  }
}

std::vector<ConflictManager> conflict_managers(const Json& status) {
  std::vector<ConflictManager> out;
  const Json causes =
      status.is_object() ? status.value("details", Json::object()).value("causes", Json::array()) : Json::array();
  for (const auto& c : causes) {
    const std::string m = text(c, "message");  // conflict with "NAME"[ using v1]
    size_t a = m.find('"'), b = a == std::string::npos ? a : m.find('"', a + 1);
    if (b == std::string::npos) continue;
    ConflictManager cm{m.substr(a + 1, b - a - 1), m.find(" using ", b) != std::string::npos};
    if (std::find(out.begin(), out.end(), cm) == out.end()) out.push_back(cm);
  }
  return out;
}

std::vector<NodeLabels> node_labels_for(const Resource& r) {
  std::vector<NodeLabels> out;
  if (r.type != "kubernetes.cluster") return out;
  const Json layouts = r.attributes.value("mig_layouts", Json::object());
  const Json nodes = r.attributes.value("nodes", Json::object());  // items() of a temporary would dangle
  for (const auto& [pool, n] : nodes.items()) {
    const Json labels = {{"plinth.dev/pool", pool},
                         {"plinth.dev/gpu", text(n, "gpu")},
                         {"plinth.dev/role", text(n, "role")},
                         {"nvidia.com/mig.config", layouts.contains(pool) ? "plinth-" + pool : "all-disabled"}};
    const int count = n.value("count", 0);
    for (int i = 0; i < count; ++i) out.push_back({pool + "-" + std::to_string(i), pool, labels});
  }
  return out;
}

std::vector<KubeObject> objects_for(const Resource& r, const std::string& operator_ns) {
  std::vector<KubeObject> out;
  const Json& a = r.attributes;
  if (r.type == "kubernetes.namespace") {
    const std::string ns = r.name;
    out.push_back(object("/api/v1/namespaces", ns, "Namespace " + ns,
                         {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", metadata(r, ns)}}));
    Json hard = Json::object();
    if (a.contains("gpu_quota") && a["gpu_quota"].is_number_integer())
      hard[kGpuResource] = std::to_string(a["gpu_quota"].get<long long>());
    if (!text(a, "cpu_quota").empty()) hard["requests.cpu"] = text(a, "cpu_quota");
    if (!text(a, "memory_quota").empty()) hard["requests.memory"] = text(a, "memory_quota");
    if (!hard.empty())
      out.push_back(object("/api/v1/namespaces/" + ns + "/resourcequotas", kQuotaName,
                           "ResourceQuota " + ns + "/" + kQuotaName,
                           {{"apiVersion", "v1"},
                            {"kind", "ResourceQuota"},
                            {"metadata", metadata(r, kQuotaName, ns)},
                            {"spec", {{"hard", hard}}}}));
    for (const auto& sa : strings(a, "service_accounts"))
      out.push_back(object("/api/v1/namespaces/" + ns + "/serviceaccounts", sa, "ServiceAccount " + ns + "/" + sa,
                           {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", metadata(r, sa, ns)}}));
  } else if (r.type == "kubernetes.role") {
    const Json rules = rbac_rules(strings(a, "verbs"), strings(a, "resources"));
    const Json subs = subjects(strings(a, "subjects"));
    const std::string rbac = std::string(kRbac);
    const std::string api = std::string(kRbacGroup) + "/v1";
    if (text(a, "scope") == "cluster") {
      out.push_back(
          object(rbac + "/clusterroles", r.name, "ClusterRole " + r.name,
                 {{"apiVersion", api}, {"kind", "ClusterRole"}, {"metadata", metadata(r, r.name)}, {"rules", rules}}));
      out.push_back(object(rbac + "/clusterrolebindings", r.name, "ClusterRoleBinding " + r.name,
                           {{"apiVersion", api},
                            {"kind", "ClusterRoleBinding"},
                            {"metadata", metadata(r, r.name)},
                            {"roleRef", {{"apiGroup", kRbacGroup}, {"kind", "ClusterRole"}, {"name", r.name}}},
                            {"subjects", subs}}));
    } else {
      for (const auto& ns : strings(a, "namespaces")) {
        out.push_back(
            object(rbac + "/namespaces/" + ns + "/roles", r.name, "Role " + ns + "/" + r.name,
                   {{"apiVersion", api}, {"kind", "Role"}, {"metadata", metadata(r, r.name, ns)}, {"rules", rules}}));
        out.push_back(object(rbac + "/namespaces/" + ns + "/rolebindings", r.name, "RoleBinding " + ns + "/" + r.name,
                             {{"apiVersion", api},
                              {"kind", "RoleBinding"},
                              {"metadata", metadata(r, r.name, ns)},
                              {"roleRef", {{"apiGroup", kRbacGroup}, {"kind", "Role"}, {"name", r.name}}},
                              {"subjects", subs}}));
      }
    }
  } else if (r.type == "kubernetes.cluster") {
    const std::string strategy = text(a, "mig_strategy").empty() ? "none" : text(a, "mig_strategy");
    const Json layouts = a.value("mig_layouts", Json::object());
    Json spec = {{"driver", {{"version", text(a, "driver")}}},
                 {"mig", {{"strategy", strategy}}},
                 {"dcgmExporter", {{"enabled", a.value("dcgm_exporter", false)}}}};
    if (!layouts.empty()) {
      const std::string& ns = operator_ns;
      out.push_back(object("/api/v1/namespaces/" + ns + "/configmaps", kMigConfigName,
                           "ConfigMap " + ns + "/" + kMigConfigName,
                           {{"apiVersion", "v1"},
                            {"kind", "ConfigMap"},
                            {"metadata", metadata(r, kMigConfigName, ns)},
                            {"data", {{"config.yaml", mig_parted_config(layouts)}}}}));
      spec["migManager"] = {{"enabled", true}, {"config", {{"name", kMigConfigName}, {"default", "all-disabled"}}}};
    }
    out.push_back(object("/apis/nvidia.com/v1/clusterpolicies", kClusterPolicyName, "ClusterPolicy cluster-policy",
                         {{"apiVersion", "nvidia.com/v1"},
                          {"kind", "ClusterPolicy"},
                          {"metadata", metadata(r, kClusterPolicyName)},
                          {"spec", spec}}));
  }
  return out;
}

Status KubernetesProvider::configure(const ProviderConfig& config) {
  kubeconfig_ = config.str("kubeconfig");
  default_context_ = config.str("context");
  if (config.has("field_manager") && !config.str("field_manager").empty()) field_manager_ = config.str("field_manager");
  if (config.has("gpu_operator_namespace") && !config.str("gpu_operator_namespace").empty())
    operator_ns_ = config.str("gpu_operator_namespace");
  force_conflicts_ = config.flag("force_conflicts");
  auto positive = [&](const char* key, auto& out) {
    if (config.has(key))
      out = static_cast<std::decay_t<decltype(out)>>(std::clamp<int64_t>(config.integer(key), 1, 3600000));
  };
  positive("page_size", page_size_);
  positive("timeout_ms", timeout_ms_);
  positive("connect_timeout_ms", connect_timeout_ms_);
  positive("poll_ms", poll_ms_);
  return {};
}

Result<KubernetesProvider::Conn*> KubernetesProvider::connect(const Resource& r) {
  std::string context = text(r.attributes, "context");
  if (context.empty()) context = default_context_;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = conns_.find(context); it != conns_.end()) return it->second.get();
  auto access = load_kubeconfig(kubeconfig_, context);
  if (!access) return Error::invalid(access.error().message);
  auto conn = std::make_unique<Conn>();
  conn->access = std::move(*access);
  conn->http = make_client(conn->access, conn->access.client_cert_pem, conn->access.client_key_pem);
  conn->token = conn->access.token;
  Conn* out = conn.get();
  conns_[context] = std::move(conn);
  return out;
}

std::shared_ptr<net::Client> KubernetesProvider::make_client(const ClusterAccess& a, const std::string& cert,
                                                             const std::string& key) const {
  net::ClientOptions o;
  o.ca_pem = a.ca_pem;
  o.client_cert_pem = cert;
  o.client_key_pem = key;
  o.timeout_ms = timeout_ms_;
  o.connect_timeout_ms = connect_timeout_ms_;
  return std::make_shared<net::Client>(o);
}

Result<std::pair<std::shared_ptr<net::Client>, std::string>> KubernetesProvider::credential(Conn& c,
                                                                                           const Deadline& deadline,
                                                                                           const std::string* refused) {
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.access.exec) return std::pair{c.http, c.token};
  if (c.refused) return *c.refused;
  const auto now = std::chrono::system_clock::now();
  const bool again = refused && *refused == c.token;  // else another request already ran it again
  if (c.fetched && !again && now < c.refresh_at) return std::pair{c.http, c.token};
  auto got = run_exec_plugin(c.access, deadline.unlimited() || deadline.remaining() > std::chrono::minutes(1)
                                           ? Deadline::after(std::chrono::minutes(1))
                                           : deadline);
  if (!got) {
    if (got.error().kind == Error::Kind::Fatal || got.error().kind == Error::Kind::Invalid) c.refused = got.error();
    return got.error();
  }
  c.token = got->token;
  if (!got->client_cert_pem.empty()) c.http = make_client(c.access, got->client_cert_pem, got->client_key_pem);
  c.fetched = true;
  c.refresh_at = std::chrono::system_clock::time_point::max();
  if (got->expiration) {
    const auto window = std::min<std::chrono::system_clock::duration>(std::chrono::minutes(1),
                                                                      (*got->expiration - now) / 4);
    c.refresh_at = *got->expiration - window;
  }
  return std::pair{c.http, c.token};
}

Result<net::Response> KubernetesProvider::exchange(Conn& c, const std::string& method, const std::string& path,
                                                   const std::string& body, const std::string& content_type,
                                                   Call& call, bool retry) {
  net::Request req;
  req.method = method;
  req.url = c.access.server + path;
  req.headers["Accept"] = "application/json";
  req.headers["User-Agent"] = std::string("plinth/") + PLINTH_VERSION;
  if (!content_type.empty()) req.headers["Content-Type"] = content_type;
  req.body = body;
  req.deadline = call.deadline();
  req.cancel = &stopped_;
  bool reran = false;  // an exec plugin's credential the server refused is asked for once more
  for (;;) {
    auto cred = credential(c, call.deadline());
    if (!cred) return cred.error();
    // A plugin may switch from a token to a client certificate between two of its runs.
    if (!cred->second.empty()) req.headers["Authorization"] = "Bearer " + cred->second;
    else req.headers.erase("Authorization");
    auto r = cred->first->send(req);
    if (r && r->status == 401 && c.access.exec && !reran) {
      reran = true;
      if (auto again = credential(c, call.deadline(), &cred->second); !again) return again.error();
      continue;
    }
    std::optional<Error> failed;
    if (!r)
      failed = r.error();
    else if (r->status >= 500 || r->status == 429)
      failed = error_of(c, method, path, *r);
    if (!failed) call.progress();
    if (!failed || !retry || !failed->retryable() || !call.retry(*failed)) return r;
  }
}

Error KubernetesProvider::error_of(const Conn& c, const std::string& method, const std::string& path,
                                   const net::Response& r) const {
  const std::string url = c.access.server + path;
  Error e = net::status_error(method, url, r).value_or(Error::fatal(""));
  // The API server's own words (its Status message), and for a refused login
  // who Plinth tried to be.
  e.message = method + " " + url + ": " + std::to_string(r.status) + " " + status_message(r.body);
  if (r.status == 401 || r.status == 403)
    e.message += " (kubeconfig " + c.access.files + ", context " + c.access.context + ", user " + c.access.user +
                 "; check that user's credentials and permissions)";
  return e;
}

Result<net::Response> KubernetesProvider::send(Conn& c, const std::string& method, const std::string& path,
                                               const std::string& body, const std::string& content_type, Call& call) {
  auto r = exchange(c, method, path, body, content_type, call);
  if (!r) return r;
  if (r->status >= 400) return error_of(c, method, path, *r);
  return r;
}

Status KubernetesProvider::apply_object(Conn& c, const KubeObject& o, Call& call) {
  auto patch = [&](bool force) {
    return exchange(c, "PATCH",
                    o.path() + "?fieldManager=" + net::percent_encode(field_manager_) +
                        "&fieldValidation=Strict&force=" + (force ? "true" : "false"),
                    o.body.dump(), "application/apply-patch+yaml", call);
  };
  auto r = patch(force_conflicts_);
  if (!r) return r.error();
  if (r->status == 409 && !force_conflicts_) {
    // Who owns the fields? Imperative kubectl edits (kubectl edit, patch,
    // label, scale: an Update by a kubectl-* manager) are drift that the
    // plan showed and the user approved restoring; they are taken back, as
    // Flux does. A field another manager *applies* (helm, Argo CD, kubectl
    // apply --server-side) stays its own unless --force-conflicts.
    const Json status = parse_json_or_discard(r->body);
    const auto managers = conflict_managers(status);
    const bool drift = !managers.empty() && std::all_of(managers.begin(), managers.end(), [](const ConflictManager& m) {
      return m.imperative && m.name.rfind("kubectl", 0) == 0;
    });
    if (drift) {
      r = patch(true);
      if (!r) return r.error();
    } else {
      std::string names;
      for (const auto& m : managers) names += (names.empty() ? "\"" : ", \"") + m.name + "\"";
      return Error{Error::Kind::Conflict,
                   o.what + ": fields are owned by another field manager (" + (names.empty() ? "unknown" : names) +
                       "); the API server says: " + status_message(r->body) +
                       ". Plinth does not overwrite them: make the blueprint agree with " +
                       (names.empty() ? "that manager" : names) +
                       ", or re-run plinth apply with --force-conflicts to take the fields over",
                   0};
    }
  }
  if (r->status >= 400) {
    Error e = error_of(c, "PATCH", o.path(), *r);
    e.message = o.what + ": " + e.message;
    return e;
  }
  return {};
}

Status KubernetesProvider::delete_object(Conn& c, const KubeObject& o, Call& call) {
  auto got = exchange(c, "GET", o.path(), "", "", call);
  if (!got) return got.error();
  if (got->status == 404) return {};
  if (got->status >= 400) return error_of(c, "GET", o.path(), *got);
  const Json obj = parse_json_or_discard(got->body);
  const Json meta = obj.is_object() ? obj.value("metadata", Json::object()) : Json::object();
  if (text(meta.value("labels", Json::object()), kManagedBy) != kManagedByValue) return {};  // not Plinth's
  // Another manager applies fields of it too (the GPU Operator's chart owns
  // the ClusterPolicy): give up Plinth's fields instead of deleting it.
  bool shared = false;
  for (const auto& mf : meta.value("managedFields", Json::array()))
    if (text(mf, "manager") != field_manager_ && text(mf, "operation") == "Apply") shared = true;
  if (shared) {
    Json empty = {{"apiVersion", o.body["apiVersion"]}, {"kind", o.body["kind"]}, {"metadata", {{"name", o.name}}}};
    if (o.body["metadata"].contains("namespace")) empty["metadata"]["namespace"] = o.body["metadata"]["namespace"];
    auto r = send(c, "PATCH", o.path() + "?fieldManager=" + net::percent_encode(field_manager_) + "&force=false",
                  empty.dump(), "application/apply-patch+yaml", call);
    return r ? Status{} : Status{r.error()};
  }
  Json options = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", "Background"}};
  if (meta.contains("uid")) options["preconditions"] = {{"uid", meta["uid"]}};
  auto r = exchange(c, "DELETE", o.path(), options.dump(), "application/json", call);
  if (!r) return r.error();
  if (r->status == 404) return {};
  if (r->status >= 400) return error_of(c, "DELETE", o.path(), *r);
  return {};
}

Result<std::vector<Json>> KubernetesProvider::list(Conn& c, const std::string& collection, const std::string& selector,
                                                   Call& call) {
  std::vector<Json> items;
  std::string token;
  do {
    std::string path = collection + "?" +
                       (selector.empty() ? "" : "labelSelector=" + net::percent_encode(selector) + "&") +
                       "limit=" + std::to_string(page_size_);
    if (!token.empty()) path += "&continue=" + net::percent_encode(token);
    auto r = send(c, "GET", path, "", "", call);
    if (!r) return r.error();
    Json page = parse_json_or_discard(r->body);
    if (!page.is_object()) return Error::fatal("GET " + c.access.server + path + ": the answer is not JSON");
    for (auto& item : page.value("items", Json::array())) items.push_back(std::move(item));
    token = text(page.value("metadata", Json::object()), "continue");
  } while (!token.empty());
  return items;
}

Status KubernetesProvider::apply_all(const Resource& desired, const Resource* prior, Call& call) {
  auto conn = connect(desired);
  if (!conn) return conn.error();
  const auto want = objects_for(desired, operator_ns_);
  for (const auto& o : want)
    if (auto st = apply_object(**conn, o, call); !st) return st;
  if (desired.type == "kubernetes.cluster")
    if (auto st = label_nodes(**conn, &desired, prior, call); !st) return st;
  if (!prior) return {};
  // What the prior resource had and the desired one does not: Plinth's own only.
  const auto had = objects_for(*prior, operator_ns_);
  for (auto it = had.rbegin(); it != had.rend(); ++it) {
    bool kept = std::any_of(want.begin(), want.end(), [&](const KubeObject& o) { return o.path() == it->path(); });
    if (!kept)
      if (auto st = delete_object(**conn, *it, call); !st) return st;
  }
  return {};
}

Result<Resource> KubernetesProvider::create(const Resource& desired, Call& call) {
  if (auto st = apply_all(desired, nullptr, call); !st) return st.error();
  return desired;
}

Result<Resource> KubernetesProvider::update(const Resource& prior, const Resource& desired, Call& call) {
  if (auto st = apply_all(desired, &prior, call); !st) return st.error();
  return desired;
}

Status KubernetesProvider::remove(const Resource& prior, Call& call) {
  auto conn = connect(prior);
  if (!conn) return conn.error();
  if (prior.type == "kubernetes.cluster")
    if (auto st = label_nodes(**conn, nullptr, &prior, call); !st) return st;
  const auto had = objects_for(prior, operator_ns_);
  for (auto it = had.rbegin(); it != had.rend(); ++it)
    if (auto st = delete_object(**conn, *it, call); !st) return st;
  return {};
}

Status KubernetesProvider::label_nodes(Conn& c, const Resource* desired, const Resource* prior, Call& call) {
  const auto want = desired ? node_labels_for(*desired) : std::vector<NodeLabels>{};
  const auto had = prior ? node_labels_for(*prior) : std::vector<NodeLabels>{};
  if (want.empty() && had.empty()) return {};
  // One paged list of the nodes, not a request per node: nodes that have not
  // joined the cluster yet are skipped (the next apply labels them).
  auto nodes = list(c, "/api/v1/nodes", "", call);
  if (!nodes) return nodes.error();
  std::map<std::string, Json> labels;
  for (const auto& n : *nodes) {
    const Json meta = n.value("metadata", Json::object());
    labels[text(meta, "name")] = meta.value("labels", Json::object());
  }
  auto node_object = [&](const std::string& node, Json lab) {
    Json meta = {{"name", node}};
    if (!lab.empty()) meta["labels"] = std::move(lab);
    return KubeObject{
        "/api/v1/nodes", node, "Node " + node, {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", std::move(meta)}}};
  };
  for (const auto& w : want) {
    auto it = labels.find(w.node);
    if (it == labels.end()) continue;
    bool same = true;
    for (const auto& [k, v] : w.labels.items()) same = same && it->second.value(k, Json()) == v;
    if (!same)
      if (auto st = apply_object(c, node_object(w.node, w.labels), call); !st) return st;
  }
  for (const auto& h : had) {
    bool kept = std::any_of(want.begin(), want.end(), [&](const NodeLabels& w) { return w.node == h.node; });
    if (kept || !labels.count(h.node) || !labels[h.node].contains("plinth.dev/pool")) continue;
    // An empty apply gives up every label Plinth set on the node.
    if (auto st = apply_object(c, node_object(h.node, Json::object()), call); !st) return st;
  }
  return {};
}

namespace {

/// The collections a type's objects live in, listed across namespaces, with
/// the kind of their items (items of built-in kinds carry no kind).
const std::vector<std::pair<std::string, std::string>>& collections(const std::string& type) {
  static const std::map<std::string, std::vector<std::pair<std::string, std::string>>> table = {
      {"kubernetes.namespace",
       {{"/api/v1/namespaces", "Namespace"},
        {"/api/v1/resourcequotas", "ResourceQuota"},
        {"/api/v1/serviceaccounts", "ServiceAccount"}}},
      {"kubernetes.role",
       {{std::string(kRbac) + "/roles", "Role"},
        {std::string(kRbac) + "/rolebindings", "RoleBinding"},
        {std::string(kRbac) + "/clusterroles", "ClusterRole"},
        {std::string(kRbac) + "/clusterrolebindings", "ClusterRoleBinding"}}},
      {"kubernetes.cluster",
       {{"/apis/nvidia.com/v1/clusterpolicies", "ClusterPolicy"},
        {"/api/v1/configmaps", "ConfigMap"},
        {"/api/v1/nodes", "Node"}}},
  };
  static const std::vector<std::pair<std::string, std::string>> none;
  auto it = table.find(type);
  return it == table.end() ? none : it->second;
}

/// Listed objects by the address annotation, then kind.
using Index = std::map<std::string, std::map<std::string, std::vector<Json>>>;

/// `observed` in the order of `prior` first, then the rest sorted.
std::vector<std::string> in_prior_order(const std::vector<std::string>& prior, std::vector<std::string> observed) {
  std::vector<std::string> out;
  for (const auto& p : prior)
    if (auto it = std::find(observed.begin(), observed.end(), p); it != observed.end()) {
      out.push_back(p);
      observed.erase(it);
    }
  std::sort(observed.begin(), observed.end());
  out.insert(out.end(), observed.begin(), observed.end());
  return out;
}

std::optional<Json> hard_value(const Json& quota, const char* key) {
  const Json hard = quota.value("spec", Json::object()).value("hard", Json::object());
  if (!hard.contains(key)) return std::nullopt;
  return hard[key];
}

/// The resource as the cluster holds it, or nullopt when it is gone.
std::optional<Resource> observe(const Resource& prior, const std::map<std::string, std::vector<Json>>& found) {
  auto of = [&](const char* kind) -> const std::vector<Json>& {
    static const std::vector<Json> none;
    auto it = found.find(kind);
    return it == found.end() ? none : it->second;
  };
  auto ns_of = [](const Json& o) { return text(o.value("metadata", Json::object()), "namespace"); };
  auto name_of = [](const Json& o) { return text(o.value("metadata", Json::object()), "name"); };
  Resource cur = prior;
  Json& a = cur.attributes;
  if (prior.type == "kubernetes.namespace") {
    bool exists = false;
    for (const auto& o : of("Namespace")) exists = exists || name_of(o) == prior.name;
    if (!exists) return std::nullopt;
    a.erase("gpu_quota");
    a.erase("cpu_quota");
    a.erase("memory_quota");
    for (const auto& q : of("ResourceQuota")) {
      if (ns_of(q) != prior.name || name_of(q) != kQuotaName) continue;
      if (auto v = hard_value(q, kGpuResource)) {
        // A quantity: a whole number is the blueprint's integer, anything else shows as is.
        const std::string s = v->is_string() ? v->get<std::string>() : v->dump();
        bool digits = !s.empty() && std::all_of(s.begin(), s.end(),
                                                [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
        a["gpu_quota"] = digits && s.size() < 10 ? Json(std::stoi(s)) : Json(s);
      }
      if (auto v = hard_value(q, "requests.cpu")) a["cpu_quota"] = v->is_string() ? *v : Json(v->dump());
      if (auto v = hard_value(q, "requests.memory")) a["memory_quota"] = v->is_string() ? *v : Json(v->dump());
    }
    std::vector<std::string> sas;
    for (const auto& o : of("ServiceAccount"))
      if (ns_of(o) == prior.name) sas.push_back(name_of(o));
    a["service_accounts"] = in_prior_order(strings(prior.attributes, "service_accounts"), sas);
  } else if (prior.type == "kubernetes.role") {
    const bool cluster = text(prior.attributes, "scope") == "cluster";
    const Json want_rules = rbac_rules(strings(prior.attributes, "verbs"), strings(prior.attributes, "resources"));
    const Json want_subjects = subjects(strings(prior.attributes, "subjects"));
    const auto& roles = of(cluster ? "ClusterRole" : "Role");
    const auto& bindings = of(cluster ? "ClusterRoleBinding" : "RoleBinding");
    std::vector<std::string> namespaces;
    const Json* rules = nullptr;
    const Json* subs = nullptr;
    for (const auto& role : roles) {
      if (name_of(role) != prior.name) continue;
      const Json* binding = nullptr;
      for (const auto& b : bindings)
        if (name_of(b) == prior.name && ns_of(b) == ns_of(role)) binding = &b;
      if (!binding) continue;  // half a role: its namespace shows as missing
      if (!cluster) namespaces.push_back(ns_of(role));
      const Json& r = role.contains("rules") ? role["rules"] : want_rules;
      if (!rules || (*rules == want_rules && r != want_rules)) rules = &r;
      const Json& s = binding->contains("subjects") ? (*binding)["subjects"] : want_subjects;
      if (!subs || (*subs == want_subjects && s != want_subjects)) subs = &s;
    }
    if (!rules) return std::nullopt;
    // Rules and subjects equal to the blueprint's keep its spelling
    // ("clusterpolicies.nvidia.com" and "clusterpolicies" are one rule).
    if (*rules != want_rules) {
      std::vector<std::string> verbs, resources;
      from_rbac_rules(*rules, verbs, resources);
      a["verbs"] = verbs;
      a["resources"] = resources;
    }
    if (*subs != want_subjects) {
      std::vector<std::string> subject_list;
      for (const auto& s : *subs) subject_list.push_back(subject_text(s));
      a["subjects"] = subject_list;
    }
    if (!cluster) a["namespaces"] = in_prior_order(strings(prior.attributes, "namespaces"), namespaces);
  } else if (prior.type == "kubernetes.cluster") {
    const Json* policy = nullptr;
    for (const auto& o : of("ClusterPolicy"))
      if (name_of(o) == kClusterPolicyName) policy = &o;
    if (!policy) return std::nullopt;
    const Json spec = policy->value("spec", Json::object());
    a["driver"] = text(spec.value("driver", Json::object()), "version");
    a["mig_strategy"] = text(spec.value("mig", Json::object()), "strategy");
    a["dcgm_exporter"] = spec.value("dcgmExporter", Json::object()).value("enabled", false);
    Json layouts = Json::object();
    for (const auto& cm : of("ConfigMap"))
      if (name_of(cm) == kMigConfigName) layouts = layouts_from(text(cm.value("data", Json::object()), "config.yaml"));
    a["mig_layouts"] = std::move(layouts);
    // Nodes whose labels differ from the pool's: the first one's labels show
    // as the pool's gpu and role (and its MIG config as the layout).
    std::map<std::string, const Json*> nodes;
    for (const auto& n : of("Node")) nodes[name_of(n)] = &n;
    for (const auto& w : node_labels_for(prior)) {
      auto it = nodes.find(w.node);
      if (it == nodes.end()) continue;  // not joined yet
      const Json labels = it->second->value("metadata", Json::object()).value("labels", Json::object());
      Json& pool = a["nodes"][w.pool];
      if (text(labels, "plinth.dev/gpu") != text(w.labels, "plinth.dev/gpu") &&
          text(pool, "gpu") == text(w.labels, "plinth.dev/gpu"))
        pool["gpu"] = text(labels, "plinth.dev/gpu");
      if (text(labels, "plinth.dev/role") != text(w.labels, "plinth.dev/role") &&
          text(pool, "role") == text(w.labels, "plinth.dev/role"))
        pool["role"] = text(labels, "plinth.dev/role");
      if (text(labels, "nvidia.com/mig.config") != text(w.labels, "nvidia.com/mig.config") &&
          a["mig_layouts"].contains(w.pool))
        a["mig_layouts"].erase(w.pool);
    }
  }
  return cur;
}

}  // namespace

bool KubernetesProvider::nap(const Call& call) {
  const auto until = std::chrono::steady_clock::now() + call.deadline().clamp(std::chrono::milliseconds(poll_ms_));
  while (std::chrono::steady_clock::now() < until) {
    if (stopped_ || call.cancelled()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<long>(poll_ms_, 50)));
  }
  return !call.deadline().passed();
}

Result<bool> KubernetesProvider::drain(const Resource& cluster, const std::string& node, Call& call) {
  auto conn = connect(cluster);
  if (!conn) return conn.error();
  Conn& c = **conn;
  const std::string path = "/api/v1/nodes/" + net::percent_encode(node);
  auto got = exchange(c, "GET", path, "", "", call);
  if (!got) return got.error();
  if (got->status == 404) return false;  // not (yet) in the cluster: nothing runs there
  if (got->status >= 400) return error_of(c, "GET", path, *got);
  auto cordon = send(c, "PATCH", path, R"({"spec":{"unschedulable":true}})", "application/merge-patch+json", call);
  if (!cordon) return cordon.error();
  const std::string pods = "/api/v1/pods?fieldSelector=" + net::percent_encode("spec.nodeName=" + node);
  // Rounds: evict every pod still there (a pod a disruption budget protects
  // is asked again next round, as kubectl drain does), until none is left.
  std::set<std::string> evicted;
  std::vector<std::string> left;  // the pods still there, as last seen
  std::string refused;            // the last refusal, in the API server's words
  auto timed_out = [&] {
    return Error::fatal(std::to_string(left.size()) + " pod(s) still on node " + node + " after " +
                        format_duration(call.deadline().budget()) + " (" + left.front() +
                        (left.size() > 1 ? ", ..." : "") + ")" + (refused.empty() ? "" : "; " + refused));
  };
  // The deadline passing in the middle of a request is the drain timing out.
  auto failed = [&](const Error& e) {
    return e.kind == Error::Kind::DeadlineExceeded && !left.empty() ? timed_out() : e;
  };
  for (;;) {
    auto r = send(c, "GET", pods, "", "", call);
    if (!r) return failed(r.error());
    left.clear();
    const std::string before = refused;
    refused.clear();
    for (const auto& pod : parse_json_or_discard(r->body).value("items", Json::array())) {
      if (!pod.is_object() || stays(pod)) continue;
      const Json meta = pod.value("metadata", Json::object());
      const std::string ns = text(meta, "namespace"), name = text(meta, "name");
      left.push_back(ns + "/" + name);
      if (evicted.count(left.back()) || meta.contains("deletionTimestamp")) continue;
      const std::string at = "/api/v1/namespaces/" + ns + "/pods/" + name + "/eviction";
      const Json eviction = {{"apiVersion", "policy/v1"},
                             {"kind", "Eviction"},
                             {"metadata", {{"name", name}, {"namespace", ns}}}};
      auto e = exchange(c, "POST", at, eviction.dump(), "application/json", call, false);
      if (!e) {
        if (refused.empty()) refused = before;
        return failed(e.error());
      }
      if (e->status == 429) {
        if (refused.empty()) refused = "pod " + left.back() + ": " + refusal(e->body);
        continue;
      }
      if (e->status >= 400 && e->status != 404) return error_of(c, "POST", at, *e);
      evicted.insert(left.back());
    }
    if (left.empty()) return true;
    if (!nap(call)) return timed_out();
  }
}

Status KubernetesProvider::uncordon(const Resource& cluster, const std::string& node, Call& call) {
  auto conn = connect(cluster);
  if (!conn) return conn.error();
  Conn& c = **conn;
  const std::string path = "/api/v1/nodes/" + net::percent_encode(node);
  std::string last = "not registered";
  for (;;) {
    auto got = exchange(c, "GET", path, "", "", call);
    if (!got) return got.error();
    if (got->status >= 400 && got->status != 404) return error_of(c, "GET", path, *got);
    if (got->status == 200) {
      last = "not Ready";
      for (const auto& cond : parse_json_or_discard(got->body).value("status", Json::object()).value("conditions",
                                                                                                    Json::array()))
        if (cond.is_object() && cond.value("type", "") == "Ready") {
          last = "Ready " + cond.value("status", "Unknown") +
                 (cond.value("reason", "").empty() ? "" : " (" + cond.value("reason", "") + ")");
          if (cond.value("status", "") == "True") {
            auto p = send(c, "PATCH", path, R"({"spec":{"unschedulable":null}})", "application/merge-patch+json",
                          call);
            return p ? Status{} : Status{p.error()};
          }
        }
    }
    if (!nap(call))
      return Error::fatal("node " + node + " is still " + last + " after " +
                          format_duration(call.deadline().budget()) + ", so it stays cordoned; uncordon it with "
                          "kubectl uncordon " + node + " once it is healthy");
  }
}

Diagnostics KubernetesProvider::preflight(const std::vector<Resource>& changes, const Call& call) {
  Diagnostics out;
  std::set<std::string> checked, unusable;  // contexts
  for (const auto& r : changes) {
    std::string context = text(r.attributes, "context");
    if (context.empty()) context = default_context_;
    auto conn = connect(r);
    if (!conn) {
      if (!unusable.insert(context).second) continue;  // said once per context
      out.push_back({"K8S001", Severity::Error, r.address + ": apply cannot use the kubeconfig: " + conn.error().message,
                     r.source, r.address,
                     "give plinth a kubeconfig whose user has a client certificate, a token or an exec plugin that "
                     "needs no terminal (aws eks get-token, gke-gcloud-auth-plugin, kubelogin); "
                     "--provider-option kubernetes.kubeconfig=FILE and "
                     "kubernetes.context=NAME choose it (docs/providers/kubernetes.md)"});
      continue;
    }
    if (r.type != "kubernetes.cluster" || !checked.insert(context).second) continue;
    auto c = call.fork();
    // An exec plugin that is missing, fails or is refused: the kubeconfig cannot be used.
    if (auto cred = credential(**conn, c->deadline()); !cred) {
      out.push_back({"K8S001", Severity::Error, r.address + ": apply cannot use the kubeconfig: " + cred.error().message,
                     r.source, r.address,
                     "install the plugin or fix its configuration; it must run without a terminal "
                     "(docs/providers/kubernetes.md)"});
      continue;
    }
    auto answer = exchange(**conn, "GET", "/api/v1/namespaces/" + operator_ns_, "", "", *c);
    const std::string where = "cluster " + (context.empty() ? std::string("(current-context)") : "'" + context + "'");
    if (!answer) {
      out.push_back({"K8S002", Severity::Warning,
                     r.address + ": cannot check that namespace '" + operator_ns_ + "' exists in " + where + ": " +
                         answer.error().message,
                     r.source, r.address, "apply needs the API server reachable"});
    } else if (answer->status == 404) {
      out.push_back({"K8S002", Severity::Error,
                     r.address + ": namespace '" + operator_ns_ + "' does not exist in " + where +
                         ", and apply writes the GPU Operator's mig-parted config there",
                     r.source, r.address,
                     "install the NVIDIA GPU Operator first (helm install gpu-operator nvidia/gpu-operator -n " +
                         operator_ns_ + " --create-namespace), or set the provider option gpu_operator_namespace to "
                         "where it runs"});
    } else if (answer->status == 401 || answer->status == 403) {
      out.push_back({"K8S001", Severity::Error,
                     r.address + ": the API server of " + where + " refuses the kubeconfig user: " +
                         error_of(**conn, "GET", "/api/v1/namespaces/" + operator_ns_, *answer).message,
                     r.source, r.address,
                     "use a kubeconfig user that may read namespaces and apply ClusterPolicies (docs/providers/kubernetes.md)"});
    }
  }
  return out;
}

std::vector<ReadResult> KubernetesProvider::read(const std::vector<Resource>& resources, const Call& call) {
  std::vector<ReadResult> out(resources.size());
  // One set of lists per cluster (context), whatever the number of resources.
  std::map<std::string, std::vector<size_t>> by_context;
  for (size_t i = 0; i < resources.size(); ++i) {
    out[i].address = resources[i].address;
    std::string ctx = text(resources[i].attributes, "context");
    by_context[ctx.empty() ? default_context_ : ctx].push_back(i);
  }
  for (const auto& [context, members] : by_context) {
    auto fail_all = [&out, &members = members](const Error& e) {  // clang 14: no bindings in lambdas
      for (size_t i : members) out[i].error = e;
    };
    auto conn = connect(resources[members.front()]);
    if (!conn) {
      fail_all(conn.error());
      continue;
    }
    auto c = call.fork();
    std::set<std::string> types;
    for (size_t i : members) types.insert(resources[i].type);
    Index index;
    std::optional<Error> failed;
    for (const auto& type : types) {
      for (const auto& [collection, kind] : collections(type)) {
        const bool nodes = kind == "Node";  // every node: one that lost its labels is drift
        auto items = list(**conn, collection, nodes ? "" : std::string(kManagedBy) + "=" + kManagedByValue, *c);
        if (!items) {
          failed = items.error();
          break;
        }
        for (auto& item : *items) {
          if (nodes) {  // matched by name (POOL-INDEX), for every cluster resource
            for (size_t i : members)
              if (resources[i].type == type) index[resources[i].address][kind].push_back(item);
            continue;
          }
          const Json meta = item.value("metadata", Json::object());
          const std::string address = text(meta.value("annotations", Json::object()), kAddressAnnotation);
          if (!address.empty()) index[address][kind].push_back(std::move(item));
        }
      }
      if (failed) break;
    }
    if (failed) {
      fail_all(*failed);
      continue;
    }
    static const std::map<std::string, std::vector<Json>> kNothing;
    for (size_t i : members) {
      auto it = index.find(resources[i].address);
      out[i].current = observe(resources[i], it == index.end() ? kNothing : it->second);
    }
  }
  return out;
}

}  // namespace plinth::kubernetes
