#pragma once
// The baremetal provider as the CLI makes it: options parsed from its schema
// (written as --provider-option values), then configure().
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/provider/options.h"
#include "providers/baremetal/redfish_provider.h"

namespace plinth {

/// A configured baremetal provider; the error is parse_provider_config's or configure()'s.
inline Result<std::unique_ptr<Provider>> configured(const std::map<std::string, std::string>& options) {
  std::vector<std::string> flags;
  for (const auto& [k, v] : options) flags.push_back("baremetal." + k + "=" + v);
  auto c = parse_provider_config(baremetal::schema(), {}, {}, flags);
  if (!c) return c.error();
  auto p = std::make_unique<baremetal::RedfishProvider>();
  if (auto st = p->configure(*c); !st) return st.error();
  return std::unique_ptr<Provider>(std::move(p));
}

/// A Call for one operation made directly in a provider test: no retries
/// (one attempt per request, as the provider's own behaviour shows) and
/// `deadline`. Use as `*one_call()`: it lives until the end of the statement.
inline std::unique_ptr<Call> one_call(Deadline deadline = Deadline::never()) {
  return std::make_unique<Call>(deadline, RetryPolicy{1});
}

}  // namespace plinth
