#pragma once
// Internal to engine/state: checks the local backend makes on what it is
// given (docs/state.md, "Symbolic links" and "Serials").
#include <cstdint>
#include <string>

#include "engine/core/result.h"

namespace plinth::state {

/// Where the state at `path` lives: `path` itself when it is not a symbolic
/// link (or does not exist), else the file the chain of links ends at (which
/// may not exist yet: the first save creates it through the link). A chain
/// that loops or cannot be read is an error naming `path`.
Result<std::string> resolve_state_link(const std::string& path);

/// A serial of UINT64_MAX cannot grow: saving after it would wrap to 0. The
/// error names `source` and says how to recover; any other serial is fine.
Status check_serial_room(uint64_t serial, const std::string& source);

}  // namespace plinth::state
