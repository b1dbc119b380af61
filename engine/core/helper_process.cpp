#include "engine/core/helper_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace plinth {

Result<std::string> run_helper(const std::vector<std::string>& argv,
                               const std::vector<std::pair<std::string, std::string>>& extra_env,
                               const Deadline& deadline, const std::string& what) {
  if (argv.empty() || argv[0].empty()) return Error::invalid(what + ": no command to run");
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    return Error::fatal(what + ": cannot create pipes: " + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  // A process group of its own, so a helper that does not finish in time is stopped with its children.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  // The environment: Plinth's, with extra_env's names replaced.
  std::vector<std::string> env_text;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [k, v] : extra_env) replaced = replaced || k == name;
    if (!replaced) env_text.push_back(entry);
  }
  for (const auto& [k, v] : extra_env) env_text.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, cargv[0], &fa, &attr, cargv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    return Error::fatal(what + ": cannot start '" + argv[0] + "': " +
                        (rc == ENOENT ? std::string("not found") : std::string(std::strerror(rc))));
  }
  std::string stdout_text, stderr_text;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  bool timed_out = false;
  while (open_fds > 0) {
    int wait_ms = 1000;
    if (!deadline.unlimited()) {
      const auto left = deadline.remaining().count();
      if (left <= 0) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    if (::poll(fds, 2, wait_ms) < 0 && errno != EINTR) break;
    for (auto& f : fds) {
      if (f.fd < 0 || !(f.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = ::read(f.fd, buf, sizeof buf);
      if (n > 0) {
        std::string& into = f.fd == out[0] ? stdout_text : stderr_text;
        if (into.size() < (1u << 20)) into.append(buf, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        ::close(f.fd);
        f.fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  if (timed_out) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return Error{Error::Kind::DeadlineExceeded, what + ": '" + argv[0] + "' did not finish in time", 0};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string line = stderr_text.substr(0, stderr_text.find('\n'));
    for (char& ch : line)
      if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
    if (line.size() > 300) line = line.substr(0, 300) + "...";
    return Error::fatal(what + ": '" + argv[0] + "' " +
                        (WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                           : std::string("was killed by a signal")) +
                        (line.empty() ? "" : ": " + line));
  }
  return stdout_text;
}

}  // namespace plinth
