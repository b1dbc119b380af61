#include "tests/emulators/kubernetes/resources.h"

#include <algorithm>
#include <ctime>

namespace plinth::kube_emulator {
namespace {

const char* kNameDescription =
    "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a "
    "client to request the generation of an appropriate name automatically. Name is primarily intended for creation "
    "idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const char* kAgeDescription =
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed "
    "to be set in happens-before order across separate operations. Clients may not set this value. It is represented "
    "in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

Column name_column() { return {"Name", "string", "name", kNameDescription, 0, ""}; }
Column age_column() { return {"Age", "string", "", kAgeDescription, 0, ""}; }
Column created_at_column() { return {"Created At", "date", "", kAgeDescription, 0, ""}; }

std::chrono::system_clock::time_point parse_time(const std::string& s) {
  std::tm tm{};
  if (s.size() < 19 || !strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return {};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string age(const json& obj, std::chrono::system_clock::time_point now) {
  std::string ts = obj["metadata"].value("creationTimestamp", "");
  if (ts.empty()) return "<unknown>";
  return human_duration(std::chrono::duration_cast<std::chrono::seconds>(now - parse_time(ts)));
}

std::string str(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

/// The value at a CRD printer column's simple JSONPath (".status.state").
const json* at_json_path(const json& obj, const std::string& path) {
  const json* cur = &obj;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] != '.') return nullptr;
    size_t next = path.find('.', i + 1);
    std::string key = path.substr(i + 1, next == std::string::npos ? std::string::npos : next - i - 1);
    if (!cur->is_object() || !cur->contains(key)) return nullptr;
    cur = &(*cur)[key];
    i = next == std::string::npos ? path.size() : next;
  }
  return cur;
}

std::string binding_subjects(const json& obj, const std::string& kind) {
  std::string out;
  for (const auto& s : obj.value("subjects", json::array())) {
    if (s.value("kind", "") != kind) continue;
    std::string name =
        kind == "ServiceAccount" ? s.value("namespace", "") + "/" + s.value("name", "") : s.value("name", "");
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

/// The cells of one row for a built-in kind, in the order of its columns.
json builtin_cells(const ResourceType& t, const json& obj, std::chrono::system_clock::time_point now) {
  const json& md = obj["metadata"];
  std::string name = md.value("name", "");
  const json empty = json::object();
  const json& status = obj.contains("status") ? obj["status"] : empty;
  if (t.kind == "Namespace") return {name, status.value("phase", "Active"), age(obj, now)};
  if (t.kind == "ResourceQuota") {
    std::vector<std::string> keys;
    const json hard = status.value("hard", json::object());
    for (const auto& [k, v] : hard.items()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    std::string request, limit;
    for (const auto& k : keys) {
      std::string& col = k.rfind("limits.", 0) == 0 ? limit : request;
      std::string used = str(status.value("used", json::object()).value(k, json("0")));
      col += (col.empty() ? "" : ", ") + k + ": " + used + "/" + str(status["hard"][k]);
    }
    return {name, age(obj, now), request, limit};
  }
  if (t.kind == "ServiceAccount") return {name, obj.value("secrets", json::array()).size(), age(obj, now)};
  if (t.kind == "ConfigMap")
    return {name, obj.value("data", json::object()).size() + obj.value("binaryData", json::object()).size(), age(obj, now)};
  if (t.kind == "Node") {
    std::string ready = "Unknown";
    for (const auto& c : status.value("conditions", json::array()))
      if (c.value("type", "") == "Ready") ready = c.value("status", "") == "True" ? "Ready" : "NotReady";
    if (obj.value("spec", json::object()).value("unschedulable", false)) ready += ",SchedulingDisabled";
    std::string roles;
    const json labels = md.value("labels", json::object());
    for (const auto& [k, v] : labels.items()) {
      const std::string prefix = "node-role.kubernetes.io/";
      if (k.rfind(prefix, 0) == 0 && k.size() > prefix.size())
        roles += (roles.empty() ? "" : ",") + k.substr(prefix.size());
    }
    return {name, ready, roles.empty() ? "<none>" : roles, age(obj, now),
            status.value("nodeInfo", json::object()).value("kubeletVersion", "")};
  }
  if (t.kind == "RoleBinding" || t.kind == "ClusterRoleBinding") {
    json ref = obj.value("roleRef", json::object());
    return {name,
            ref.value("kind", "") + "/" + ref.value("name", ""),
            age(obj, now),
            binding_subjects(obj, "User"),
            binding_subjects(obj, "Group"),
            binding_subjects(obj, "ServiceAccount")};
  }
  // Role, ClusterRole, CustomResourceDefinition: the default table.
  return {name, md.value("creationTimestamp", "")};
}

std::vector<Column> builtin_columns(const ResourceType& t) {
  if (t.kind == "Namespace")
    return {name_column(), {"Status", "string", "", "The status of the namespace", 0, ""}, age_column()};
  if (t.kind == "ResourceQuota")
    return {name_column(),
            age_column(),
            {"Request", "string", "", "Request represents a minimum amount of cpu/memory that a container may consume.",
             0, ""},
            {"Limit", "string", "",
             "Limits control the maximum amount of cpu/memory that a container may use independent of contention on "
             "the node.",
             0, ""}};
  if (t.kind == "ConfigMap")
    return {name_column(), {"Data", "string", "", "", 0, ""}, age_column()};
  if (t.kind == "ServiceAccount")
    return {name_column(),
            {"Secrets", "string", "",
             "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are "
             "allowed to use.",
             0, ""},
            age_column()};
  if (t.kind == "Node")
    return {name_column(),
            {"Status", "string", "", "The status of the node", 0, ""},
            {"Roles", "string", "", "The roles of the node", 0, ""},
            age_column(),
            {"Version", "string", "", "Kubelet Version reported by the node.", 0, ""}};
  if (t.kind == "RoleBinding" || t.kind == "ClusterRoleBinding")
    return {name_column(),
            {"Role", "string", "", "RoleRef is the reference to the role the binding refers to.", 0, ""},
            age_column(),
            {"Users", "string", "", "Users in the binding.", 1, ""},
            {"Groups", "string", "", "Groups in the binding.", 1, ""},
            {"ServiceAccounts", "string", "", "ServiceAccounts in the binding.", 1, ""}};
  return {name_column(), created_at_column()};
}

/// The known fields of a built-in kind: a nested object whose leaves are
/// "*" (anything below is fine); {"[]": schema} describes list items.
const json& schema_of(const std::string& kind) {
  static const json metadata = {{"name", "*"},
                                {"generateName", "*"},
                                {"namespace", "*"},
                                {"selfLink", "*"},
                                {"uid", "*"},
                                {"resourceVersion", "*"},
                                {"generation", "*"},
                                {"creationTimestamp", "*"},
                                {"deletionTimestamp", "*"},
                                {"deletionGracePeriodSeconds", "*"},
                                {"labels", "*"},
                                {"annotations", "*"},
                                {"ownerReferences", "*"},
                                {"finalizers", "*"},
                                {"managedFields", "*"}};
  static const json rule = {
      {"[]",
       {{"apiGroups", "*"}, {"resources", "*"}, {"verbs", "*"}, {"resourceNames", "*"}, {"nonResourceURLs", "*"}}}};
  static const json binding = {
      {"subjects", {{"[]", {{"kind", "*"}, {"apiGroup", "*"}, {"name", "*"}, {"namespace", "*"}}}}},
      {"roleRef", {{"apiGroup", "*"}, {"kind", "*"}, {"name", "*"}}}};
  auto with_base = [&](json extra) {
    extra["apiVersion"] = "*";
    extra["kind"] = "*";
    extra["metadata"] = metadata;
    return extra;
  };
  static const std::map<std::string, json> schemas = {
      {"Namespace", with_base({{"spec", {{"finalizers", "*"}}}, {"status", "*"}})},
      {"ResourceQuota",
       with_base({{"spec", {{"hard", "*"}, {"scopes", "*"}, {"scopeSelector", "*"}}}, {"status", "*"}})},
      {"ServiceAccount",
       with_base({{"secrets", "*"}, {"imagePullSecrets", "*"}, {"automountServiceAccountToken", "*"}})},
      {"ConfigMap", with_base({{"data", "*"}, {"binaryData", "*"}, {"immutable", "*"}})},
      {"Node", with_base({{"spec",
                           {{"podCIDR", "*"},
                            {"podCIDRs", "*"},
                            {"providerID", "*"},
                            {"unschedulable", "*"},
                            {"taints", "*"},
                            {"configSource", "*"},
                            {"externalID", "*"}}},
                          {"status", "*"}})},
      {"Role", with_base({{"rules", rule}})},
      {"ClusterRole", with_base({{"rules", rule}, {"aggregationRule", "*"}})},
      {"RoleBinding", with_base(binding)},
      {"ClusterRoleBinding", with_base(binding)},
      {"CustomResourceDefinition", with_base({{"spec", "*"}, {"status", "*"}})},
  };
  static const json any = "*";
  auto it = schemas.find(kind);
  return it == schemas.end() ? any : it->second;
}

void find_unknown(const json& v, const json& schema, const std::string& path, std::vector<std::string>& out) {
  if (schema.is_string()) return;
  if (schema.contains("[]")) {
    if (!v.is_array()) return;
    for (size_t i = 0; i < v.size(); ++i) find_unknown(v[i], schema["[]"], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  if (!v.is_object()) return;
  for (const auto& [k, kid] : v.items()) {
    std::string p = path.empty() ? k : path + "." + k;
    if (!schema.contains(k))
      out.push_back(p);
    else
      find_unknown(kid, schema[k], p, out);
  }
}

void prune(json& v, const json& schema) {
  if (schema.is_string()) return;
  if (schema.contains("[]")) {
    if (v.is_array())
      for (auto& item : v) prune(item, schema["[]"]);
    return;
  }
  if (!v.is_object()) return;
  for (auto it = v.begin(); it != v.end();) {
    if (!schema.contains(it.key())) {
      it = v.erase(it);
    } else {
      prune(*it, schema[it.key()]);
      ++it;
    }
  }
}

}  // namespace

void prune_unknown(const ResourceType& type, json& object) {
  if (type.from_crd) {
    if (object.contains("metadata")) prune(object["metadata"], schema_of("Namespace")["metadata"]);
    return;
  }
  prune(object, schema_of(type.kind));
}

const std::vector<std::string>& resource_verbs() {
  static const std::vector<std::string> verbs = {"create", "delete", "deletecollection", "get",
                                                 "list",   "patch",  "update",           "watch"};
  return verbs;
}

std::vector<ResourceType> builtin_types() {
  std::vector<ResourceType> t;
  t.push_back({"", "v1", "ConfigMap", "configmaps", "configmap", true, {"cm"}, {}, false});
  t.push_back({"", "v1", "Namespace", "namespaces", "namespace", false, {"ns"}, {}, true});
  t.push_back({"", "v1", "Node", "nodes", "node", false, {"no"}, {}, true});
  t.push_back({"", "v1", "Pod", "pods", "pod", true, {"po"}, {"all"}, true});
  t.push_back({"policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", "poddisruptionbudget", true, {"pdb"}, {},
               true});
  t.push_back({"", "v1", "ResourceQuota", "resourcequotas", "resourcequota", true, {"quota"}, {}, true});
  t.push_back({"", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", true, {"sa"}, {}, false});
  const std::string rbac = "rbac.authorization.k8s.io";
  t.push_back({rbac, "v1", "ClusterRoleBinding", "clusterrolebindings", "clusterrolebinding", false, {}, {}, false});
  t.push_back({rbac, "v1", "ClusterRole", "clusterroles", "clusterrole", false, {}, {}, false});
  t.push_back({rbac, "v1", "RoleBinding", "rolebindings", "rolebinding", true, {}, {}, false});
  t.push_back({rbac, "v1", "Role", "roles", "role", true, {}, {}, false});
  t.push_back({"apiextensions.k8s.io",
               "v1",
               "CustomResourceDefinition",
               "customresourcedefinitions",
               "customresourcedefinition",
               false,
               {"crd", "crds"},
               {"api-extensions"},
               true});
  return t;
}

std::optional<ResourceType> type_from_crd(const json& crd) {
  const json spec = crd.value("spec", json::object());
  const json names = spec.value("names", json::object());
  ResourceType t;
  t.group = spec.value("group", "");
  t.kind = names.value("kind", "");
  t.plural = names.value("plural", "");
  t.singular = names.value("singular", "");
  if (t.singular.empty()) {
    t.singular = t.kind;
    std::transform(t.singular.begin(), t.singular.end(), t.singular.begin(), ::tolower);
  }
  t.namespaced = spec.value("scope", "") == "Namespaced";
  t.short_names = names.value("shortNames", std::vector<std::string>{});
  t.categories = names.value("categories", std::vector<std::string>{});
  t.from_crd = true;
  for (const auto& v : spec.value("versions", json::array())) {
    if (!v.value("served", false) || !v.value("storage", false)) continue;
    t.version = v.value("name", "");
    t.status_subresource = v.value("subresources", json::object()).contains("status");
    for (const auto& c : v.value("additionalPrinterColumns", json::array()))
      t.printer_columns.push_back({c.value("name", ""), c.value("type", "string"), c.value("format", ""),
                                   c.value("description", ""), c.value("priority", 0), c.value("jsonPath", "")});
  }
  if (t.group.empty() || t.kind.empty() || t.plural.empty() || t.version.empty()) return std::nullopt;
  return t;
}

json clusterpolicy_crd() {
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata",
           {{"name", "clusterpolicies.nvidia.com"}, {"labels", {{"app.kubernetes.io/component", "gpu-operator"}}}}},
          {"spec",
           {{"group", "nvidia.com"},
            {"names",
             {{"kind", "ClusterPolicy"},
              {"listKind", "ClusterPolicyList"},
              {"plural", "clusterpolicies"},
              {"singular", "clusterpolicy"}}},
            {"scope", "Cluster"},
            {"versions",
             {{{"name", "v1"},
               {"served", true},
               {"storage", true},
               {"subresources", {{"status", json::object()}}},
               {"additionalPrinterColumns",
                {{{"jsonPath", ".status.state"}, {"name", "Status"}, {"type", "string"}},
                 {{"jsonPath", ".metadata.creationTimestamp"}, {"name", "Age"}, {"type", "string"}}}},
               {"schema",
                {{"openAPIV3Schema",
                  {{"description", "ClusterPolicy is the Schema for the clusterpolicies API"},
                   {"type", "object"},
                   {"properties",
                    {{"apiVersion", {{"type", "string"}}},
                     {"kind", {{"type", "string"}}},
                     {"metadata", {{"type", "object"}}},
                     {"spec",
                      {{"description", "ClusterPolicySpec defines the desired state of ClusterPolicy"},
                       {"type", "object"},
                       {"x-kubernetes-preserve-unknown-fields", true}}},
                     {"status",
                      {{"description", "ClusterPolicyStatus defines the observed state of ClusterPolicy"},
                       {"type", "object"},
                       {"properties",
                        {{"namespace", {{"type", "string"}}},
                         {"state", {{"type", "string"}, {"enum", {"ignored", "ready", "notReady"}}}}}}}}}}}}}}}}}}}};
}

json make_table(const ResourceType& type, const std::vector<json>& objects, const json& list_metadata,
                const std::string& include_object, std::chrono::system_clock::time_point now) {
  std::vector<Column> columns = type.from_crd ? std::vector<Column>{name_column()} : builtin_columns(type);
  if (type.from_crd) {
    if (type.printer_columns.empty())
      columns.push_back({"Age", "date", "", kAgeDescription, 0, ".metadata.creationTimestamp"});
    else
      columns.insert(columns.end(), type.printer_columns.begin(), type.printer_columns.end());
  }
  json defs = json::array();
  for (const auto& c : columns)
    defs.push_back({{"name", c.name},
                    {"type", c.type},
                    {"format", c.format},
                    {"description", c.description},
                    {"priority", c.priority}});
  json rows = json::array();
  for (const auto& obj : objects) {
    json cells;
    if (!type.from_crd) {
      cells = builtin_cells(type, obj, now);
    } else {
      cells = json::array({obj["metadata"].value("name", "")});
      for (size_t i = 1; i < columns.size(); ++i) {
        const json* v = at_json_path(obj, columns[i].json_path);
        if (!v)
          cells.push_back(nullptr);
        else if (columns[i].type == "date" && v->is_string())
          cells.push_back(human_duration(
              std::chrono::duration_cast<std::chrono::seconds>(now - parse_time(v->get<std::string>()))));
        else
          cells.push_back(columns[i].type == "string" ? json(str(*v)) : *v);
      }
    }
    json row = {{"cells", cells}};
    if (include_object == "Object") {
      row["object"] = obj;
    } else if (include_object != "None") {
      json md = obj["metadata"];
      row["object"] = {{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", md}};
    }
    rows.push_back(row);
  }
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", list_metadata},
          {"columnDefinitions", defs},
          {"rows", rows}};
}

std::vector<std::string> unknown_fields(const ResourceType& type, const json& object) {
  std::vector<std::string> out;
  if (type.from_crd) {
    // Custom resources keep unknown fields (x-kubernetes-preserve-unknown-fields); only metadata is checked.
    if (object.contains("metadata"))
      find_unknown(object["metadata"], schema_of("Namespace")["metadata"], "metadata", out);
    return out;
  }
  find_unknown(object, schema_of(type.kind), "", out);
  return out;
}

std::string human_duration(std::chrono::seconds d) {
  long long s = d.count();
  if (s < -1) return "<invalid>";
  if (s < 0) return "0s";
  if (s < 120) return std::to_string(s) + "s";
  long long m = s / 60;
  if (m < 10) return s % 60 == 0 ? std::to_string(m) + "m" : std::to_string(m) + "m" + std::to_string(s % 60) + "s";
  if (m < 180) return std::to_string(m) + "m";
  long long h = s / 3600;
  if (h < 8) return m % 60 == 0 ? std::to_string(h) + "h" : std::to_string(h) + "h" + std::to_string(m % 60) + "m";
  if (h < 48) return std::to_string(h) + "h";
  if (h < 24 * 8)
    return h % 24 == 0 ? std::to_string(h / 24) + "d" : std::to_string(h / 24) + "d" + std::to_string(h % 24) + "h";
  if (h < 24 * 365 * 2) return std::to_string(h / 24) + "d";
  long long dy = (h / 24) % 365;
  if (h < 24 * 365 * 8)
    return dy == 0 ? std::to_string(h / 24 / 365) + "y" : std::to_string(h / 24 / 365) + "y" + std::to_string(dy) + "d";
  return std::to_string(h / 24 / 365) + "y";
}

}  // namespace plinth::kube_emulator
