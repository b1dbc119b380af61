#include "providers/gcp/jwt.h"
#include "engine/core/wire.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <array>

namespace plinth::gcp {
namespace {

using nlohmann::json;

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

BioPtr mem_bio(std::string_view data) { return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size()))); }

std::string bio_text(BIO* bio) {
  char* p = nullptr;
  long n = BIO_get_mem_data(bio, &p);
  return n > 0 ? std::string(p, static_cast<size_t>(n)) : std::string();
}

/// Refuses to prompt for a passphrase: an encrypted key is an error, not a hang.
int no_passphrase(char*, int, int, void*) { return 0; }

/// OpenSSL's reason for the last failure, without anything from the input.
std::string openssl_reason() {
  unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return "";
  const char* reason = ERR_reason_error_string(e);
  return reason ? std::string(" (OpenSSL: ") + reason + ")" : "";
}

bool is_rsa(EVP_PKEY* key) { return key && EVP_PKEY_is_a(key, "RSA") == 1; }

}  // namespace

std::string base64url_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto at = [&](size_t k) { return static_cast<unsigned char>(bytes[k]); };
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest == 1) {
    uint32_t v = at(i) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
  } else if (rest == 2) {
    uint32_t v = (at(i) << 16) | (at(i + 1) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
  }
  return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return std::nullopt;
  static const std::array<int, 256> value = [] {
    std::array<int, 256> v{};
    v.fill(-1);
    for (size_t i = 0; i < kAlphabet.size(); ++i) v[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int>(i);
    return v;
  }();
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v = value[static_cast<unsigned char>(c)];
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  // Leftover bits must be zero, or the text was not made by an encoder.
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

Result<RsaSigner> RsaSigner::from_pem(std::string_view pem, const std::string& what) {
  if (pem.find("-----BEGIN") == std::string_view::npos)
    return Error::invalid(what + " is not a PEM private key (it has no '-----BEGIN PRIVATE KEY-----' line)");
  if (pem.find("ENCRYPTED") != std::string_view::npos)
    return Error::invalid(what + " is an encrypted private key; a service-account key file holds an unencrypted one");
  BioPtr bio = mem_bio(pem);
  EvpPkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
  if (!key)
    return Error::invalid(what + " is not a readable PEM private key" + openssl_reason() +
                          "; the file may be truncated or edited: download a new key");
  if (!is_rsa(key.get())) return Error::invalid(what + " is not an RSA key; Google service accounts use RSA (RS256)");
  return RsaSigner(std::move(key));
}

Result<RsaSigner> RsaSigner::generate(int bits) {
  EvpPkeyPtr key(EVP_RSA_gen(static_cast<unsigned>(bits)));
  if (!key) return Error::fatal("cannot generate an RSA-" + std::to_string(bits) + " key" + openssl_reason());
  return RsaSigner(std::move(key));
}

Result<std::string> RsaSigner::sign(std::string_view data) const {
  MdCtxPtr ctx(EVP_MD_CTX_new());
  size_t len = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1)
    return Error::fatal("cannot start an RS256 signature" + openssl_reason());
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1)
    return Error::fatal("cannot sign with RS256" + openssl_reason());
  sig.resize(len);
  return sig;
}

std::string RsaSigner::public_key_pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PUBKEY(bio.get(), key_.get());
  return bio_text(bio.get());
}

std::string RsaSigner::private_key_pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr);
  return bio_text(bio.get());
}

int RsaSigner::bits() const { return EVP_PKEY_get_bits(key_.get()); }

Result<RsaVerifier> RsaVerifier::from_pem(std::string_view pem, const std::string& what) {
  EvpPkeyPtr key;
  if (pem.find("-----BEGIN CERTIFICATE-----") != std::string_view::npos) {
    BioPtr bio = mem_bio(pem);
    std::unique_ptr<X509, X509Free> cert(PEM_read_bio_X509(bio.get(), nullptr, no_passphrase, nullptr));
    if (cert) key.reset(X509_get_pubkey(cert.get()));
  } else {
    BioPtr bio = mem_bio(pem);
    key.reset(PEM_read_bio_PUBKEY(bio.get(), nullptr, no_passphrase, nullptr));
  }
  if (!key) return Error::invalid(what + " is not a PEM public key or certificate" + openssl_reason());
  if (!is_rsa(key.get())) return Error::invalid(what + " is not an RSA key; RS256 needs one");
  return RsaVerifier(std::move(key));
}

