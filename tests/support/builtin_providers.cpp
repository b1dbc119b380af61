// Every test executable sees the built-in providers' schemas, as the plinth
// binary does: the loader, expand and the planner learn resource types and
// blueprint sections from them.
#include "providers/registry/registry.h"

namespace {
const bool registered = [] {
  plinth::register_builtin_providers();
  return true;
}();
}  // namespace
