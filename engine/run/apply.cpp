#include "engine/run/apply.h"

#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "engine/provider/registry.h"
#include "engine/render/render.h"
#include "engine/run/outputs.h"
#include "engine/run/policy_gate.h"
#include "engine/state/journal.h"

namespace plinth::run {
namespace {

using Rollouts = std::map<std::string, apply::Rollout>;  ///< by change address

/// "TYPE.POOL" of a node pool's members (the type its provider serves
/// node_pools with), as a change's resource gives it; "" for no such provider.
std::string pool_key(const bp::NodePool& pool) {
  const SectionSpec* spec = schema_registry().section("node_pools", pool.provider);
  return spec ? spec->resource_type + "." + pool.name : "";
}

/// The changes of `p` that take a node of one of the blueprint's node pools
/// down (a replace, an update of an attribute its type marks disruptive):
/// each runs within its pool's rollout.max_unavailable.
Rollouts pool_rollouts(const plan::Plan& p, const bp::Blueprint& blueprint) {
  std::map<std::string, int> caps;  // "TYPE.POOL" -> max_unavailable
  for (const auto& pool : blueprint.node_pools)
    if (std::string key = pool_key(pool); !key.empty()) caps[key] = bp::max_unavailable(pool);
  Rollouts out;
  if (caps.empty()) return out;
  for (const auto& c : p.changes) {
    if (c.deposed || (c.action != plan::Action::Replace && c.action != plan::Action::Update)) continue;
    const Resource* r = c.before ? &*c.before : c.after ? &*c.after : nullptr;
    if (!r || r->index < 0) continue;
    auto it = caps.find(r->type + "." + r->name);
    if (it == caps.end()) continue;
    if (c.action == plan::Action::Update) {
      const ResourceType* type = find_resource_type(r->type, r->provider);
      bool down = false;
      for (const auto& ch : c.changes)
        if (const AttributeSpec* a = type ? type->find(ch.path.substr(0, ch.path.find('.'))) : nullptr)
          down = down || a->disruptive;
      if (!down) continue;
    }
    out[c.address] = apply::Rollout{it->first, it->second};
  }
  return out;
}

/// Each pool's rendered cloud-init, made on first use (one render per pool,
/// not one copy per node) and given to the providers with the desired
/// resources that carry a user_data_hash: computed.user_data and, when the
/// pool has one, computed.network_config (apply::Options::prepare).
class CloudInits {
 public:
  explicit CloudInits(const bp::Blueprint& blueprint) : blueprint_(blueprint) {}

  Result<Resource> prepare(const Resource& desired) {
    auto hash = desired.attributes.find("user_data_hash");
    if (hash == desired.attributes.end() || !hash->is_string()) return desired;
    const render::CloudInit* ci = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = pools_.find(desired.name);
      if (it == pools_.end()) {
        auto rendered = render::render_pool(blueprint_, desired.name);
        if (!rendered) return Error::invalid(desired.address + ": cannot render its cloud-init: " + rendered.error().message);
        it = pools_.emplace(desired.name, std::move(*rendered)).first;
      }
      ci = &it->second;  // map nodes never move
    }
    if (ci->hash != hash->get<std::string>())
      return Error::invalid(desired.address + ": the blueprint renders pool '" + desired.name +
                            "' to cloud-init " + ci->hash.substr(0, 12) + "..., the plan has " +
                            hash->get<std::string>().substr(0, 12) + "...; plan again");
    Resource out = desired;
    out.computed["user_data"] = ci->user_data;
    if (!ci->network_config.empty()) out.computed["network_config"] = ci->network_config;
    return out;
  }