RsaVerifier RsaVerifier::of(const RsaSigner& signer) {
  // Round-trip through the SubjectPublicKeyInfo so the verifier holds no private half.
  std::string pem = signer.public_key_pem();
  BioPtr bio = mem_bio(pem);
  return RsaVerifier(EvpPkeyPtr(PEM_read_bio_PUBKEY(bio.get(), nullptr, no_passphrase, nullptr)));
}

bool RsaVerifier::verify(std::string_view data, std::string_view signature) const {
  if (!key_) return false;
  MdCtxPtr ctx(EVP_MD_CTX_new());
  bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) == 1 &&
            EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                             reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1;
  ERR_clear_error();
  return ok;
}

Result<std::string> sign_jwt(const AssertionClaims& claims, const std::string& key_id, const RsaSigner& signer) {
  json header = {{"alg", "RS256"}, {"typ", "JWT"}};
  if (!key_id.empty()) header["kid"] = key_id;
  json payload = {{"iss", claims.iss}, {"aud", claims.aud}, {"iat", claims.iat}, {"exp", claims.exp}};
  if (!claims.scope.empty()) payload["scope"] = claims.scope;
  if (!claims.sub.empty()) payload["sub"] = claims.sub;
  std::string input = base64url_encode(header.dump()) + "." + base64url_encode(payload.dump());
  auto sig = signer.sign(input);
  if (!sig) return sig.error();
  return input + "." + base64url_encode(*sig);
}

Result<DecodedJwt> decode_jwt(std::string_view token) {
  auto first = token.find('.');
  auto second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos)
    return Error::invalid("the JWT does not have three '.'-separated segments (header.payload.signature)");
  DecodedJwt out;
  auto segment = [&](std::string_view text, const char* name, json& into) -> std::optional<Error> {
    auto bytes = base64url_decode(text);
    if (!bytes) return Error::invalid(std::string("the JWT's ") + name + " is not base64url");
    into = parse_json_or_discard(*bytes);
    if (!into.is_object()) return Error::invalid(std::string("the JWT's ") + name + " is not a JSON object");
    return std::nullopt;
  };
  if (auto e = segment(token.substr(0, first), "header", out.header)) return *e;
  if (auto e = segment(token.substr(first + 1, second - first - 1), "payload", out.payload)) return *e;
  auto sig = base64url_decode(token.substr(second + 1));
  if (!sig || sig->empty()) return Error::invalid("the JWT's signature is missing or not base64url");
  out.signature = std::move(*sig);
  out.signing_input = std::string(token.substr(0, second));
  return out;
}

bool verify_rs256(const DecodedJwt& jwt, const RsaVerifier& key) {
  auto alg = jwt.header.find("alg");
  if (alg == jwt.header.end() || !alg->is_string() || alg->get<std::string>() != "RS256") return false;
  return key.verify(jwt.signing_input, jwt.signature);
}

Result<AssertionClaims> assertion_claims(const DecodedJwt& jwt) {
  const json& p = jwt.payload;
  AssertionClaims c;
  auto str = [&](const char* name, std::string& into, bool required) -> std::optional<Error> {
    auto it = p.find(name);
    if (it == p.end()) {
      if (required) return Error::invalid(std::string("the JWT has no '") + name + "' claim");
      return std::nullopt;
    }
    if (!it->is_string()) return Error::invalid(std::string("the JWT's '") + name + "' claim is not a string");
    into = it->get<std::string>();
    return std::nullopt;
  };
  auto num = [&](const char* name, std::int64_t& into) -> std::optional<Error> {
    auto it = p.find(name);
    if (it == p.end()) return Error::invalid(std::string("the JWT has no '") + name + "' claim");
    if (it->is_number_integer()) {
      into = it->get<std::int64_t>();
    } else if (it->is_number_float()) {
      into = static_cast<std::int64_t>(it->get<double>());
    } else {
      return Error::invalid(std::string("the JWT's '") + name + "' claim is not a number of seconds");
    }
    return std::nullopt;
  };
  if (auto e = str("iss", c.iss, true)) return *e;
  if (auto e = str("aud", c.aud, true)) return *e;
  if (auto e = str("scope", c.scope, false)) return *e;
  if (auto e = str("sub", c.sub, false)) return *e;
  if (auto e = num("iat", c.iat)) return *e;
  if (auto e = num("exp", c.exp)) return *e;
  return c;
}

}  // namespace plinth::gcp
