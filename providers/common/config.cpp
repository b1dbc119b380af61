#include "providers/common/config.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace plinth::cloud {

int clamp_int(const ProviderConfig& config, const char* key, int fallback, int lo, int hi) {
  if (!config.has(key)) return fallback;
  return static_cast<int>(std::clamp<int64_t>(config.integer(key), lo, hi));
}

net::ClientOptions http_options(const ProviderConfig& config) {
  net::ClientOptions http;
  http.ca_bundle = config.str("ca_bundle");
  http.timeout_ms = clamp_int(config, "timeout_ms", 30000, 1, 3600000);
  http.connect_timeout_ms = clamp_int(config, "connect_timeout_ms", 10000, 1, 3600000);
  return http;
}

net::Request bearer_request(const std::string& method, const std::string& url, const std::string& token,
                            const Json& body, const Deadline& deadline, const std::atomic<bool>* cancel) {
  net::Request r;
  r.method = method;
  r.url = url;
  r.headers = {{"Authorization", "Bearer " + token}, {"Accept", "application/json"}};
  if (!body.is_null()) {
    r.body = body.dump();
    r.headers["Content-Type"] = "application/json";
  }
  r.deadline = deadline;
  r.cancel = cancel;
  return r;
}

void trace(const char* variable, const char* cloud, const net::Request& request, const Result<net::Response>& answer) {
  if (!std::getenv(variable)) return;
  std::fprintf(stderr, "%s trace: %s %s %s\n  -> %s\n", cloud, request.method.c_str(), request.url.c_str(),
               request.body.c_str(),
               answer ? (std::to_string(answer->status) + " " + answer->body).c_str() : answer.error().message.c_str());
}

}  // namespace plinth::cloud
