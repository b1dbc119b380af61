#pragma once
// The cryptography the Entra emulator needs, on OpenSSL: base64url, SHA-1
// thumbprints, RS256 JSON Web Tokens, and self-signed RSA certificates (the
// token signing key and the client certificate of --client-certificate).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "tests/emulators/common/tls.h"

namespace plinth::azure_emulator {

using json = nlohmann::json;

std::string base64_encode(std::string_view data);
/// Standard base64 with padding; nullopt when `text` is not exactly that.
std::optional<std::string> base64_decode(std::string_view text);
std::string base64url_encode(std::string_view data);
/// Unpadded (or padded) base64url; nullopt on any other character.
std::optional<std::string> base64url_decode(std::string_view text);

/// SHA-1 of `data` (20 raw bytes).
std::string sha1(std::string_view data);
/// Upper-case hex, as Entra prints thumbprints.
std::string hex_upper(std::string_view raw);

/// An RSA key with a self-signed certificate for it.
struct KeyPair {
  std::unique_ptr<EVP_PKEY, emulator::PkeyFree> key;
  std::unique_ptr<X509, emulator::X509Free> cert;
  /// DER encoding of the certificate.
  std::string der() const;
  /// SHA-1 of the DER certificate: what MSAL puts in a client assertion's x5t.
  std::string thumbprint() const { return sha1(der()); }
};

/// Generates a 2048-bit RSA key and a certificate for CN=`common_name`, valid
/// 30 days. Returns "" or an error message.
std::string make_key_pair(const std::string& common_name, KeyPair& out);

/// Writes the certificate, then the unencrypted private key, as PEM: the
/// file azure-identity's CertificateCredential and `az login -p FILE` read.
std::string write_key_pair(const KeyPair& pair, const std::string& path);

/// RSASSA-PKCS1-v1_5 with SHA-256 over `data`.
std::string rs256_sign(EVP_PKEY* key, std::string_view data);
bool rs256_verify(EVP_PKEY* key, std::string_view data, std::string_view signature);

/// A decoded (not yet verified) compact JWS.
struct Jwt {
  json header;
  json claims;
  std::string signing_input;  ///< base64url(header) "." base64url(claims)
  std::string signature;      ///< raw bytes
};

/// header.claims.signature, RS256-signed with `key`.
std::string jwt_sign(EVP_PKEY* key, const json& header, const json& claims);
/// nullopt unless `token` has three base64url parts whose first two are JSON objects.
std::optional<Jwt> jwt_decode(std::string_view token);

/// The JSON Web Key of `pair`'s public key, with kid and x5t = thumbprint and
/// x5c = the certificate, as Entra's discovery/v2.0/keys lists them.
json rsa_jwk(const KeyPair& pair);

}  // namespace plinth::azure_emulator
