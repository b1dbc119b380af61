#include "engine/core/embedded.h"

#include <algorithm>

#include "engine/core/hash.h"

namespace plinth {

bool is_embedded_path(std::string_view path) { return path.substr(0, 10) == "<builtin>/" || path == "<builtin>"; }

const EmbeddedFile* find_embedded(std::string_view path) {
  const auto& files = embedded_files();
  auto it = std::lower_bound(files.begin(), files.end(), path,
                             [](const EmbeddedFile& f, std::string_view p) { return f.path < p; });
  return it != files.end() && it->path == path ? &*it : nullptr;
}

std::string embedded_digest(std::string_view dir) {
  std::string all;
  std::string prefix = std::string(dir) + "/";
  for (const auto& f : embedded_files()) {
    if (f.path.substr(0, prefix.size()) != prefix) continue;
    all.append(f.path).append(1, '\0').append(f.text).append(1, '\0');
  }
  return sha256_hex(all);
}

}  // namespace plinth
