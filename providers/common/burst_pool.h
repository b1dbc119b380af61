#pragma once
// What every cloud's burst-pool provider does the same way, written once
// (docs/providers/burst-pool-contract.md): the state binding its lineage tags
// come from, adopting tagged instances a state does not record, and the
// capacity fallback over instance types and places. A cloud supplies only
// what its API says: how to list its tagged instances and how to launch one.
#include <algorithm>
#include <functional>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "engine/provider/provider.h"

namespace plinth::cloud {

/// A burst-pool provider's state binding (Provider::bind), read by any thread.
class Binding {
 public:
  void set(const StateBinding& binding) {
    std::lock_guard<std::mutex> lock(mu_);
    binding_ = binding;
  }
  StateBinding get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return binding_;
  }

 private:
  mutable std::mutex mu_;
  StateBinding binding_;
};

/// An instance a cloud's listing found carrying this state's lineage tag.
struct Tagged {
  std::string address;          ///< its address tag ("" when it has none: not adopted)
  std::string attributes_hash;  ///< its attributes tag (cloud::attributes_hash of what it was made from)
  bool recorded = false;        ///< the state records this very instance (by id or name)
  Json attributes;              ///< what the cloud says it is: instance_type, region, zone, spot, ...
  Json computed;                ///< the provider's observed values
};

/// Provider::discover's common half: every listed instance of resource type
/// `type` that the state does not record becomes a Resource of `provider`:
/// the blueprint's own resource when the instance was made from exactly its
/// attributes (so the plan keeps it), else one with the attributes the
/// cloud reports (so the plan replaces it). An address the state holds with
/// another instance is returned too (a create-before-destroy replacement
/// whose run died before its journal write): refresh records it as deposed,
/// so it is removed, not leaked.
std::vector<Resource> adopt(const std::vector<Tagged>& listed, const std::string& type, const std::string& provider,
                            const std::vector<Resource>& desired);

/// What read() answers for an instance found: `known` (as the state holds
/// it) with `observed` as its computed values.
inline Resource with_computed(const Resource& known, Json observed) {
  Resource current = known;
  current.computed = std::move(observed);
  return current;
}

/// Provider::discover's frame: nothing while the state has no lineage (it
/// never tagged anything); a Fatal naming the provider when it is not
/// `configured`; else the instances `list(lineage)` finds, through adopt()
/// as the resource type serving `schema`'s burst_pools.
Result<std::vector<Resource>> discover(
    const Binding& binding, bool configured, const ProviderSchema& schema, const std::vector<Resource>& desired,
    const std::function<Result<std::vector<Tagged>>(const std::string& lineage)>& list);

/// The instance types a burst-pool instance may take: its `instance_type`,
/// then each of the provider setting `fallback_key` lists, once each.
std::vector<std::string> candidate_types(const Json& attributes, const char* fallback_key);

/// `places` rotated to start at the instance's `index`, so the instances of
/// a pool spread over them.
template <class T>
void spread(std::vector<T>& places, int index) {
  if (places.empty() || index <= 0) return;
  const size_t start = static_cast<size_t>(index) % places.size();
  std::rotate(places.begin(), places.begin() + static_cast<long>(start), places.end());
}

/// A launch the cloud refused for lack of capacity (or quota) at `where`
/// ("p5.48xlarge in us-east-1a"): the next candidate is tried.
struct NoCapacity {
  std::string where;
  std::string message;
};
using Launched = std::variant<Resource, NoCapacity, Error>;

/// The capacity fallback: launch(type, place) for each type in `types`,
/// each place 0..places-1 within it, until one launches (its Resource) or
/// fails otherwise (that error). When every candidate refused: a Conflict
/// "ADDRESS: no capacity for T in P, then ...: <the cloud's last answer>",
/// with `hint` (". List fallbacks in the pool (...) to let Plinth try
/// elsewhere") when there was only one candidate.
Result<Resource> first_with_capacity(const Resource& desired, const std::vector<std::string>& types, size_t places,
                                     const std::function<Launched(const std::string& type, size_t place)>& launch,
                                     const std::string& hint);

}  // namespace plinth::cloud
