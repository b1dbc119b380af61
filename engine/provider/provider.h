#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/diagnostic.h"
#include "engine/core/result.h"
#include "engine/provider/resource.h"

namespace plinth {

/// How a provider is set up: its name and plain string options (endpoint,
/// ca_bundle, insecure, region, ...). Built from CLI flags / environment
/// (PLINTH_<PROVIDER>_ENDPOINT) so tests point providers at emulators.
struct ProviderConfig {
  std::string name;
  std::map<std::string, std::string> options;
  bool operator==(const ProviderConfig&) const = default;
};

/// What a batch refresh learned about one prior resource.
struct ReadResult {
  std::string address;
  /// The resource as it is now (attributes as observed, computed values), or
  /// nullopt when it no longer exists.
  std::optional<Resource> current;
  /// Why it could not be read; when set, `current` is meaningless.
  std::optional<Error> error;
  /// Findings such as inventory mismatches (the BMC reports 7 GPUs, the pool declares 8).
  Diagnostics diagnostics;
};

/// One back end that can create, read, update and remove resources of its
/// types. Small and abstract so tests can fake it (ninja's DiskInterface).
/// Calls may run concurrently from the apply executor's threads.
class Provider {
 public:
  virtual ~Provider() = default;
  virtual std::string name() const = 0;
  /// Batch refresh: one ReadResult per element of `resources`, same order.
  virtual std::vector<ReadResult> read(const std::vector<Resource>& resources) = 0;
  /// Creates `desired`; returns it with `computed` filled in.
  virtual Result<Resource> create(const Resource& desired) = 0;
  /// Changes `prior` in place to match `desired`.
  virtual Result<Resource> update(const Resource& prior, const Resource& desired) = 0;
  /// Removes `prior`. Removing something already gone succeeds.
  virtual Status remove(const Resource& prior) = 0;
};

}  // namespace plinth
