#pragma once
// AWS Signature Version 4 (AWS4-HMAC-SHA256): signing a request with
// credentials, and checking a signed request on the server side.
//
// The algorithm (docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html):
//   canonical request = METHOD \n canonical URI \n canonical query \n
//                       canonical headers \n signed header names \n payload hash
//   string to sign    = AWS4-HMAC-SHA256 \n X-Amz-Date \n scope \n hex(sha256(canonical request))
//   scope             = YYYYMMDD/region/service/aws4_request
//   signing key       = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")
//   signature         = hex(HMAC(signing key, string to sign))
// Checked against every case of the two AWS suites in tests/data/third_party/aws-sigv4
// (tests/providers/aws/sigv4_test.cpp).
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/result.h"

namespace plinth::aws {

/// An access key pair and, for temporary (STS) credentials, the session token.
/// The secret and the token never appear in any message this module produces.
struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  ///< empty for long-term keys
};

/// A request as SigV4 sees it. Header names keep their case and order;
/// a name may repeat (the canonical form joins the values with ',').
struct HttpRequest {
  std::string method = "GET";
  /// The path as the client has it, without the query: either raw
  /// ("/example space/") or already percent-encoded ("/example%20space/").
  /// Signing encodes it once more, which is what every SDK does for every
  /// service but S3 (a raw path is therefore encoded exactly once).
  std::string path = "/";
  std::string query;  ///< without the '?'; raw or percent-encoded
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  /// The values of header `name` (case-insensitive) joined with ',', or
  /// nullopt when absent.
  std::optional<std::string> header(std::string_view name) const;
  /// Replaces every header called `name` (case-insensitive) by one with `value`.
  void set_header(const std::string& name, const std::string& value);
};

/// What to sign with.
struct SigningParams {
  std::string region;   ///< e.g. us-east-1
  std::string service;  ///< e.g. ec2
  std::chrono::system_clock::time_point time = std::chrono::system_clock::now();
  /// Remove "." and ".." segments and repeated slashes from the path (every
  /// service but S3).
  bool normalize_path = true;
  /// Add and sign an x-amz-content-sha256 header carrying the payload hash
  /// (S3 requires it; other services accept it).
  bool payload_hash_header = false;
  /// With a session token: sign X-Amz-Security-Token (false adds it after
  /// signing, as a few services want).
  bool sign_session_token = true;
  /// The payload hash to sign: "" = hex(sha256(body)); may be "UNSIGNED-PAYLOAD".
  std::string payload_hash;
};

/// The result of signing, with the intermediate strings (for tests and
/// debugging; they contain no secret).
struct Signed {
  HttpRequest request;  ///< the input with X-Amz-Date, token, payload hash and Authorization added
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;      ///< 64 lower-case hex digits
  std::string authorization;  ///< the Authorization header value (header signing only)
};

/// Signs `request` with an Authorization header. Adds (replacing any existing
/// copy) X-Amz-Date, X-Amz-Security-Token when the credentials carry a token,
/// x-amz-content-sha256 when asked, then Authorization. Every header present
/// is signed. Fails only on unusable input (empty key, region or service).
Result<Signed> sign(const HttpRequest& request, const Credentials& credentials, const SigningParams& params);

/// Presigns `request` in its query string (X-Amz-Algorithm, X-Amz-Credential,
/// X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders, X-Amz-Security-Token,
/// then X-Amz-Signature), valid for `expires_seconds` (1..604800).
/// `Signed::request.query` holds the finished query; no header is added.
Result<Signed> presign(const HttpRequest& request, const Credentials& credentials, const SigningParams& params,
                       int expires_seconds);

// ---- The pieces, for tests and for servers ---------------------------------

/// RFC 3986 percent-encoding as SigV4 wants it: A-Z a-z 0-9 - . _ ~ stay,
/// every other byte becomes %XX (upper-case hex); '/' stays when `keep_slash`.
std::string uri_encode(std::string_view s, bool keep_slash);

/// Percent-decoding ("%41" -> "A"); '+' becomes a space when `plus_is_space`
/// (HTML forms). Malformed escapes are kept as they are.
std::string uri_decode(std::string_view s, bool plus_is_space = false);

/// The canonical URI of `path` (see HttpRequest::path).
std::string canonical_uri(std::string_view path, bool normalize);

