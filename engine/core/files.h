#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.h"

namespace plinth {

/// Reads a whole file. The error names the path and the OS reason. A path
/// under "<builtin>/" is read from the files compiled into the binary
/// (engine/core/embedded.h).
Result<std::string> read_file(const std::string& path);

/// True for a directory on disk, or a directory of the compiled-in tree.
bool is_directory_path(const std::string& path);

/// True for a regular file on disk, or a compiled-in file.
bool is_file_path(const std::string& path);

/// Every regular file below `dir` (recursively), as `dir` + "/" + relative
/// path, sorted; works for compiled-in directories too. Empty when `dir` is
/// not a directory.
std::vector<std::string> list_files(const std::string& dir);

/// Writes `data` to `path` atomically: a temp file in the same directory,
/// fsync, rename over `path`, fsync of the directory. On failure (full disk,
/// permissions) `path` is left exactly as it was and the temp file removed.
Status write_file_atomic(const std::string& path, const std::string& data, int mode = 0644);

/// Appends bytes to a file being written by write_file_atomic_from.
using FileAppend = std::function<void(std::string_view)>;

/// write_file_atomic for content made piece by piece, so that it is never
/// whole in memory: `produce` is called once with a function that appends to
/// the temporary file (through a buffer of 1 MiB). If writing fails, or
/// `produce` returns an error or throws, `path` is left exactly as it was and
/// the temp file removed (a write error is reported once `produce` returns).
Status write_file_atomic_from(const std::string& path, int mode, const std::function<Status(const FileAppend&)>& produce);

}  // namespace plinth
