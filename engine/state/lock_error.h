#pragma once
#include <chrono>
#include <ctime>
#include <string>

#include "engine/core/result.h"

namespace plinth::state {

/// The error every backend returns when its lock is held by someone else:
/// `source` is the state's name in messages, `who` describes the holder
/// ("PID 1234 on host-a since ... (plinth apply)"), `timeout` how long this
/// run waited (0: it tried once).
Error lock_held_error(const std::string& source, const std::string& who, std::chrono::milliseconds timeout);

/// Who holds a lock, as the holder recorded it (in PATH.lock, or in the
/// plinth_state_lock table with its PostgreSQL session's PID; 0 elsewhere).
struct LockHolder {
  long pid = 0;
  std::string host, time, operation;
  int session_pid = 0;
};

/// "PID 1234 on host-a since 2026-12-01T10:00:00Z (plinth apply)".
std::string holder_description(const LockHolder& holder);

/// This machine's host name as lock records give it ("unknown-host" if unknown).
std::string this_host();

/// `t` as 2026-12-01T10:00:00Z.
std::string utc_iso8601(std::time_t t);

}  // namespace plinth::state
