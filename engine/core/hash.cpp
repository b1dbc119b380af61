#include "engine/core/hash.h"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <stdexcept>

namespace plinth {

namespace {

std::string to_hex(const unsigned char* md, unsigned len) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 0xf];
  }
  return out;
}

std::string digest_hex(std::string_view data, const EVP_MD* md_type) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, md_type, nullptr);
  return to_hex(md, len);
}

}  // namespace

std::string sha256_hex(std::string_view data) { return digest_hex(data, EVP_sha256()); }

std::string sha1_hex(std::string_view data) { return digest_hex(data, EVP_sha1()); }

std::string sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  Sha256 h;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) h.update(std::string_view(buf, static_cast<size_t>(in.gcount())));
  if (in.bad()) return "";
  return h.hex();
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("OpenSSL cannot start a SHA-256 digest");
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::update(std::string_view data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size());
}

std::string Sha256::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), md, &len);
  return to_hex(md, len);
}

}  // namespace plinth
