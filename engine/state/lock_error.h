#pragma once
#include <chrono>
#include <string>

#include "engine/core/result.h"

namespace plinth::state {

/// The error every backend returns when its lock is held by someone else:
/// `source` is the state's name in messages, `who` describes the holder
/// ("PID 1234 on host-a since ... (plinth apply)"), `timeout` how long this
/// run waited (0: it tried once).
Error lock_held_error(const std::string& source, const std::string& who, std::chrono::milliseconds timeout);

}  // namespace plinth::state
