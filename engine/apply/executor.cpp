#include "engine/apply/executor.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "engine/core/duration.h"
#include "engine/core/log.h"

namespace plinth::apply {

const char* to_string(OutcomeStatus s) {
  switch (s) {
    case OutcomeStatus::Succeeded: return "succeeded";
    case OutcomeStatus::Failed: return "failed";
    case OutcomeStatus::Skipped: return "skipped";
    case OutcomeStatus::NotStarted: return "not started";
    case OutcomeStatus::Cancelled: return "cancelled";
  }
  return "?";
}

size_t Report::count(OutcomeStatus s) const {
  return static_cast<size_t>(
      std::count_if(outcomes.begin(), outcomes.end(), [&](const Outcome& o) { return o.status == s; }));
}

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

milliseconds since(Clock::time_point t) { return std::chrono::duration_cast<milliseconds>(Clock::now() - t); }

/// Writes the state after completed operations: an operation is recorded
/// only once a save that includes it has been written. Saves are one at a
/// time; the operations that complete while one is being written go into
/// the next save together (group commit), so N operations finishing at once
/// cost a few saves, not N. A backend that stores changes
/// (Backend::stores_changes) is given what changed since the last save;
/// others are given the whole document each time.
class Journal {
 public:
  Journal(state::StateDocument doc, state::Backend& backend, std::shared_ptr<state::Backend> fallback)
      : doc_(std::move(doc)),
        backend_(backend),
        fallback_(std::move(fallback)),
        changes_only_(backend_.stores_changes()),
        bytes_before_(backend_.bytes_written()) {
    if (fallback_) last_saved_ = doc_;
    for (auto& r : doc_.resources) by_address_[r.address] = std::move(r);
    for (auto& r : doc_.deposed) deposed_[deposed_key(r)] = std::move(r);
    doc_.resources.clear();
    doc_.deposed.clear();
    if (changes_only_) changes_only_ = seed_from_stored();
  }

