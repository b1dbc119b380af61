#pragma once
// EC2 over HTTPS for the aws provider: credentials and endpoints found the
// way the AWS SDKs and CLI find them, SigV4-signed Query requests, error
// answers mapped to Error kinds, and a client-side token bucket per region
// and action so a large apply is not throttled in the first place.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/net/http.h"
#include "engine/provider/call.h"
#include "engine/provider/options.h"
#include "providers/aws/credentials.h"
#include "providers/aws/ec2_protocol.h"
#include "providers/aws/sigv4.h"

namespace plinth::aws {

/// The endpoint for `region`: the endpoint option (AWS_ENDPOINT_URL_EC2,
/// then AWS_ENDPOINT_URL) when set, else https://ec2.REGION.amazonaws.com.
std::string endpoint_for(const std::string& endpoint_option, const std::string& region);

/// An EC2 error answer (or a transport failure, with an empty code).
struct ApiFailure {
  std::string code;  ///< EC2's code, e.g. InsufficientInstanceCapacity; "" for transport errors
  Error error;       ///< kind and message ("CODE: AWS's message (EC2 Action in REGION)")
};

/// A token bucket: SIZE requests at once, refilled at REFILL a second.
struct Rate {
  double size = 0;
  double refill_per_second = 0;
};

/// "BUCKET=SIZE:REFILL" entries of the request_rates option by bucket name
/// (mutating, non-mutating or an action); the error names the bad entry.
Result<std::map<std::string, Rate>> parse_rates(const Json& option);

struct ClientSettings {
  std::string endpoint;  ///< the endpoint option ("" = regional endpoints)
  std::shared_ptr<CredentialSource> credentials;  ///< fetched and refreshed as requests need them
  std::map<std::string, Rate> rates;
};

/// Sends EC2 actions. Thread-safe.
class Ec2Client {
 public:
  Ec2Client(net::Client& http, const ec2::Model& model, ClientSettings settings, const std::atomic<bool>* cancel);

  /// Sends `action` with `params` (JSON of its input shape) to `region` and
  /// returns the parsed answer (JSON of its output shape). Waits for the
  /// region's token bucket of the action first. Retryable failures
  /// (RequestLimitExceeded and other throttling, 5xx but
  /// InsufficientInstanceCapacity, connection errors) are sent again while
  /// call.retry() allows; a success calls call.progress(). On failure, the
  /// error's code and Error.
  std::variant<ec2::Json, ApiFailure> send(const std::string& action, const ec2::Json& params,
                                           const std::string& region, Call& call);

 private:
  struct Bucket {
    Rate rate;
    double tokens = 0;
    std::chrono::steady_clock::time_point last;
  };
  /// Takes one token of (region, action)'s bucket; the wait before it may be used.
  std::chrono::milliseconds take(const std::string& region, const std::string& action);
  std::variant<ec2::Json, ApiFailure> once(const std::string& action, const std::string& body,
                                           const std::string& region, Call& call);

  net::Client& http_;
  const ec2::Model& model_;
  ClientSettings settings_;
  const std::atomic<bool>* cancel_;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;  ///< by region + "/" + bucket name
};

}  // namespace plinth::aws
