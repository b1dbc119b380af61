#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace plinth {

/// `data` compressed as a gzip member (RFC 1952) with zlib at level 9, no
/// file name and modification time 0, so the same input gives the same
/// bytes. For transports that cap what they carry (EC2 takes at most 16 KiB
/// of user data; cloud-init reads gzip-compressed user data).
std::string gzip(std::string_view data);

/// True when `data` starts with the gzip magic bytes (1f 8b).
bool is_gzip(std::string_view data);

/// The content of gzip data, or nullopt when it is not gzip, is corrupt or
/// would exceed `limit` bytes.
std::optional<std::string> gunzip(std::string_view data, size_t limit = 16u << 20);

}  // namespace plinth
