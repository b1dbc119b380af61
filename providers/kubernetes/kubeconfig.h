#pragma once
// Cluster access from a kubeconfig, found and merged the way kubectl does.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/result.h"

namespace plinth::kubernetes {

/// A user's `exec` credential plugin (client.authentication.k8s.io), as kubectl runs it.
struct ExecPlugin {
  std::string api_version;  ///< client.authentication.k8s.io/v1 or /v1beta1
  std::string command;      ///< a relative path holding '/' is made relative to the kubeconfig
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string interactive_mode;  ///< Never, IfAvailable or Always (v1 requires it)
  std::string install_hint;
  bool provide_cluster_info = false;
};

/// How to reach one cluster as one user: what a kubeconfig context resolves to.
struct ClusterAccess {
  std::string server;                           ///< https://host:port, no trailing slash
  std::string ca_pem;                           ///< the cluster's CA (PEM); "" = the system store
  std::string client_cert_pem, client_key_pem;  ///< mutual TLS; never printed
  std::string token;                            ///< bearer token; never printed
  std::optional<ExecPlugin> exec;               ///< the user's exec plugin: token or certificate come from it
  std::string context, cluster, user;           ///< names, for messages
  std::string files;                            ///< the kubeconfig file(s) read, for messages
};

/// The files kubectl would read: `paths` (KUBECONFIG's value or the
/// `kubeconfig` option: colon-separated) when non-empty, else
/// $HOME/.kube/config.
std::vector<std::string> kubeconfig_files(const std::string& paths);

/// Resolves `context` ("" = current-context) from the kubeconfig files
/// `paths` names, merged as kubectl merges them: files that do not exist are
/// skipped, and the first file that defines a context, cluster, user or
/// current-context wins. Inline data (`*-data`, base64) and file references
/// (relative to the kubeconfig) are both read. TLS is always verified:
/// `insecure-skip-tls-verify` is refused, as are the removed auth-provider
/// plugins; an exec plugin is read, not run (exec_credential.h runs it).
/// Errors name the file, the context and what to do.
Result<ClusterAccess> load_kubeconfig(const std::string& paths, const std::string& context);

/// Standard base64 (with padding) to bytes; nullopt when malformed.
Result<std::string> decode_base64(const std::string& text);

}  // namespace plinth::kubernetes
