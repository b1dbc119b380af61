#pragma once
// The fake services on loopback of the fuzz targets that drive an HTTP client
// (fuzz_redfish, fuzz_aws, fuzz_gcp, fuzz_azure; docs/fuzzing.md).
#include <httplib.h>

#include <string>
#include <thread>

#include "tests/fuzz/fuzz.h"

namespace plinth::fuzz {

/// Binds `server` to a free loopback port with TCP_NODELAY (so no answer
/// waits about 40 ms for a delayed ACK: executions per second), serves it on
/// `thread` and returns the port once it accepts connections. A fake that
/// cannot listen (`what`, e.g. "the fake BMC") is a property violation.
inline int serve(httplib::Server& server, std::thread& thread, const std::string& what) {
  server.set_tcp_nodelay(true);
  const int port = server.bind_to_any_port("127.0.0.1");
  if (port <= 0) violated(what + " cannot listen on loopback");
  thread = std::thread([&server] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::yield();
  return port;
}

}  // namespace plinth::fuzz
