#pragma once
#include <string_view>
#include <vector>

namespace plinth::catalog {

/// One catalog data file compiled into the binary.
struct EmbeddedFile {
  std::string_view name;  ///< file name under engine/catalog/data/, e.g. "gpus.yaml"
  std::string_view text;
};

/// The data files as they were at build time, sorted by name.
const std::vector<EmbeddedFile>& embedded_files();

}  // namespace plinth::catalog
