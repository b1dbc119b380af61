#pragma once
// Binding an emulator's HTTP server with a listen backlog a real service has.

#include <httplib.h>
#include <sys/socket.h>

#include <memory>
#include <string>

namespace plinth::emulator {

/// Binds `svr` to host:port (port 0: any free port) and returns the port, or
/// -1 when it cannot. Unlike Server::bind_to_port alone, the socket then
/// listens with a backlog of 1024: Debian's cpp-httplib library is built with
/// a backlog of 5, so a client opening more connections at once (Plinth's
/// parallel inventory reads do) overflowed the accept queue; the kernel
/// dropped the SYNs and clients resent them only after 1 s, a stall no real
/// BMC or cloud API has (it made 1 s session expiries fire mid-read).
inline int bind_server(httplib::Server& svr, const std::string& host, int port) {
  auto fd = std::make_shared<socket_t>(INVALID_SOCKET);
  svr.set_socket_options([fd](socket_t sock) {
    httplib::default_socket_options(sock);
    *fd = sock;
  });
  int bound = port == 0 ? svr.bind_to_any_port(host) : (svr.bind_to_port(host, port) ? port : -1);
  if (bound <= 0 || *fd == INVALID_SOCKET) return -1;
  // listen() on a listening socket sets its backlog anew (Linux, POSIX).
  if (::listen(*fd, 1024) != 0) return -1;
  return bound;
}

}  // namespace plinth::emulator
