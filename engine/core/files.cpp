#include "engine/core/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/core/embedded.h"

namespace plinth {

Result<std::string> read_file(const std::string& path) {
  if (is_embedded_path(path)) {
    if (const EmbeddedFile* f = find_embedded(path)) return std::string(f->text);
    return Error::fatal("cannot read " + path + ": no such file is built into this plinth");
  }
  // Read straight into a string of the file's size (a state file of a large
  // fleet is tens of megabytes: no stream buffer and no copy of it).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error::fatal("cannot read " + path + ": " + std::strerror(errno));
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) text.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    // A regular file is read into place; anything else (a pipe, /dev/stdin) in chunks.
    if (text.capacity() > text.size()) {
      const size_t at = text.size();
      text.resize(text.capacity());
      const ssize_t n = ::read(fd, text.data() + at, text.size() - at);
      text.resize(at + (n > 0 ? static_cast<size_t>(n) : 0));
      if (n > 0) continue;
      if (n == 0) break;
    } else {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) {
        text.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) break;
    }
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd);
    return Error::fatal("cannot read " + path + ": " + std::strerror(err));
  }
  ::close(fd);
  return text;
}

namespace {
std::string embedded_prefix(const std::string& dir) {
  std::string p = dir;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p + "/";
}
}  // namespace

bool is_directory_path(const std::string& path) {
  if (is_embedded_path(path)) {
    const std::string prefix = embedded_prefix(path);
    for (const auto& f : embedded_files())
      if (f.path.substr(0, prefix.size()) == prefix) return true;
    return false;
  }
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

bool is_file_path(const std::string& path) {
  if (is_embedded_path(path)) return find_embedded(path) != nullptr;
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

std::vector<std::string> list_files(const std::string& dir) {
  std::vector<std::string> out;
  if (is_embedded_path(dir)) {
    const std::string prefix = embedded_prefix(dir);
    for (const auto& f : embedded_files())
      if (f.path.substr(0, prefix.size()) == prefix) out.emplace_back(f.path);
    return out;  // already sorted
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) out.push_back(it->path().string());
  std::sort(out.begin(), out.end());
  return out;
}

Status write_file_atomic(const std::string& path, const std::string& data, int mode) {
  return write_file_atomic_from(path, mode, [&](const FileAppend& append) {
    append(data);
    return Status{};
  });
}

Status write_file_atomic_from(const std::string& path, int mode,
                              const std::function<Status(const FileAppend&)>& produce) {
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  int fd = mkstemp(tmpl.data());
  if (fd < 0) return Error::fatal("cannot create a temporary file beside " + path + ": " + std::strerror(errno));
  auto fail = [&](const std::string& what) {
    int e = errno;
    close(fd);
    unlink(tmpl.c_str());
    return Error::fatal(what + " " + path + ": " + std::strerror(e) + " (the previous file is unchanged)");
  };
  static constexpr size_t kBuffer = 1 << 20;
  std::string buffer;
  int write_errno = 0;
  auto write_all = [&](std::string_view bytes) {
    while (!bytes.empty() && !write_errno) {
      ssize_t n = ::write(fd, bytes.data(), bytes.size());
      if (n < 0) {
        if (errno != EINTR) write_errno = errno;
        continue;
      }
      bytes.remove_prefix(static_cast<size_t>(n));
    }
  };
  const FileAppend append = [&](std::string_view piece) {
    if (buffer.size() + piece.size() > kBuffer) {
      write_all(buffer);
      buffer.clear();
    }
    if (piece.size() >= kBuffer) write_all(piece);
    else buffer.append(piece);
  };
  Status made;
  try {
    made = produce(append);
  } catch (...) {
    close(fd);
    unlink(tmpl.c_str());
    throw;
  }
  if (!made) {
    close(fd);
    unlink(tmpl.c_str());
    return made;
  }
  write_all(buffer);
  if (write_errno) {
    errno = write_errno;
    return fail("cannot write");
  }
  if (fsync(fd) != 0) return fail("cannot fsync");
  if (fchmod(fd, static_cast<mode_t>(mode)) != 0) return fail("cannot chmod");
  if (close(fd) != 0) {
    int e = errno;
    unlink(tmpl.c_str());
    return Error::fatal("cannot close " + path + ": " + std::strerror(e));
  }
  if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
    int e = errno;
    unlink(tmpl.c_str());
    return Error::fatal("cannot rename into " + path + ": " + std::strerror(e));
  }
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return {};
}

}  // namespace plinth