 private:
  const bp::Blueprint& blueprint_;
  std::mutex mu_;
  std::map<std::string, render::CloudInit> pools_;
};

/// The Kubernetes side of a node going down: before a node of a pool the
/// blueprint's cluster runs on is powered off or reinstalled (a change of
/// its rollout, or its delete), the cluster's provider drains it; once a
/// replace or update is done, uncordons it (Provider::drain, ::uncordon).
/// Each within the pool's rollout.drain_timeout.
class Drains {
 public:
  Drains(const bp::Blueprint& blueprint, const graph::ResourceGraph& desired, const std::vector<Resource>& recorded,
         const Rollouts& rollouts, apply::ProviderLookup providers, apply::LimitsLookup limits,
         std::function<void(const std::string&)> note)
      : rollouts_(rollouts), providers_(std::move(providers)), limits_(std::move(limits)), note_(std::move(note)) {
    if (blueprint.clusters.empty()) return;
    const bp::Cluster& cl = blueprint.clusters.front();
    const std::string provider = cl.provider.empty() ? schema_registry().default_provider("clusters") : cl.provider;
    const SectionSpec* section = schema_registry().section("clusters", provider);
    if (!section) return;
    const std::string address = make_address(section->resource_type, cl.name);
    cluster_ = desired.find(address);
    for (const auto& r : recorded)  // a destroy: the cluster as the state records it
      if (!cluster_ && r.address == address) cluster_ = &r;
    if (!cluster_) return;
    for (const auto& pool : blueprint.node_pools)
      if (cl.pools.empty() || std::find(cl.pools.begin(), cl.pools.end(), pool.name) != cl.pools.end())
        if (std::string key = pool_key(pool); !key.empty()) timeouts_[key] = bp::drain_timeout(pool);
  }

  /// The provider that drains, when any change of `p` needs it ("" for none).
  std::string provider_for(const plan::Plan& p) const {
    for (const auto& c : p.changes)
      if (pool_of(c)) return cluster_->provider;
    return "";
  }

  Status before(const plan::ResourceChange& c) {
    const auto* timeout = pool_of(c);
    if (!timeout) return {};
    const std::string node = node_name(c.before->name, c.before->index);
    Provider* p = providers_(cluster_->provider);
    if (!p) return Error::fatal(c.address + ": provider " + cluster_->provider + " is not open to drain its node");
    auto call = make_call(*timeout);
    auto drained = p->drain(*cluster_, node, *call);
    if (!drained) {
      auto undo = make_call(std::chrono::seconds(30));
      Status back = p->uncordon(*cluster_, node, *undo);
      return Error::fatal(c.address + ": draining Kubernetes node " + node + " of cluster " + cluster_->name +
                          " failed: " + drained.error().message + "; the node was not touched (" +
                          (back ? std::string("uncordoned again") : "still cordoned: " + back.error().message) +
                          ") and its pool's rollout stops");
    }
    if (!*drained) return {};  // not in the cluster: nothing runs there
    {
      std::lock_guard<std::mutex> lock(mu_);
      drained_.insert(c.address);
    }
    note_("drained Kubernetes node " + node + " of cluster " + cluster_->name + " (cordoned, pods evicted) before " +
          c.address + " goes down");
    return {};
  }

