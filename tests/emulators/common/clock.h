#pragma once
// The time as emulators write it in their logs.
#include <string>

namespace plinth::emulator {

/// The time now in UTC with milliseconds, "2026-12-02T13:20:00.123Z", from
/// one clock reading (two readings printed 13:15:40.000 for 13:15:40.999).
std::string utc_now_ms();

}  // namespace plinth::emulator
