#include "tests/support/run.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace plinth::test {

std::string source_dir() { return PLINTH_SOURCE_DIR; }
std::string testdata_dir() { return PLINTH_TESTDATA_DIR; }

std::string plinth_binary() {
  const char* other = std::getenv("PLINTH_TEST_BINARY");
  return other && *other ? other : PLINTH_BINARY;
}

RunResult run_program(const std::vector<std::string>& argv, const std::string& cwd,
                      const std::map<std::string, std::string>& env, const std::string& stdin_text) {
  int out_pipe[2], err_pipe[2], in_pipe[2];
  // Close-on-exec: the program gets only its copies at 0, 1 and 2, so a
  // daemon it starts (a PostgreSQL server) cannot hold our pipes open.
  if (pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC) || pipe2(in_pipe, O_CLOEXEC))
    throw std::runtime_error("pipe failed");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(in_pipe[1]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    std::string dir = cwd.empty() ? source_dir() : cwd;
    if (chdir(dir.c_str()) != 0) _exit(126);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!stdin_text.empty()) {
    ssize_t w = write(in_pipe[1], stdin_text.data(), stdin_text.size());
    (void)w;
  }
  close(in_pipe[1]);
  RunResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

RunResult run_plinth(const std::vector<std::string>& args, const std::string& cwd,
                     const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv{plinth_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  auto e = env;
  e.emplace("NO_COLOR", "1");
  return run_program(argv, cwd, e);
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "plinth-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
  std::filesystem::path p = std::filesystem::path(path_) / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string hostname() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  return h;
}

BrowserRender render_in_chromium(const std::string& html, const std::string& png, int height) {
  TempDir profile;
  const std::string url = "file://" + std::filesystem::absolute(html).string();
  std::vector<std::string> common = {"chromium",         "--headless",  "--no-sandbox", "--disable-gpu",
                                     "--disable-background-networking", "--disable-component-update",
                                     "--disable-sync",   "--no-first-run", "--user-data-dir=" + profile.path() + "/p"};
  std::error_code ec;
  std::filesystem::remove(png, ec);
  auto shot = common;
  for (std::string a : std::vector<std::string>{"--enable-logging=stderr", "--v=0",
                                               "--window-size=1280," + std::to_string(height), "--screenshot=" + png, url})
    shot.push_back(std::move(a));
  auto dom = common;
  dom.push_back("--dump-dom");
  dom.push_back(url);
  return {run_program(shot), run_program(dom)};
}

}  // namespace plinth::test