  Status after(const plan::ResourceChange& c) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!drained_.erase(c.address)) return {};
    }
    const std::string node = node_name(c.before->name, c.before->index);
    Provider* p = providers_(cluster_->provider);
    if (!p) return {};
    auto call = make_call(*pool_of(c));
    if (Status st = p->uncordon(*cluster_, node, *call); !st)
      return Error::fatal(c.address + ": the node is back, but Kubernetes node " + node + " of cluster " +
                          cluster_->name + " stays cordoned: " + st.error().message);
    note_("uncordoned Kubernetes node " + node + " of cluster " + cluster_->name + ": Ready again");
    return {};
  }

 private:
  /// The drain timeout of the pool whose node `c` takes down, when the
  /// cluster runs that pool; nullptr for any other change.
  const std::chrono::milliseconds* pool_of(const plan::ResourceChange& c) const {
    if (!cluster_ || !c.before || c.deposed || c.before->index < 0) return nullptr;
    if (c.action != plan::Action::Delete && !rollouts_.count(c.address)) return nullptr;
    auto it = timeouts_.find(c.before->type + "." + c.before->name);
    return it == timeouts_.end() ? nullptr : &it->second;
  }

  std::unique_ptr<Call> make_call(std::chrono::milliseconds budget) const {
    return std::make_unique<Call>(Deadline::after(budget), limits_(cluster_->provider).retry);
  }

  const Rollouts& rollouts_;
  apply::ProviderLookup providers_;
  apply::LimitsLookup limits_;
  std::function<void(const std::string&)> note_;
  const Resource* cluster_ = nullptr;
  std::map<std::string, std::chrono::milliseconds> timeouts_;  ///< "TYPE.POOL" of the cluster's pools
  std::mutex mu_;
  std::set<std::string> drained_;  ///< addresses whose node was drained and is not yet uncordoned
};

/// Counts each rollout's nodes as they go down and come back, and says so:
/// "rollout baremetal.node.hgx-a: 2 of 6 done, 2 down (max_unavailable 2)".
class RolloutProgress {
 public:
  explicit RolloutProgress(const Rollouts& rollouts) {
    for (const auto& [address, r] : rollouts) {
      group_of_[address] = r.group;
      Group& g = groups_[r.group];
      ++g.total;
      g.cap = r.max_in_flight;
    }
  }
  /// The line to report after `e`, "" for none. Called one event at a time.
  std::string on_event(const apply::Event& e) {
    auto it = group_of_.find(e.address);
    if (it == group_of_.end()) return "";
    Group& g = groups_[it->second];
    if (e.kind == apply::Event::Kind::Started) {
      ++g.down;
      return "";
    }
    if (e.kind != apply::Event::Kind::Finished) return "";
    --g.down;
    ++(e.ok ? g.done : g.failed);
    return "rollout " + it->second + ": " + std::to_string(g.done) + " of " + std::to_string(g.total) + " done, " +
           std::to_string(g.down) + " down" + (g.failed ? ", " + std::to_string(g.failed) + " failed" : "") +
           " (max_unavailable " + std::to_string(g.cap) + ")";
  }

 private:
  struct Group {
    int total = 0, done = 0, failed = 0, down = 0, cap = 1;
  };
  std::map<std::string, std::string> group_of_;
  std::map<std::string, Group> groups_;
};

/// Serialises the events of an apply (worker threads, the progress ticker,
/// the cancel watcher) and knows which operations are in flight.
class Reporter {
 public:
  Reporter(Events& events, std::chrono::milliseconds interval, RolloutProgress rollouts)
      : events_(events), interval_(interval), rollouts_(std::move(rollouts)) {
    ticker_ = std::thread([this] { tick(); });
  }
  ~Reporter() { stop(); }
  Reporter(const Reporter&) = delete;
  Reporter& operator=(const Reporter&) = delete;

  void on_event(const apply::Event& e) {
    std::lock_guard<std::mutex> lock(mu_);
    Operation op;
    op.address = e.address;
    op.action = e.action;
    op.elapsed = e.elapsed;
    op.message = e.message;
    op.ok = e.ok;
    op.attempt = e.attempt;
    op.wait = e.wait;
    switch (e.kind) {
      case apply::Event::Kind::Started:
        op.phase = Operation::Phase::Started;
        in_flight_[e.address] = {e.action, Clock::now(), Clock::now()};
        break;
      case apply::Event::Kind::Retrying: op.phase = Operation::Phase::Retrying; break;
      case apply::Event::Kind::Finished:
        op.phase = Operation::Phase::Finished;
        in_flight_.erase(e.address);
        break;
    }
    events_.operation(op);
    if (std::string progress = rollouts_.on_event(e); !progress.empty()) events_.note(progress);
  }
  void note(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.note(line);
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      stopped_ = true;
    }
    cv_.notify_all();
    ticker_.join();
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct InFlight {
    plan::Action action;
    Clock::time_point started, reported;
  };

