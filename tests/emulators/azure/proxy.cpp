#include "tests/emulators/azure/proxy.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace plinth::azure_emulator {
namespace {

bool send_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

std::string lower_copy(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

ConnectProxy::ConnectProxy(std::set<std::string> allowed_hosts, std::string target_host, int target_port, Log log)
    : allowed_(std::move(allowed_hosts)),
      target_host_(std::move(target_host)),
      target_port_(target_port),
      log_(std::move(log)) {}

ConnectProxy::~ConnectProxy() { stop(); }

int ConnectProxy::listen(const std::string& host, int port, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res) {
    error = "cannot resolve " + host;
    return -1;
  }
  int fd = ::socket(res->ai_family, res->ai_socktype, 0);
  int yes = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (fd < 0 || ::bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, 64) != 0) {
    error = std::string("cannot listen on ") + host + ":" + std::to_string(port) + ": " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    freeaddrinfo(res);
    return -1;
  }
  freeaddrinfo(res);
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  listen_fd_ = fd;
  return addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6&>(addr).sin6_port)
                                    : ntohs(reinterpret_cast<sockaddr_in&>(addr).sin_port);
}

void ConnectProxy::start() {
  acceptor_ = std::thread([this] {
    while (!stopping_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      int client = ::accept(listen_fd_, nullptr, nullptr);
      if (client < 0) continue;
      std::lock_guard<std::mutex> lock(mu_);
      open_fds_.insert(client);
      tunnels_.emplace_back([this, client] { serve(client); });
    }
  });
}

void ConnectProxy::stop() {
  if (stopping_.exchange(true)) return;
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    threads.swap(tunnels_);
  }
  for (auto& t : threads)
    if (t.joinable()) t.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
}

void ConnectProxy::track(int fd, bool add) {
  std::lock_guard<std::mutex> lock(mu_);
  if (add)
    open_fds_.insert(fd);
  else
    open_fds_.erase(fd);
}

void ConnectProxy::serve(int client) {
  auto finish = [&](int status, const std::string& method, const std::string& target, const std::string& reason) {
    std::string text = "azure-emulator proxy: " + reason + "\n";
    std::string head = "HTTP/1.1 " + std::to_string(status) + (status == 403 ? " Forbidden" : " Bad Request") +
                       "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(text.size()) +
                       "\r\nConnection: close\r\n\r\n";
    send_all(client, head.data(), head.size());
    send_all(client, text.data(), text.size());
    log_(method, target, status);
    track(client, false);
    ::close(client);
  };
  // Read the request head.
  std::string head;
  char buf[16384];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536 && !stopping_) {
    pollfd p{client, POLLIN, 0};
    int ready = ::poll(&p, 1, 10000);
    if (ready <= 0) return finish(400, "", "", "no request head within 10 s");
    ssize_t n = ::recv(client, buf, sizeof buf, 0);
    if (n <= 0) {
      track(client, false);
      ::close(client);
      return;
    }
    head.append(buf, static_cast<size_t>(n));
  }
  size_t end = head.find("\r\n\r\n");
  if (end == std::string::npos) return finish(400, "", "", "request head too long");
  std::string extra = head.substr(end + 4);
  std::string line = head.substr(0, head.find("\r\n"));
  auto sp1 = line.find(' ');
  auto sp2 = line.find(' ', sp1 == std::string::npos ? 0 : sp1 + 1);
  std::string method = sp1 == std::string::npos ? line : line.substr(0, sp1);
  std::string target = sp1 == std::string::npos ? "" : line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (method != "CONNECT")
    return finish(403, method, target,
                  "only CONNECT to " + std::string("allowed hosts is tunnelled; refused ") + target);
  auto colon = target.rfind(':');
  std::string host = lower_copy(target.substr(0, colon));
  std::string port = colon == std::string::npos ? "443" : target.substr(colon + 1);
  if (!allowed_.count(host) || port != "443") return finish(403, method, target, "refused " + target);

  // Connect to the emulator itself.
  int upstream = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(target_port_));
  inet_pton(AF_INET, target_host_.c_str(), &addr.sin_addr);
  if (upstream < 0 || ::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (upstream >= 0) ::close(upstream);
    return finish(400, method, target, "cannot reach the emulator");
  }
  track(upstream, true);
  int yes = 1;
  setsockopt(upstream, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
  send_all(client, ok, sizeof ok - 1);
  log_(method, target, 200);
  if (!extra.empty()) send_all(upstream, extra.data(), extra.size());
  // Relay both ways until either side closes.
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  while (!stopping_) {
    int ready = ::poll(fds, 2, 200);
    if (ready < 0) break;
    if (ready == 0) continue;
    bool done = false;
    for (int i = 0; i < 2 && !done; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::recv(fds[i].fd, buf, sizeof buf, 0);
      if (n <= 0 || !send_all(fds[1 - i].fd, buf, static_cast<size_t>(n))) done = true;
    }
    if (done) break;
  }
  track(client, false);
  track(upstream, false);
  ::close(client);
  ::close(upstream);
}

}  // namespace plinth::azure_emulator
