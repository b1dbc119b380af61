#pragma once
// Azure Resource Manager over HTTPS for the azure provider: Microsoft Entra
// client-credentials tokens (a secret or a client certificate), cached until
// shortly before they expire; ARM requests with api-version and a bearer
// token, ARM's error answers mapped to Error kinds, long-running operations
// polled honouring Retry-After, and a client-side token bucket per request
// kind (reads, writes, deletes) kept in step with ARM's
// x-ms-ratelimit-remaining-subscription-* headers.
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/net/http.h"
#include "engine/provider/call.h"
#include "engine/provider/options.h"

namespace plinth::azure {

/// A token bucket: SIZE requests at once, refilled at REFILL a second.
struct Rate {
  double size = 0;
  double refill_per_second = 0;
};

/// "BUCKET=SIZE:REFILL" entries of the request_rates option (reads, writes,
/// deletes); the error names the bad entry.
Result<std::map<std::string, Rate>> parse_rates(const Json& option);

/// Where tokens come from and where ARM is. Secrets live only here (never
/// in messages).
struct ArmSettings {
  std::string authority_host = "https://login.microsoftonline.com";
  std::string tenant_id;
  std::string client_id;
  std::string client_secret;
  std::string client_certificate_pem;  ///< certificate + private key (PEM), instead of the secret
  std::string federated_token_file;    ///< workload identity: its OIDC token is the client assertion
  /// Managed identity (no service principal credential): App Service's endpoint and header, else IMDS
  /// at imds_endpoint; client_id, when set, picks a user-assigned identity.
  bool managed_identity = false;
  std::string identity_endpoint, identity_header;
  std::string imds_endpoint = "http://169.254.169.254";
  std::string endpoint = "https://management.azure.com";
  std::string audience = "https://management.azure.com/";
  std::map<std::string, Rate> rates;  ///< by bucket: reads, writes, deletes
  int poll_ms = 5000;                 ///< LRO poll interval without Retry-After
  int max_poll_ms = 60000;            ///< cap on any Retry-After
};

/// The client-credentials request body for `settings` (form-encoded):
/// client_id, scope AUDIENCE/.default, grant_type, and client_secret or a
/// client assertion (RS256 JWT with x5t, aud = the token endpoint) made at
/// `now_s` (seconds since the epoch). Exposed for tests.
Result<std::string> token_request_body(const ArmSettings& settings, const std::string& token_url, long long now_s);

/// ARM's (or Entra's) answer to a failed request, or a transport failure.
struct ArmFailure {
  std::string code;  ///< ARM's code (AllocationFailed, ...); Entra's `error`; "" for transport errors
  long status = 0;   ///< HTTP status; 0 for transport errors
  Error error;       ///< kind and message: "CODE: message (details) (what) [x-ms-request-id ...]"
};

/// A successful answer.
struct ArmReply {
  long status = 0;
  net::Headers headers;
  Json body;  ///< parsed JSON; null for an empty body
};

using ArmResult = std::variant<ArmReply, ArmFailure>;

/// True for ARM error codes that mean "no room for this size here": the
/// provider falls back to the next size or zone instead of retrying.
bool capacity_code(const std::string& code, const std::string& message);

/// The Error kind of an ARM error code and HTTP status.
Error::Kind kind_of(const std::string& code, long status, const std::string& message);

/// "CODE: message (details: CODE: message; ...)" of an ARM `error` object.
std::string describe_error(const Json& error);

/// Sends Resource Manager requests. Thread-safe.
class ArmClient {
 public:
  ArmClient(net::Client& http, ArmSettings settings, const std::atomic<bool>* cancel);

  /// `method` on `path` (below the endpoint, e.g. /subscriptions/...; or an
  /// absolute URL that ARM gave, such as a nextLink) with `api_version`
  /// (none when the URL has one) and a JSON `body` (none when null). Waits
  /// for the request kind's bucket first, gets a token when the cached one
  /// is near its end, and sends again the failures call.retry() allows
  /// (429 with its Retry-After, 5xx, dropped connections); a success calls
  /// call.progress(). `what` names the request in messages ("PUT
  /// virtualMachines/gpu-0").
  ArmResult send(const std::string& method, const std::string& path, const std::string& api_version,
                 const Json& body, Call& call, const std::string& what);

  /// Waits for the long-running operation `started` began: polls its
  /// Azure-AsyncOperation URL (else its Location URL), every Retry-After
  /// seconds (else poll_ms), until the status is Succeeded, Failed or
  /// Canceled. A finished operation (no header) returns at once. On
  /// Failed/Canceled the failure carries the operation's error code.
  std::variant<Json, ArmFailure> wait(const ArmReply& started, Call& call, const std::string& what);

  /// A fresh access token (cached); errors carry Entra's code and text.
  std::variant<std::string, ArmFailure> token(Call& call);

  const ArmSettings& settings() const { return settings_; }

  /// Gets a token now (the provider checks a managed identity at configure); the error says what to set.
  Status first_token();

 private:
  struct Bucket {
    Rate rate;
    double tokens = 0;
    std::chrono::steady_clock::time_point last;
  };
  std::chrono::milliseconds take(const std::string& bucket);
  void observe_remaining(const std::string& bucket, const net::Response& r);
  ArmResult once(const std::string& method, const std::string& url, const Json& body, Call& call,
                 const std::string& what);
  std::string url_of(const std::string& path, const std::string& api_version) const;

  net::Client& http_;
  ArmSettings settings_;
  const std::atomic<bool>* cancel_;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
  std::mutex token_mu_;  ///< one token request at a time
  std::string token_;
  std::chrono::steady_clock::time_point token_refresh_;  ///< get a new one after this
  /// Entra refused the credential (a wrong secret): said again to every
  /// later call of the run instead of asking once per resource.
  std::optional<ArmFailure> token_refused_;
};

}  // namespace plinth::azure
