#pragma once
// A redfish-emulator child process for provider tests.
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

/// Starts build/.../redfish-emulator with `--port 0 --tls-dir DIR` plus
/// `args`, waits for `ready`, and stops it with SIGTERM when destroyed.
class Emulator {
 public:
  explicit Emulator(std::vector<std::string> args, const std::string& mockup = "public-rackmount1") {
    ca_ = dir_.path() + "/tls/ca.pem";
    log_ = dir_.path() + "/requests.jsonl";
    std::vector<std::string> argv = {REDFISH_EMULATOR_BINARY, "--mockup", testdata_dir() + "/redfish/" + mockup,
                                     "--tls-dir", dir_.path() + "/tls", "--port", "0", "--request-log", log_};
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
    std::vector<std::string> lines;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (lines.empty() || lines.back() != "ready") {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      pollfd p{out_fd_, POLLIN, 0};
      if (poll(&p, 1, 200) <= 0) continue;
      char c[4096];
      ssize_t n = read(out_fd_, c, sizeof c);
      INFO("emulator stderr: " << slurp(dir_.path() + "/stderr"));
      REQUIRE(n > 0);
      buf.append(c, static_cast<size_t>(n));
      for (auto nl = buf.find('\n'); nl != std::string::npos; nl = buf.find('\n')) {
        lines.push_back(buf.substr(0, nl));
        buf.erase(0, nl + 1);
      }
    }
    std::istringstream first(lines[0]);  // "listening https://127.0.0.1:PORT endpoint=..."
    std::string word;
    first >> word >> base_;
  }
  ~Emulator() {
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
    close(out_fd_);
  }
  Emulator(const Emulator&) = delete;
  Emulator& operator=(const Emulator&) = delete;

  /// https://127.0.0.1:PORT
  const std::string& base() const { return base_; }
  /// https://127.0.0.1:PORT/bmc/I
  std::string bmc(int i) const { return base_ + "/bmc/" + std::to_string(i); }
  const std::string& ca() const { return ca_; }
  /// The request log, one JSON line per request.
  std::string log() const { return slurp(log_); }

 private:
  TempDir dir_;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string ca_, log_, base_;
};

}  // namespace plinth::test
