#include "engine/core/ipv4.h"

namespace plinth {

std::optional<uint32_t> parse_ipv4(std::string_view text) {
  uint32_t addr = 0;
  int parts = 0;
  size_t i = 0;
  while (true) {
    size_t j = i;
    unsigned v = 0;
    while (j < text.size() && j - i < 4 && text[j] >= '0' && text[j] <= '9') v = v * 10 + static_cast<unsigned>(text[j++] - '0');
    if (j == i || j - i > 3 || v > 255 || (j - i > 1 && text[i] == '0')) return std::nullopt;
    addr = addr << 8 | v;
    ++parts;
    if (j == text.size()) break;
    if (text[j] != '.' || parts == 4) return std::nullopt;
    i = j + 1;
  }
  if (parts != 4) return std::nullopt;
  return addr;
}

std::optional<Ipv4Range> parse_cidr(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto addr = parse_ipv4(text.substr(0, slash));
  if (!addr) return std::nullopt;
  std::string_view len = text.substr(slash + 1);
  if (len.empty() || len.size() > 2) return std::nullopt;
  int bits = 0;
  for (char c : len) {
    if (c < '0' || c > '9') return std::nullopt;
    bits = bits * 10 + (c - '0');
  }
  if (bits > 32) return std::nullopt;
  uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return Ipv4Range{*addr & mask, (*addr & mask) | ~mask, (*addr & ~mask) != 0};
}

}  // namespace plinth
