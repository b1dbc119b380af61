#pragma once
// A kubeconfig user's exec credential plugin (aws eks get-token,
// gke-gcloud-auth-plugin, kubelogin, ...) run as kubectl runs it: the
// ExecCredential request in KUBERNETES_EXEC_INFO, the plugin's env, no
// terminal; its ExecCredential answer read for a token or a client
// certificate and their expiration.
#include <chrono>
#include <optional>
#include <string>

#include "engine/core/deadline.h"
#include "engine/core/result.h"
#include "providers/kubernetes/kubeconfig.h"

namespace plinth::kubernetes {

/// What an exec plugin gave: a bearer token, or a client certificate and key (PEM).
struct ExecResult {
  std::string token;
  std::string client_cert_pem, client_key_pem;
  std::optional<std::chrono::system_clock::time_point> expiration;  ///< nullopt: until the server refuses it
};

/// Runs `access.exec` (which must be set). Errors name the kubeconfig, the
/// user and the command, with the plugin's installHint when it is not found;
/// what the plugin printed on stdout never appears in them.
Result<ExecResult> run_exec_plugin(const ClusterAccess& access, const Deadline& deadline);

}  // namespace plinth::kubernetes
