#pragma once
// The API server itself, without the network: authentication of an already
// verified client certificate or a bearer token, authorization, discovery,
// OpenAPI v3, and create / get / list / update / patch / server-side apply /
// delete on an in-memory store with one global resourceVersion counter.
// main.cpp puts it behind cpp-httplib; docs/emulators.md describes the API.
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/emulators/kubernetes/options.h"
#include "tests/emulators/kubernetes/resources.h"

namespace plinth::kube_emulator {

using json = nlohmann::json;

/// One HTTP request as the API server sees it.
struct Request {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> params;  ///< decoded query parameters
  std::map<std::string, std::string> headers;      ///< lower-case names
  std::string body;
  std::optional<Identity> client_cert;  ///< a client certificate the TLS layer verified
};

/// The answer, plus what the request log records about it.
struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string user;      ///< "" when authentication failed
  std::string verb;      ///< Kubernetes verb: get, list, create, update, patch, apply, delete, ...
  std::string resource;  ///< "roles.rbac.authorization.k8s.io", or "" for non-resource paths
  std::string subresource;
  std::string ns;
  std::string name;
  bool wrote = false;  ///< the store changed
};

class ApiServer {
 public:
  explicit ApiServer(const Options& options);

  /// "127.0.0.1:6443": what /api reports in serverAddressByClientCIDRs.
  void set_address(const std::string& host_port);

  /// Authenticates, authorizes and answers one request. Thread-safe.
  Response handle(const Request& request);

  /// Every stored object (kind and apiVersion set), ordered by resource,
  /// namespace and name, and the current resourceVersion: /__emulator/objects.
  json dump() const;

  /// The resource of a request path (for the request log of a request that
  /// never reached handle(), such as an injected fault): "namespaces", "".
  std::string resource_of(const std::string& path) const;

 private:
  struct Target;
  struct Caller;

  Response discovery(const Request& req, const std::vector<std::string>& seg, Response r);
  Response openapi(const Request& req, const std::vector<std::string>& seg, Response r);
  Response resource_request(const Request& req, const Caller& who, Response base);
  Response get(const Request& req, const Target& t, Response r);
  Response list(const Request& req, const Target& t, Response r);
  Response create(const Request& req, const Target& t, Response r);
  Response update(const Request& req, const Target& t, Response r);
  Response patch(const Request& req, const Target& t, Response r);
  Response apply(const Request& req, const Target& t, Response r);
  Response remove(const Request& req, const Target& t, Response r);
  /// POST pods/NAME/eviction: deletes the pod unless the one
  /// PodDisruptionBudget selecting it allows no disruption (429).
  Response evict(const Request& req, const Target& t, Response r);
  Response remove_collection(const Request& req, const Target& t, Response r);

  /// Stores `obj` (a create when `old` is null) after setting server-owned
  /// fields; returns the stored object, or `old` unchanged for a no-op.
  json commit(const ResourceType& type, const json* old, json obj, bool dry_run);
  void erase_object(const ResourceType& type, const std::string& ns, const std::string& name);
  void rebuild_types();
  void seed();
  const ResourceType* find_type(const std::string& group, const std::string& version, const std::string& plural) const;
  std::map<std::string, json>& bucket(const ResourceType& type) { return store_[type.qualified()]; }
  const json* find(const ResourceType& type, const std::string& ns, const std::string& name) const;
  std::string new_uid();
  std::string now() const;
  json openapi_document(const std::string& group, const std::string& version) const;

  Options options_;
  std::string address_ = "127.0.0.1:6443";
  mutable std::mutex mu_;
  std::vector<ResourceType> types_;                           ///< built-in, then from stored CRDs
  std::map<std::string, std::map<std::string, json>> store_;  ///< qualified resource -> "ns/name" -> object
  uint64_t resource_version_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace plinth::kube_emulator