  // "still creating... 10s elapsed": every interval, each operation in
  // flight that long.
  void tick() {
    std::unique_lock<std::mutex> lock(mu_);
    const auto step = std::max(std::chrono::milliseconds(10), interval_ / 10);
    while (!stopped_) {
      cv_.wait_for(lock, step, [this] { return stopped_; });
      if (stopped_) break;
      const auto now = Clock::now();
      for (auto& [address, f] : in_flight_) {
        if (now - f.reported < interval_) continue;
        f.reported = now;
        Operation op;
        op.phase = Operation::Phase::Running;
        op.address = address;
        op.action = f.action;
        op.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - f.started);
        events_.operation(op);
      }
    }
  }

  Events& events_;
  const std::chrono::milliseconds interval_;
  RolloutProgress rollouts_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
  std::map<std::string, InFlight> in_flight_;
  std::thread ticker_;
};

/// Records what the blueprint's outputs give against `doc` (the state as
/// last saved) when that differs from what it records, as the next serial.
/// `saved_anyway`: save even when the outputs are the same (what a refresh
/// observed). False (reported) when the save failed.
bool record_outputs(StateSession& st, const bp::Blueprint& blueprint, state::StateDocument doc, bool saved_anyway,
                    Events& events) {
  Json outputs = evaluate_outputs(blueprint, doc.resources);
  const bool changed = outputs != doc.outputs;
  if (!changed && !saved_anyway) return true;
  doc.outputs = std::move(outputs);
  doc.serial += 1;
  if (auto s = st.backend->save(doc); !s) {
    events.error("state " + st.path + ": " + s.error().message);
    return false;
  }
  if (changed)
    events.note(doc.outputs.empty() ? "Outputs: none recorded (none of their pools has a node in state)."
                                    : "Outputs recorded: " + std::to_string(doc.outputs.size()) +
                                          " (plinth output lists them).");
  return true;
}

}  // namespace

