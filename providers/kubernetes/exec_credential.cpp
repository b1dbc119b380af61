#include "providers/kubernetes/exec_credential.h"

#include <nlohmann/json.hpp>

#include "engine/core/duration.h"
#include "engine/core/helper_process.h"
#include "engine/core/wire.h"

namespace plinth::kubernetes {

namespace {

std::string base64(const std::string& bytes) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8 |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
  }
  if (i + 1 == bytes.size()) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    out += {t[v >> 18], t[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
  }
  return out;
}

}  // namespace

Result<ExecResult> run_exec_plugin(const ClusterAccess& access, const Deadline& deadline) {
  const ExecPlugin& p = *access.exec;
  const std::string what = "kubeconfig " + access.files + ": user '" + access.user + "': exec plugin '" + p.command + "'";
  // What kubectl tells the plugin: the ExecCredential it wants back, not interactive (no terminal).
  Json info = {{"apiVersion", p.api_version},
               {"kind", "ExecCredential"},
               {"spec", {{"interactive", false}}}};
  if (p.provide_cluster_info) {
    Json cluster = {{"server", access.server}};
    if (!access.ca_pem.empty()) cluster["certificate-authority-data"] = base64(access.ca_pem);
    info["spec"]["cluster"] = cluster;
  }
  std::vector<std::pair<std::string, std::string>> env = p.env;
  env.emplace_back("KUBERNETES_EXEC_INFO", info.dump());
  std::vector<std::string> argv = {p.command};
  argv.insert(argv.end(), p.args.begin(), p.args.end());
  auto out = run_helper(argv, env, deadline, what);
  if (!out) {
    Error e = out.error();
    if (e.message.find("': not found") != std::string::npos && !p.install_hint.empty())
      e.message += "; " + p.install_hint;
    return e;
  }
  Json j = parse_json_or_discard(*out);
  if (!j.is_object() || j.value("kind", "") != "ExecCredential")
    return Error::fatal(what + " did not print an ExecCredential (JSON with kind ExecCredential)");
  if (j.value("apiVersion", "") != p.api_version)
    return Error::fatal(what + " is configured for " + p.api_version + " but printed an ExecCredential of " +
                        j.value("apiVersion", std::string("no apiVersion")));
  const Json status = j.value("status", Json::object());
  if (!status.is_object()) return Error::fatal(what + ": its ExecCredential has no status");
  auto field = [&](const char* k) {
    return status.contains(k) && status[k].is_string() ? status[k].get<std::string>() : std::string();
  };
  ExecResult r;
  r.token = field("token");
  r.client_cert_pem = field("clientCertificateData");
  r.client_key_pem = field("clientKeyData");
  if (r.token.empty() && (r.client_cert_pem.empty() || r.client_key_pem.empty()))
    return Error::fatal(what + ": its ExecCredential has neither status.token nor both clientCertificateData and "
                               "clientKeyData");
  if (const std::string exp = field("expirationTimestamp"); !exp.empty()) {
    r.expiration = parse_utc_time(exp);
    if (!r.expiration)
      return Error::fatal(what + ": status.expirationTimestamp '" + exp + "' is not an RFC 3339 time");
  }
  return r;
}

}  // namespace plinth::kubernetes
