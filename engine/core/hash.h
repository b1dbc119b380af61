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

}  // namespace plinth
