#pragma once
#include <string>

#include "engine/core/result.h"

namespace plinth {

/// Reads a whole file. The error names the path and the OS reason.
Result<std::string> read_file(const std::string& path);

/// Writes `data` to `path` atomically: a temp file in the same directory,
/// fsync, rename over `path`, fsync of the directory. On failure (full disk,
/// permissions) `path` is left exactly as it was and the temp file removed.
Status write_file_atomic(const std::string& path, const std::string& data, int mode = 0644);

}  // namespace plinth
