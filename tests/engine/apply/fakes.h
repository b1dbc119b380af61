#pragma once
// Test doubles for the apply executor: an in-memory Provider with
// configurable failures and latency, and an in-memory state Backend that
// counts saves and enforces the serial rule of state::Backend::save.
#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "engine/provider/provider.h"
#include "engine/state/state.h"

namespace plinth::test {

class FakeProvider : public Provider {
 public:
  explicit FakeProvider(std::string name = "fake") {
    schema_.name = std::move(name);
    schema_.version = "0.0.0";
  }
  const ProviderSchema& schema() const override { return schema_; }
  /// Its schema, for tests that declare resource types (create_before_destroy, ...).
  ProviderSchema& mutable_schema() { return schema_; }
  Status configure(const ProviderConfig&) override { return {}; }
  /// Calls in flight end at once with Cancelled; later calls too.
  void stop() override { stopped_ = true; }
  void close() override {}
  bool stopped() const { return stopped_; }

  /// Errors returned, in order, by the next calls for `address` (then success).
  void fail(const std::string& address, std::vector<Error> errors) {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& e : errors) failures_[address].push_back(std::move(e));
  }
  void set_latency(std::chrono::milliseconds d) { latency_ = d; }
  /// Attribute overrides that `read` reports (drift made outside Plinth).
  void set_observed(const std::string& address, const std::string& attr, Json value) {
    std::lock_guard<std::mutex> l(mu_);
    observed_[address][attr] = std::move(value);
  }
  void set_gone(const std::string& address) {
    std::lock_guard<std::mutex> l(mu_);
    gone_.push_back(address);
  }
  /// What discover (the search for objects the state does not record) fails with.
  std::optional<Error> discover_error;
  Result<std::vector<Resource>> discover(const std::vector<Resource>&, const std::vector<Resource>&,
                                         const Call&) override {
    if (discover_error) return *discover_error;
    return std::vector<Resource>{};
  }

  std::vector<ReadResult> read(const std::vector<Resource>& resources, const Call&) override {
    std::vector<ReadResult> out;
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& r : resources) {
      ReadResult rr;
      rr.address = r.address;
      if (std::find(gone_.begin(), gone_.end(), r.address) != gone_.end()) {
        out.push_back(rr);
        continue;
      }
      if (auto e = next_failure(r.address)) {
        rr.error = *e;
        out.push_back(rr);
        continue;
      }
      Resource cur = r;
      for (const auto& [k, v] : observed_[r.address]) cur.attributes[k] = v;
      rr.current = cur;
      out.push_back(rr);
    }
    return out;
  }
  Result<Resource> create(const Resource& desired, Call& c) override {
    if (auto e = call("create", desired.address, c.deadline())) return *e;
    Resource r = desired;
    r.computed["id"] = "fake-" + desired.address;
    return r;
  }
  Result<Resource> update(const Resource&, const Resource& desired, Call& c) override {
    if (auto e = call("update", desired.address, c.deadline())) return *e;
    return desired;
  }
  Status remove(const Resource& prior, Call& c) override {
    if (auto e = call("remove", prior.address, c.deadline())) return *e;
    return {};
  }

  /// "create A", "remove B", ... in the order calls STARTED.
  std::vector<std::string> calls() {
    std::lock_guard<std::mutex> l(mu_);
    return calls_;
  }
  /// "create A" in the order calls FINISHED successfully.
  std::vector<std::string> completed() {
    std::lock_guard<std::mutex> l(mu_);
    return completed_;
  }
  int max_in_flight() const { return max_in_flight_.load(); }
  std::vector<std::chrono::steady_clock::time_point> call_times() {
    std::lock_guard<std::mutex> l(mu_);
    return times_;
  }
  /// Called at the start of every create/update/remove (outside the lock).
  std::function<void(const std::string& address)> on_call;

 private:
  std::optional<Error> next_failure(const std::string& address) {
    auto it = failures_.find(address);
    if (it == failures_.end() || it->second.empty()) return std::nullopt;
    Error e = it->second.front();
    it->second.pop_front();
    return e;
  }
  /// Records the call, waits `latency` (cut short by stop() or the deadline,
  /// as a real provider's requests are), then returns the next failure.
  std::optional<Error> call(const std::string& op, const std::string& address, const Deadline& d) {
    {
      std::lock_guard<std::mutex> l(mu_);
      calls_.push_back(op + " " + address);
      times_.push_back(std::chrono::steady_clock::now());
    }
    if (on_call) on_call(address);
    int now = ++in_flight_;
    int prev = max_in_flight_.load();
    while (now > prev && !max_in_flight_.compare_exchange_weak(prev, now)) {
    }
    const auto until = std::chrono::steady_clock::now() + latency_;
    while (std::chrono::steady_clock::now() < until && !stopped_ && !d.passed())
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    --in_flight_;
    if (stopped_) return Error{Error::Kind::Cancelled, op + " " + address + ": cancelled", 0};
    if (d.passed()) return Error{Error::Kind::DeadlineExceeded, op + " " + address + ": deadline passed", 0};
    std::lock_guard<std::mutex> l(mu_);
    auto e = next_failure(address);
    if (!e) completed_.push_back(op + " " + address);
    return e;
  }

  ProviderSchema schema_;
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  std::map<std::string, std::deque<Error>> failures_;
  std::map<std::string, std::map<std::string, Json>> observed_;
  std::vector<std::string> gone_;
  std::vector<std::string> calls_, completed_;
  std::vector<std::chrono::steady_clock::time_point> times_;
  std::chrono::milliseconds latency_{0};
  std::atomic<int> in_flight_{0}, max_in_flight_{0};
};

/// In-memory state: keeps every saved document; refuses a serial that does
/// not grow or a lineage that changes, like the real backends.
class MemoryBackend : public state::Backend {
 public:
  std::string describe() const override { return "memory"; }
  Status lock(const std::string&, std::chrono::milliseconds) override { return {}; }
  void unlock() override {}
  Result<std::optional<state::StateDocument>> load() override {
    std::lock_guard<std::mutex> l(mu_);
    if (saved_.empty()) return std::optional<state::StateDocument>();
    return std::optional<state::StateDocument>(saved_.back());
  }
  Status save(const state::StateDocument& doc) override {
    std::lock_guard<std::mutex> l(mu_);
    if (fail_after_ >= 0 && static_cast<int>(saved_.size()) >= fail_after_)
      return Error::fatal("disk full (injected)");
    if (!saved_.empty() && (doc.serial <= saved_.back().serial || doc.lineage != saved_.back().lineage))
      return Error::fatal("state was changed by another run");
    saved_.push_back(doc);
    return {};
  }
  Result<std::vector<state::HistoryEntry>> history() override { return std::vector<state::HistoryEntry>{}; }
  Result<std::string> restore(uint64_t) override { return Error::fatal("not supported"); }
  Result<std::string> break_lock(bool) override { return std::string(); }

  std::vector<state::StateDocument> saved() {
    std::lock_guard<std::mutex> l(mu_);
    return saved_;
  }
  /// Every save after `n` successful ones fails.
  void fail_after(int n) { fail_after_ = n; }

 private:
  std::mutex mu_;
  std::vector<state::StateDocument> saved_;
  int fail_after_ = -1;
};

}  // namespace plinth::test
