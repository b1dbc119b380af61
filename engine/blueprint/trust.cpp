#include "engine/blueprint/trust.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "engine/core/files.h"
#include "engine/core/strings.h"
#include "engine/provider/registry.h"

namespace plinth::bp {
namespace {

/// Thrown inside the reader; caught by load_trust_file.
struct Bad {
  std::string message;
};

std::string at(const std::string& path, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();  // 0-based
  return path + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

void keys(const std::string& path, const YAML::Node& map, const std::string& what, std::set<std::string> allowed) {
  if (!map.IsMap()) throw Bad{at(path, map) + ": " + what + " must be a map"};
  for (const auto& kv : map) {
    const std::string k = kv.first.Scalar();
    if (!allowed.count(k)) {
      std::vector<std::string> known(allowed.begin(), allowed.end());
      throw Bad{at(path, kv.first) + ": unknown key '" + safe_text(k, false) + "' in " + what + "; " +
                did_you_mean(k, known)};
    }
  }
}

std::string scalar(const std::string& path, const YAML::Node& n, const std::string& what) {
  if (!n || !n.IsScalar()) throw Bad{at(path, n) + ": " + what + " must be a string"};
  return n.Scalar();
}

std::vector<std::string> strings(const std::string& path, const YAML::Node& n, const std::string& what) {
  if (!n || !n.IsSequence()) throw Bad{at(path, n) + ": " + what + " must be a list of strings"};
  std::vector<std::string> out;
  for (const auto& e : n) out.push_back(scalar(path, e, what + " entries"));
  return out;
}

}  // namespace

std::string TrustFile::plugin_sha256(const std::string& name) const {
  for (const Plugin& p : plugins)
    if (p.name == name) return p.sha256;
  return "";
}

bool TrustFile::allows(const std::string& ref, const std::string& endpoint) const {
  for (const Credential& c : credentials)
    if (c.ref == ref)
      for (const std::string& pattern : c.endpoints)
        if (glob_match(pattern, endpoint)) return true;
  return false;
}

Result<TrustFile> load_trust_file(const std::string& path) {
  auto text = read_file(path);
  if (!text) return Error::invalid("the trust file " + text.error().message);
  TrustFile trust;
  trust.path = path;
  try {
    YAML::Node doc = YAML::Load(*text);
    if (!doc || doc.IsNull()) throw Bad{path + ": the trust file is empty; see docs/security.md for its format"};
    keys(path, doc, "the trust file", {"apiVersion", "kind", "credentials", "plugins", "providers"});
    if (scalar(path, doc["apiVersion"], "apiVersion") != "plinth/v1" || scalar(path, doc["kind"], "kind") != "Trust")
      throw Bad{at(path, doc) + ": a trust file starts with apiVersion: plinth/v1 and kind: Trust"};
    if (YAML::Node creds = doc["credentials"]) {
      if (!creds.IsSequence()) throw Bad{at(path, creds) + ": credentials must be a list"};
      for (const auto& c : creds) {
        keys(path, c, "a credentials entry", {"ref", "endpoints"});
        TrustFile::Credential cred{scalar(path, c["ref"], "ref"), strings(path, c["endpoints"], "endpoints")};
        if (cred.ref.rfind("env:", 0) != 0 && cred.ref.rfind("file:", 0) != 0)
          throw Bad{at(path, c["ref"]) + ": ref must be env:NAME or file:PATH, as the blueprint writes it"};
        for (const auto& e : cred.endpoints)
          if (e.rfind("https://", 0) != 0)
            throw Bad{at(path, c["endpoints"]) + ": endpoint pattern '" + safe_text(e, false) +
                      "' must start with https:// (a credential is never sent in clear)"};
        trust.credentials.push_back(std::move(cred));
      }
    }
    if (YAML::Node plugins = doc["plugins"]) {
      if (!plugins.IsSequence()) throw Bad{at(path, plugins) + ": plugins must be a list"};
      for (const auto& p : plugins) {
        keys(path, p, "a plugins entry", {"name", "sha256"});
        TrustFile::Plugin plugin{scalar(path, p["name"], "name"), scalar(path, p["sha256"], "sha256")};
        const bool hex = plugin.sha256.size() == 64 && std::all_of(plugin.sha256.begin(), plugin.sha256.end(), [](char c) {
                           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                         });
        if (!hex) throw Bad{at(path, p["sha256"]) + ": sha256 must be 64 lower-case hex digits (sha256sum PLUGIN)"};
        trust.plugins.push_back(std::move(plugin));
      }
    }
    if (YAML::Node providers = doc["providers"]) {
      if (!providers.IsMap()) throw Bad{at(path, providers) + ": providers must be a map of provider name to options"};
      for (const auto& kv : providers) {
        if (!kv.second.IsMap())
          throw Bad{at(path, kv.second) + ": providers." + kv.first.Scalar() + " must be a map of option to value"};
        for (const auto& o : kv.second)
          trust.options[kv.first.Scalar()][o.first.Scalar()] =
              scalar(path, o.second, "providers." + kv.first.Scalar() + "." + o.first.Scalar());
      }
    }
  } catch (const Bad& b) {
    return Error::invalid(b.message);
  } catch (const YAML::Exception& e) {
    return Error::invalid(path + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                          ": the trust file is not valid YAML: " + e.msg);
  }
  return trust;
}

Diagnostics check_untrusted_credentials(const std::vector<Resource>& resources, const TrustFile& trust) {
  Diagnostics out;
  const std::string refusal = trust.path.empty() ? "no trust file was given (--trust FILE) to allow it"
                                                : "the trust file " + trust.path + " does not allow it";
  for (const Resource& r : resources) {
    const ResourceType* type = find_resource_type(r.type, r.provider);
    if (!type) continue;
    for (const AttributeSpec& a : type->attributes) {
      if (a.sends_to.empty()) continue;
      auto ref = r.attributes.find(a.name);
      if (ref == r.attributes.end() || !ref->is_string() || ref->get_ref<const std::string&>().empty()) continue;
      auto ep = r.attributes.find(a.sends_to);
      const std::string endpoint = ep != r.attributes.end() && ep->is_string() ? ep->get<std::string>() : "";
      const std::string& reference = ref->get_ref<const std::string&>();
      if (trust.allows(reference, endpoint)) continue;
      out.push_back({"SEC001", Severity::Error,
                     "untrusted plan: " + r.address + " would send the credential " + safe_text(reference, false) +
                         " to " + safe_text(endpoint, false) + "; " + refusal,
                     r.source, r.address,
                     "if the operator means it, add to the trust file: credentials: [{ref: \"" +
                         safe_text(reference, false) + "\", endpoints: [\"" + safe_text(endpoint, false) +
                         "\"]}] (docs/security.md)"});
    }
  }
  return out;
}

}  // namespace plinth::bp
