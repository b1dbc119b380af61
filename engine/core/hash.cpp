#include "engine/core/hash.h"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <sstream>

namespace plinth {

namespace {

std::string digest_hex(std::string_view data, const EVP_MD* md_type) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, md_type, nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 0xf];
  }
  return out;
}

}  // namespace

std::string sha256_hex(std::string_view data) { return digest_hex(data, EVP_sha256()); }

std::string sha1_hex(std::string_view data) { return digest_hex(data, EVP_sha1()); }

std::string sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  return sha256_hex(ss.str());
}

}  // namespace plinth
