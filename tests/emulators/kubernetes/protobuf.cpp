#include "tests/emulators/kubernetes/protobuf.h"

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

namespace plinth::kube_emulator {
namespace {

using json = nlohmann::json;

/// One protobuf message's fields, read in order.
class Reader {
 public:
  explicit Reader(const std::string& data) : d_(data) {}
  bool next(int& field, int& wire) {
    if (pos_ >= d_.size()) return false;
    uint64_t key = varint();
    field = static_cast<int>(key >> 3);
    wire = static_cast<int>(key & 7);
    return true;
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= d_.size()) throw std::runtime_error("truncated varint");
      auto b = static_cast<unsigned char>(d_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw std::runtime_error("varint too long");
  }
  std::string bytes() {
    uint64_t n = varint();
    if (n > d_.size() - pos_) throw std::runtime_error("truncated field");
    std::string s = d_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  void skip(int wire) {
    if (wire == 0)
      varint();
    else if (wire == 2)
      bytes();
    else if (wire == 1)
      pos_ += 8;
    else if (wire == 5)
      pos_ += 4;
    else
      throw std::runtime_error("unsupported wire type " + std::to_string(wire));
  }

 private:
  const std::string& d_;
  size_t pos_ = 0;
};

using Fields = std::function<void(Reader&, int field, int wire, json& out)>;

json message(const std::string& data, const Fields& f) {
  json out = json::object();
  Reader r(data);
  int field = 0, wire = 0;
  while (r.next(field, wire)) f(r, field, wire, out);
  return out;
}

std::pair<std::string, std::string> map_entry(const std::string& data) {
  std::pair<std::string, std::string> kv;
  Reader r(data);
  int field = 0, wire = 0;
  while (r.next(field, wire)) {
    if (field == 1 && wire == 2)
      kv.first = r.bytes();
    else if (field == 2 && wire == 2)
      kv.second = r.bytes();
    else
      r.skip(wire);
  }
  return kv;
}

/// A field of strings: string fields by number -> JSON name; repeated when `lists` names it.
Fields strings(std::map<int, std::string> names, std::set<int> lists = {}, std::map<int, std::string> bools = {}) {
  return [names, lists, bools](Reader& r, int field, int wire, json& out) {
    if (auto b = bools.find(field); b != bools.end() && wire == 0) {
      out[b->second] = r.varint() != 0;
    } else if (auto n = names.find(field); n != names.end() && wire == 2) {
      std::string v = r.bytes();
      if (lists.count(field))
        out[n->second].push_back(v);
      else if (!v.empty())  // Go's omitempty: an empty string is no field in JSON
        out[n->second] = v;
    } else {
      r.skip(wire);
    }
  };
}

json object_meta(const std::string& data) {
  return message(data, [](Reader& r, int field, int wire, json& out) {
    static const std::map<int, std::string> names = {
        {1, "name"}, {2, "generateName"}, {3, "namespace"}, {5, "uid"}, {6, "resourceVersion"}};
    if (auto n = names.find(field); n != names.end() && wire == 2) {
      std::string v = r.bytes();
      if (!v.empty()) out[n->second] = v;
    } else if ((field == 11 || field == 12) && wire == 2) {
      auto [k, v] = map_entry(r.bytes());
      out[field == 11 ? "labels" : "annotations"][k] = v;
    } else if (field == 14 && wire == 2) {
      out["finalizers"].push_back(r.bytes());
    } else {
      r.skip(wire);
    }
  });
}

json policy_rule(const std::string& data) {
  return message(
      data, strings({{1, "verbs"}, {2, "apiGroups"}, {3, "resources"}, {4, "resourceNames"}, {5, "nonResourceURLs"}},
                    {1, 2, 3, 4, 5}));
}

/// The body of kind `kind` (field 1 is always metadata).
json decode_kind(const std::string& kind, const std::string& raw) {
  return message(raw, [&](Reader& r, int field, int wire, json& out) {
    if (wire != 2) return r.skip(wire);
    if (field == 1) {
      out["metadata"] = object_meta(r.bytes());
    } else if (kind == "Namespace" && field == 2) {
      out["spec"] = message(r.bytes(), strings({{1, "finalizers"}}, {1}));
    } else if (kind == "ResourceQuota" && field == 2) {
      out["spec"] = message(r.bytes(), [](Reader& rr, int f, int w, json& spec) {
        if (f == 1 && w == 2) {
          auto [k, v] = map_entry(rr.bytes());
          spec["hard"][k] = message(v, strings({{1, "string"}})).value("string", "");
        } else if (f == 2 && w == 2) {
          spec["scopes"].push_back(rr.bytes());
        } else {
          rr.skip(w);
        }
      });
    } else if (kind == "ServiceAccount" && (field == 2 || field == 3)) {
      out[field == 2 ? "secrets" : "imagePullSecrets"].push_back(
          message(r.bytes(), strings({{1, "kind"}, {2, "namespace"}, {3, "name"}})));
    } else if ((kind == "Role" || kind == "ClusterRole") && field == 2) {
      out["rules"].push_back(policy_rule(r.bytes()));
    } else if ((kind == "RoleBinding" || kind == "ClusterRoleBinding") && field == 2) {
      out["subjects"].push_back(
          message(r.bytes(), strings({{1, "kind"}, {2, "apiGroup"}, {3, "name"}, {4, "namespace"}})));
    } else if ((kind == "RoleBinding" || kind == "ClusterRoleBinding") && field == 3) {
      out["roleRef"] = message(r.bytes(), strings({{1, "apiGroup"}, {2, "kind"}, {3, "name"}}));
    } else {
      r.skip(wire);
    }
  });
}

}  // namespace

std::string decode_protobuf(const std::string& body, json& out) {
  static const std::string magic("k8s\0", 4);
  if (body.compare(0, 4, magic) != 0) return "the protobuf body does not start with the Kubernetes magic \"k8s\\0\"";
  try {
    std::string api_version, kind, raw;
    int field = 0, wire = 0;
    std::string rest = body.substr(4);
    Reader env(rest);
    while (env.next(field, wire)) {
      if (field == 1 && wire == 2) {
        json tm = message(env.bytes(), strings({{1, "apiVersion"}, {2, "kind"}}));
        api_version = tm.value("apiVersion", "");
        kind = tm.value("kind", "");
      } else if (field == 2 && wire == 2) {
        raw = env.bytes();
      } else {
        env.skip(wire);
      }
    }
    static const std::set<std::string> known = {"Namespace",   "ServiceAccount", "ResourceQuota",     "Role",
                                                "ClusterRole", "RoleBinding",    "ClusterRoleBinding"};
    if (!known.count(kind))
      return "protobuf bodies of kind '" + kind +
             "' are not decoded by the Kubernetes emulator; send application/json (docs/emulators.md)";
    out = decode_kind(kind, raw);
    out["apiVersion"] = api_version;
    out["kind"] = kind;
    return "";
  } catch (const std::exception& e) {
    return std::string("cannot decode the protobuf body: ") + e.what();
  }
}

}  // namespace plinth::kube_emulator
