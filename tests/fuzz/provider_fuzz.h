#pragma once
// Shared by the cloud provider fuzz targets (fuzz_aws, fuzz_gcp, fuzz_azure;
// docs/fuzzing.md): a provider configured as a user configures it, and the
// calls every input drives through it against the target's fake service.
#include <chrono>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "engine/provider/options.h"
#include "engine/provider/provider.h"
#include "tests/fuzz/fuzz.h"

namespace plinth::fuzz {

/// A provider of type P configured from `environment` ("NAME=VALUE") and
/// `options` ("name=value", as `--provider-option PREFIX.name=value`), bound
/// to the lineage "fuzz-lineage". Options it refuses are a property violation.
template <class P>
std::unique_ptr<P> configured(const ProviderSchema& schema, const std::vector<std::string>& environment,
                              const std::string& prefix, std::initializer_list<const char*> options) {
  std::vector<std::string> flags;
  for (const char* kv : options) flags.push_back(prefix + "." + kv);
  auto config = parse_provider_config(schema, environment, {}, flags);
  if (!config) violated("provider options: " + config.error().message);
  auto p = std::make_unique<P>();
  if (auto st = p->configure(*config); !st) violated("provider configure: " + st.error().message);
  p->bind({"fuzz-lineage", "fuzz"});
  return p;
}

/// The calls of one input, each through a fresh provider from `make`, after
/// `before` (the fake's per-call reset): read and discover of `r`, create of
/// `r`, update of `r` to `changed`, remove of `r`. Each call gets one attempt
/// per request (retrying is the engine's) and a 300 ms deadline, so an answer
/// that never ends an operation (pending forever, a page-token loop) ends the
/// call. Property besides "returns": read answers for `r` only.
inline void drive(const std::function<std::unique_ptr<Provider>()>& make, const Resource& r,
                  const Resource& changed, const std::function<void()>& before) {
  auto once = [] { return Call(Deadline::after(std::chrono::milliseconds(300)), RetryPolicy{1}); };
  {
    before();
    auto p = make();
    Call call = once();
    for (const auto& res : p->read({r}, call))
      if (!res.error && !res.current && !res.address.empty() && res.address != r.address)
        violated("read answered for another address");
    (void)p->discover({r}, {r}, call);
  }
  {
    before();
    auto p = make();
    Call call = once();
    (void)p->create(r, call);
  }
  {
    before();
    auto p = make();
    Call call = once();
    (void)p->update(r, changed, call);
  }
  {
    before();
    auto p = make();
    Call call = once();
    (void)p->remove(r, call);
  }
}

}  // namespace plinth::fuzz
