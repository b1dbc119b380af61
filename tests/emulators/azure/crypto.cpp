#include "tests/emulators/azure/crypto.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>

#include <cstdio>

namespace plinth::azure_emulator {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/// Decodes unpadded base64 (alphabet already normalised to + and /).
std::optional<std::string> decode_unpadded(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  unsigned buf = 0;
  int bits = 0;
  for (char c : text) {
    int v = b64_value(c);
    if (v < 0) return std::nullopt;
    buf = (buf << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buf >> bits) & 0xff));
    }
  }
  return out;
}

std::string ssl_error(const std::string& what) {
  char buf[256] = "";
  ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
  return what + ": " + buf;
}

std::string bn_bytes(const BIGNUM* bn) {
  std::string out(static_cast<size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

}  // namespace

std::string base64_encode(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    unsigned n = (static_cast<unsigned char>(data[i]) << 16) | (static_cast<unsigned char>(data[i + 1]) << 8) |
                 static_cast<unsigned char>(data[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i + 1 == data.size()) {
    unsigned n = static_cast<unsigned char>(data[i]) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == data.size()) {
    unsigned n = (static_cast<unsigned char>(data[i]) << 16) | (static_cast<unsigned char>(data[i + 1]) << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  std::string_view body = text.substr(0, text.size() - pad);
  if (body.find('-') != std::string_view::npos || body.find('_') != std::string_view::npos) return std::nullopt;
  return decode_unpadded(body);
}

std::string base64url_encode(std::string_view data) {
  std::string s = base64_encode(data);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (auto& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return s;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  std::string s(text);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (auto& c : s) {
    if (c == '+' || c == '/') return std::nullopt;
    c = c == '-' ? '+' : c == '_' ? '/' : c;
  }
  return decode_unpadded(s);
}

std::string sha1(std::string_view data) {
  unsigned char md[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return std::string(reinterpret_cast<char*>(md), sizeof md);
}

std::string hex_upper(std::string_view raw) {
  static const char digits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : raw) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string KeyPair::der() const {
  unsigned char* buf = nullptr;
  int n = i2d_X509(cert.get(), &buf);
  if (n <= 0) return "";
  std::string out(reinterpret_cast<char*>(buf), static_cast<size_t>(n));
  OPENSSL_free(buf);
  return out;
}

std::string make_key_pair(const std::string& common_name, KeyPair& out) {
  out.key.reset(EVP_RSA_gen(2048));
  if (!out.key) return ssl_error("cannot generate an RSA key");
  out.cert.reset(X509_new());
  X509* c = out.cert.get();
  X509_set_version(c, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(c), 1);
  X509_gmtime_adj(X509_getm_notBefore(c), -3600);
  X509_gmtime_adj(X509_getm_notAfter(c), 30L * 24 * 3600);
  X509_set_pubkey(c, out.key.get());
  X509_NAME* name = X509_get_subject_name(c);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                             -1, 0);
  X509_set_issuer_name(c, name);
  if (X509_sign(c, out.key.get(), EVP_sha256()) == 0) return ssl_error("cannot sign the certificate");
  return "";
}

std::string write_key_pair(const KeyPair& pair, const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return "cannot write " + path;
  bool ok = PEM_write_X509(f, pair.cert.get()) == 1 &&
            PEM_write_PrivateKey(f, pair.key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(f);
  return ok ? "" : "cannot write " + path;
}

std::string rs256_sign(EVP_PKEY* key, std::string_view data) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  size_t len = 0;
  if (EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1)
    return "";
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1)
    return "";
  sig.resize(len);
  return sig;
}

bool rs256_verify(EVP_PKEY* key, std::string_view data, std::string_view signature) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1) return false;
  bool ok = EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                             reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1;
  ERR_clear_error();
  return ok;
}

std::string jwt_sign(EVP_PKEY* key, const json& header, const json& claims) {
  std::string input = base64url_encode(header.dump()) + "." + base64url_encode(claims.dump());
  return input + "." + base64url_encode(rs256_sign(key, input));
}

std::optional<Jwt> jwt_decode(std::string_view token) {
  auto d1 = token.find('.');
  if (d1 == std::string_view::npos) return std::nullopt;
  auto d2 = token.find('.', d1 + 1);
  if (d2 == std::string_view::npos || token.find('.', d2 + 1) != std::string_view::npos) return std::nullopt;
  auto header = base64url_decode(token.substr(0, d1));
  auto claims = base64url_decode(token.substr(d1 + 1, d2 - d1 - 1));
  auto sig = base64url_decode(token.substr(d2 + 1));
  if (!header || !claims || !sig) return std::nullopt;
  Jwt out;
  out.header = json::parse(*header, nullptr, false);
  out.claims = json::parse(*claims, nullptr, false);
  if (!out.header.is_object() || !out.claims.is_object()) return std::nullopt;
  out.signing_input = std::string(token.substr(0, d2));
  out.signature = *sig;
  return out;
}

json rsa_jwk(const KeyPair& pair) {
  BIGNUM* n = nullptr;
  BIGNUM* e = nullptr;
  EVP_PKEY_get_bn_param(pair.key.get(), OSSL_PKEY_PARAM_RSA_N, &n);
  EVP_PKEY_get_bn_param(pair.key.get(), OSSL_PKEY_PARAM_RSA_E, &e);
  std::string kid = base64url_encode(pair.thumbprint());
  json jwk = {{"kty", "RSA"},
              {"use", "sig"},
              {"kid", kid},
              {"x5t", kid},
              {"n", n ? base64url_encode(bn_bytes(n)) : ""},
              {"e", e ? base64url_encode(bn_bytes(e)) : ""},
              {"x5c", json::array({base64_encode(pair.der())})}};
  BN_free(n);
  BN_free(e);
  return jwk;
}

}  // namespace plinth::azure_emulator
