// Every test executable sees the built-in providers' schemas, as the plinth
// binary does: the loader, expand and the planner learn resource types and
// blueprint sections from them.
#include "providers/registry/registry.h"

// What the test programs' link line names (-u, tests/CMakeLists.txt) so that
// the linker keeps this file, and with it the registration below, although
// nothing calls into it.
extern "C" void plinth_test_builtin_providers() {}

namespace {
const bool registered = [] {
  plinth::register_builtin_providers();
  return true;
}();
}  // namespace
