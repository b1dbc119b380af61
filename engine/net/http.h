#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <utility>

#include "engine/core/deadline.h"
#include "engine/core/result.h"

namespace plinth::net {

/// Orders header names case-insensitively ("ETag" finds "etag").
struct CaseInsensitiveLess {
  bool operator()(std::string_view a, std::string_view b) const;
  using is_transparent = void;
};
using Headers = std::map<std::string, std::string, CaseInsensitiveLess>;

/// One HTTP request. `url` is absolute (https://host:port/path).
struct Request {
  std::string method = "GET";
  std::string url;
  Headers headers;
  std::string body;
  /// "user:password" sent as HTTP basic auth; never logged or put in errors.
  std::string basic_auth;
  /// CA bundle for this request; empty uses the client's.
  std::string ca_bundle;
  /// The deadline of the operation this request belongs to: the request's
  /// timeout is cut to what is left of it, and a request still running when
  /// it passes is aborted with DeadlineExceeded.
  Deadline deadline;
  /// When set, a request in flight is aborted within ~50 ms of it turning
  /// true (Cancelled); a request is not started once it is true.
  const std::atomic<bool>* cancel = nullptr;
  /// Allows plain http to the link-local addresses of the clouds' metadata
  /// and container-credential services (169.254.169.254, 169.254.170.2,
  /// 169.254.170.23, fd00:ec2::254, fd00:ec2::23, metadata.google.internal), which serve nothing else.
  /// Set only by code that reaches such a service at an address the
  /// operator's environment names (the AWS credential chain).
  bool metadata_service = false;
};

/// What the server answered (any status: mapping statuses to errors is
/// `status_error`'s job).
struct Response {
  long status = 0;
  Headers headers;  ///< last value wins for repeated names
  std::string body;
  /// The header's value, or "" when absent. Case-insensitive.
  std::string header(std::string_view name) const;
};

struct ClientOptions {
  /// PEM bundle used to verify servers; empty uses the system store.
  std::string ca_bundle;
  /// Turns TLS verification off, but only ever for loopback hosts
  /// (127.0.0.0/8, ::1, localhost); requests to other hosts are refused.
  bool insecure = false;
  long connect_timeout_ms = 10000;
  long timeout_ms = 30000;  ///< whole request, connect included
  /// Largest response body accepted; a larger (or endless) one fails the
  /// request with a Fatal error instead of filling memory.
  size_t max_body_bytes = 32u << 20;
  /// PEM text of the CA(s) that verify servers, in memory (a kubeconfig's
  /// certificate-authority-data); when set it is used instead of ca_bundle.
  std::string ca_pem;
  /// PEM text of a client certificate and its private key, sent for mutual
  /// TLS; both or neither. Never logged or put in errors.
  std::string client_cert_pem;
  std::string client_key_pem;
};

/// RFC 3986 percent-encoding of everything but unreserved characters
/// (ALPHA / DIGIT / "-" / "." / "_" / "~"): safe in a query value and in an
/// application/x-www-form-urlencoded body.
std::string percent_encode(std::string_view text);

/// An application/x-www-form-urlencoded body of `fields`, in order:
/// k1=v1&k2=v2 with each value percent_encode()d (keys are taken as given).
std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields);

/// True for localhost, 127.0.0.0/8 and ::1 (with or without brackets).
bool is_loopback_host(std::string_view host);

/// True for the link-local addresses of the clouds' metadata services
/// (Request::metadata_service), with or without brackets.
bool is_metadata_host(std::string_view host);

/// The Retry-After value (delta seconds or an HTTP date) in milliseconds from
/// now; 0 when absent, unparsable or in the past.
int parse_retry_after_ms(std::string_view value);

/// Waits `ms`, waking early to return Cancelled when `cancel` turns true or
/// DeadlineExceeded when the deadline passes first (`what` names the
/// operation in those messages). For polling between requests.
Status pause(int ms, const Deadline& deadline, const std::atomic<bool>* cancel, const std::string& what);

/// Maps a non-success status to an Error whose message names the method, the
/// URL, the status and the server's own message (Redfish/OData `error.message`
/// when the body has one):
/// 429, 503 -> Throttled (with Retry-After); other 5xx -> Retryable;
/// 404, 410 -> NotFound; 409, 412 -> Conflict; 400, 422 -> Invalid; other 4xx -> Fatal.
/// Returns nullopt for 1xx-3xx.
std::optional<Error> status_error(const std::string& method, const std::string& url, const Response& r);

/// HTTP over libcurl. TLS is verified unless `insecure` (loopback only).
/// Thread-safe: any number of threads may call `send`/`request` at once; easy
/// handles are pooled and DNS, TLS sessions and connections are shared, so
/// keep-alive connections are reused across calls.
class Client {
 public:
  explicit Client(ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Performs the request once (retrying is the caller's business). Any HTTP
  /// status is a Response; transport failures are errors naming method and
  /// URL: connection refused/reset, timeouts and DNS failures are Retryable,
  /// TLS verification failures, a refused `insecure` and a body over
  /// max_body_bytes are Fatal/Invalid; the deadline passing is
  /// DeadlineExceeded and `cancel` is Cancelled. Redirects are not followed.
  Result<Response> send(const Request& request);
  /// `send`, then `status_error` for 4xx/5xx.
  Result<Response> request(const Request& request);

  const ClientOptions& options() const { return options_; }

 private:
  Result<Response> perform(const Request& request);

  struct Impl;
  ClientOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace plinth::net
