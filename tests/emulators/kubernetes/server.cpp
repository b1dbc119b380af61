#include "tests/emulators/kubernetes/server.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <functional>
#include <regex>
#include <set>

#include "tests/emulators/kubernetes/managed_fields.h"
#include "tests/emulators/kubernetes/protobuf.h"
#include "tests/emulators/kubernetes/selector.h"

namespace plinth::kube_emulator {

struct ApiServer::Target {
  ResourceType type;
  std::string ns;    ///< from the path ("" for cluster-scoped or all namespaces)
  std::string name;  ///< "" for a collection
  std::string sub;   ///< subresource ("status") or ""
};

struct ApiServer::Caller {
  Identity id;
};

namespace {

// ---------------------------------------------------------------- helpers

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::string param(const Request& req, const std::string& key) {
  auto it = req.params.find(key);
  return it == req.params.end() ? "" : it->second;
}

std::string header(const Request& req, const std::string& key) {
  auto it = req.headers.find(key);
  return it == req.headers.end() ? "" : it->second;
}

json status_body(int code, const std::string& reason, const std::string& message, const json& details) {
  json s = {{"kind", "Status"},
            {"apiVersion", "v1"},
            {"metadata", json::object()},
            {"status", "Failure"},
            {"message", message}};
  if (!reason.empty()) s["reason"] = reason;
  if (!details.is_null()) s["details"] = details;
  s["code"] = code;
  return s;
}

Response fail(Response r, int code, const std::string& reason, const std::string& message,
              const json& details = nullptr) {
  r.status = code;
  r.content_type = "application/json";
  r.body = status_body(code, reason, message, details).dump();
  return r;
}

Response ok(Response r, const json& body, int code = 200) {
  r.status = code;
  r.content_type = "application/json";
  r.body = body.dump();
  return r;
}

json details(const ResourceType& t, const std::string& name) {
  json d = json::object();
  if (!name.empty()) d["name"] = name;
  if (!t.group.empty()) d["group"] = t.group;
  d["kind"] = t.plural;
  return d;
}

std::string dq(const std::string& s) { return "\"" + s + "\""; }

Response not_found(Response r, const ResourceType& t, const std::string& name) {
  return fail(std::move(r), 404, "NotFound", t.qualified() + " " + dq(name) + " not found", details(t, name));
}

Response namespace_not_found(Response r, const std::string& ns) {
  return fail(std::move(r), 404, "NotFound", "namespaces " + dq(ns) + " not found",
              {{"name", ns}, {"kind", "namespaces"}});
}

Response stale(Response r, const ResourceType& t, const std::string& name) {
  return fail(std::move(r), 409, "Conflict",
              "Operation cannot be fulfilled on " + t.qualified() + " " + dq(name) +
                  ": the object has been modified; please apply your changes to the latest version and try again",
              details(t, name));
}

Response invalid(Response r, const ResourceType& t, const std::string& name, const std::string& field,
                 const std::string& cause_reason, const std::string& what) {
  std::string kind_gr = t.group.empty() ? t.kind : t.kind + "." + t.group;
  json d = details(t, name);
  d["kind"] = t.kind;
  d["causes"] = {{{"reason", cause_reason}, {"message", what}, {"field", field}}};
  return fail(std::move(r), 422, "Invalid", kind_gr + " " + dq(name) + " is invalid: " + field + ": " + what, d);
}

json yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& v : n) a.push_back(yaml_to_json(v));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted: always a string
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
      if (s == "null" || s == "~" || s == "Null" || s == "NULL") return nullptr;
      static const std::regex integer(R"([-+]?[0-9]+)");
      static const std::regex real(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
      if (std::regex_match(s, integer)) {
        try {
          return std::stoll(s);
        } catch (...) {
          return s;
        }
      }
      if (std::regex_match(s, real)) return std::stod(s);
      return s;
    }
    default:
      return nullptr;
  }
}

/// The request body as JSON (or YAML for apply). Returns "" or an error.
std::string parse_body(const Request& req, json& out, bool allow_yaml) {
  if (req.body.empty()) return "the body of the request was empty";
  if (header(req, "content-type").rfind("application/vnd.kubernetes.protobuf", 0) == 0)
    return decode_protobuf(req.body, out);
  try {
    out = json::parse(req.body);
    return "";
  } catch (const json::exception& e) {
    if (!allow_yaml) return std::string("couldn't get version/kind; json parse error: ") + e.what();
  }
  try {
    out = yaml_to_json(YAML::Load(req.body));
    return out.is_object() ? "" : "error decoding YAML: the body is not a mapping";
  } catch (const YAML::Exception& e) {
    return std::string("error decoding YAML: ") + e.what();
  }
}

const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string b64url(const std::string& in) {
  std::string out;
  unsigned val = 0;
  int bits = -6;
  for (unsigned char c : in) {
    val = (val << 8) + c;
    bits += 8;
    while (bits >= 0) {
      out.push_back(kB64[(val >> bits) & 0x3F]);
      bits -= 6;
    }
  }
  if (bits > -6) out.push_back(kB64[((val << 8) >> (bits + 8)) & 0x3F]);
  return out;
}

bool unb64url(const std::string& in, std::string& out) {
  out.clear();
  unsigned val = 0;
  int bits = -8;
  for (char c : in) {
    if (c == '=') break;
    const char* p = std::strchr(kB64, c == '+' ? '-' : c == '/' ? '_' : c);
    if (!p || c == '\0') return false;
    val = (val << 6) + static_cast<unsigned>(p - kB64);
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((val >> bits) & 0xFF));
      bits -= 8;
    }
  }
  return true;
}

