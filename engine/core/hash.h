#pragma once
#include <string>
#include <string_view>

namespace plinth {

/// Lower-case hex SHA-256 of `data` (OpenSSL EVP).
std::string sha256_hex(std::string_view data);

/// Lower-case hex SHA-1 of `data`: only where another tool's file names use it
/// (the AWS CLI's SSO token cache), never for integrity.
std::string sha1_hex(std::string_view data);

/// SHA-256 of a file's bytes; empty string when it cannot be read.
std::string sha256_file(const std::string& path);

/// SHA-256 of data given piece by piece (a document serialised straight into
/// it, without holding its text).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view data);
  /// Lower-case hex of everything given so far; ends the digest.
  std::string hex();

 private:
  void* ctx_;  ///< EVP_MD_CTX
};

}  // namespace plinth
