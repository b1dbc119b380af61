#pragma once
// What this binary was built from. Defined in a file generated at every
// build (cmake/build_info.cmake), compiled into the plinth executable only,
// so a new commit rebuilds one object and relinks plinth, nothing else.
#include <string>

namespace plinth::cli {

struct BuildInfo {
  std::string commit;  ///< full git commit hash; "" when not built from a git checkout
  bool dirty = false;  ///< the checkout had uncommitted changes to tracked files
};

BuildInfo build_info();

}  // namespace plinth::cli