  /// Records `r` (present) or removes `address` (nullopt); returns once a
  /// save holding it is written. With `deposed`, that object is added to
  /// the deposed ones in the same write. False when the journal is closed
  /// or the write failed.
  bool record(const std::string& address, std::optional<Resource> r, std::optional<Resource> deposed = std::nullopt) {
    std::unique_lock<std::mutex> lock(mu_);
    if (closed_) return false;
    if (changes_only_) {
      if (r) {
        pending_put_.insert_or_assign(address, *r);
        pending_removed_.erase(address);
      } else {
        pending_put_.erase(address);
        pending_removed_.insert(address);
      }
      if (deposed) pending_deposed_added_.insert_or_assign(deposed_key(*deposed), *deposed);
    }
    if (r) by_address_[address] = std::move(*r);
    else by_address_.erase(address);
    if (deposed) deposed_[deposed_key(*deposed)] = std::move(*deposed);
    return commit(lock, ++changes_);
  }
  /// Drops the deposed object `old`; returns once that is written.
  bool drop_deposed(const Resource& old) {
    std::unique_lock<std::mutex> lock(mu_);
    if (closed_) return false;
    const std::string key = deposed_key(old);
    if (changes_only_ && pending_deposed_added_.erase(key) == 0) pending_deposed_dropped_.insert_or_assign(key, old);
    deposed_.erase(key);
    return commit(lock, ++changes_);
  }
  /// Folds the changes written into the backend's document (the end of the
  /// apply, all workers done); a failure is the apply's state error.
  void settle() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!changes_only_ || committed_ == 0) return;
    if (Status st = backend_.settle(); !st && error_.empty())
      error_ = "state " + backend_.describe() + ": " + st.error().message;
  }

 private:
  /// Deposed objects are told apart by address and what was observed (an
  /// address may have several: one a replace left, one refresh found).
  static std::string deposed_key(const Resource& r) { return r.address + "\n" + r.computed.dump(); }

  /// What the apply starts from may differ from what is stored (a refresh's
  /// drift and adoptions are saved with the first operation): the first save
  /// carries that difference. False (whole documents, checked by the
  /// backend as before) when the stored state is not this one's version.
  bool seed_from_stored() {
    auto stored = backend_.load();
    if (!stored) return false;
    if (!*stored) {
      if (doc_.serial != 0) return false;
      for (const auto& [address, r] : by_address_) pending_put_.emplace(address, r);
      for (const auto& [key, r] : deposed_) pending_deposed_added_.emplace(key, r);
      return true;
    }
    const state::StateDocument& was = **stored;
    if (was.lineage != doc_.lineage || was.serial != doc_.serial || was.outputs != doc_.outputs) return false;
    std::set<std::string> kept;
    for (const auto& r : was.resources) {
      auto it = by_address_.find(r.address);
      if (it == by_address_.end()) pending_removed_.insert(r.address);
      else if (!(it->second == r)) pending_put_.emplace(r.address, it->second);
      kept.insert(r.address);
    }
    for (const auto& [address, r] : by_address_)
      if (!kept.count(address)) pending_put_.emplace(address, r);
    std::set<std::string> was_deposed;
    for (const auto& r : was.deposed) {
      const std::string key = deposed_key(r);
      was_deposed.insert(key);
      if (!deposed_.count(key)) pending_deposed_dropped_.emplace(key, r);
    }
    for (const auto& [key, r] : deposed_)
      if (!was_deposed.count(key)) pending_deposed_added_.emplace(key, r);
    return true;
  }

  /// The state as last saved, for the local journal (kept only with a fallback).
  const state::StateDocument& last_saved() const { return last_saved_; }
  /// The state as last saved with `c` applied.
  state::StateDocument last_saved_with(const state::StateChanges& c) const {
    state::StateDocument d = last_saved_;
    state::apply_changes(d, c);
    return d;
  }

  /// The changes recorded since the last save, as the next save (mu_ held).
  state::StateChanges take_pending() {
    state::StateChanges c;
    c.lineage = doc_.lineage;
    c.from_serial = doc_.serial;
    c.serial = doc_.serial + 1;
    c.put.reserve(pending_put_.size());
    for (auto& [_, r] : pending_put_) c.put.push_back(std::move(r));
    c.removed.assign(pending_removed_.begin(), pending_removed_.end());
    for (auto& [_, r] : pending_deposed_added_) c.deposed_added.push_back(std::move(r));
    for (auto& [_, r] : pending_deposed_dropped_) c.deposed_dropped.push_back(std::move(r));
    pending_put_.clear();
    pending_removed_.clear();
    pending_deposed_added_.clear();
    pending_deposed_dropped_.clear();
    return c;
  }

  /// Waits until change `mine` is in a written save, writing the next save
  /// itself when no other thread is writing one.
  bool commit(std::unique_lock<std::mutex>& lock, uint64_t mine) {
    for (;;) {
      if (committed_ >= mine) return true;
      if (closed_) return false;
      if (saving_) {
        cv_.wait(lock);
        continue;
      }
      // Lead: write everything recorded so far, without holding the lock.
      saving_ = true;
      const uint64_t upto = changes_;
      // What this save writes: the changes since the last one, or the whole
      // document to a backend that stores whole documents.
      std::optional<state::StateChanges> changes;
      state::StateDocument next;
      if (changes_only_) {
        changes = take_pending();
      } else {
        next = doc_;
        next.resources.reserve(by_address_.size());
        for (const auto& [_, res] : by_address_) next.resources.push_back(res);
        for (const auto& [_, res] : deposed_) next.deposed.push_back(res);
      }
      next.serial = doc_.serial + 1;
      const uint64_t serial = next.serial;
      const bool local = local_;
      lock.unlock();
      std::string failure, fallback_failure;
      bool to_local = local;
      if (!local) {
        if (Status st = changes ? backend_.save_changes(*changes) : backend_.save(next); !st) {
          failure = "state " + backend_.describe() + ": " + st.error().message;
          // The operations completed: keep them in the local journal (the
          // state as last saved first, so it says where it continues from).
          if (fallback_) {
            to_local = true;
            if (Status base = fallback_->save(last_saved()); !base) fallback_failure = base.error().message;
          }
        }
      }
      if (to_local && fallback_failure.empty()) {
        if (changes) next = last_saved_with(*changes);  // the local journal takes whole documents
        if (Status st = fallback_->save(next); !st) fallback_failure = st.error().message;
      }
      lock.lock();
      saving_ = false;
      if (!failure.empty()) error_ = failure;
      if (to_local) local_ = true;
      if (!fallback_failure.empty() || (!failure.empty() && !fallback_)) {
        if (!fallback_failure.empty())
          error_ += "; the local journal " + fallback_->describe() + " could not be written either: " +
                    fallback_failure;
        closed_ = true;
      } else {
        if (to_local) local_records_ += upto - committed_;
        else ++saves_;
        doc_.serial = serial;
        committed_ = upto;
        // With changes, last_saved_ is the state as last written anywhere
        // (the local journal's next document is built from it).
        if (fallback_ && changes && to_local) last_saved_ = std::move(next);
        else if (fallback_ && changes) state::apply_changes(last_saved_, std::move(*changes));  // in place, no copy
        else if (fallback_ && !to_local) last_saved_ = std::move(next);
      }
      cv_.notify_all();
    }
  }

 public:
  bool failed() {
    std::lock_guard<std::mutex> lock(mu_);
    return !error_.empty();
  }
  void fill(Report& report, bool keep_state) {
    std::lock_guard<std::mutex> lock(mu_);
    report.journal_error = error_;
    report.final_serial = doc_.serial;
    report.saves = saves_;
    report.state_bytes_written = backend_.bytes_written() - bytes_before_;
    if (local_) {
      report.fallback_journal = fallback_->describe();
      report.fallback_records = local_records_;
    }
    if (keep_state && error_.empty() && !local_ && committed_ == changes_) {
      state::StateDocument last = doc_;
      last.resources.clear();
      last.resources.reserve(by_address_.size());
      for (const auto& [_, res] : by_address_) last.resources.push_back(res);
      for (const auto& [_, res] : deposed_) last.deposed.push_back(res);
      report.state = std::move(last);
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  state::StateDocument doc_;  // resources kept in by_address_
  std::map<std::string, Resource> by_address_;
  std::map<std::string, Resource> deposed_;  ///< by deposed_key()
  state::Backend& backend_;
  std::shared_ptr<state::Backend> fallback_;
  state::StateDocument last_saved_;  ///< kept only with a fallback
  bool changes_only_;                ///< saves are changes (Backend::save_changes)
  const uint64_t bytes_before_;      ///< the backend's bytes_written() when the apply began
  /// With changes_only_: what changed since the last save.
  std::map<std::string, Resource> pending_put_;
  std::set<std::string> pending_removed_;
  std::map<std::string, Resource> pending_deposed_added_, pending_deposed_dropped_;  ///< by deposed_key()
  uint64_t changes_ = 0;             ///< changes recorded (numbered from 1)
  uint64_t committed_ = 0;           ///< changes up to this one are in a written save
  bool saving_ = false;              ///< a thread is writing a save
  bool local_ = false;               ///< the backend failed: writing to fallback_
  size_t local_records_ = 0;
  bool closed_ = false;
  std::string error_;
  size_t saves_ = 0;
};

struct Node {
  plan::ResourceChange change;
  std::string provider;
  std::string group;  ///< its rollout, "" for none
  std::vector<size_t> dependents;
  int waiting = 0;  // unfinished dependencies
  bool started = false, done = false;
};

/// Everything the workers share; lives on execute()'s stack, which outlives
/// every worker (they are all joined).
struct Common {
  Common(state::StateDocument doc, state::Backend& backend, ProviderLookup lookup, Options opts)
      : journal(std::move(doc), backend, opts.fallback), providers(std::move(lookup)), options(std::move(opts)) {}

  std::mutex mu;
  std::condition_variable cv;
  std::vector<Node> nodes;
  std::vector<Outcome> outcomes;
  std::set<size_t> ready;  // plan order
  std::map<std::string, int> in_flight_by_provider;
  std::map<std::string, int> group_cap;  ///< a rollout's max_in_flight
  std::map<std::string, int> in_flight_by_group;
  int in_flight = 0;
  int workers_running = 0;
  bool stop = false;  // cancel or journal failure: start nothing new

  Journal journal;
  ProviderLookup providers;
  Options options;
  std::map<std::string, std::unique_ptr<TokenBucket>> buckets;  // built before the workers start
  std::mutex event_mu;
  std::mutex rng_mu;
  std::mt19937_64 rng;

  int cancel_level() const { return options.cancel ? options.cancel->load() : 0; }
  /// Set once a cancellation arrives: no retry starts after it.
  std::atomic<bool> no_retries{false};

  const ProviderLimits& limits(const std::string& provider) const {
    auto it = options.limits.find(provider);
    return it == options.limits.end() ? options.default_limits : it->second;
  }

  void emit(const Event& e) {
    if (!options.on_event) return;
    std::lock_guard<std::mutex> lock(event_mu);
    options.on_event(e);
  }

  /// A node that may start now: ready, and its provider under its concurrency limit.
  std::optional<size_t> pick() {
    for (size_t i : ready) {
      const std::string& p = nodes[i].provider;
      const int cap = limits(p).concurrency;
      if (cap > 0 && in_flight_by_provider[p] >= cap) continue;
      if (const std::string& g = nodes[i].group; !g.empty() && in_flight_by_group[g] >= group_cap[g]) continue;
      return i;
    }
    return std::nullopt;
  }

  /// Marks `i` finished (lock held) and releases or skips its dependents.
  void finish(size_t i, Outcome outcome) {
    Node& n = nodes[i];
    n.done = true;
    const bool ok = outcome.status == OutcomeStatus::Succeeded;
    outcomes[i] = std::move(outcome);
    if (ok) {
      for (size_t d : n.dependents)
        if (--nodes[d].waiting == 0 && !nodes[d].done) ready.insert(d);
      return;
    }
    // Everything that (transitively) waits on `i` is skipped.
    skip(n.dependents, "skipped: depends on " + n.change.address + ", which " +
                           (outcomes[i].status == OutcomeStatus::Failed ? "failed" : "did not complete"));
    // A rollout stops at its first node that does not come back: the
    // others of its group keep their old state.
    if (!n.group.empty() && outcomes[i].status == OutcomeStatus::Failed) {
      std::vector<size_t> rest;
      for (size_t k = 0; k < nodes.size(); ++k)
        if (nodes[k].group == n.group && !nodes[k].started && !nodes[k].done) rest.push_back(k);
      skip(rest, "not started: the rollout of " + n.group + " stopped after " + n.change.address +
                     " failed; the pool's other nodes keep their old state (fix it and apply again)");
    }
  }

  /// Skips `first` and everything that (transitively) waits on them, saying `why`.
  void skip(const std::vector<size_t>& first, const std::string& why) {
    std::deque<size_t> todo(first.begin(), first.end());
    while (!todo.empty()) {
      size_t d = todo.front();
      todo.pop_front();
      if (nodes[d].done) continue;
      nodes[d].done = true;
      ready.erase(d);
      Outcome& o = outcomes[d];
      o.status = OutcomeStatus::Skipped;
      o.error = why;
      for (size_t dd : nodes[d].dependents) todo.push_back(dd);
    }
  }
};

/// Runs one operation: `op` with the operation's Call, which carries its
/// deadline (`budget`, all attempts included) and lends the provider the
/// provider's retry policy for its requests; a retryable error the provider
/// returns repeats the whole operation within the same Call. `kind`
/// ("create", ...) names the operation in messages.
template <typename T, typename Op>
T with_retries(Common& s, const Node& n, const char* kind, std::chrono::milliseconds budget, Outcome& o, Op op) {
  TokenBucket* bucket = nullptr;
  if (auto it = s.buckets.find(n.provider); it != s.buckets.end()) bucket = it->second.get();
  uint64_t seed;
  {
    std::lock_guard<std::mutex> lock(s.rng_mu);
    seed = s.rng();
  }
  Call call(Deadline::after(budget), s.limits(n.provider).retry, &s.no_retries,
            [&](const Error& e, int attempt, milliseconds wait) {
              Event ev;
              ev.kind = Event::Kind::Retrying;
              ev.address = n.change.address;
              ev.action = n.change.action;
              ev.message = e.message;
              ev.attempt = attempt;
              ev.wait = wait;
              s.emit(ev);
            },
            seed);
  auto timed_out = [&](const std::string& last) {
    o.timed_out = true;
    const int attempts = call.attempts();
    return T(Error{Error::Kind::DeadlineExceeded,
                   std::string(kind) + " did not finish within its deadline of " + format_duration(budget) + " (" +
                       n.provider + "." + kind + "_deadline) after " + std::to_string(attempts) +
                       (attempts == 1 ? " attempt" : " attempts") + (last.empty() ? "" : "; last error: " + last),
                   0});
  };
  for (;;) {
    if (bucket) {
      milliseconds wait = bucket->take();
      if (wait >= call.deadline().remaining()) {
        o.attempts += call.attempts() - 1;
        return timed_out("the provider's rate limit left no time");
      }
      if (wait.count() > 0) std::this_thread::sleep_for(wait);
    }
    T r = op(call);
    if (r.ok()) {
      o.attempts += call.attempts();
      return r;
    }
    const Error e = r.error();
    if (e.kind == Error::Kind::DeadlineExceeded ||
        (call.deadline().passed() && e.kind != Error::Kind::Cancelled)) {
      o.attempts += call.attempts();
      return timed_out(e.message);
    }
    if (e.retryable() && call.retry(e)) {
      log::write(log::Level::Debug, "apply", o.address + ": attempt " + std::to_string(call.attempts() - 1) +
                                                 " failed (" + (e.kind == Error::Kind::Throttled ? "throttled" : "retryable") +
                                                 "), trying again");
      continue;
    }
    o.attempts += call.attempts();
    if (call.stopped_by() == "deadline") return timed_out(e.message);
    if (call.stopped_by() == "attempts" && call.attempts() > 1) {
      Error last = e;
      last.message += " (gave up after " + std::to_string(call.attempts()) + " attempts)";
      return T(std::move(last));
    }
    return r;
  }
}

/// Runs one node's operation(s) and journals each completed step.
Outcome run_change(Common& s, const Node& n) {
  const plan::ResourceChange& c = n.change;
  Outcome o;
  o.address = c.address;
  o.action = c.action;
  const auto start = Clock::now();
  auto done = [&](std::string error) {
    o.elapsed = since(start);
    o.status = error.empty() ? OutcomeStatus::Succeeded : OutcomeStatus::Failed;
    o.error = std::move(error);
    log::write(log::Level::Debug, "apply",
               o.address + ": " + plan::to_string(o.action) + (o.error.empty() ? " succeeded" : " failed") + " after " +
                   std::to_string(o.attempts) + " attempt(s) in " + std::to_string(o.elapsed.count()) + " ms");
    return o;
  };
  auto failed = [&](const Error& e) {
    if (e.kind == Error::Kind::Cancelled && s.cancel_level() > 0) {
      o.elapsed = since(start);
      o.status = OutcomeStatus::Cancelled;
      o.error = "cancelled while in flight (" + e.message + "); re-run to converge";
      return o;
    }
    return done(e.message);
  };
  auto journal = [&](std::optional<Resource> r) -> std::string {
    if (s.journal.record(c.address, std::move(r))) return "";
    return "the operation completed but the state could not be written";
  };
  auto recorded = [&](Resource r) {
    r.depends_on = c.after->depends_on;
    return r;
  };
  // What prepare added is derived from the plan: never recorded in state.
  auto derived_out = [&](const std::optional<Resource>& prepared, Resource r) {
    if (prepared)
      for (const auto& [k, v] : prepared->computed.items())
        if (!c.after->computed.contains(k)) r.computed.erase(k);
    return r;
  };

  Provider* p = s.providers ? s.providers(n.provider) : nullptr;
  if (!p)
    return done("no provider '" + n.provider + "' in this run, so " + c.address +
                " cannot be changed; remove it from the blueprint or make the provider available (plinth providers)");

  const Deadlines& deadlines = s.limits(n.provider).deadlines;
  if (c.deposed) {  // an object a create-before-destroy replace left behind
    Status st = with_retries<Status>(s, n, "delete", deadlines.remove, o,
                                     [&](Call& call) { return p->remove(*c.before, call); });
    if (!st) return failed(st.error());
    return done(s.journal.drop_deposed(*c.before) ? "" : "the operation completed but the state could not be written");
  }
  // What create and update send: the planned resource, or what prepare makes of it.
  std::optional<Resource> prepared;
  if (c.after && s.options.prepare && c.action != plan::Action::Delete) {
    auto r = s.options.prepare(*c.after);
    if (!r) return failed(r.error());
    prepared = std::move(*r);
  }
  const Resource* desired = prepared ? &*prepared : c.after ? &*c.after : nullptr;
  const ResourceType* type = p->schema().resource_type(c.type);
  if (c.action == plan::Action::Replace && type && type->create_before_destroy) {
    // Create the replacement first; the old object stays until it exists. In
    // between, the state records the new object at the address and the old
    // one as deposed, so a crash never loses either (docs/apply.md).
    auto r = with_retries<Result<Resource>>(s, n, "create", deadlines.create, o,
                                            [&](Call& call) { return p->create(*desired, call); });
    if (!r) {
      Error e = r.error();
      e.message += " (create before destroy: the old object was kept and is still recorded)";
      return failed(e);
    }
    Resource made = derived_out(prepared, std::move(*r));
    o.computed = made.computed;
    if (!s.journal.record(c.address, recorded(std::move(made)), *c.before))
      return done("the operation completed but the state could not be written");
    Status st = with_retries<Status>(s, n, "delete", deadlines.remove, o,
                                     [&](Call& call) { return p->remove(*c.before, call); });
    if (!st) {
      Error e = st.error();
      e.message = "the replacement was created, but removing the old object failed: " + e.message +
                  "; it is recorded as deposed and the next apply removes it";
      return failed(e);
    }
    return done(s.journal.drop_deposed(*c.before) ? "" : "the operation completed but the state could not be written");
  }
  const bool removes = c.action == plan::Action::Delete || c.action == plan::Action::Replace;
  const bool creates = c.action == plan::Action::Create || c.action == plan::Action::Replace;
  if (removes) {
    Status st = with_retries<Status>(s, n, "delete", deadlines.remove, o,
                                     [&](Call& call) { return p->remove(*c.before, call); });
    if (!st) return failed(st.error());
    if (auto e = journal(std::nullopt); !e.empty()) return done(e);
  }
  if (creates) {
    auto r = with_retries<Result<Resource>>(s, n, "create", deadlines.create, o,
                                            [&](Call& call) { return p->create(*desired, call); });
    if (!r) return failed(r.error());
    Resource made = derived_out(prepared, std::move(*r));
    o.computed = made.computed;
    return done(journal(recorded(std::move(made))));
  }
  if (c.action == plan::Action::Update) {
    auto r = with_retries<Result<Resource>>(s, n, "update", deadlines.update, o,
                                            [&](Call& call) { return p->update(*c.before, *desired, call); });
    if (!r) return failed(r.error());
    return done(journal(recorded(derived_out(prepared, std::move(*r)))));
  }
  return done("");  // Delete: removed and journaled above
}

/// run_change between the options' before_change and after_change hooks.
Outcome run_node(Common& s, const Node& n) {
  const plan::ResourceChange& c = n.change;
  const bool existing = c.before && !c.deposed &&
                        (c.action == plan::Action::Update || c.action == plan::Action::Replace ||
                         c.action == plan::Action::Delete);
  if (existing && s.options.before_change) {
    const auto start = Clock::now();
    if (Status st = s.options.before_change(c); !st) {
      Outcome o;
      o.address = c.address;
      o.action = c.action;
      o.status = OutcomeStatus::Failed;
      o.error = st.error().message;
      o.elapsed = since(start);
      return o;
    }
  }
  Outcome o = run_change(s, n);
  if (existing && c.action != plan::Action::Delete && o.status == OutcomeStatus::Succeeded && s.options.after_change)
    if (Status st = s.options.after_change(c); !st) {
      o.status = OutcomeStatus::Failed;
      o.error = st.error().message;
    }
  return o;
}

void worker(Common& s) {
  std::unique_lock<std::mutex> lock(s.mu);
  for (;;) {
    std::optional<size_t> next;
    for (;;) {
      if (s.cancel_level() > 0 || s.journal.failed()) s.stop = true;
      if (s.stop) break;
      next = s.pick();
      if (next) break;
      if (s.ready.empty() && s.in_flight == 0) break;  // nothing left that can ever start
      s.cv.wait_for(lock, milliseconds(50));
    }
    if (!next) break;
    Node& n = s.nodes[*next];
    s.ready.erase(*next);
    n.started = true;
    ++s.in_flight;
    ++s.in_flight_by_provider[n.provider];
    if (!n.group.empty()) ++s.in_flight_by_group[n.group];
    lock.unlock();

    Event started;
    started.address = n.change.address;
    started.action = n.change.action;
    s.emit(started);
    Outcome o = run_node(s, n);
    Event fin;
    fin.kind = Event::Kind::Finished;
    fin.address = o.address;
    fin.action = o.action;
    fin.ok = o.status == OutcomeStatus::Succeeded;
    fin.message = o.error;
    fin.elapsed = o.elapsed;
    fin.attempt = o.attempts;

    lock.lock();
    --s.in_flight;
    --s.in_flight_by_provider[n.provider];
    if (!n.group.empty()) --s.in_flight_by_group[n.group];
    s.finish(*next, std::move(o));
    lock.unlock();
    s.emit(fin);
    lock.lock();
    s.cv.notify_all();
  }
  --s.workers_running;
  s.cv.notify_all();
}

}  // namespace

