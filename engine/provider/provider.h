#pragma once
#include <optional>
#include <string>
#include <vector>

#include "engine/provider/call.h"
#include "engine/core/diagnostic.h"
#include "engine/core/result.h"
#include "engine/provider/options.h"
#include "engine/provider/resource.h"
#include "engine/provider/schema.h"

namespace plinth {

/// What a batch refresh learned about one prior resource.
struct ReadResult {
  std::string address;
  /// The resource as it is now (attributes as observed, computed values), or
  /// nullopt when it no longer exists.
  std::optional<Resource> current;
  /// When `current` is nullopt and the provider knows why the object is
  /// gone without anyone deleting it ("reclaimed by AWS (Server.Spot...)"):
  /// refresh and plan show this instead of treating it as drift by a person.
  std::string gone_reason;
  /// Why it could not be read; when set, `current` is meaningless.
  std::optional<Error> error;
  /// Findings such as inventory mismatches (the BMC reports 7 GPUs, the pool declares 8).
  Diagnostics diagnostics;
};

/// What the engine tells a provider about the state it works for, before any
/// read or change: providers that tag what they create (cloud instances) use
/// it to make creates idempotent across runs and to find objects of this
/// state that the state does not record.
struct StateBinding {
  std::string lineage;    ///< the state's lineage (fixed when the state was created)
  std::string blueprint;  ///< the blueprint's metadata.name; "" when unknown
  bool operator==(const StateBinding&) const = default;
};

/// One back end that creates, reads, updates and removes resources of the
/// types its schema declares. Small and abstract so tests can fake it
/// (ninja's DiskInterface); built in or a plugin process behind the same
/// interface.
///
/// Lifecycle: schema() any time; configure() once, before anything else;
/// then read/create/update/remove, from several threads at once; stop() from
/// any thread at any time; close() last.
///
/// The engine owns retries, backoff, deadlines and rate limits. Every call
/// gets the operation's Call: a provider shortens its requests to
/// call.deadline() (DeadlineExceeded when it passes), and when a request
/// fails with a retryable error (Retryable, Throttled with retry_after_ms)
/// it may send it again only if call.retry(error) says so; otherwise it
/// returns the error with its kind, and the engine decides whether to repeat
/// the whole operation within the same budget. Operations are idempotent:
/// the engine may repeat any of them.
class Provider {
 public:
  virtual ~Provider() = default;
  /// What the provider is: name, version, types, sections, options.
  virtual const ProviderSchema& schema() const = 0;
  std::string name() const { return schema().name; }

  /// Takes the options parsed from the schema. Errors name the option.
  virtual Status configure(const ProviderConfig& config) = 0;
  /// The state this run works for; called after configure() and again when
  /// a new state gets its lineage. Providers that need none ignore it.
  virtual void bind(const StateBinding& binding) { (void)binding; }
  /// Objects this provider made for the bound state that the state does not
  /// record (a create whose answer was lost, a run that crashed before its
  /// journal write), as resources with their addresses: `known` are the
  /// state's resources of this provider (deposed objects included), `desired`
  /// the blueprint's. An object made from the desired resource at its address
  /// comes back with that resource's attributes (the plan then keeps it);
  /// anything else with what was observed. Refresh adopts them into state, so
  /// the next apply never creates a duplicate; one at an address the state
  /// holds with another object is recorded as deposed (the next apply removes
  /// it) unless it is what the blueprint wants and the recorded one is not
  /// (then the two trade places). Default: none.
  virtual Result<std::vector<Resource>> discover(const std::vector<Resource>& known,
                                                 const std::vector<Resource>& desired, const Call& call) {
    (void)known, (void)desired, (void)call;
    return std::vector<Resource>{};
  }
  /// What apply will need, checked while planning, before anything changes:
  /// `changes` are this provider's resources the plan creates, updates or
  /// replaces (their desired form). Returns a diagnostic per problem apply
  /// would certainly hit (an error: a namespace that must already exist,
  /// credentials that cannot be used), with the address and a hint; a check
  /// that could not be made is a warning. Read-only. Default: none.
  virtual Diagnostics preflight(const std::vector<Resource>& changes, const Call& call) {
    (void)changes, (void)call;
    return {};
  }
  /// The workloads of a node of a cluster this provider serves (`clusters`:
  /// `cluster` is that resource, `node` the node's name in it, node_name()).
  /// Before a node of one of the cluster's pools is powered off or
  /// reinstalled, the engine drains it: mark it unschedulable and evict its
  /// pods, honouring disruption budgets, until none is left or call's
  /// deadline passes (then an error naming what still runs and why). Returns
  /// false when the cluster has no such node (nothing was done). Default:
  /// false, for providers that serve no cluster.
  virtual Result<bool> drain(const Resource& cluster, const std::string& node, Call& call) {
    (void)cluster, (void)node, (void)call;
    return false;
  }
  /// After the node is back: wait (within call's deadline) until it reports
  /// Ready, then make it schedulable again. Default: nothing.
  virtual Status uncordon(const Resource& cluster, const std::string& node, Call& call) {
    (void)cluster, (void)node, (void)call;
    return {};
  }
  /// Batch refresh: one ReadResult per element of `resources`, same order.
  /// Each resource gets its own budget: `call.fork()` when it starts.
  virtual std::vector<ReadResult> read(const std::vector<Resource>& resources, const Call& call) = 0;
  /// Creates `desired`; returns it with `computed` filled in.
  virtual Result<Resource> create(const Resource& desired, Call& call) = 0;
  /// Changes `prior` in place to match `desired`.
  virtual Result<Resource> update(const Resource& prior, const Resource& desired, Call& call) = 0;
  /// Removes `prior`. Removing something already gone succeeds.
  virtual Status remove(const Resource& prior, Call& call) = 0;
  /// Cancels calls in flight promptly (they fail with Cancelled) and makes
  /// later calls fail the same way. Thread-safe; idempotent.
  virtual void stop() = 0;
  /// Releases sessions, connections and processes. No call may follow.
  virtual void close() = 0;
};

}  // namespace plinth
