#pragma once
// Kubernetes' protobuf encoding ("application/vnd.kubernetes.protobuf"), read
// only: client-go's typed clients -- `kubectl create namespace`, `kubectl
// create serviceaccount|quota|role|rolebinding|clusterrole|clusterrolebinding`
// -- send their bodies this way. The answer is always JSON.
#include <nlohmann/json.hpp>
#include <string>

namespace plinth::kube_emulator {

/// Decodes a "k8s\0" + runtime.Unknown envelope holding a Namespace,
/// ServiceAccount, ResourceQuota, Role, ClusterRole, RoleBinding or
/// ClusterRoleBinding into the JSON object the same request would have sent.
/// Returns "" or an error naming what could not be read (other kinds are
/// refused: send them as JSON).
std::string decode_protobuf(const std::string& body, nlohmann::json& out);

}  // namespace plinth::kube_emulator