bool is_dns_label(const std::string& s) {
  static const std::regex re("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  return s.size() <= 63 && std::regex_match(s, re);
}

bool is_dns_subdomain(const std::string& s) {
  static const std::regex re(R"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)");
  return s.size() <= 253 && std::regex_match(s, re);
}

/// "" when `name` is valid for the kind, else the field error text.
std::string name_error(const ResourceType& t, const std::string& name) {
  if (t.kind == "Namespace") {
    if (!is_dns_label(name))
      return "Invalid value: " + dq(name) +
             ": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    return "";
  }
  if (t.group == "rbac.authorization.k8s.io") {
    if (name == "." || name == ".." || name.find('/') != std::string::npos || name.find('%') != std::string::npos)
      return "Invalid value: " + dq(name) + ": may not be '.' or '..' and may not contain '/' or '%'";
    return "";
  }
  if (!is_dns_subdomain(name))
    return "Invalid value: " + dq(name) +
           ": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
           "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  return "";
}

std::map<std::string, std::string> labels_of(const json& obj) {
  std::map<std::string, std::string> out;
  auto md = obj.find("metadata");
  if (md == obj.end() || !md->contains("labels") || !(*md)["labels"].is_object()) return out;
  for (const auto& [k, v] : (*md)["labels"].items())
    if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

std::string key_of(const std::string& ns, const std::string& name) { return ns + "/" + name; }

/// The object without managedFields times and resourceVersion: two versions
/// equal under this are the same write (a no-op).
json comparable(json obj) {
  if (obj.contains("metadata")) {
    obj["metadata"].erase("resourceVersion");
    if (obj["metadata"].contains("managedFields"))
      for (auto& e : obj["metadata"]["managedFields"]) e.erase("time");
  }
  return obj;
}

json without(json obj, std::initializer_list<const char*> keys) {
  for (auto k : keys) obj.erase(k);
  return obj;
}

/// The field manager of an Update: ?fieldManager, else the User-Agent up to its first "/".
std::string update_manager(const Request& req) {
  std::string m = param(req, "fieldManager");
  if (!m.empty()) return m;
  std::string ua = header(req, "user-agent");
  m = ua.substr(0, ua.find('/'));
  return m.empty() ? "unknown" : m.substr(0, 128);
}

bool is_dry_run(const Request& req) {
  auto range = req.params.equal_range("dryRun");
  for (auto it = range.first; it != range.second; ++it)
    if (it->second == "All") return true;
  return false;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llX", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

// ---------------------------------------------------------------- set-up

ApiServer::ApiServer(const Options& options) : options_(options), rng_(options.seed * 7919u + 17u) {
  types_ = builtin_types();
  seed();
}

void ApiServer::set_address(const std::string& host_port) {
  std::lock_guard<std::mutex> lock(mu_);
  address_ = host_port;
}

std::string ApiServer::new_uid() {
  std::uniform_int_distribution<int> d(0, 15);
  std::string u;
  const char* hexdigits = "0123456789abcdef";
  for (int i = 0; i < 36; ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23)
      u += '-';
    else if (i == 14)
      u += '4';
    else if (i == 19)
      u += hexdigits[8 + d(rng_) % 4];
    else
      u += hexdigits[d(rng_)];
  }
  return u;
}

std::string ApiServer::now() const {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void ApiServer::seed() {
  auto add = [&](const std::string& plural, json obj, const std::string& manager) {
    const ResourceType* t = nullptr;
    for (const auto& x : types_)
      if (x.plural == plural) t = &x;
    ResourceType type = *t;
    obj["apiVersion"] = type.api_version();
    obj["kind"] = type.kind;
    std::vector<ManagedEntry> managers;
    Tracking tracking{type.status_subresource};
    record_update(managers, json::object(), obj, manager, type.api_version(), now(), tracking);
    obj["metadata"]["managedFields"] = write_managed_fields(managers);
    commit(type, nullptr, obj, false);
  };
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"})
    add("namespaces", {{"metadata", {{"name", ns}}}}, "kube-apiserver");
  json all = {{"apiGroups", {"*"}}, {"resources", {"*"}}, {"verbs", {"*"}}};
  json read = {{"apiGroups", {"", "rbac.authorization.k8s.io"}},
               {"resources", {"namespaces", "resourcequotas", "serviceaccounts", "roles", "rolebindings"}},
               {"verbs", {"get", "list", "watch"}}};
  json write = {{"apiGroups", {"", "rbac.authorization.k8s.io"}},
                {"resources", {"resourcequotas", "serviceaccounts", "roles", "rolebindings"}},
                {"verbs", {"create", "delete", "deletecollection", "patch", "update"}}};
  json bootstrap = {{"kubernetes.io/bootstrapping", "rbac-defaults"}};
  add("clusterroles",
      {{"metadata", {{"name", "cluster-admin"}, {"labels", bootstrap}}},
       {"rules", {all, {{"nonResourceURLs", {"*"}}, {"verbs", {"*"}}}}}},
      "kube-apiserver");
  add("clusterroles", {{"metadata", {{"name", "admin"}, {"labels", bootstrap}}}, {"rules", {read, write}}},
      "kube-apiserver");
  add("clusterroles", {{"metadata", {{"name", "edit"}, {"labels", bootstrap}}}, {"rules", {read, write}}},
      "kube-apiserver");
  add("clusterroles", {{"metadata", {{"name", "view"}, {"labels", bootstrap}}}, {"rules", {read}}}, "kube-apiserver");
  add("clusterrolebindings",
      {{"metadata", {{"name", "cluster-admin"}, {"labels", bootstrap}}},
       {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "cluster-admin"}}},
       {"subjects", {{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Group"}, {"name", "system:masters"}}}}},
      "kube-apiserver");
  add("customresourcedefinitions", clusterpolicy_crd(), "helm");
  std::string kubelet = options_.server_version;
  for (size_t i = 0; i < options_.nodes.size(); ++i) {
    const NodeSpec& n = options_.nodes[i];
    json labels = {{"kubernetes.io/hostname", n.name}, {"kubernetes.io/os", "linux"}, {"kubernetes.io/arch", "amd64"}};
    if (options_.node_gpus > 0) {
      labels["nvidia.com/gpu.present"] = "true";
      labels["nvidia.com/gpu.count"] = std::to_string(options_.node_gpus);
      labels["nvidia.com/gpu.product"] = options_.node_gpu_product;
    }
    for (const auto& [k, v] : n.labels) labels[k] = v;
    json capacity = {{"cpu", "64"}, {"memory", "527939456Ki"}, {"pods", "110"}, {"ephemeral-storage", "1843269236Ki"}};
    if (options_.node_gpus > 0) capacity["nvidia.com/gpu"] = std::to_string(options_.node_gpus);
    json status = {{"capacity", capacity},
                   {"allocatable", capacity},
                   {"conditions",
                    {{{"type", "Ready"},
                      {"status", "True"},
                      {"reason", "KubeletReady"},
                      {"message", "kubelet is posting ready status"},
                      {"lastHeartbeatTime", now()},
                      {"lastTransitionTime", now()}}}},
                   {"addresses",
                    {{{"type", "InternalIP"}, {"address", "192.0.2." + std::to_string(10 + i % 240)}},
                     {{"type", "Hostname"}, {"address", n.name}}}},
                   {"nodeInfo",
                    {{"kubeletVersion", kubelet},
                     {"containerRuntimeVersion", "containerd://1.7.24"},
                     {"operatingSystem", "linux"},
                     {"architecture", "amd64"},
                     {"osImage", "Ubuntu 22.04.5 LTS"},
                     {"kernelVersion", "5.15.0-126-generic"}}}};
    add("nodes", {{"metadata", {{"name", n.name}, {"labels", labels}}}, {"spec", json::object()}, {"status", status}},
        "kubelet");
  }
}

void ApiServer::rebuild_types() {
  types_ = builtin_types();
  for (const auto& [key, crd] : store_["customresourcedefinitions.apiextensions.k8s.io"])
    if (auto t = type_from_crd(crd)) types_.push_back(*t);
}

const ResourceType* ApiServer::find_type(const std::string& group, const std::string& version,
                                         const std::string& plural) const {
  for (const auto& t : types_)
    if (t.group == group && t.version == version && t.plural == plural) return &t;
  return nullptr;
}

const json* ApiServer::find(const ResourceType& type, const std::string& ns, const std::string& name) const {
  auto b = store_.find(type.qualified());
  if (b == store_.end()) return nullptr;
  auto it = b->second.find(key_of(type.namespaced ? ns : "", name));
  return it == b->second.end() ? nullptr : &it->second;
}

json ApiServer::dump() const {
  std::lock_guard<std::mutex> lock(mu_);
  json objects = json::array();
  for (const auto& [res, bucket] : store_)
    for (const auto& [key, obj] : bucket) objects.push_back(obj);
  return {{"resourceVersion", std::to_string(resource_version_)}, {"objects", objects}};
}

std::string ApiServer::resource_of(const std::string& path) const {
  std::vector<std::string> seg = split_path(path);
  std::lock_guard<std::mutex> lock(mu_);
  size_t at = seg.size() >= 2 && seg[0] == "api" ? 2 : seg.size() >= 3 && seg[0] == "apis" ? 3 : 0;
  if (at == 0 || at >= seg.size()) return "";
  std::string group = seg[0] == "api" ? "" : seg[1];
  std::string version = seg[0] == "api" ? seg[1] : seg[2];
  std::string plural = seg[at];
  if (plural == "namespaces" && seg.size() > at + 2) plural = seg[at + 2];
  const ResourceType* t = find_type(group, version, plural);
  return t ? t->qualified() : "";
}

// ---------------------------------------------------------------- storing

json ApiServer::commit(const ResourceType& type, const json* old, json obj, bool dry_run) {
  json& md = obj["metadata"];
  obj["apiVersion"] = type.api_version();
  obj["kind"] = type.kind;
  if (old) {
    const json& omd = (*old)["metadata"];
    md["uid"] = omd["uid"];
    md["creationTimestamp"] = omd["creationTimestamp"];
    md["generation"] = omd.value("generation", 1);
    if (omd.contains("deletionTimestamp")) md["deletionTimestamp"] = omd["deletionTimestamp"];
  } else {
    md["uid"] = new_uid();
    md["creationTimestamp"] = now();
    md["generation"] = 1;
    md.erase("deletionTimestamp");
  }
  if (!type.namespaced) md.erase("namespace");
  md.erase("selfLink");

  // What the controllers a real cluster runs would set.
  if (type.kind == "Namespace") {
    md["labels"]["kubernetes.io/metadata.name"] = md["name"];
    if (!obj.contains("status") || !obj["status"].is_object()) obj["status"] = json::object();
    if (!obj["status"].contains("phase")) obj["status"]["phase"] = "Active";
  } else if (type.kind == "ResourceQuota") {
    json hard = obj.value("spec", json::object()).value("hard", json::object());
    for (auto& [k, v] : hard.items())
      if (v.is_number()) v = v.dump();
    if (obj.contains("spec") && obj["spec"].contains("hard")) obj["spec"]["hard"] = hard;
    json used = obj.value("status", json::object()).value("used", json::object());
    json new_used = json::object();
    for (const auto& [k, v] : hard.items()) new_used[k] = used.value(k, json("0"));
    obj["status"] = {{"hard", hard}, {"used", new_used}};
  } else if (type.kind == "CustomResourceDefinition") {
    json names = obj.value("spec", json::object()).value("names", json::object());
    json stored = json::array();
    for (const auto& v : obj.value("spec", json::object()).value("versions", json::array()))
      if (v.value("storage", false)) stored.push_back(v.value("name", ""));
    json conditions = old ? old->value("status", json::object()).value("conditions", json::array()) : json::array();
    std::string t = conditions.empty() ? now() : conditions[0].value("lastTransitionTime", now());
    obj["status"] = {{"acceptedNames", names},
                     {"conditions",
                      {{{"type", "NamesAccepted"},
                        {"status", "True"},
                        {"reason", "NoConflicts"},
                        {"message", "no conflicts found"},
                        {"lastTransitionTime", t}},
                       {{"type", "Established"},
                        {"status", "True"},
                        {"reason", "InitialNamesAccepted"},
                        {"message", "the initial names have been accepted"},
                        {"lastTransitionTime", t}}}},
                     {"storedVersions", stored}};
  }
  if (old) {
    auto spec_part = [](const json& o) { return without(o, {"metadata", "status", "apiVersion", "kind"}); };
    if (spec_part(obj) != spec_part(*old)) md["generation"] = (*old)["metadata"].value("generation", 1) + 1;
    json before = comparable(*old);
    json after = comparable(obj);
    after["metadata"]["resourceVersion"] = nullptr;
    before["metadata"]["resourceVersion"] = nullptr;
    if (before == after) return *old;
  }
  if (dry_run) {
    md["resourceVersion"] = old ? (*old)["metadata"]["resourceVersion"] : json("");
    return obj;
  }
  md["resourceVersion"] = std::to_string(++resource_version_);
  bucket(type)[key_of(type.namespaced ? md.value("namespace", "") : "", md.value("name", ""))] = obj;
  if (type.kind == "CustomResourceDefinition") rebuild_types();
  if (type.kind == "Namespace" && !old) {
    // The service account controller gives every namespace a "default" account.
    const ResourceType* sa = find_type("", "v1", "serviceaccounts");
    std::string ns = md.value("name", "");
    if (sa && !find(*sa, ns, "default")) {
      json account = {
          {"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "default"}, {"namespace", ns}}}};
      std::vector<ManagedEntry> managers;
      ResourceType sat = *sa;
      record_update(managers, json::object(), account, "kube-controller-manager", "v1", now(), Tracking{false});
      account["metadata"]["managedFields"] = write_managed_fields(managers);
      commit(sat, nullptr, account, false);
    }
  }
  return obj;
}

void ApiServer::erase_object(const ResourceType& type, const std::string& ns, const std::string& name) {
  bucket(type).erase(key_of(type.namespaced ? ns : "", name));
  if (type.kind == "Namespace") {
    // Everything in the namespace goes with it (a real cluster's namespace controller does this).
    const std::string prefix = name + "/";
    for (const auto& t : types_) {
      if (!t.namespaced) continue;
      auto& b = bucket(t);
      for (auto it = b.lower_bound(prefix); it != b.end() && it->first.rfind(prefix, 0) == 0;) it = b.erase(it);
    }
  } else if (type.kind == "CustomResourceDefinition") {
    std::string plural = name.substr(0, name.find('.'));
    std::string group = name.find('.') == std::string::npos ? "" : name.substr(name.find('.') + 1);
    store_.erase(plural + "." + group);
    rebuild_types();
  }
}

// ---------------------------------------------------------------- dispatch

Response ApiServer::handle(const Request& req) {
  Response r;
  std::lock_guard<std::mutex> lock(mu_);
  // Authentication: a verified client certificate first, then a bearer token.
  std::optional<Identity> who = req.client_cert;
  if (!who) {
    std::string auth = header(req, "authorization");
    if (auth.rfind("Bearer ", 0) == 0) {
      std::string token = auth.substr(7);
      for (const auto& t : options_.tokens)
        if (t.token == token) who = t.identity;
    }
  }
  std::vector<std::string> seg = split_path(req.path);
  if (!who) return fail(std::move(r), 401, "Unauthorized", "Unauthorized");
  r.user = who->user;
  if (std::find(who->groups.begin(), who->groups.end(), "system:authenticated") == who->groups.end())
    who->groups.push_back("system:authenticated");
  Caller caller{*who};
  if (req.method == "POST" && seg.size() == 4 && seg[0] == "apis" && seg[1] == "authentication.k8s.io" &&
      seg[3] == "selfsubjectreviews") {
    // `kubectl auth whoami`: who the server thinks the caller is.
    r.verb = "create";
    r.resource = "selfsubjectreviews.authentication.k8s.io";
    return ok(std::move(r),
              {{"kind", "SelfSubjectReview"},
               {"apiVersion", "authentication.k8s.io/" + seg[2]},
               {"metadata", {{"creationTimestamp", nullptr}}},
               {"status", {{"userInfo", {{"username", who->user}, {"groups", who->groups}}}}}},
              201);
  }

  bool api = !seg.empty() && ((seg[0] == "api" && seg.size() >= 3) || (seg[0] == "apis" && seg.size() >= 4));
  if (api) return resource_request(req, caller, std::move(r));
  r.verb = req.method == "GET" || req.method == "HEAD" ? "get" : req.method == "POST" ? "post" : "put";
  if (req.method != "GET" && req.method != "HEAD")
    return fail(std::move(r), 405, "MethodNotAllowed",
                "the server does not allow this method on the requested resource");
  if (seg.size() == 1 && (seg[0] == "healthz" || seg[0] == "livez" || seg[0] == "readyz")) {
    r.content_type = "text/plain; charset=utf-8";
    r.body = "ok";
    return r;
  }
  if (!seg.empty() && seg[0] == "openapi") return openapi(req, seg, std::move(r));
  return discovery(req, seg, std::move(r));
}

Response ApiServer::discovery(const Request&, const std::vector<std::string>& seg, Response r) {
  auto group_versions = [&] {
    std::map<std::string, std::set<std::string>> gv;
    for (const auto& t : types_)
      if (!t.group.empty()) gv[t.group].insert(t.version);
    return gv;
  };
  auto group_json = [&](const std::string& g, const std::set<std::string>& versions) {
    json vs = json::array();
    for (const auto& v : versions) vs.push_back({{"groupVersion", g + "/" + v}, {"version", v}});
    return json{{"name", g}, {"versions", vs}, {"preferredVersion", vs[0]}};
  };
  auto resource_list = [&](const std::string& g, const std::string& v) {
    json resources = json::array();
    for (const auto& t : types_) {
      if (t.group != g || t.version != v) continue;
      json e = {{"name", t.plural},
                {"singularName", t.singular},
                {"namespaced", t.namespaced},
                {"kind", t.kind},
                {"verbs", resource_verbs()}};
      if (!t.short_names.empty()) e["shortNames"] = t.short_names;
      if (!t.categories.empty()) e["categories"] = t.categories;
      e["storageVersionHash"] = b64url(hex(fnv1a(t.api_version() + "/" + t.kind)).substr(0, 8));
      resources.push_back(e);
      if (t.kind == "Pod")
        resources.push_back({{"name", "pods/eviction"},
                             {"singularName", ""},
                             {"namespaced", true},
                             {"group", "policy"},
                             {"version", "v1"},
                             {"kind", "Eviction"},
                             {"verbs", {"create"}}});
      if (t.status_subresource)
        resources.push_back({{"name", t.plural + "/status"},
                             {"singularName", ""},
                             {"namespaced", t.namespaced},
                             {"kind", t.kind},
                             {"verbs", {"get", "patch", "update"}}});
    }
    return json{{"kind", "APIResourceList"},
                {"apiVersion", "v1"},
                {"groupVersion", g.empty() ? v : g + "/" + v},
                {"resources", resources}};
  };
  std::string host = address_;
  if (seg.size() == 1 && seg[0] == "version") {
    std::string v = options_.server_version;
    std::string major = v.substr(1, v.find('.') - 1);
    std::string minor = v.substr(v.find('.') + 1);
    minor = minor.substr(0, minor.find('.'));
    return ok(r, {{"major", major},
                  {"minor", minor},
                  {"gitVersion", v},
                  {"gitCommit", "plinth-kube-apiserver-emulator"},
                  {"gitTreeState", "clean"},
                  {"buildDate", "2026-01-01T00:00:00Z"},
                  {"goVersion", "go1.23.4"},
                  {"compiler", "gc"},
                  {"platform", "linux/amd64"}});
  }
  if (seg.size() == 1 && seg[0] == "api")
    return ok(r, {{"kind", "APIVersions"},
                  {"versions", {"v1"}},
                  {"serverAddressByClientCIDRs", {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", host}}}}});
  if (seg.size() == 2 && seg[0] == "api" && seg[1] == "v1") return ok(r, resource_list("", "v1"));
  if (seg.size() == 1 && seg[0] == "apis") {
    json groups = json::array();
    for (const auto& [g, vs] : group_versions()) groups.push_back(group_json(g, vs));
    return ok(r, {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}});
  }
  auto gvs = group_versions();
  if (seg.size() == 2 && seg[0] == "apis" && gvs.count(seg[1])) {
    json g = group_json(seg[1], gvs[seg[1]]);
    g["kind"] = "APIGroup";
    g["apiVersion"] = "v1";
    return ok(r, g);
  }
  if (seg.size() == 3 && seg[0] == "apis" && gvs.count(seg[1]) && gvs[seg[1]].count(seg[2]))
    return ok(r, resource_list(seg[1], seg[2]));
  return fail(r, 404, "NotFound", "the server could not find the requested resource", json::object());
}

json ApiServer::openapi_document(const std::string& group, const std::string& version) const {
  json paths = json::object();
  json schemas = json::object();
  auto param_q = [](const std::string& name, const std::string& type, const std::string& desc) {
    return json{
        {"name", name}, {"in", "query"}, {"description", desc}, {"schema", {{"type", type}, {"uniqueItems", true}}}};
  };
  json dry_run = param_q("dryRun", "string", "When present, indicates that modifications should not be persisted.");
  json field_manager =
      param_q("fieldManager", "string",
              "fieldManager is a name associated with the actor or entity that is making these changes.");
  json field_validation = param_q("fieldValidation", "string",
                                  "fieldValidation instructs the server on how to handle objects in the request "
                                  "containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.");
  json force = param_q("force", "boolean", "Force is going to \"force\" Apply requests.");
  for (const auto& t : types_) {
    if (t.group != group || t.version != version) continue;
    std::string schema_name =
        t.group.empty() ? "io.k8s.api.core.v1." + t.kind
        : t.from_crd    ? t.group + "." + t.version + "." + t.kind
                        : "io.k8s.api." + t.group.substr(0, t.group.find('.')) + "." + t.version + "." + t.kind;
    json gvk = {{"group", t.group}, {"version", t.version}, {"kind", t.kind}};
    schemas[schema_name] = {{"type", "object"},
                            {"description", t.kind + " as served by the Plinth Kubernetes emulator."},
                            {"x-kubernetes-group-version-kind", json::array({gvk})}};
    json ref = {{"$ref", "#/components/schemas/" + schema_name}};
    auto op = [&](const std::string& action, const std::string& id, std::vector<json> params) {
      json o = {
          {"operationId", id + t.kind},
          {"parameters", params},
          {"responses", {{"200", {{"description", "OK"}, {"content", {{"application/json", {{"schema", ref}}}}}}}}},
          {"x-kubernetes-action", action},
          {"x-kubernetes-group-version-kind", gvk}};
      return o;
    };
    std::string base = t.path_prefix() + (t.namespaced ? "/namespaces/{namespace}/" : "/") + t.plural;
    json path_params =
        json::array({{{"name", "name"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}}});
    if (t.namespaced)
      path_params.push_back(
          {{"name", "namespace"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}});
    json coll = {{"get", op("list", "list", {})},
                 {"post", op("post", "create", {dry_run, field_manager, field_validation})},
                 {"delete", op("deletecollection", "deleteCollection", {dry_run})}};
    if (t.namespaced) coll["parameters"] = json::array({path_params[1]});
    paths[base] = coll;
    json patch = op("patch", "patch", {dry_run, field_manager, field_validation, force});
    patch["requestBody"] = {{"content",
                             {{"application/apply-patch+yaml", {{"schema", {{"type", "object"}}}}},
                              {"application/json-patch+json", {{"schema", {{"type", "object"}}}}},
                              {"application/merge-patch+json", {{"schema", {{"type", "object"}}}}},
                              {"application/strategic-merge-patch+json", {{"schema", {{"type", "object"}}}}}}},
                            {"required", true}};
    paths[base + "/{name}"] = {{"get", op("get", "read", {})},
                               {"put", op("put", "replace", {dry_run, field_manager, field_validation})},
                               {"patch", patch},
                               {"delete", op("delete", "delete", {dry_run})},
                               {"parameters", path_params}};
    if (t.status_subresource) {
      json spatch = op("patch", "patchStatus", {dry_run, field_manager, field_validation, force});
      spatch["requestBody"] = patch["requestBody"];
      paths[base + "/{name}/status"] = {{"get", op("get", "readStatus", {})},
                                        {"put", op("put", "replaceStatus", {dry_run, field_manager, field_validation})},
                                        {"patch", spatch},
                                        {"parameters", path_params}};
    }
  }
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", options_.server_version}}},
          {"paths", paths},
          {"components", {{"schemas", schemas}}}};
}

Response ApiServer::openapi(const Request&, const std::vector<std::string>& seg, Response r) {
  std::set<std::pair<std::string, std::string>> gvs;
  for (const auto& t : types_) gvs.insert({t.group, t.version});
  if (seg.size() == 2 && seg[1] == "v3") {
    json paths = json::object();
    for (const auto& [g, v] : gvs) {
      std::string p = g.empty() ? "api/" + v : "apis/" + g + "/" + v;
      paths[p] = {{"serverRelativeURL", "/openapi/v3/" + p + "?hash=" + hex(fnv1a(openapi_document(g, v).dump()))}};
    }
    return ok(r, {{"paths", paths}});
  }
  if (seg.size() >= 3 && seg[1] == "v3") {
    std::string group, version;
    if (seg.size() == 4 && seg[2] == "api") version = seg[3];
    if (seg.size() == 5 && seg[2] == "apis") group = seg[3], version = seg[4];
    if (!version.empty() && gvs.count({group, version})) {
      Response out = ok(r, openapi_document(group, version));
      out.headers.emplace_back("Cache-Control", "public, immutable");
      return out;
    }
  }
  return fail(r, 404, "NotFound",
              seg.size() >= 2 && seg[1] == "v2"
                  ? "OpenAPI v2 is not served by this emulator; use /openapi/v3 (docs/emulators.md)"
                  : "the server could not find the requested resource",
              json::object());
}

Response ApiServer::resource_request(const Request& req, const Caller& who, Response r) {
  std::vector<std::string> seg = split_path(req.path);
  std::string group = seg[0] == "api" ? "" : seg[1];
  std::string version = seg[0] == "api" ? seg[1] : seg[2];
  std::vector<std::string> rest(seg.begin() + (seg[0] == "api" ? 2 : 3), seg.end());
  Target t;
  const ResourceType* type = nullptr;
  if (rest.size() >= 3 && rest[0] == "namespaces" && (type = find_type(group, version, rest[2])) && type->namespaced) {
    t.ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  } else {
    type = find_type(group, version, rest[0]);
  }
  const bool eviction = type && type->kind == "Pod" && rest.size() == 3 && rest[2] == "eviction";
  if (!type || rest.size() > 3 ||
      (rest.size() == 3 && !(rest[2] == "status" && type->status_subresource) && !eviction))
    return fail(std::move(r), 404, "NotFound", "the server could not find the requested resource", json::object());
  t.type = *type;
  if (rest.size() >= 2) t.name = rest[1];
  if (rest.size() == 3) t.sub = rest[2];
  r.resource = t.type.qualified();
  r.subresource = t.sub;
  r.ns = t.ns;
  r.name = t.name;

  bool watch = param(req, "watch") == "true" || param(req, "watch") == "1";
  std::string verb;
  if (req.method == "GET" || req.method == "HEAD")
    verb = watch ? "watch" : t.name.empty() ? "list" : "get";
  else if (req.method == "POST")
    verb = "create";
  else if (req.method == "PUT")
    verb = "update";
  else if (req.method == "PATCH")
    verb = "patch";
  else if (req.method == "DELETE")
    verb = t.name.empty() ? "deletecollection" : "delete";
  if (eviction && req.method != "POST")
    return fail(std::move(r), 405, "MethodNotAllowed",
                "the server does not allow this method on the requested resource");
  r.verb = verb;
  if (header(req, "content-type").rfind("application/apply-patch", 0) == 0 && verb == "patch") r.verb = "apply";
  if (verb.empty())
    return fail(std::move(r), 405, "MethodNotAllowed",
                "the server does not allow this method on the requested resource");

  // Authorization: --no-access-user may do nothing, --read-only-user only read.
  bool read = verb == "get" || verb == "list" || verb == "watch";
  if (options_.no_access_users.count(who.id.user) || (options_.read_only_users.count(who.id.user) && !read)) {
    std::string res = t.type.plural + (t.sub.empty() ? "" : "/" + t.sub);
    std::string scope = t.ns.empty() ? "at the cluster scope" : "in the namespace " + dq(t.ns);
    std::string msg = "User " + dq(who.id.user) + " cannot " + verb + " resource " + dq(res) + " in API group " +
                      dq(t.type.group) + " " + scope;
    std::string subject = t.type.qualified() + (t.name.empty() ? "" : " " + dq(t.name));
    return fail(std::move(r), 403, "Forbidden", subject + " is forbidden: " + msg, details(t.type, t.name));
  }
  if (t.type.namespaced && t.ns.empty() && verb != "list" && verb != "watch")
    return fail(std::move(r), 404, "NotFound", "the server could not find the requested resource", json::object());
  if (verb == "watch")
    return fail(std::move(r), 405, "MethodNotAllowed",
                "watch is not implemented by the Kubernetes emulator (docs/emulators.md); list instead");
  if (verb == "get") return get(req, t, std::move(r));
  if (verb == "list") return list(req, t, std::move(r));
  if (eviction) return evict(req, t, std::move(r));
  if (verb == "create") {
    if (!t.name.empty())
      return fail(std::move(r), 405, "MethodNotAllowed",
                  "the server does not allow this method on the requested resource");
    return create(req, t, std::move(r));
  }
  if (verb == "update") return update(req, t, std::move(r));
  if (verb == "patch") return r.verb == "apply" ? apply(req, t, std::move(r)) : patch(req, t, std::move(r));
  if (verb == "delete") return remove(req, t, std::move(r));
  return remove_collection(req, t, std::move(r));
}

// ---------------------------------------------------------------- verbs

namespace {

bool wants_table(const Request& req) { return header(req, "accept").find("as=Table") != std::string::npos; }

/// Applies ?fieldValidation (Strict, Warn -- the default -- or Ignore) to
/// `obj`: Strict refuses unknown fields, Warn reports them in Warning
/// headers; both other modes drop them. Returns an error response or nothing.
std::optional<Response> check_fields(const Request& req, const ResourceType& t, json& obj, Response& r, bool is_apply) {
  std::vector<std::string> unknown = unknown_fields(t, obj);
  if (unknown.empty()) return std::nullopt;
  std::string directive = param(req, "fieldValidation");
  if (directive == "Strict") {
    if (is_apply) {
      std::string ns = obj.value("metadata", json::object()).value("namespace", "");
      std::string name = obj.value("metadata", json::object()).value("name", "");
      return fail(r, 400, "BadRequest",
                  "failed to create typed patch object (" + ns + "/" + name + "; " + t.api_version() +
                      ", Kind=" + t.kind + "): ." + unknown[0] + ": field not declared in schema");
    }
    std::string list;
    for (const auto& u : unknown) list += (list.empty() ? "" : ", ") + std::string("unknown field ") + dq(u);
    return fail(r, 400, "BadRequest",
                t.kind + " in version " + dq(t.version) + " cannot be handled as a " + t.kind +
                    ": strict decoding error: " + list);
  }
  if (directive != "Ignore")
    for (const auto& u : unknown) r.headers.emplace_back("Warning", "299 - \"unknown field \\\"" + u + "\\\"\"");
  prune_unknown(t, obj);
  return std::nullopt;
}

/// Checks the apiVersion and kind of a body against the resource.
std::string check_kind(const ResourceType& t, const json& obj, bool required) {
  std::string av = obj.value("apiVersion", "");
  std::string kind = obj.value("kind", "");
  if (required && (av.empty() || kind.empty()))
    return "Object 'Kind' is missing in '" + obj.dump().substr(0, 200) + "'";
  if (!av.empty() && av != t.api_version())
    return "the API version in the data (" + av + ") does not match the expected API version (" + t.api_version() + ")";
  if (!kind.empty() && kind != t.kind)
    return "the kind in the data (" + kind + ") does not match the expected kind (" + t.kind + ")";
  return "";
}

/// Kind-specific validation of a write; returns "" or "field\tcause\tmessage".
std::string validate(const ResourceType& t, const json& obj, const json* old) {
  if (t.kind == "RoleBinding" || t.kind == "ClusterRoleBinding") {
    json ref = obj.value("roleRef", json::object());
    if (ref.value("kind", "") != "Role" && ref.value("kind", "") != "ClusterRole")
      return "roleRef.kind\tFieldValueNotSupported\tUnsupported value: " + dq(ref.value("kind", "")) +
             ": supported values: \"Role\", \"ClusterRole\"";
    if (t.kind == "ClusterRoleBinding" && ref.value("kind", "") != "ClusterRole")
      return "roleRef.kind\tFieldValueNotSupported\tUnsupported value: \"Role\": supported values: \"ClusterRole\"";
    if (ref.value("name", "").empty()) return "roleRef.name\tFieldValueRequired\tRequired value";
    if (old && (*old).value("roleRef", json::object()) != ref)
      return "roleRef\tFieldValueInvalid\tInvalid value: " + ref.dump() + ": cannot change roleRef";
    for (size_t i = 0; i < obj.value("subjects", json::array()).size(); ++i) {
      const json& s = obj["subjects"][i];
      std::string k = s.value("kind", "");
      if (k != "User" && k != "Group" && k != "ServiceAccount")
        return "subjects[" + std::to_string(i) + "].kind\tFieldValueNotSupported\tUnsupported value: " + dq(k) +
               ": supported values: \"ServiceAccount\", \"User\", \"Group\"";
      if (s.value("name", "").empty())
        return "subjects[" + std::to_string(i) + "].name\tFieldValueRequired\tRequired value";
    }
  }
  if (t.kind == "Role" || t.kind == "ClusterRole") {
    for (size_t i = 0; i < obj.value("rules", json::array()).size(); ++i)
      if (obj["rules"][i].value("verbs", json::array()).empty())
        return "rules[" + std::to_string(i) +
               "].verbs\tFieldValueRequired\tRequired value: verbs must contain at least one value";
  }
  if (t.kind == "ResourceQuota") {
    const json hard = obj.value("spec", json::object()).value("hard", json::object());
    for (const auto& [k, v] : hard.items()) {
      static const std::regex quantity(R"([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?)");
      std::string s = v.is_string() ? v.get<std::string>() : v.is_number() ? v.dump() : "";
      if (!std::regex_match(s, quantity))
        return "spec.hard[" + k + "]\tFieldValueInvalid\tInvalid value: " + dq(s) +
               ": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    }
  }
  return "";
}

Response invalid_from(Response r, const ResourceType& t, const std::string& name, const std::string& v) {
  auto a = v.find('\t');
  auto b = v.find('\t', a + 1);
  return invalid(std::move(r), t, name, v.substr(0, a), v.substr(a + 1, b - a - 1), v.substr(b + 1));
}

}  // namespace

Response ApiServer::get(const Request& req, const Target& t, Response r) {
  const json* obj = find(t.type, t.ns, t.name);
  if (!obj) return not_found(std::move(r), t.type, t.name);
  if (wants_table(req)) {
    json md = {{"resourceVersion", (*obj)["metadata"]["resourceVersion"]}};
    return ok(std::move(r),
              make_table(t.type, {*obj}, md, param(req, "includeObject"), std::chrono::system_clock::now()));
  }
  return ok(std::move(r), *obj);
}

Response ApiServer::list(const Request& req, const Target& t, Response r) {
  LabelSelector labels;
  if (std::string err = parse_label_selector(param(req, "labelSelector"), labels); !err.empty())
    return fail(std::move(r), 400, "BadRequest", err);
  FieldSelector fields;
  if (std::string err = parse_field_selector(param(req, "fieldSelector"), fields, t.type.kind); !err.empty())
    return fail(std::move(r), 400, "BadRequest", err);
  long long limit = 0;
  if (std::string l = param(req, "limit"); !l.empty()) {
    try {
      limit = std::stoll(l);
    } catch (...) {
      return fail(std::move(r), 400, "BadRequest", "limit: Invalid value: " + dq(l) + ": must be an integer");
    }
  }
  std::string start;
  std::string rv = std::to_string(resource_version_);
  if (std::string token = param(req, "continue"); !token.empty()) {
    std::string raw;
    json c;
    try {
      if (!unb64url(token, raw)) throw std::runtime_error("not base64");
      c = json::parse(raw);
      if (c.value("v", "") != "meta.k8s.io/v1" || !c.contains("start")) throw std::runtime_error("bad version");
    } catch (const std::exception&) {
      return fail(std::move(r), 400, "BadRequest", "continue key is not valid: " + token);
    }
    start = c["start"].get<std::string>();
    rv = std::to_string(c.value("rv", 0ull));
  }
  std::vector<json> items;
  std::string last_key;
  long long remaining = 0;
  auto b = store_.find(t.type.qualified());
  if (b != store_.end()) {
    auto it = start.empty() ? b->second.begin() : b->second.upper_bound(start);
    for (; it != b->second.end(); ++it) {
      const json& obj = it->second;
      std::string ns = obj["metadata"].value("namespace", "");
      if (t.type.namespaced && !t.ns.empty() && ns != t.ns) continue;
      if (!fields.matches(obj) || !labels.matches(labels_of(obj))) continue;
      if (limit > 0 && static_cast<long long>(items.size()) >= limit) {
        ++remaining;
        continue;
      }
      items.push_back(obj);
      last_key = it->first;
    }
  }
  json md = {{"resourceVersion", rv}};
  if (remaining > 0) {
    md["continue"] = b64url(json{{"v", "meta.k8s.io/v1"}, {"rv", std::stoull(rv)}, {"start", last_key}}.dump());
    md["remainingItemCount"] = remaining;
  }
  if (wants_table(req))
    return ok(std::move(r),
              make_table(t.type, items, md, param(req, "includeObject"), std::chrono::system_clock::now()));
  json out_items = json::array();
  for (auto& obj : items) {
    if (!t.type.from_crd) obj = without(obj, {"apiVersion", "kind"});  // typed lists carry no kind per item
    out_items.push_back(std::move(obj));
  }
  return ok(
      std::move(r),
      {{"kind", t.type.kind + "List"}, {"apiVersion", t.type.api_version()}, {"metadata", md}, {"items", out_items}});
}

Response ApiServer::create(const Request& req, const Target& t, Response r) {
  json obj;
  if (std::string err = parse_body(req, obj, false); !err.empty() || !obj.is_object())
    return fail(std::move(r), 400, "BadRequest", err.empty() ? "the body must be a JSON object" : err);
  if (std::string err = check_kind(t.type, obj, false); !err.empty()) return fail(std::move(r), 400, "BadRequest", err);
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = json::object();
  json& md = obj["metadata"];
  if (t.type.namespaced) {
    std::string body_ns = md.value("namespace", "");
    if (!body_ns.empty() && body_ns != t.ns)
      return fail(std::move(r), 400, "BadRequest",
                  "the namespace of the provided object does not match the namespace sent on the request");
    md["namespace"] = t.ns;
    if (!find(*find_type("", "v1", "namespaces"), "", t.ns)) return namespace_not_found(std::move(r), t.ns);
  }
  std::string name = md.value("name", "");
  if (name.empty() && !md.value("generateName", "").empty()) {
    const char* alphabet = "bcdfghjklmnpqrstvwxz2456789";
    std::uniform_int_distribution<int> d(0, 26);
    name = md.value("generateName", "");
    for (int i = 0; i < 5; ++i) name += alphabet[d(rng_)];
    md["name"] = name;
  }
  r.name = name;
  if (name.empty())
    return invalid(std::move(r), t.type, "", "metadata.name", "FieldValueRequired",
                   "Required value: name or generateName is required");
  if (std::string err = name_error(t.type, name); !err.empty())
    return invalid(std::move(r), t.type, name, "metadata.name", "FieldValueInvalid", err);
  if (auto e = check_fields(req, t.type, obj, r, false)) return *e;
  if (std::string v = validate(t.type, obj, nullptr); !v.empty()) return invalid_from(std::move(r), t.type, name, v);
  if (find(t.type, t.ns, name))
    return fail(std::move(r), 409, "AlreadyExists", t.type.qualified() + " " + dq(name) + " already exists",
                details(t.type, name));
  md.erase("managedFields");
  md.erase("resourceVersion");
  if (t.type.status_subresource && t.type.kind != "Node") obj.erase("status");
  std::vector<ManagedEntry> managers;
  Tracking tracking{t.type.status_subresource};
  json preview = commit(t.type, nullptr, obj, true);  // what will be stored, for ownership
  record_update(managers, json::object(), preview, update_manager(req), t.type.api_version(), now(), tracking);
  md["managedFields"] = write_managed_fields(managers);
  bool dry = is_dry_run(req);
  json stored = commit(t.type, nullptr, obj, dry);
  r.wrote = !dry;
  return ok(std::move(r), stored, 201);
}

Response ApiServer::update(const Request& req, const Target& t, Response r) {
  json obj;
  if (std::string err = parse_body(req, obj, false); !err.empty() || !obj.is_object())
    return fail(std::move(r), 400, "BadRequest", err.empty() ? "the body must be a JSON object" : err);
  if (std::string err = check_kind(t.type, obj, false); !err.empty()) return fail(std::move(r), 400, "BadRequest", err);
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = json::object();
  json& md = obj["metadata"];
  std::string body_name = md.value("name", "");
  if (body_name != t.name)
    return fail(std::move(r), 400, "BadRequest",
                "the name of the object (" + body_name + ") does not match the name on the URL (" + t.name + ")");
  if (t.type.namespaced) {
    std::string body_ns = md.value("namespace", "");
    if (!body_ns.empty() && body_ns != t.ns)
      return fail(std::move(r), 400, "BadRequest",
                  "the namespace of the provided object does not match the namespace sent on the request");
    md["namespace"] = t.ns;
  }
  const json* old = find(t.type, t.ns, t.name);
  if (!old) return not_found(std::move(r), t.type, t.name);
  std::string rv = md.value("resourceVersion", "");
  if (!rv.empty() && rv != (*old)["metadata"].value("resourceVersion", "")) return stale(std::move(r), t.type, t.name);
  if (auto e = check_fields(req, t.type, obj, r, false)) return *e;
  json next;
  if (t.sub == "status") {
    next = *old;
    if (obj.contains("status")) next["status"] = obj["status"];
  } else {
    next = obj;
    if (t.type.status_subresource && old->contains("status"))
      next["status"] = (*old)["status"];
    else if (t.type.status_subresource)
      next.erase("status");
    next["metadata"]["managedFields"] = (*old)["metadata"].value("managedFields", json::array());
  }
  if (std::string v = validate(t.type, next, old); !v.empty()) return invalid_from(std::move(r), t.type, t.name, v);
  json preview = commit(t.type, old, next, true);
  std::vector<ManagedEntry> managers = read_managed_fields((*old)["metadata"].value("managedFields", json::array()));
  Tracking tracking{t.type.status_subresource && t.sub != "status"};
  record_update(managers, *old, preview, update_manager(req), t.type.api_version(), now(), tracking);
  next["metadata"]["managedFields"] = write_managed_fields(managers);
  bool dry = is_dry_run(req);
  json before = *old;
  json stored = commit(t.type, old, next, dry);
  r.wrote = !dry && stored != before;
  return ok(std::move(r), stored);
}

Response ApiServer::patch(const Request& req, const Target& t, Response r) {
  std::string ct = header(req, "content-type");
  ct = ct.substr(0, ct.find(';'));
  const json* old = find(t.type, t.ns, t.name);
  bool strategic = ct == "application/strategic-merge-patch+json";
  if (ct != "application/merge-patch+json" && ct != "application/json-patch+json" && !(strategic && !t.type.from_crd))
    return fail(std::move(r), 415, "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: "
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml" +
                    std::string(t.type.from_crd ? "" : ", application/strategic-merge-patch+json"));
  if (!old) return not_found(std::move(r), t.type, t.name);
  json p;
  if (std::string err = parse_body(req, p, false); !err.empty()) return fail(std::move(r), 400, "BadRequest", err);
  json next;
  try {
    if (ct == "application/json-patch+json") {
      next = old->patch(p);
    } else {
      if (!p.is_object()) return fail(std::move(r), 400, "BadRequest", "a merge patch must be a JSON object");
      if (strategic) {
        // Directives ($patch, $setElementOrder/..., $retainKeys) are dropped: lists are replaced whole.
        std::function<void(json&)> drop = [&](json& v) {
          if (!v.is_object()) return;
          for (auto it = v.begin(); it != v.end();) {
            if (!it.key().empty() && it.key()[0] == '$') {
              it = v.erase(it);
            } else {
              drop(*it);
              ++it;
            }
          }
        };
        drop(p);
      }
      next = *old;
      next.merge_patch(p);
    }
  } catch (const json::exception& e) {
    return fail(std::move(r), 422, "Invalid",
                std::string("the server rejected our request due to an error in our request: ") + e.what());
  }
  if (!next.is_object() || !next.contains("metadata") || !next["metadata"].is_object())
    return fail(std::move(r), 422, "Invalid", "the patch removed the object's metadata");
  std::string rv = next["metadata"].value("resourceVersion", "");
  if (rv != (*old)["metadata"].value("resourceVersion", "")) return stale(std::move(r), t.type, t.name);
  if (next["metadata"].value("name", "") != t.name)
    return invalid(std::move(r), t.type, t.name, "metadata.name", "FieldValueInvalid",
                   "Invalid value: " + dq(next["metadata"].value("name", "")) + ": field is immutable");
  if (auto e = check_fields(req, t.type, next, r, false)) return *e;
  if (t.sub == "status") {
    json s = next.value("status", json());
    next = *old;
    next["status"] = s;
  } else if (t.type.status_subresource) {
    if (old->contains("status"))
      next["status"] = (*old)["status"];
    else
      next.erase("status");
  }
  next["metadata"]["managedFields"] = (*old)["metadata"].value("managedFields", json::array());
  if (std::string v = validate(t.type, next, old); !v.empty()) return invalid_from(std::move(r), t.type, t.name, v);
  json preview = commit(t.type, old, next, true);
  std::vector<ManagedEntry> managers = read_managed_fields((*old)["metadata"].value("managedFields", json::array()));
  Tracking tracking{t.type.status_subresource && t.sub != "status"};
  record_update(managers, *old, preview, update_manager(req), t.type.api_version(), now(), tracking);
  next["metadata"]["managedFields"] = write_managed_fields(managers);
  bool dry = is_dry_run(req);
  json before = *old;
  json stored = commit(t.type, old, next, dry);
  r.wrote = !dry && stored != before;
  return ok(std::move(r), stored);
}

Response ApiServer::apply(const Request& req, const Target& t, Response r) {
  std::string manager = param(req, "fieldManager");
  if (manager.empty())
    return fail(std::move(r), 400, "BadRequest",
                "PATCH, application/apply-patch+yaml: fieldManager is required for apply requests");
  std::string force = param(req, "force");
  if (!force.empty() && force != "true" && force != "false")
    return fail(std::move(r), 400, "BadRequest", "force: Invalid value: " + dq(force) + ": must be true or false");
  json config;
  if (std::string err = parse_body(req, config, true); !err.empty() || !config.is_object())
    return fail(std::move(r), 400, "BadRequest", err.empty() ? "the apply configuration must be an object" : err);
  if (std::string err = check_kind(t.type, config, true); !err.empty())
    return fail(std::move(r), 400, "BadRequest", err);
  if (!config.contains("metadata") || !config["metadata"].is_object()) config["metadata"] = json::object();
  json& md = config["metadata"];
  if (md.value("name", "") != t.name)
    return fail(
        std::move(r), 400, "BadRequest",
        "the name of the object (" + md.value("name", "") + ") does not match the name on the URL (" + t.name + ")");
  if (t.type.namespaced) {
    std::string body_ns = md.value("namespace", "");
    if (!body_ns.empty() && body_ns != t.ns)
      return fail(std::move(r), 400, "BadRequest",
                  "the namespace of the provided object does not match the namespace sent on the request");
  }
  if (auto e = check_fields(req, t.type, config, r, true)) return *e;
  const json* old = find(t.type, t.ns, t.name);
  if (old) {
    std::string rv = md.value("resourceVersion", "");
    if (!rv.empty() && rv != (*old)["metadata"].value("resourceVersion", ""))
      return stale(std::move(r), t.type, t.name);
  } else {
    if (std::string err = name_error(t.type, t.name); !err.empty())
      return invalid(std::move(r), t.type, t.name, "metadata.name", "FieldValueInvalid", err);
    if (t.type.namespaced && !find(*find_type("", "v1", "namespaces"), "", t.ns))
      return namespace_not_found(std::move(r), t.ns);
  }
  Tracking tracking{t.type.status_subresource && t.sub != "status"};
  if (t.sub == "status") {
    // Applying to /status owns status fields only.
    json only = {{"status", config.value("status", json::object())}};
    config = only;
  }
  std::vector<ManagedEntry> managers =
      old ? read_managed_fields((*old)["metadata"].value("managedFields", json::array())) : std::vector<ManagedEntry>{};
  ApplyOutcome out = server_side_apply(old ? *old : json(nullptr), managers, config, manager, t.type.api_version(),
                                       param(req, "force") == "true", now(), tracking);
  if (!out.conflicts.empty()) {
    json causes = json::array();
    for (const auto& c : out.conflicts)
      causes.push_back({{"reason", "FieldManagerConflict"},
                        {"message", "conflict with " + c.manager},
                        {"field", path_string(c.path)}});
    return fail(std::move(r), 409, "Conflict", conflict_message(out.conflicts), {{"causes", causes}});
  }
  json next = std::move(out.object);
  next["metadata"]["name"] = t.name;
  if (t.type.namespaced) next["metadata"]["namespace"] = t.ns;
  if (t.type.status_subresource && t.sub != "status") {
    if (old && old->contains("status"))
      next["status"] = (*old)["status"];
    else
      next.erase("status");
  }
  if (std::string v = validate(t.type, next, old); !v.empty()) return invalid_from(std::move(r), t.type, t.name, v);
  next["metadata"]["managedFields"] = write_managed_fields(out.managers);
  bool dry = is_dry_run(req);
  json before = old ? *old : json();
  json stored = commit(t.type, old, next, dry);
  r.wrote = !dry && stored != before;
  return ok(std::move(r), stored, old ? 200 : 201);
}

Response ApiServer::remove(const Request& req, const Target& t, Response r) {
  json opts = json::object();
  if (!req.body.empty()) {
    try {
      opts = json::parse(req.body);
    } catch (const json::exception& e) {
      return fail(std::move(r), 400, "BadRequest", std::string("invalid DeleteOptions: ") + e.what());
    }
  }
  std::string policy = opts.value("propagationPolicy", param(req, "propagationPolicy"));
  if (!policy.empty() && policy != "Orphan" && policy != "Background" && policy != "Foreground")
    return fail(std::move(r), 422, "Invalid",
                "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: " + dq(policy) +
                    ": supported values: \"Foreground\", \"Background\", \"Orphan\"");
  const json* old = find(t.type, t.ns, t.name);
  if (!old) return not_found(std::move(r), t.type, t.name);
  json pre = opts.value("preconditions", json::object());
  const json gone_copy = *old;  // `old` dangles once the object is erased
  const json& omd = gone_copy["metadata"];
  if (pre.contains("uid") && pre["uid"] != omd["uid"])
    return fail(std::move(r), 409, "Conflict",
                "Precondition failed: UID in precondition: " + pre["uid"].get<std::string>() +
                    ", UID in object meta: " + omd.value("uid", ""),
                details(t.type, t.name));
  if (pre.contains("resourceVersion") && pre["resourceVersion"] != omd["resourceVersion"])
    return fail(std::move(r), 409, "Conflict",
                "Precondition failed: ResourceVersion in precondition: " + pre["resourceVersion"].get<std::string>() +
                    ", ResourceVersion in object meta: " + omd.value("resourceVersion", ""),
                details(t.type, t.name));
  json gone = gone_copy;
  bool dry = is_dry_run(req) || (opts.contains("dryRun") && opts["dryRun"] == json::array({"All"}));
  if (!dry) {
    erase_object(t.type, t.ns, t.name);
    ++resource_version_;
    r.wrote = true;
  }
  if (t.type.kind == "Namespace") {
    // Namespaces go at once (no finalizers run here); the answer still shows them terminating.
    gone["metadata"]["deletionTimestamp"] = now();
    gone["status"]["phase"] = "Terminating";
    return ok(std::move(r), gone);
  }
  json d = details(t.type, t.name);
  d["uid"] = omd["uid"];
  return ok(
      std::move(r),
      {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Success"}, {"details", d}});
}

namespace {

/// A metav1.LabelSelector (matchLabels, matchExpressions) against `labels`;
/// an empty selector matches everything, as in policy/v1.
bool selector_selects(const json& selector, const std::map<std::string, std::string>& labels) {
  if (!selector.is_object()) return true;
  if (auto m = selector.find("matchLabels"); m != selector.end() && m->is_object())
    for (auto kv = m->begin(); kv != m->end(); ++kv) {
      auto it = labels.find(kv.key());
      if (it == labels.end() || !kv->is_string() || it->second != kv->get<std::string>()) return false;
    }
  const auto x = selector.find("matchExpressions");
  if (x == selector.end() || !x->is_array()) return true;
  for (const auto& e : *x) {
    const std::string key = e.value("key", ""), op = e.value("operator", "");
    auto it = labels.find(key);
    bool in = false;
    for (const auto& v : e.value("values", json::array())) in = in || (it != labels.end() && v == it->second);
    if ((op == "In" && !in) || (op == "NotIn" && in) || (op == "Exists" && it == labels.end()) ||
        (op == "DoesNotExist" && it != labels.end()))
      return false;
  }
  return true;
}

/// An IntOrString of a PDB (`minAvailable`, `maxUnavailable`) for `expected`
/// pods: a number, or "N%" rounded up as the disruption controller does.
int scaled(const json& v, int expected) {
  if (v.is_number_integer()) return v.get<int>();
  const std::string s = v.is_string() ? v.get<std::string>() : "0";
  if (!s.empty() && s.back() == '%') return (expected * std::atoi(s.c_str()) + 99) / 100;
  return std::atoi(s.c_str());
}

}  // namespace

Response ApiServer::evict(const Request& req, const Target& t, Response r) {
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return fail(std::move(r), 400, "BadRequest", "the body of the request is not a valid Eviction");
  const std::string av = body.value("apiVersion", "");
  if (body.value("kind", "") != "Eviction" || (av != "policy/v1" && av != "policy/v1beta1"))
    return fail(std::move(r), 400, "BadRequest",
                "the body of the request was in an unknown format - accepted media types include: application/json");
  const json* pod = find(t.type, t.ns, t.name);
  if (!pod) return not_found(std::move(r), t.type, t.name);
  const auto pod_labels = labels_of(*pod);
  const ResourceType* pdb_type = find_type("policy", "v1", "poddisruptionbudgets");
  std::vector<const json*> budgets;
  if (pdb_type)
    for (const auto& [key, obj] : bucket(*pdb_type))
      if (obj["metadata"].value("namespace", "") == t.ns &&
          selector_selects(obj.value("spec", json::object()).value("selector", json::object()), pod_labels))
        budgets.push_back(&obj);
  if (budgets.size() > 1)
    return fail(std::move(r), 500, "InternalError",
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.");
  if (budgets.size() == 1) {
    const json& pdb = *budgets[0];
    const json spec = pdb.value("spec", json::object());
    int healthy = 0;
    for (const auto& [key, other] : bucket(t.type))
      if (other["metadata"].value("namespace", "") == t.ns && !other["metadata"].contains("deletionTimestamp") &&
          other.value("status", json::object()).value("phase", "Running") == "Running" &&
          selector_selects(spec.value("selector", json::object()), labels_of(other)))
        ++healthy;
    const int expected = healthy;
    const int desired = spec.contains("minAvailable") ? scaled(spec["minAvailable"], expected)
                        : spec.contains("maxUnavailable")
                            ? expected - scaled(spec["maxUnavailable"], expected)
                            : 0;
    if (healthy - desired <= 0) {
      const std::string name = pdb["metadata"].value("name", "");
      json d = {{"causes",
                 {{{"reason", "DisruptionBudget"},
                   {"message", "The disruption budget " + name + " needs " + std::to_string(desired) +
                                   " healthy pods and has " + std::to_string(healthy) + " currently"}}}}};
      return fail(std::move(r), 429, "TooManyRequests",
                  "Cannot evict pod as it would violate the pod's disruption budget.", d);
    }
  }
  if (!is_dry_run(req)) {
    erase_object(t.type, t.ns, t.name);
    ++resource_version_;
    r.wrote = true;
  }
  return ok(std::move(r),
            {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Success"}, {"code", 201}},
            201);
}

Response ApiServer::remove_collection(const Request& req, const Target& t, Response r) {
  LabelSelector labels;
  if (std::string err = parse_label_selector(param(req, "labelSelector"), labels); !err.empty())
    return fail(std::move(r), 400, "BadRequest", err);
  FieldSelector fields;
  if (std::string err = parse_field_selector(param(req, "fieldSelector"), fields, t.type.kind); !err.empty())
    return fail(std::move(r), 400, "BadRequest", err);
  std::vector<std::pair<std::string, std::string>> victims;
  json items = json::array();
  for (const auto& [key, obj] : bucket(t.type)) {
    std::string ns = obj["metadata"].value("namespace", "");
    if (t.type.namespaced && ns != t.ns) continue;
    std::string name = obj["metadata"].value("name", "");
    if (!fields.matches(obj) || !labels.matches(labels_of(obj))) continue;
    victims.emplace_back(ns, name);
    items.push_back(obj);
  }
  if (!is_dry_run(req)) {
    for (const auto& [ns, name] : victims) erase_object(t.type, ns, name);
    if (!victims.empty()) ++resource_version_;
    r.wrote = !victims.empty();
  }
  return ok(std::move(r), {{"kind", t.type.kind + "List"},
                           {"apiVersion", t.type.api_version()},
                           {"metadata", {{"resourceVersion", std::to_string(resource_version_)}}},
                           {"items", items}});
}

}  // namespace plinth::kube_emulator
