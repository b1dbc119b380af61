#pragma once
#include <string>

namespace plinth {

/// A position in a blueprint or policy file. Line and column are 1-based; 0
/// means unknown. yaml-cpp marks are 0-based and are converted once, in the
/// blueprint loader.
struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;

  bool known() const { return !file.empty(); }
  /// "file:line:column", "file" or "" depending on what is known.
  std::string str() const;
  bool operator==(const SourceLoc&) const = default;
};

}  // namespace plinth
