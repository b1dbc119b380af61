#pragma once
// RS256 JSON Web Tokens (RFC 7515 / 7519) the way Google's OAuth 2.0 JWT
// bearer grant (RFC 7523) uses them: RSASSA-PKCS1-v1_5 with SHA-256 through
// OpenSSL 3's EVP interface, base64url without padding.
#include <openssl/evp.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "engine/core/result.h"

namespace plinth::gcp {

/// base64url (RFC 4648 §5) without '=' padding, as JWS requires.
std::string base64url_encode(std::string_view bytes);

/// Decodes base64url with or without '=' padding (google-auth's Python
/// encoder pads). nullopt on any other character or an impossible length.
std::optional<std::string> base64url_decode(std::string_view text);

struct EvpPkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyFree>;

/// An RSA private key that signs RS256. Move-only; the key material stays in
/// OpenSSL and is never put in an error message.
class RsaSigner {
 public:
  /// Parses an unencrypted PEM private key: PKCS#8 ("BEGIN PRIVATE KEY", what
  /// Google's key files hold) or PKCS#1 ("BEGIN RSA PRIVATE KEY"). `what`
  /// names the key in errors ("field 'private_key' of /path/key.json").
  static Result<RsaSigner> from_pem(std::string_view pem, const std::string& what);
  /// A fresh key of `bits` (2048 for a Google service account). For tests and emulators.
  static Result<RsaSigner> generate(int bits = 2048);

  /// The RS256 signature (raw bytes, modulus-sized) of `data`.
  Result<std::string> sign(std::string_view data) const;
  /// The public half as a SubjectPublicKeyInfo PEM ("BEGIN PUBLIC KEY").
  std::string public_key_pem() const;
  /// The private key as an unencrypted PKCS#8 PEM, the layout of a key file's
  /// `private_key`. Secret: for tests and emulators that write key files.
  std::string private_key_pem() const;
  int bits() const;

 private:
  explicit RsaSigner(EvpPkeyPtr key) : key_(std::move(key)) {}
  EvpPkeyPtr key_;
};

/// An RSA public key that checks RS256 signatures.
class RsaVerifier {
 public:
  /// Parses a PEM public key ("BEGIN PUBLIC KEY") or an X.509 certificate
  /// ("BEGIN CERTIFICATE", as Google publishes service-account keys).
  static Result<RsaVerifier> from_pem(std::string_view pem, const std::string& what);
  /// The public half of `signer`.
  static RsaVerifier of(const RsaSigner& signer);

  /// True when `signature` is a valid RS256 signature of `data`.
  bool verify(std::string_view data, std::string_view signature) const;

 private:
  explicit RsaVerifier(EvpPkeyPtr key) : key_(std::move(key)) {}
  EvpPkeyPtr key_;
};

/// The claims of a service-account assertion (Google's JWT bearer grant).
struct AssertionClaims {
  std::string iss;       ///< the service account's client_email
  std::string scope;     ///< space-separated OAuth scopes
  std::string aud;       ///< the token endpoint, the key file's token_uri
  std::string sub;       ///< user to act as (domain-wide delegation); "" for none
  std::int64_t iat = 0;  ///< issued at, seconds since the epoch
  std::int64_t exp = 0;  ///< expires at; Google refuses exp - iat > 3600
  bool operator==(const AssertionClaims&) const = default;
};

/// Signs `claims` as header.payload.signature with header
/// {"alg":"RS256","typ":"JWT","kid":key_id} (kid left out when empty).
Result<std::string> sign_jwt(const AssertionClaims& claims, const std::string& key_id, const RsaSigner& signer);

/// A JWT split and decoded but not verified.
struct DecodedJwt {
  nlohmann::json header;
  nlohmann::json payload;
  std::string signing_input;  ///< the first two segments as received, joined by '.'
  std::string signature;      ///< raw signature bytes
};

/// Splits a compact JWS and decodes its header and payload (JSON objects).
/// Errors say which segment is malformed and never quote the token.
Result<DecodedJwt> decode_jwt(std::string_view token);

/// True when the header's alg is RS256 and the signature verifies with `key`.
bool verify_rs256(const DecodedJwt& jwt, const RsaVerifier& key);

/// The claims of a decoded assertion; an error names a claim that is missing
/// or of the wrong JSON type (iss, aud: strings; iat, exp: integers; scope,
/// sub: optional strings).
Result<AssertionClaims> assertion_claims(const DecodedJwt& jwt);

}  // namespace plinth::gcp
