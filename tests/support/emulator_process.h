#pragma once
// An emulator (tests/emulators/<name>/) running as a child process: started
// with `--port 0 --tls-dir DIR --request-log FILE` plus the caller's flags,
// ready once it printed `ready`, stopped with SIGTERM when the object dies.
// Every emulator follows the same start-up protocol (docs/emulators.md):
//   listening https://127.0.0.1:PORT ...
//   ready
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/run.h"

namespace plinth::test {

class EmulatorProcess {
 public:
  /// Starts `binary` with the standard flags, then `args`. A caller that
  /// passes its own --port / --port-base keeps it.
  EmulatorProcess(const std::string& binary, const std::vector<std::string>& args) {
    ca_ = dir_.path() + "/tls/ca.pem";
    log_ = dir_.path() + "/requests.jsonl";
    std::vector<std::string> argv = {binary, "--tls-dir", dir_.path() + "/tls", "--request-log", log_};
    bool has_port = false;
    for (const auto& a : args) has_port = has_port || a == "--port" || a == "--port-base";
    if (!has_port) argv.insert(argv.end(), {"--port", "0"});
    argv.insert(argv.end(), args.begin(), args.end());
    int out[2];
    REQUIRE(pipe(out) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      dup2(out[1], 1);
      int err = ::open((dir_.path() + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (err >= 0) dup2(err, 2);
      close(out[0]);
      std::vector<char*> cargv;
      for (auto& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      execv(cargv[0], cargv.data());
      _exit(127);
    }
    close(out[1]);
    out_fd_ = out[0];
    std::string buf;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (lines_.empty() || lines_.back() != "ready") {
      INFO("emulator stderr: " << stderr_text());
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      pollfd p{out_fd_, POLLIN, 0};
      if (poll(&p, 1, 200) <= 0) continue;
      char c[4096];
      ssize_t n = read(out_fd_, c, sizeof c);
      REQUIRE(n > 0);
      buf.append(c, static_cast<size_t>(n));
      for (auto nl = buf.find('\n'); nl != std::string::npos; nl = buf.find('\n')) {
        lines_.push_back(buf.substr(0, nl));
        buf.erase(0, nl + 1);
      }
    }
    std::istringstream first(lines_[0]);  // "listening https://127.0.0.1:PORT ..."
    std::string word;
    first >> word >> base_;
  }
  ~EmulatorProcess() { stop(); }
  EmulatorProcess(const EmulatorProcess&) = delete;
  EmulatorProcess& operator=(const EmulatorProcess&) = delete;

  /// Sends SIGTERM and returns the exit status (128+signal when killed, 999
  /// when it had to be killed because SIGTERM did not stop it).
  int stop() {
    if (pid_ <= 0) return exit_;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      exit_ = 999;
    } else {
      exit_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    close(out_fd_);
    pid_ = -1;
    return exit_;
  }

  /// https://127.0.0.1:PORT (the second word of the first `listening` line)
  const std::string& base() const { return base_; }
  /// The test CA's certificate (PEM) that signed the emulator's certificate.
  const std::string& ca() const { return ca_; }
  /// What the emulator printed on stdout up to `ready`.
  const std::vector<std::string>& lines() const { return lines_; }
  /// The request log, one JSON line per request.
  std::string log() const { return slurp(log_); }
  const std::string& log_path() const { return log_; }
  std::string dir() const { return dir_.path(); }
  std::string stderr_text() const { return slurp(dir_.path() + "/stderr"); }
  pid_t pid() const { return pid_; }

 private:
  TempDir dir_;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int exit_ = -1;
  std::string ca_, log_, base_;
  std::vector<std::string> lines_;
};

}  // namespace plinth::test