/// The canonical query: every name=value pair decoded, re-encoded with
/// uri_encode, sorted by name then value, joined with '&'. Parameters named
/// in `skip` (e.g. X-Amz-Signature) are left out.
std::string canonical_query(std::string_view query, const std::vector<std::string>& skip = {});

/// Canonical headers ("name:value\n" per header, lower-case names, values
/// trimmed with inner runs of blanks and folded lines collapsed to one space,
/// repeated names joined with ','), sorted by name, and the signed-headers
/// list ("host;x-amz-date"). Only names in `only` when it is non-empty.
struct CanonicalHeaders {
  std::string text;
  std::string signed_headers;
};
CanonicalHeaders canonical_headers(const std::vector<std::pair<std::string, std::string>>& headers,
                                   const std::vector<std::string>& only = {});

/// "20150830T123600Z" for a time point (UTC), and back (nullopt when malformed).
std::string amz_date(std::chrono::system_clock::time_point t);
std::optional<std::chrono::system_clock::time_point> parse_amz_date(std::string_view s);

/// The derived signing key (32 raw bytes) for `date` (YYYYMMDD).
std::string signing_key(std::string_view secret, std::string_view date, std::string_view region,
                        std::string_view service);

/// HMAC-SHA256 (raw bytes) and lower-case hex encoding.
std::string hmac_sha256(std::string_view key, std::string_view data);
std::string hex(std::string_view bytes);

// ---- Verification (servers and emulators) -----------------------------------

/// The parts of "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/service/aws4_request,
/// SignedHeaders=host;x-amz-date, Signature=..." (or of the X-Amz-* query
/// parameters of a presigned request).
struct Authorization {
  std::string algorithm;
  std::string access_key_id;
  std::string date;  ///< YYYYMMDD of the credential scope
  std::string region;
  std::string service;
  std::string terminator;  ///< aws4_request
  std::vector<std::string> signed_headers;
  std::string signature;
};

/// Parses an Authorization header value. The error message says which part
/// is missing or malformed, in AWS's words where AWS has some.
Result<Authorization> parse_authorization(std::string_view value);

/// Why a request failed verification. Each maps to one AWS error code; the
/// emulator picks the HTTP status and wording of the service it emulates.
enum class VerifyFailure {
  None,
  MissingAuthentication,  ///< no Authorization header or X-Amz-Signature
  IncompleteSignature,    ///< malformed Authorization / credential / required part missing
  UnknownAccessKey,       ///< the access key id is not known
  InvalidToken,           ///< session token missing, unexpected or wrong
  WrongScope,             ///< region, service, date or terminator of the scope is wrong
  Expired,                ///< X-Amz-Date too far from now, or presigned URL expired
  SignatureMismatch,      ///< the recomputed signature differs
};

struct VerifyResult {
  VerifyFailure failure = VerifyFailure::None;
  /// What is wrong, for the error answer; "" when verified.
  std::string message;
  std::string access_key_id;
  /// What the server computed (set once the request got that far), so a
  /// client can compare them with its own.
  std::string canonical_request;
  std::string string_to_sign;
  bool ok() const { return failure == VerifyFailure::None; }
};

/// The secret and expected session token of an access key id, or nullopt
/// when the key is unknown.
using CredentialLookup = std::function<std::optional<Credentials>(const std::string& access_key_id)>;

struct VerifyParams {
  std::string region;   ///< the region this endpoint serves
  std::string service;  ///< e.g. ec2
  std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
  std::chrono::seconds max_skew{300};  ///< AWS: a request must arrive within 5 minutes of its X-Amz-Date
  bool normalize_path = true;
  /// Presigned requests: false when the service wants X-Amz-Security-Token
  /// left out of the canonical query (SigningParams::sign_session_token).
  bool query_token_signed = true;
};

/// Checks a request signed in its Authorization header or presigned in its
/// query string: the request as received, with `path` and `query` exactly as
/// they were on the wire. Checks, in this order: presence and syntax, the
/// access key, the scope (date, region, service), the clock skew (or the
/// presigned expiry), that host and x-amz-date are signed, the session
/// token, and finally the signature.
VerifyResult verify(const HttpRequest& request, const CredentialLookup& lookup, const VerifyParams& params);

}  // namespace plinth::aws
