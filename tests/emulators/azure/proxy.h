#pragma once
// An HTTP CONNECT proxy (--proxy-port) that lets Microsoft's clients reach the
// emulator under Microsoft's own host names without touching DNS: MSAL asks
// https://login.microsoftonline.com/common/discovery/instance before it trusts
// an authority it does not know, and azure-cli cannot turn that off. With
// HTTPS_PROXY pointing here, CONNECTs to the allowed hosts are tunnelled to the
// emulator (whose certificate also names them); every other host is refused
// with 403 and logged, so a test sees exactly what a client tried to reach.
#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace plinth::azure_emulator {

class ConnectProxy {
 public:
  /// `log(method, target, status)` is called once per proxy request.
  using Log = std::function<void(const std::string& method, const std::string& target, int status)>;

  ConnectProxy(std::set<std::string> allowed_hosts, std::string target_host, int target_port, Log log);
  ~ConnectProxy();
  ConnectProxy(const ConnectProxy&) = delete;
  ConnectProxy& operator=(const ConnectProxy&) = delete;

  /// Listens on host:port (0 picks a free port). Returns the port, or -1 with `error` set.
  int listen(const std::string& host, int port, std::string& error);
  /// Accepts connections on a thread of its own until stop().
  void start();
  /// Closes the listener and every tunnel, and joins the threads.
  void stop();

 private:
  void serve(int client);
  void track(int fd, bool add);

  std::set<std::string> allowed_;
  std::string target_host_;
  int target_port_;
  Log log_;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> tunnels_;
  std::set<int> open_fds_;
};

}  // namespace plinth::azure_emulator
