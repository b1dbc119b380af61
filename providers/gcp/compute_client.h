#pragma once
// Compute Engine v1 over HTTPS for the gcp provider: OAuth 2.0 access tokens
// the way Google's client libraries get them (a service-account key file's
// JWT bearer grant, cached until shortly before expiry and fetched again on a
// 401; or a fixed access token), Google's JSON error answers mapped to Error
// kinds, zonal operations polled until DONE, and a client-side token bucket
// per project so a large apply stays under the API's rate quotas.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/net/http.h"
#include "engine/provider/call.h"
#include "engine/provider/options.h"
#include "providers/gcp/adc.h"
#include "providers/gcp/oauth_token.h"
#include "providers/gcp/service_account.h"

namespace plinth::gcp {

using Json = nlohmann::json;

/// A Compute API error answer or operation error (or a transport failure,
/// with empty code and reason).
struct ApiFailure {
  std::string code;    ///< operation error code (ZONE_RESOURCE_POOL_EXHAUSTED, QUOTA_EXCEEDED) or "HTTP 404"
  std::string reason;  ///< errors[0].reason of an HTTP error (notFound, alreadyExists, rateLimitExceeded)
  Error error;         ///< kind and message ("CODE: Google's message (compute.instances.insert in ZONE)")
  Json details;        ///< the operation error's errorDetails (quotaInfo, errorInfo), or null
};

/// Error kind of an HTTP status and Google's reason: 429 and the
/// rate-limit reasons are Throttled, 5xx Retryable, 404 NotFound, 409
/// Conflict, 401/403 Fatal, other 4xx Invalid.
Error::Kind kind_of_http(long status, const std::string& reason);

/// The failure of a DONE operation that has `error` (first error's code
/// and message; the quota metric and the zones GCP says have room are added
/// to the message). Capacity (ZONE_RESOURCE_POOL_EXHAUSTED*) and quota
/// (QUOTA_EXCEEDED) are Conflict: the provider moves on to its next zone or
/// machine type; never retried as a blip.
ApiFailure operation_failure(const Json& operation, const std::string& where);

/// "https://compute.googleapis.com/compute/v1/" style root, with one trailing '/'.
std::string normalize_root(const std::string& endpoint);

struct ClientSettings {
  std::string root;     ///< the Compute API root, ending in "/compute/v1/"
  std::string project;  ///< the project every path is in
  CredentialSource credentials;
  double requests_per_second = 20;  ///< client-side bucket over every Compute call of the project
  double burst = 50;
  int poll_ms = 1000;       ///< first interval between zoneOperations.get polls
  int max_poll_ms = 10000;  ///< the interval doubles up to this
};

/// Sends Compute API calls. Thread-safe.
class ComputeClient {
 public:
  ComputeClient(net::Client& http, ClientSettings settings, const std::atomic<bool>* cancel);

  /// `method` (GET, POST, DELETE) of `path` below projects/PROJECT/ (e.g.
  /// "zones/us-central1-a/instances") with `query` (values encoded here) and
  /// a JSON body (null: none). `api` names the call in messages
  /// ("compute.instances.insert in us-central1-a"). Waits for the project's
  /// token bucket; gets an access token first (fetched once, then cached;
  /// fetched again after a 401, once); throttling, 5xx and connection errors
  /// are sent again while call.retry() allows; a success calls
  /// call.progress().
  std::variant<Json, ApiFailure> send(const std::string& method, const std::string& path,
                                      const std::map<std::string, std::string>& query, const Json& body,
                                      const std::string& api, Call& call);

  /// Polls zoneOperations.get for `operation` (an Operation resource) in
  /// `zone` until it is DONE, waiting poll_ms, then twice as long each time
  /// up to max_poll_ms. Returns the DONE operation (whose `error`, if any,
  /// the caller reads with operation_failure).
  std::variant<Json, ApiFailure> wait(const Json& operation, const std::string& zone, Call& call);

  const std::string& project() const { return settings_.project; }
  const std::string& root() const { return settings_.root; }
  /// Gets an access token now (the provider asks the metadata server at configure).
  Status first_token();

 private:
  /// The cached token, or a new one from the token endpoint when there is
  /// none, it is about to expire, or it is `stale` (refused with a 401).
  Result<std::string> token(Call& call, const std::string& stale);
  std::chrono::milliseconds take();

  net::Client& http_;
  ClientSettings settings_;
  const std::atomic<bool>* cancel_;
  std::mutex token_mu_;  ///< held while a token is fetched: one fetch at a time
  std::optional<AccessToken> token_;
  std::optional<Error> token_refused_;  ///< a fatal refusal: every later call fails the same way, sending nothing
  std::mutex bucket_mu_;
  double tokens_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace plinth::gcp
