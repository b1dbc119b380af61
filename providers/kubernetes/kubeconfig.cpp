#include "providers/kubernetes/kubeconfig.h"

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "engine/core/files.h"

namespace plinth::kubernetes {
namespace {

namespace fs = std::filesystem;

/// One named entry of a kubeconfig list (clusters, users, contexts) and the
/// directory of the file it came from (relative paths are relative to it).
struct Entry {
  YAML::Node body;
  std::string dir, file;
};

std::string scalar(const YAML::Node& n, const char* key) {
  const YAML::Node v = n[key];
  return v && v.IsScalar() ? v.Scalar() : "";
}

/// Inline `KEY-data` (base64) or the file `KEY` names; "" when neither is set.
Result<std::string> data_or_file(const Entry& e, const std::string& key, const std::string& what) {
  if (std::string data = scalar(e.body, (key + "-data").c_str()); !data.empty()) {
    auto bytes = decode_base64(data);
    if (!bytes) return Error::invalid(e.file + ": " + what + " " + key + "-data is not valid base64");
    return *bytes;
  }
  std::string path = scalar(e.body, key.c_str());
  if (path.empty()) return std::string();
  if (fs::path(path).is_relative()) path = (fs::path(e.dir) / path).string();
  auto text = read_file(path);
  if (!text) return Error::invalid(e.file + ": " + what + " " + key + ": " + text.error().message);
  return *text;
}

}  // namespace

Result<std::string> decode_base64(const std::string& text) {
  std::string in;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) in += c;
  if (in.size() % 4 != 0) return Error::invalid("base64 length is not a multiple of 4");
  std::string out(in.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  if (n < 0) return Error::invalid("malformed base64");
  size_t pad = 0;
  if (!in.empty() && in.back() == '=') ++pad;
  if (in.size() > 1 && in[in.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

std::vector<std::string> kubeconfig_files(const std::string& paths) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= paths.size() && !paths.empty()) {
    size_t end = paths.find(':', start);
    if (end == std::string::npos) end = paths.size();
    if (end > start) out.push_back(paths.substr(start, end - start));
    start = end + 1;
  }
  if (out.empty()) {
    const char* home = std::getenv("HOME");
    out.push_back((fs::path(home ? home : "") / ".kube" / "config").string());
  }
  return out;
}

Result<ClusterAccess> load_kubeconfig(const std::string& paths, const std::string& context) {
  std::map<std::string, Entry> clusters, users, contexts;
  std::string current;
  std::vector<std::string> read;
  for (const std::string& file : kubeconfig_files(paths)) {
    std::error_code ec;
    if (!fs::exists(file, ec)) continue;
    auto text = read_file(file);
    if (!text) return Error::invalid("kubeconfig " + file + ": " + text.error().message);
    YAML::Node doc;
    try {
      doc = YAML::Load(*text);
    } catch (const YAML::Exception& e) {
      return Error::invalid("kubeconfig " + file + ":" + std::to_string(e.mark.line + 1) + ":" +
                            std::to_string(e.mark.column + 1) + ": not YAML: " + e.msg);
    }
    read.push_back(file);
    const std::string dir = fs::path(file).parent_path().string();
    auto take = [&](const char* list, const char* inner, std::map<std::string, Entry>& into) {
      const YAML::Node l = doc[list];
      if (!l || !l.IsSequence()) return;
      for (const auto& item : l) {
        std::string name = scalar(item, "name");
        if (!name.empty() && item[inner]) into.try_emplace(name, Entry{item[inner], dir, file});
      }
    };
    take("clusters", "cluster", clusters);
    take("users", "user", users);
    take("contexts", "context", contexts);
    if (current.empty()) current = scalar(doc, "current-context");
  }
  std::string where = paths.empty() ? kubeconfig_files("").front() : paths;
  if (read.empty())
    return Error::invalid("no kubeconfig found at " + where +
                          "; set KUBECONFIG (or the provider option kubeconfig) to the file kubectl uses");
  ClusterAccess a;
  a.files = where;
  a.context = context.empty() ? current : context;
  if (a.context.empty())
    return Error::invalid("kubeconfig " + where +
                          " has no current-context; name one with context: in the "
                          "blueprint's clusters: entry");
  auto ctx = contexts.find(a.context);
  if (ctx == contexts.end()) {
    std::string known;
    for (const auto& [n, _] : contexts) known += (known.empty() ? "" : ", ") + n;
    return Error::invalid("kubeconfig " + where + " has no context '" + a.context +
                          "' (contexts: " + (known.empty() ? "none" : known) + ")");
  }
  a.cluster = scalar(ctx->second.body, "cluster");
  a.user = scalar(ctx->second.body, "user");
  auto cl = clusters.find(a.cluster);
  if (cl == clusters.end())
    return Error::invalid("kubeconfig " + where + ": context '" + a.context + "' names cluster '" + a.cluster +
                          "', which it does not define");
  a.server = scalar(cl->second.body, "server");
  while (!a.server.empty() && a.server.back() == '/') a.server.pop_back();
  if (a.server.rfind("https://", 0) != 0)
    return Error::invalid("kubeconfig " + cl->second.file + ": cluster '" + a.cluster + "' has server '" + a.server +
                          "'; plinth talks to API servers over https:// only");
  if (scalar(cl->second.body, "insecure-skip-tls-verify") == "true")
    return Error::invalid("kubeconfig " + cl->second.file + ": cluster '" + a.cluster +
                          "' sets insecure-skip-tls-verify; plinth always verifies TLS: give the cluster's CA as "
                          "certificate-authority-data");
  auto ca = data_or_file(cl->second, "certificate-authority", "cluster '" + a.cluster + "'");
  if (!ca) return ca.error();
  a.ca_pem = *ca;
  if (a.user.empty()) return a;
  auto us = users.find(a.user);
  if (us == users.end())
    return Error::invalid("kubeconfig " + where + ": context '" + a.context + "' names user '" + a.user +
                          "', which it does not define");
  const Entry& u = us->second;
  if (u.body["auth-provider"])
    return Error::invalid("kubeconfig " + u.file + ": user '" + a.user + "' uses an auth-provider plugin (" +
                          scalar(u.body["auth-provider"], "name") +
                          "), which Kubernetes removed in 1.26; use its exec plugin instead (e.g. "
                          "gke-gcloud-auth-plugin, kubelogin)");
  if (const YAML::Node exec = u.body["exec"]) {
    auto bad = [&](const std::string& what) {
      return Error::invalid("kubeconfig " + u.file + ": user '" + a.user + "': exec " + what);
    };
    if (!exec.IsMap()) return bad("is not a map");
    ExecPlugin p;
    p.api_version = scalar(exec, "apiVersion");
    p.command = scalar(exec, "command");
    p.interactive_mode = scalar(exec, "interactiveMode");
    p.install_hint = scalar(exec, "installHint");
    p.provide_cluster_info = scalar(exec, "provideClusterInfo") == "true";
    if (p.command.empty()) return bad("has no command");
    if (p.api_version != "client.authentication.k8s.io/v1" && p.api_version != "client.authentication.k8s.io/v1beta1")
      return bad("apiVersion '" + p.api_version +
                 "' is not client.authentication.k8s.io/v1 or v1beta1 (v1alpha1 was removed in Kubernetes 1.24)");
    if (p.api_version == "client.authentication.k8s.io/v1" && p.interactive_mode.empty())
      return bad("has no interactiveMode, which client.authentication.k8s.io/v1 requires (Never, IfAvailable, Always)");
    if (!p.interactive_mode.empty() && p.interactive_mode != "Never" && p.interactive_mode != "IfAvailable" &&
        p.interactive_mode != "Always")
      return bad("interactiveMode '" + p.interactive_mode + "' is not Never, IfAvailable or Always");
    if (p.interactive_mode == "Always")
      return bad("command '" + p.command +
                 "' has interactiveMode Always: it needs a terminal, and plinth runs plugins without one (as in CI); "
                 "use a plugin mode that needs none (e.g. kubelogin's azurecli, workloadidentity or msi login)");
    // kubectl: a relative command with a '/' is relative to the kubeconfig's directory; a bare name is on PATH.
    if (p.command.find('/') != std::string::npos && fs::path(p.command).is_relative())
      p.command = (fs::path(u.dir) / p.command).lexically_normal().string();
    // kubectl writes `args: null` and `env: null` for none.
    if (const YAML::Node args = exec["args"]; args && !args.IsNull()) {
      if (!args.IsSequence()) return bad("args is not a list");
      for (const auto& arg : args) p.args.push_back(arg.IsScalar() ? arg.Scalar() : "");
    }
    if (const YAML::Node env = exec["env"]; env && !env.IsNull()) {
      if (!env.IsSequence()) return bad("env is not a list");
      for (const auto& e : env) {
        if (scalar(e, "name").empty()) return bad("env has an entry without a name");
        p.env.emplace_back(scalar(e, "name"), scalar(e, "value"));
      }
    }
    a.exec = std::move(p);
    return a;
  }
  auto cert = data_or_file(u, "client-certificate", "user '" + a.user + "'");
  if (!cert) return cert.error();
  auto key = data_or_file(u, "client-key", "user '" + a.user + "'");
  if (!key) return key.error();
  if (cert->empty() != key->empty())
    return Error::invalid("kubeconfig " + u.file + ": user '" + a.user +
                          "' has a client certificate without its key (or a key without its certificate)");
  a.client_cert_pem = *cert;
  a.client_key_pem = *key;
  a.token = scalar(u.body, "token");
  if (std::string tf = scalar(u.body, "tokenFile"); a.token.empty() && !tf.empty()) {
    if (fs::path(tf).is_relative()) tf = (fs::path(u.dir) / tf).string();
    auto t = read_file(tf);
    if (!t) return Error::invalid("kubeconfig " + u.file + ": user '" + a.user + "' tokenFile: " + t.error().message);
    a.token = *t;
    while (!a.token.empty() && std::isspace(static_cast<unsigned char>(a.token.back()))) a.token.pop_back();
  }
  return a;
}

}  // namespace plinth::kubernetes
