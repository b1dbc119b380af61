#pragma once
// IPv4 addresses and prefixes as numbers, for the rules and the renderer that
// ask which network an address is in.
#include <cstdint>
#include <optional>
#include <string_view>

namespace plinth {

/// An IPv4 prefix as [first, last] addresses.
struct Ipv4Range {
  uint32_t first = 0;
  uint32_t last = 0;
  bool host_bits = false;  ///< the written address is not the network address ("10.1.2.3/16")
  bool contains(uint32_t addr) const { return addr >= first && addr <= last; }
};

/// "10.1.2.3" -> its number; nullopt unless four decimal octets 0-255 without leading zeros.
std::optional<uint32_t> parse_ipv4(std::string_view text);

/// "10.100.0.0/16" -> its range; nullopt unless an address as above, '/', a prefix 0-32.
std::optional<Ipv4Range> parse_cidr(std::string_view text);

}  // namespace plinth
