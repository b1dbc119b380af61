#pragma once
#include <mutex>
#include <optional>
#include <string>

#include "engine/core/result.h"
#include <atomic>

#include "engine/provider/call.h"
#include "engine/net/http.h"
#include "engine/provider/resource.h"

namespace plinth::baremetal {

/// j[key] when j is an object and that field is a string, else "".
std::string text(const Json& j, const char* key);

/// The "@odata.id" of the link object j[key], else "".
std::string link(const Json& j, const char* key);

/// True when the navigation property `nav` came expanded ($expand): an object
/// holding more than its "@odata.id".
inline bool expanded(const Json& nav) { return nav.is_object() && nav.size() > 1; }

/// Settings shared by every BMC connection of one provider.
struct RedfishSettings {
  int poll_ms = 1000;             ///< task monitor and PowerState polling interval
  int power_timeout_ms = 300000;  ///< longest wait for a PowerState or a task
};

/// A Redfish document with the URL it came from and its ETag ("" when the
/// service sent none).
struct Doc {
  std::string url;
  Json body;
  std::string etag;
};

/// Reads `ref` (env:NAME or file:PATH) and returns "user:password". Errors name
/// the reference (never its content) and say how to fix it.
Result<std::string> resolve_credentials(const std::string& ref);

/// One BMC's Redfish service reached at `endpoint` (https://host[:port][/prefix];
/// the service root is endpoint + "/redfish/v1/"). Logs in with a session
/// (X-Auth-Token) on first use and falls back to basic auth when the service
/// has no sessions; logs in again once when a session expires (401). A request
/// that fails with a retryable error (connection failure, 5xx, 429/503 with
/// Retry-After) is sent again only when the operation's Call allows it
/// (the engine's retry policy and the deadline). Follows links only on the
/// endpoint's own scheme, host and port, so credentials never go anywhere
/// else; never follows redirects. Every request is cut to the Call's
/// deadline; `cancel` (the provider's stop flag) aborts requests in flight. Thread-safe. Errors name the method and URL, never the
/// password.
class RedfishClient {
 public:
  RedfishClient(net::Client& http, std::string endpoint, std::string credentials_ref, std::string user_password,
                std::string ca_bundle, const RedfishSettings& settings, const std::atomic<bool>* cancel);
  ~RedfishClient() = default;
  RedfishClient(const RedfishClient&) = delete;
  RedfishClient& operator=(const RedfishClient&) = delete;

  /// An absolute URL for a Redfish URI: a path resolves against the
  /// endpoint's scheme://host:port (as @odata.id links do); an absolute URL
  /// is accepted only when it has the endpoint's own scheme, host and port.
  Result<std::string> url(const std::string& uri) const;
  const std::string& endpoint() const { return endpoint_; }

  /// The service root, fetched once; the document lives as long as the client
  /// and never changes once read.
  Result<const Json*> service_root(Call& call);
  /// The `$expand` query that expands references outside Links `levels` deep
  /// ("$expand=.($levels=2)"), cut to the depth the service root's
  /// ProtocolFeaturesSupported.ExpandQuery allows (NoLinks; Levels and
  /// MaxLevels, else one level); "" when the service does not offer it.
  /// A service that advertises $expand and ignores it still answers
  /// correctly: callers take a reference that was not expanded to a GET.
  Result<std::string> expand_query(int levels, Call& call);
  /// The URI of the first ComputerSystem (ServiceRoot -> Systems -> Members[0]),
  /// found once. The collection is read with $expand (3 levels) where the
  /// service offers it: when this call read it and the member came expanded,
  /// `first` (if given) receives the system with its inventory, saving a GET.
  Result<std::string> system_uri(Call& call, std::optional<Doc>* first = nullptr);

  /// GET `uri` (with `query`, e.g. expand_query's, when not empty) as JSON; a
  /// redirect or malformed JSON is an error naming the URL. Doc::url is the
  /// URL without the query.
  Result<Doc> get(const std::string& uri, Call& call, const std::string& query = "");
  /// PATCH `uri` with `body`, sending If-Match with the resource's ETag: the
  /// one in `etag` when the caller read the resource already ("" for none:
  /// no If-Match), else GETs it first. On 412 (or 428, If-Match required)
  /// re-reads the ETag and tries once more, unless `reread` is false: then a
  /// 412 is the error (Error::Kind::Conflict), for a caller whose earlier
  /// read of the resource as a whole is what the ETag vouched for.
  Result<net::Response> patch(const std::string& uri, const Json& body, Call& call,
                              const std::optional<std::string>& etag = std::nullopt, bool reread = true);
  /// POST an action; a 202 with a Location (task monitor) is polled until the
  /// task finishes (bounded by power_timeout_ms and the deadline).
  Status post_action(const std::string& uri, const Json& body, Call& call);
  /// Deletes the session (if any). Later calls log in again.
  Status logout(Call& call);

 private:
  /// Sends with auth (logging in first when needed); returns any status.
  Result<net::Response> exchange(const std::string& method, const std::string& uri, const std::string& body,
                             Call& call, const net::Headers& extra = {});
  Status login(Call& call);  // caller holds mu_
  Status wait_task(const std::string& monitor, Call& call);
  net::Request request(std::string method, std::string url, const Call& call) const;
  /// Sends `req`, again while it fails with a retryable error and the Call allows it.
  Result<net::Response> send(const net::Request& req, Call& call);

  net::Client& http_;
  std::string endpoint_, origin_;
  std::string credentials_ref_, user_password_;
  std::string ca_bundle_;
  RedfishSettings settings_;
  const std::atomic<bool>* cancel_;

  std::mutex mu_;  // guards everything below
  bool logged_in_ = false;
  std::string token_, session_uri_;
  Json root_;
  std::string system_uri_;
};

}  // namespace plinth::baremetal