bool apply(const ApplyOptions& options, Planned& planned, ProviderSet& providers, Events& events) {
  plan::Plan& p = planned.plan;
  StateSession& st = planned.state;
  const std::string& op = options.operation;
  if (!st.existed && st.doc.lineage.empty()) {  // a saved plan brings its own lineage
    state::StateDocument fresh = state::new_document();
    st.doc.lineage = fresh.lineage;
    st.doc.plinth_version = fresh.plinth_version;
  }
  providers.bind({st.doc.lineage, planned.loaded.blueprint.metadata.name});

  // The plan, then the policy gate: nothing is changed when it blocks.
  events.planned(p);
  auto policies = run_policies(planned.loaded, *planned.desired, p, policy_dirs(options.policies),
                               options.policies.blueprint_dir, events);
  if (policies.blocked) {
    events.error("a mandatory policy failed (see above); nothing was changed. Fix the blueprint or add a waiver "
                 "(docs/policy-authoring.md) and run again.");
    return false;
  }
  if (!check_inventory(planned.inventory, providers, events, op)) return false;
  if (planned.preflight && !check_preflight(p, providers, events, op)) return false;

  if (!p.has_changes()) {
    // What the refresh observed (drift, adoptions) and the outputs, when they changed.
    if (!st.existed && st.doc.resources.empty()) return true;
    return record_outputs(st, planned.loaded.blueprint, st.doc, !planned.drift.empty() || planned.adopted, events);
  }
  if (options.cancel && options.cancel->load() != 0) {
    events.error("interrupted before any change; nothing was changed.");
    return false;
  }
  if (options.confirm && !options.confirm()) {
    events.error("cancelled; nothing was changed (only 'yes' approves).");
    return false;
  }

  // Only the providers that have work: a targeted plan of one provider's
  // resources does not need the others (nor their credentials).
  std::set<std::string> busy;
  for (const auto& rc : p.changes)
    if (rc.action != plan::Action::NoOp)
      for (const auto* r : {rc.before ? &*rc.before : nullptr, rc.after ? &*rc.after : nullptr})
        if (r) busy.insert(r->provider);
  const Rollouts rollouts = pool_rollouts(p, planned.loaded.blueprint);
  Reporter reporter(events, options.progress_interval, RolloutProgress(rollouts));
  Drains drains(planned.loaded.blueprint, *planned.desired, st.doc.resources, rollouts, providers.lookup(),
                providers.limits_lookup(), [&reporter](const std::string& line) { reporter.note(line); });
  if (std::string drainer = drains.provider_for(p); !drainer.empty()) busy.insert(drainer);
  if (auto s = providers.open(busy); !s) {
    events.error(s.error().message);
    return false;
  }

  const size_t total = static_cast<size_t>(p.summary().changes());
  apply::Options opts;
  opts.before_change = [&drains](const plan::ResourceChange& c) { return drains.before(c); };
  opts.after_change = [&drains](const plan::ResourceChange& c) { return drains.after(c); };
  if (!rollouts.empty())
    opts.rollout = [&rollouts](const plan::ResourceChange& c) -> std::optional<apply::Rollout> {
      auto it = rollouts.find(c.address);
      if (it == rollouts.end()) return std::nullopt;
      return it->second;
    };
  CloudInits cloud_inits(planned.loaded.blueprint);
  opts.prepare = [&cloud_inits](const Resource& r) { return cloud_inits.prepare(r); };
  opts.parallelism = options.parallelism;
  opts.limits = providers.limits();
  opts.cancel = options.cancel;
  opts.on_event = [&](const apply::Event& e) { reporter.on_event(e); };
  opts.keep_state = !planned.loaded.blueprint.outputs.empty() || !st.doc.outputs.empty();
  // A PostgreSQL state can go away mid-apply (server stopped, network
  // lost): what completes after that is kept in a local journal that the
  // next run (or plinth state push-journal) writes into the state.
  std::string journal_dir;
  if (state::is_postgres_location(st.location)) {
    const std::string jp = state::journal_path(st.location);
    journal_dir = std::filesystem::path(jp).parent_path().string();
    std::error_code ec;
    std::filesystem::create_directories(journal_dir, ec);
    std::filesystem::permissions(journal_dir, std::filesystem::perms::owner_all, ec);
    auto fb = open_state_backend(options.state, jp);  // encrypted as the state is
    if (fb) opts.fallback = std::shared_ptr<state::Backend>(std::move(*fb));
  }

  apply::Report report;
  {
    // Tells the user what a signal did; the handler only raises the level.
    std::atomic<bool> running{true};
    std::thread watcher([&] {
      int seen = 0;
      // One last look after the apply ends: a signal that stopped it before
      // the next tick is still told.
      for (bool last = false; !last;) {
        last = !running.load();
        int level = options.cancel ? options.cancel->load() : 0;
        if (level > seen) {
          seen = level;
          reporter.note(level == 1 ? "plinth " + op +
                                         ": interrupted: starting no new operations and waiting for those in flight "
                                         "(interrupt again to cancel them)"
                                   : "plinth " + op + ": cancelling the operations in flight");
        }
        if (!last) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    report = apply::execute(p, st.doc, *st.backend, providers.lookup(), opts);
    running = false;
    watcher.join();
  }
  reporter.stop();
  if (!journal_dir.empty() && report.fallback_journal.empty()) {
    std::error_code ec;
    std::filesystem::remove(journal_dir, ec);  // only when empty: never anyone's journal
  }
  events.applied({op, &report, total, st.path});
  if (report.state && !record_outputs(st, planned.loaded.blueprint, std::move(*report.state), false, events))
    return false;
  return report.ok();
}

}  // namespace plinth::run
