#pragma once
// Options every cloud provider reads the same way (docs/providers/*.md,
// "Options"): bounded integers and the HTTP client's TLS and timeouts.
#include <atomic>
#include <string>

#include "engine/core/deadline.h"
#include "engine/net/http.h"
#include "engine/provider/provider.h"

namespace plinth::cloud {

/// The integer option `key` clamped to [lo, hi]; `fallback` when unset.
int clamp_int(const ProviderConfig& config, const char* key, int fallback, int lo, int hi);

/// The HTTP client options of a cloud API: `ca_bundle`, `timeout_ms`
/// (default 30 s) and `connect_timeout_ms` (default 10 s), each up to an hour.
net::ClientOptions http_options(const ProviderConfig& config);

}  // namespace plinth::cloud

namespace plinth::cloud {

/// A JSON API request with a bearer token: `body` as JSON unless null,
/// `deadline` and `cancel` as the call's.
net::Request bearer_request(const std::string& method, const std::string& url, const std::string& token,
                            const Json& body, const Deadline& deadline, const std::atomic<bool>* cancel);

/// When the environment variable `variable` is set: one line on stderr per
/// request and its answer (`cloud` names it: "gcp trace: ..."), never the
/// headers, so no token is printed (docs/providers/NAME.md, "Errors").
void trace(const char* variable, const char* cloud, const net::Request& request, const Result<net::Response>& answer);

}  // namespace plinth::cloud
