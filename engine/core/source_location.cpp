#include "engine/core/source_location.h"

namespace plinth {

std::string SourceLoc::str() const {
  if (file.empty()) return "";
  if (line <= 0) return file;
  std::string s = file + ":" + std::to_string(line);
  if (column > 0) s += ":" + std::to_string(column);
  return s;
}

}  // namespace plinth
