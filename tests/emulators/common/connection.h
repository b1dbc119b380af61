#pragma once
// The accepted socket behind an HTTP request, for faults that must act on the
// connection itself (drop it, hold it). cpp-httplib does not expose the
// socket; it is found by the request's two ports.

namespace plinth::emulator {

/// The file descriptor of this process's TCP connection whose local port is
/// `local_port` and peer port `remote_port`, or -1.
int accepted_socket(int local_port, int remote_port);

/// Shuts that connection down in both directions (the client sees it closed
/// without an answer). Returns false when no such connection was found.
bool drop_connection(int local_port, int remote_port);

}  // namespace plinth::emulator