Report execute(const plan::Plan& plan, state::StateDocument state, state::Backend& backend,
               const ProviderLookup& providers, const Options& options) {
  Common s(std::move(state), backend, providers, options);
  s.rng.seed(options.seed ? options.seed : std::random_device{}());

  std::map<std::string, size_t> index;
  for (const auto& c : plan.changes) {
    if (c.action == plan::Action::NoOp) continue;
    index[c.address] = s.nodes.size();
    Node n;
    n.change = c;
    n.provider = c.after ? c.after->provider : c.before ? c.before->provider : "";
    if (options.rollout)
      if (auto r = options.rollout(c)) {
        n.group = r->group;
        s.group_cap[r->group] = std::max(1, r->max_in_flight);
      }
    s.nodes.push_back(std::move(n));
    Outcome o;
    o.address = c.address;
    o.action = c.action;
    s.outcomes.push_back(std::move(o));
  }
  // Edges: dep -> dependent ("dependent waits for dep").
  std::set<std::pair<size_t, size_t>> edges;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const plan::ResourceChange& c = s.nodes[i].change;
    if (c.action != plan::Action::Delete && c.after) {
      for (const auto& dep : c.after->depends_on) {
        auto it = index.find(dep);
        if (it != index.end() && s.nodes[it->second].change.action != plan::Action::Delete && it->second != i)
          edges.insert({it->second, i});
      }
    }
    if (c.before) {
      // Whatever this resource depended on before and is now being deleted
      // waits until this resource has changed or gone.
      for (const auto& dep : c.before->depends_on) {
        auto it = index.find(dep);
        if (it != index.end() && s.nodes[it->second].change.action == plan::Action::Delete && it->second != i)
          edges.insert({i, it->second});
      }
    }
  }
  // Two operations on one real object (the same value of the type's
  // import_id, e.g. one BMC endpoint kept by a renamed pool): the delete of
  // the old address finishes before the create, update or replace of the new
  // one starts, so they never run on the same server at once.
  std::map<std::pair<std::string, std::string>, std::set<size_t>> by_object;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const plan::ResourceChange& c = s.nodes[i].change;
    for (const auto* r : {c.before ? &*c.before : nullptr, c.after ? &*c.after : nullptr}) {
      // The type as this run's provider declares it, as for the operation itself.
      Provider* p = r && s.providers ? s.providers(r->provider) : nullptr;
      const ResourceType* t = p ? p->schema().resource_type(r->type) : nullptr;
      if (!t || t->import_id.empty()) continue;
      auto it = r->attributes.find(t->import_id);
      if (it != r->attributes.end() && it->is_string() && !it->get<std::string>().empty())
        by_object[{r->type, it->get<std::string>()}].insert(i);
    }
  }
  for (const auto& [object, ops] : by_object)
    for (size_t d : ops)
      if (s.nodes[d].change.action == plan::Action::Delete)
        for (size_t o : ops)
          if (o != d && s.nodes[o].change.action != plan::Action::Delete) edges.insert({d, o});
  for (auto [from, to] : edges) {
    s.nodes[from].dependents.push_back(to);
    ++s.nodes[to].waiting;
  }
  for (size_t i = 0; i < s.nodes.size(); ++i)
    if (s.nodes[i].waiting == 0) s.ready.insert(i);
  std::set<std::string> used;
  for (const auto& n : s.nodes) used.insert(n.provider);
  for (const auto& name : used) {
    const ProviderLimits& lim = s.limits(name);
    if (lim.rate_per_second > 0) s.buckets[name] = std::make_unique<TokenBucket>(lim.rate_per_second, lim.burst);
  }

  const int workers = static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(1, options.parallelism)),
                                                        std::max<size_t>(1, s.nodes.size())));
  std::vector<std::thread> threads;
  s.workers_running = workers;
  for (int i = 0; i < workers; ++i) threads.emplace_back(worker, std::ref(s));

  {
    std::unique_lock<std::mutex> lock(s.mu);
    std::optional<Clock::time_point> drain_deadline;
    bool stopped_providers = false;
    while (s.workers_running > 0) {
      s.cv.wait_for(lock, milliseconds(20));
      const int level = s.cancel_level();
      if (level > 0 && !drain_deadline) {
        drain_deadline = Clock::now() + options.drain_timeout;
        s.no_retries = true;
      }
      if (!stopped_providers &&
          (level >= static_cast<int>(Cancel::Now) || (drain_deadline && Clock::now() >= *drain_deadline))) {
        // Cancel what is in flight: every provider this plan uses ends its
        // calls promptly; the workers then finish and are joined below.
        stopped_providers = true;
        s.stop = true;
        lock.unlock();
        for (const auto& name : used)
          if (Provider* p = s.providers ? s.providers(name) : nullptr) p->stop();
        lock.lock();
      }
    }
  }
  for (auto& t : threads) t.join();

  Report report;
  report.cancelled = s.cancel_level() > 0;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    Node& n = s.nodes[i];
    if (n.done) continue;
    n.done = true;
    Outcome& o = s.outcomes[i];
    if (n.waiting > 0 && !s.stop) {
      o.status = OutcomeStatus::Failed;
      o.error = "never started: caught in a dependency cycle";
    } else {
      o.status = OutcomeStatus::NotStarted;
      o.error = report.cancelled ? "not started: the apply was interrupted"
                                 : "not started: the apply stopped after a state write failed";
    }
  }
  report.outcomes = s.outcomes;
  s.journal.settle();
  s.journal.fill(report, options.keep_state);
  return report;
}

}  // namespace plinth::apply
