#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "engine/apply/executor.h"
#include "engine/apply/refresh.h"
#include "providers/logical/logical_provider.h"
#include "tests/engine/apply/fakes.h"
#include "tests/support/run.h"
#include "tests/support/workspace.h"

using namespace plinth;
using namespace std::chrono_literals;
using apply::OutcomeStatus;
using test::FakeProvider;
using test::MemoryBackend;

namespace {

Resource res(const std::string& type, const std::string& name, int index = -1, std::vector<std::string> deps = {},
             const std::string& provider = "fake", Json attrs = Json::object()) {
  Resource r = test::make_resource(type, name, index, provider, attrs.empty() ? Json{{"size", 1}} : attrs);
  r.depends_on = std::move(deps);
  return r;
}

std::vector<Resource> pool(const std::string& name, int n, std::vector<std::string> deps = {}) {
  std::vector<Resource> out;
  for (int i = 0; i < n; ++i) out.push_back(res("fake.node", name, i, deps));
  return out;
}

state::StateDocument doc_with(std::vector<Resource> rs, uint64_t serial = 0) {
  state::StateDocument d;
  d.lineage = "lineage-1";
  d.serial = serial;
  d.resources = std::move(rs);
  return d;
}

apply::ProviderLookup lookup(FakeProvider& p) {
  return [&p](const std::string& name) -> Provider* { return name == p.name() ? &p : nullptr; };
}

apply::Options fast_options() {
  apply::Options o;
  o.default_limits.retry.base = 5ms;
  o.default_limits.retry.cap = 50ms;
  o.seed = 42;
  return o;
}

size_t position(const std::vector<std::string>& v, const std::string& s) {
  auto it = std::find(v.begin(), v.end(), s);
  REQUIRE(it != v.end());
  return static_cast<size_t>(it - v.begin());
}

const apply::Outcome& outcome(const apply::Report& r, const std::string& address) {
  for (const auto& o : r.outcomes)
    if (o.address == address) return o;
  FAIL("no outcome for " << address);
  throw 0;
}

}  // namespace

TEST_CASE("apply: creates run after their dependencies and deletes in reverse dependency order", "[apply]") {
  FakeProvider p;
  MemoryBackend backend;
  // fake.net.a <- fake.node.n[0..2]; fake.node.n[*] <- fake.svc.s
  std::vector<Resource> desired = {res("fake.net", "a")};
  for (auto& r : pool("n", 3, {"fake.net.a"})) desired.push_back(r);
  desired.push_back(res("fake.svc", "s", -1, {"fake.node.n[0]", "fake.node.n[1]", "fake.node.n[2]"}));
  plan::Plan create_plan = plan::diff(desired, {});
  apply::Report r = apply::execute(create_plan, doc_with({}), backend, lookup(p), fast_options());
  REQUIRE(r.ok());
  auto calls = p.calls();
  REQUIRE(calls.size() == 5);
  for (int i = 0; i < 3; ++i) {
    const std::string node = "create fake.node.n[" + std::to_string(i) + "]";
    CHECK(position(calls, "create fake.net.a") < position(calls, node));
    CHECK(position(calls, node) < position(calls, "create fake.svc.s"));
  }

  // Destroy everything: dependents go first.
  FakeProvider p2;
  auto state_now = backend.saved().back();
  plan::Plan destroy_plan = plan::diff({}, state_now.resources);
  apply::Report d = apply::execute(destroy_plan, state_now, backend, lookup(p2), fast_options());
  REQUIRE(d.ok());
  auto dcalls = p2.calls();
  REQUIRE(dcalls.size() == 5);
  for (int i = 0; i < 3; ++i) {
    const std::string node = "remove fake.node.n[" + std::to_string(i) + "]";
    CHECK(position(dcalls, "remove fake.svc.s") < position(dcalls, node));
    CHECK(position(dcalls, node) < position(dcalls, "remove fake.net.a"));
  }
  CHECK(backend.saved().back().resources.empty());
}

TEST_CASE("apply: parallelism and the per-provider concurrency limit bound the operations in flight", "[apply]") {
  FakeProvider p;
  p.set_latency(30ms);
  MemoryBackend backend;
  plan::Plan plan = plan::diff(pool("n", 20), {});
  auto opts = fast_options();
  opts.parallelism = 4;
  apply::Report r = apply::execute(plan, doc_with({}), backend, lookup(p), opts);
  REQUIRE(r.ok());
  CHECK(p.max_in_flight() == 4);

  FakeProvider q;
  q.set_latency(30ms);
  MemoryBackend backend2;
  opts.parallelism = 10;
  opts.limits["fake"].concurrency = 2;
  apply::Report r2 = apply::execute(plan, doc_with({}), backend2, lookup(q), opts);
  REQUIRE(r2.ok());
  CHECK(q.max_in_flight() == 2);
}

TEST_CASE("apply: the per-provider rate limit spaces out provider calls", "[apply]") {
  FakeProvider p;
  MemoryBackend backend;
  plan::Plan plan = plan::diff(pool("n", 6), {});
  auto opts = fast_options();
  opts.limits["fake"].rate_per_second = 50;  // one call every 20 ms
  opts.limits["fake"].burst = 1;
  auto start = std::chrono::steady_clock::now();
  apply::Report r = apply::execute(plan, doc_with({}), backend, lookup(p), opts);
  REQUIRE(r.ok());
  // 6 calls with one token up front: at least 5 * 20 ms.
  CHECK(std::chrono::steady_clock::now() - start >= 95ms);
  auto times = p.call_times();
  std::sort(times.begin(), times.end());
  CHECK(times.back() - times.front() >= 95ms);
}

TEST_CASE("apply: throttled errors are retried after the server's Retry-After", "[apply]") {
  FakeProvider p;
  MemoryBackend backend;
  Error throttled{Error::Kind::Throttled, "503 Service Unavailable from https://bmc-0/redfish/v1/Systems/1", 120};
  p.fail("fake.node.n[0]", {throttled, throttled});
  std::vector<apply::Event> retries;
  auto opts = fast_options();
  opts.on_event = [&](const apply::Event& e) {
    if (e.kind == apply::Event::Kind::Retrying) retries.push_back(e);
  };
  auto start = std::chrono::steady_clock::now();
  apply::Report r = apply::execute(plan::diff(pool("n", 1), {}), doc_with({}), backend, lookup(p), opts);
  REQUIRE(r.ok());
  CHECK(std::chrono::steady_clock::now() - start >= 240ms);
  CHECK(outcome(r, "fake.node.n[0]").attempts == 3);
  REQUIRE(retries.size() == 2);
  CHECK(retries[0].wait >= 120ms);
  CHECK(retries[0].attempt == 1);
  CHECK(retries[1].attempt == 2);
  CHECK(retries[0].message == "503 Service Unavailable from https://bmc-0/redfish/v1/Systems/1");
}

TEST_CASE("apply: retries stop after max_attempts and the error says so", "[apply]") {
  FakeProvider p;
  MemoryBackend backend;
  Error e{Error::Kind::Retryable, "connection reset by https://bmc-0", 0};
  p.fail("fake.node.n[0]", {e, e, e, e});
  auto opts = fast_options();
  opts.default_limits.retry.max_attempts = 3;
  apply::Report r = apply::execute(plan::diff(pool("n", 1), {}), doc_with({}), backend, lookup(p), opts);
  CHECK_FALSE(r.ok());
  const auto& o = outcome(r, "fake.node.n[0]");
  CHECK(o.status == OutcomeStatus::Failed);
  CHECK(o.attempts == 3);
  CHECK(o.error == "connection reset by https://bmc-0 (gave up after 3 attempts)");
  CHECK(backend.saved().empty());
}

TEST_CASE("apply: a fatal error skips the resource's dependents but independent branches finish", "[apply]") {
  FakeProvider p;
  MemoryBackend backend;
  std::vector<Resource> desired = {res("fake.net", "a"), res("fake.net", "b")};
  for (auto& r : pool("x", 2, {"fake.net.a"})) desired.push_back(r);
  for (auto& r : pool("y", 2, {"fake.net.b"})) desired.push_back(r);
  desired.push_back(res("fake.svc", "s", -1, {"fake.node.x[1]"}));
  p.fail("fake.net.a", {Error::fatal("VLAN 100 is already in use")});
  apply::Report r = apply::execute(plan::diff(desired, {}), doc_with({}), backend, lookup(p), fast_options());
  CHECK_FALSE(r.ok());
  CHECK(outcome(r, "fake.net.a").status == OutcomeStatus::Failed);
  CHECK(outcome(r, "fake.net.a").error == "VLAN 100 is already in use");
  CHECK(outcome(r, "fake.net.a").attempts == 1);  // fatal: no retry
  CHECK(outcome(r, "fake.node.x[0]").status == OutcomeStatus::Skipped);
  CHECK(outcome(r, "fake.node.x[0]").error == "skipped: depends on fake.net.a, which failed");
  CHECK(outcome(r, "fake.svc.s").status == OutcomeStatus::Skipped);
  CHECK(outcome(r, "fake.net.b").status == OutcomeStatus::Succeeded);
  CHECK(outcome(r, "fake.node.y[0]").status == OutcomeStatus::Succeeded);
  CHECK(outcome(r, "fake.node.y[1]").status == OutcomeStatus::Succeeded);
  CHECK(r.count(OutcomeStatus::Succeeded) == 3);
  CHECK(r.count(OutcomeStatus::Failed) == 1);
  CHECK(r.count(OutcomeStatus::Skipped) == 3);
  for (const auto& c : p.calls()) CHECK(c.find("fake.node.x") == std::string::npos);
  std::vector<std::string> in_state;
  const auto saved = backend.saved();
  for (const auto& res_ : saved.back().resources) in_state.push_back(res_.address);
  CHECK(in_state == std::vector<std::string>{"fake.net.b", "fake.node.y[0]", "fake.node.y[1]"});
}

TEST_CASE("apply: one operation at a time, state is journaled after every completed operation", "[apply]") {
  FakeProvider p;
  MemoryBackend backend;
  // prior: a (to update), b (to delete), c (to replace: force-new unknown here, so make it a delete + create)
  std::vector<Resource> prior = {res("fake.node", "a", -1, {}, "fake", {{"size", 1}}),
                                 res("fake.node", "b", -1, {}, "fake", {{"size", 1}})};
  std::vector<Resource> desired = {res("fake.node", "a", -1, {}, "fake", {{"size", 2}}),
                                   res("fake.node", "c", -1, {}, "fake", {{"size", 1}})};
  backend.save(doc_with(prior, 7)).ok();  // the stored state
  apply::Options one = fast_options();
  one.parallelism = 1;  // nothing completes while a save is written, so nothing is grouped
  apply::Report r = apply::execute(plan::diff(desired, prior), doc_with(prior, 7), backend, lookup(p), one);
  REQUIRE(r.ok());
  auto saved = backend.saved();
  REQUIRE(saved.size() == 4);  // the initial one + one per operation
  CHECK(r.saves == 3);
  CHECK(r.final_serial == 10);
  for (size_t i = 1; i < saved.size(); ++i) CHECK(saved[i].serial == 7 + i);
  // Each save holds exactly what had completed by then.
  const auto& last = saved.back();
  REQUIRE(last.resources.size() == 2);
  CHECK(last.resources[0].address == "fake.node.a");
  CHECK(last.resources[0].attributes["size"] == 2);
  CHECK(last.resources[1].address == "fake.node.c");
  CHECK(last.resources[1].computed["id"] == "fake-fake.node.c");
  CHECK(last.lineage == "lineage-1");
}

TEST_CASE("apply: a replace is remove then create, journaled after each", "[apply]") {
  FakeProvider p;
  MemoryBackend backend;
  Resource before = res("fake.node", "a");
  plan::Plan plan = plan::diff({before}, {before});
  plan.changes[0].action = plan::Action::Replace;  // as if a force-new attribute changed
  apply::Report r = apply::execute(plan, doc_with({before}, 1), backend, lookup(p), fast_options());
  REQUIRE(r.ok());
  CHECK(p.calls() == std::vector<std::string>{"remove fake.node.a", "create fake.node.a"});
  auto saved = backend.saved();
  REQUIRE(saved.size() == 2);
  CHECK(saved[0].resources.empty());
  CHECK(saved[1].resources.size() == 1);
}

TEST_CASE("apply: a rollout bounds its replaces in flight and stops at its first failure, other work goes on",
          "[apply][rollout]") {
  FakeProvider p;
  p.set_latency(20ms);
  MemoryBackend backend;
  std::vector<Resource> nodes = pool("a", 6);
  const Resource other = res("fake.net", "n");
  std::vector<Resource> prior = nodes;
  prior.push_back(other);
  std::vector<Resource> desired = nodes;
  Resource other2 = other;
  other2.attributes["size"] = 2;
  desired.push_back(other2);
  plan::Plan plan = plan::diff(desired, prior);
  for (auto& c : plan.changes)
    if (c.address.rfind("fake.node.a", 0) == 0) c.action = plan::Action::Replace;  // a new image, say
  apply::Options o = fast_options();
  o.parallelism = 10;
  o.rollout = [](const plan::ResourceChange& c) -> std::optional<apply::Rollout> {
    if (c.action != plan::Action::Replace) return std::nullopt;
    return apply::Rollout{"fake.node.a", 2};
  };

  SECTION("at most two of the pool at once, the rest of the plan beside them") {
    apply::Report r = apply::execute(plan, doc_with(prior, 1), backend, lookup(p), o);
    REQUIRE(r.ok());
    CHECK(p.max_in_flight() <= 2 + 1);  // two replaces and the update of fake.net.n, never more
    CHECK(p.max_in_flight() >= 2);
    CHECK(r.count(OutcomeStatus::Succeeded) == 7);
  }
  SECTION("the first node that does not come back stops the rollout; its pool's others keep their state") {
    o.parallelism = 1;  // one at a time: a[0], then a[1] fails, the rest never start
    p.fail("fake.node.a[1]", {Error::fatal("BMC said no")});
    apply::Report r = apply::execute(plan, doc_with(prior, 1), backend, lookup(p), o);
    CHECK_FALSE(r.ok());
    CHECK(outcome(r, "fake.node.a[0]").status == OutcomeStatus::Succeeded);
    CHECK(outcome(r, "fake.node.a[1]").status == OutcomeStatus::Failed);
    for (int i = 2; i < 6; ++i) {
      const auto& skipped = outcome(r, "fake.node.a[" + std::to_string(i) + "]");
      CHECK(skipped.status == OutcomeStatus::Skipped);
      CHECK(skipped.error == "not started: the rollout of fake.node.a stopped after fake.node.a[1] failed; the pool's "
                             "other nodes keep their old state (fix it and apply again)");
    }
    CHECK(outcome(r, "fake.net.n").status == OutcomeStatus::Succeeded);  // not in the rollout
    const auto calls = p.calls();
    CHECK(std::count_if(calls.begin(), calls.end(), [](const std::string& c) { return c.find("fake.node.a[3]") != std::string::npos; }) == 0);
  }
}

TEST_CASE("apply: logical resources go through the built-in logical provider, which records them", "[apply]") {
  MemoryBackend backend;
  std::vector<Resource> desired = {res("net.vlan", "ml-fabric", -1, {}, "plinth", {{"id", 100}}),
                                   res("storage.tier", "hot", -1, {}, "plinth", {{"kind", "nvme"}})};
  logical::LogicalProvider logical;
  apply::ProviderLookup lookup_logical = [&](const std::string& n) -> Provider* {
    return n == "plinth" ? &logical : nullptr;
  };
  apply::Report r = apply::execute(plan::diff(desired, {}), doc_with({}), backend, lookup_logical, fast_options());
  REQUIRE(r.ok());
  REQUIRE(backend.saved().size() == 2);
  CHECK(backend.saved().back().resources == desired);
  // No special case in the executor: without the provider they fail like any other.
  MemoryBackend backend2;
  apply::ProviderLookup none = [](const std::string&) -> Provider* { return nullptr; };
  apply::Report r2 = apply::execute(plan::diff(desired, {}), doc_with({}), backend2, none, fast_options());
  CHECK(r2.count(OutcomeStatus::Failed) == 2);
}

TEST_CASE("apply: a resource whose provider is not in this build fails with a clear message", "[apply]") {
  MemoryBackend backend;
  apply::ProviderLookup none = [](const std::string&) -> Provider* { return nullptr; };
  apply::Report r =
      apply::execute(plan::diff({res("aws.instance", "burst", 0, {}, "aws")}, {}), doc_with({}), backend, none, fast_options());
  CHECK_FALSE(r.ok());
  CHECK(r.outcomes[0].error ==
        "no provider 'aws' in this run, so aws.instance.burst[0] cannot be changed; remove it from the blueprint or "
        "make the provider available (plinth providers)");
}

TEST_CASE("apply: a failed state write stops the apply and is reported", "[apply]") {
  FakeProvider p;
  MemoryBackend backend;
  backend.fail_after(2);
  auto opts = fast_options();
  opts.parallelism = 1;
  apply::Report r = apply::execute(plan::diff(pool("n", 5), {}), doc_with({}), backend, lookup(p), opts);
  CHECK_FALSE(r.ok());
  CHECK(r.journal_error == "state memory: disk full (injected)");
  CHECK(r.count(OutcomeStatus::Succeeded) == 2);
  CHECK(r.count(OutcomeStatus::Failed) == 1);
  CHECK(r.count(OutcomeStatus::NotStarted) == 2);
  CHECK(p.calls().size() == 3);
}

TEST_CASE("apply: Stop lets in-flight operations finish, starts nothing new, and state holds exactly them",
          "[apply]") {
  FakeProvider p;
  p.set_latency(100ms);
  MemoryBackend backend;
  std::atomic<int> cancel{0};
  std::atomic<int> started{0};
  p.on_call = [&](const std::string&) {
    if (++started == 3) cancel = static_cast<int>(apply::Cancel::Stop);
  };
  auto opts = fast_options();
  opts.parallelism = 3;
  opts.cancel = &cancel;
  apply::Report r = apply::execute(plan::diff(pool("n", 12), {}), doc_with({}), backend, lookup(p), opts);
  CHECK(r.cancelled);
  CHECK_FALSE(r.ok());
  CHECK(r.count(OutcomeStatus::Succeeded) == 3);
  CHECK(r.count(OutcomeStatus::NotStarted) == 9);
  CHECK(p.calls().size() == 3);
  auto last = backend.saved().back();
  CHECK(last.resources.size() == 3);
  for (const auto& o : r.outcomes)
    if (o.status == OutcomeStatus::NotStarted) CHECK(o.error == "not started: the apply was interrupted");

  // A re-run with the saved state converges: only the rest is created.
  FakeProvider p2;
  apply::Report again = apply::execute(plan::diff(pool("n", 12), last.resources), last, backend, lookup(p2),
                                       fast_options());
  REQUIRE(again.ok());
  CHECK(p2.calls().size() == 9);
  CHECK(backend.saved().back().resources.size() == 12);
}

TEST_CASE("apply: Now cancels in-flight operations through Provider::stop, they are not journaled", "[apply]") {
  FakeProvider p;
  p.set_latency(5s);
  MemoryBackend backend;
  std::atomic<int> cancel{0};
  std::atomic<int> started{0};
  p.on_call = [&](const std::string&) {
    if (++started == 2) cancel = static_cast<int>(apply::Cancel::Now);
  };
  auto opts = fast_options();
  opts.parallelism = 2;
  opts.cancel = &cancel;
  auto start = std::chrono::steady_clock::now();
  apply::Report r = apply::execute(plan::diff(pool("n", 4), {}), doc_with({}), backend, lookup(p), opts);
  // Returned long before the 5 s calls would have ended, and every worker is joined.
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  CHECK(p.stopped());
  CHECK(r.cancelled);
  CHECK(r.count(OutcomeStatus::Cancelled) == 2);
  CHECK(r.count(OutcomeStatus::NotStarted) == 2);
  for (const auto& o : r.outcomes)
    if (o.status == OutcomeStatus::Cancelled) CHECK(o.error.find("cancelled while in flight") == 0);
  CHECK(backend.saved().empty());
}

TEST_CASE("apply: the drain timeout bounds the wait after Stop, then cancels what is in flight", "[apply]") {
  FakeProvider p;
  p.set_latency(5s);
  MemoryBackend backend;
  std::atomic<int> cancel{0};
  p.on_call = [&](const std::string&) { cancel = static_cast<int>(apply::Cancel::Stop); };
  auto opts = fast_options();
  opts.cancel = &cancel;
  opts.drain_timeout = 100ms;
  auto start = std::chrono::steady_clock::now();
  apply::Report r = apply::execute(plan::diff(pool("n", 1), {}), doc_with({}), backend, lookup(p), opts);
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  CHECK(r.outcomes[0].status == OutcomeStatus::Cancelled);
}

TEST_CASE("apply: an operation that outlives its deadline fails with one message and its dependents are skipped",
          "[apply]") {
  FakeProvider p;
  p.set_latency(5s);
  MemoryBackend backend;
  auto opts = fast_options();
  opts.limits["fake"] = opts.default_limits;
  opts.limits["fake"].deadlines.create = 200ms;
  std::vector<Resource> desired = {res("fake.net", "a"), res("fake.node", "x", 0, {"fake.net.a"})};
  auto start = std::chrono::steady_clock::now();
  apply::Report r = apply::execute(plan::diff(desired, {}), doc_with({}), backend, lookup(p), opts);
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  const auto& o = outcome(r, "fake.net.a");
  CHECK(o.status == OutcomeStatus::Failed);
  CHECK(o.timed_out);
  CHECK(o.attempts == 1);
  CHECK(o.error == "create did not finish within its deadline of 200ms (fake.create_deadline) after 1 attempt; last "
                   "error: create fake.net.a: deadline passed");
  CHECK(outcome(r, "fake.node.x[0]").status == OutcomeStatus::Skipped);
}

TEST_CASE("apply: retries stop when the next backoff would pass the deadline", "[apply]") {
  FakeProvider p;
  MemoryBackend backend;
  Error throttled{Error::Kind::Throttled, "429 Too Many Requests", 300};
  p.fail("fake.node.n[0]", {throttled, throttled, throttled});
  auto opts = fast_options();
  opts.limits["fake"] = opts.default_limits;
  opts.limits["fake"].deadlines.create = 500ms;
  apply::Report r = apply::execute(plan::diff(pool("n", 1), {}), doc_with({}), backend, lookup(p), opts);
  const auto& o = outcome(r, "fake.node.n[0]");
  CHECK(o.status == OutcomeStatus::Failed);
  CHECK(o.timed_out);
  CHECK(o.attempts == 2);  // 0 ms, 300 ms; a third would start at 600 ms
  CHECK(o.error.find("create did not finish within its deadline of 500ms (fake.create_deadline) after 2 attempts; "
                     "last error: 429 Too Many Requests") == 0);
}

TEST_CASE("apply: backoff has full jitter, doubles its ceiling, is capped and honours Retry-After", "[apply]") {
  apply::RetryPolicy pol;
  pol.base = 100ms;
  pol.cap = 1000ms;
  std::mt19937_64 rng(1);
  Error plain{Error::Kind::Retryable, "x", 0};
  for (int attempt = 1; attempt <= 8; ++attempt) {
    const long long ceiling = std::min(1000LL, 100LL << (attempt - 1));
    long long max_seen = 0;
    for (int i = 0; i < 200; ++i) {
      long long d = apply::backoff_delay(pol, attempt, plain, rng).count();
      CHECK(d >= 0);
      CHECK(d <= ceiling);
      max_seen = std::max(max_seen, d);
    }
    CHECK(max_seen > ceiling / 2);  // jitter spreads over the whole range
  }
  Error throttled{Error::Kind::Throttled, "x", 3000};
  for (int i = 0; i < 50; ++i) CHECK(apply::backoff_delay(pol, 1, throttled, rng) == 3000ms);
  // A quota without Retry-After (GCE's 429, EC2's RequestLimitExceeded): about 1 s doubling to
  // about 60 s, in the upper half of each ceiling.
  Error quota{Error::Kind::Throttled, "x", 0};
  for (int attempt = 1; attempt <= 10; ++attempt) {
    const long long ceiling = std::min(60000LL, 1000LL << (attempt - 1));
    for (int i = 0; i < 50; ++i) {
      const long long d = apply::backoff_delay(pol, attempt, quota, rng).count();
      CHECK(d >= ceiling / 2);
      CHECK(d <= ceiling);
    }
  }
}

TEST_CASE("apply: the token bucket hands out tokens at its rate", "[apply]") {
  apply::TokenBucket b(10, 2);  // 10/s, burst 2
  auto t0 = std::chrono::steady_clock::now();
  CHECK(b.take(t0) == 0ms);
  CHECK(b.take(t0) == 0ms);
  CHECK(b.take(t0) == 100ms);
  CHECK(b.take(t0) == 200ms);
  CHECK(b.take(t0 + 1s) == 0ms);  // refilled (capped at the burst)
  apply::TokenBucket unlimited(0, 1);
  for (int i = 0; i < 100; ++i) CHECK(unlimited.take() == 0ms);
}

TEST_CASE("refresh: reports drift per attribute, drops gone resources, keeps unreadable ones", "[apply]") {
  FakeProvider p;
  std::vector<Resource> prior = {res("fake.node", "a", -1, {}, "fake", {{"bios", {{"SriovEnable", "Enabled"}}}}),
                                 res("fake.node", "b"), res("fake.node", "c"),
                                 res("net.vlan", "v", -1, {}, "plinth", {{"id", 100}})};
  p.set_observed("fake.node.a", "bios", {{"SriovEnable", "Disabled"}});
  p.set_gone("fake.node.b");
  p.fail("fake.node.c", {Error::fatal("https://127.0.0.1:1/redfish/v1/: HTTP 401 Unauthorized")});
  logical::LogicalProvider logical;
  apply::ProviderLookup both = [&](const std::string& n) -> Provider* {
    return n == "plinth" ? static_cast<Provider*>(&logical) : n == "fake" ? &p : nullptr;
  };
  apply::RefreshResult r = apply::refresh(prior, both);
  REQUIRE(r.drift.size() == 2);
  CHECK(r.drift[0].address == "fake.node.a");
  REQUIRE(r.drift[0].changes.size() == 1);
  CHECK(r.drift[0].changes[0].path == "bios.SriovEnable");
  CHECK(r.drift[1].address == "fake.node.b");
  CHECK(r.drift[1].gone);
  REQUIRE(r.failures.size() == 1);
  CHECK(r.failures[0].address == "fake.node.c");
  std::vector<std::string> kept;
  for (const auto& x : r.resources) kept.push_back(x.address);
  CHECK(kept == std::vector<std::string>{"fake.node.a", "fake.node.c", "net.vlan.v"});
  CHECK(r.resources[0].attributes["bios"]["SriovEnable"] == "Disabled");
  CHECK(apply::drift_text(r.drift) ==
        "  ~ fake.node.a\n"
        "      bios.SriovEnable: \"Enabled\" -> \"Disabled\"\n"
        "  - fake.node.b: no longer exists (the next apply creates it again)\n");
}

TEST_CASE("refresh: a read that fails with a retryable error is read again, with backoff, in the same refresh",
          "[apply]") {
  FakeProvider p;
  std::vector<Resource> prior = {res("fake.node", "a"), res("fake.node", "b")};
  Error reset{Error::Kind::Retryable, "connection reset", 0};
  p.fail("fake.node.b", {reset, reset});
  apply::ProviderLimits lim;
  lim.retry.base = 5ms;
  lim.retry.cap = 20ms;
  apply::RefreshResult r = apply::refresh(prior, lookup(p), [&](const std::string&) { return lim; });
  CHECK(r.failures.empty());
  CHECK(r.resources.size() == 2);

  FakeProvider q;
  q.fail("fake.node.b", {reset, reset, reset});
  lim.retry.max_attempts = 3;
  apply::RefreshResult r2 = apply::refresh(prior, lookup(q), [&](const std::string&) { return lim; });
  REQUIRE(r2.failures.size() == 1);
  CHECK(r2.failures[0].error.message == "connection reset (gave up after 3 attempts)");
}

namespace {

/// A fake whose type fake.vm replaces create-before-destroy, and the replace
/// of fake.vm.v[0] from size 1 to size 2.
struct CreateBeforeDestroy {
  CreateBeforeDestroy() {
    ResourceType vm{"fake.vm", "fake", "a VM", {{"size", true, false, "", ValueType::Int}}};
    vm.create_before_destroy = true;
    p.mutable_schema().resource_types.push_back(vm);
    change.address = old.address;
    change.type = old.type;
    change.action = plan::Action::Replace;
    change.before = old;
    change.after = want;
  }
  FakeProvider p;
  MemoryBackend backend;
  Resource old = res("fake.vm", "v", 0, {}, "fake", {{"size", 1}});
  Resource want = res("fake.vm", "v", 0, {}, "fake", {{"size", 2}});
  plan::ResourceChange change;
};

}  // namespace

TEST_CASE("apply: a create-before-destroy replace creates first and journals the old object as deposed until it is "
          "removed",
          "[apply]") {
  CreateBeforeDestroy t;
  plan::Plan pl;
  pl.changes = {t.change};
  apply::Report r = apply::execute(pl, doc_with({t.old}), t.backend, lookup(t.p), fast_options());
  REQUIRE(r.ok());
  CHECK(t.p.calls() == std::vector<std::string>{"create fake.vm.v[0]", "remove fake.vm.v[0]"});
  auto saved = t.backend.saved();
  REQUIRE(saved.size() == 2);
  // Between the two: the new object at the address, the old one deposed.
  REQUIRE(saved[0].resources.size() == 1);
  CHECK(saved[0].resources[0].attributes == Json{{"size", 2}});
  REQUIRE(saved[0].deposed.size() == 1);
  CHECK(saved[0].deposed[0].attributes == Json{{"size", 1}});
  CHECK(saved[1].deposed.empty());
  CHECK(saved[1].resources.size() == 1);
}

TEST_CASE("apply: when a create-before-destroy replacement is refused the old object stays", "[apply]") {
  CreateBeforeDestroy t;
  t.p.fail("fake.vm.v[0]", {Error{Error::Kind::Conflict, "no capacity", 0}});
  plan::Plan pl;
  pl.changes = {t.change};
  apply::Report r = apply::execute(pl, doc_with({t.old}), t.backend, lookup(t.p), fast_options());
  CHECK_FALSE(r.ok());
  CHECK(t.p.calls() == std::vector<std::string>{"create fake.vm.v[0]"});
  const auto& o = outcome(r, "fake.vm.v[0]");
  CHECK(o.status == apply::OutcomeStatus::Failed);
  CHECK(o.error == "no capacity (create before destroy: the old object was kept and is still recorded)");
  CHECK(t.backend.saved().empty());  // the state still holds the old object, untouched
}

TEST_CASE("apply: a deposed object left in state is removed and dropped from it", "[apply]") {
  CreateBeforeDestroy t;
  state::StateDocument doc = doc_with({t.want}, 3);
  doc.deposed = {t.old};
  plan::ResourceChange c;
  c.address = t.old.address + " (deposed)";
  c.type = t.old.type;
  c.action = plan::Action::Delete;
  c.before = t.old;
  c.deposed = true;
  plan::Plan pl;
  pl.changes = {c};
  apply::Report r = apply::execute(pl, doc, t.backend, lookup(t.p), fast_options());
  REQUIRE(r.ok());
  CHECK(t.p.calls() == std::vector<std::string>{"remove fake.vm.v[0]"});
  auto saved = t.backend.saved();
  REQUIRE(saved.size() == 1);
  CHECK(saved[0].deposed.empty());
  CHECK(saved[0].resources == std::vector<Resource>{t.want});
}

TEST_CASE("apply: operations that complete during a save are written together, each only reported once saved",
          "[apply][journal]") {
  // A slow store (10 ms a save) and 40 creates at once: group commit writes
  // far fewer than 40 saves, and no operation is reported finished before a
  // save holding it is written.
  class SlowBackend : public MemoryBackend {
   public:
    Status save(const state::StateDocument& doc) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      return MemoryBackend::save(doc);
    }
  } backend;
  FakeProvider p;
  std::vector<Resource> desired;
  for (int i = 0; i < 40; ++i) desired.push_back(res("fake.node", "n", i, {}, "fake", {{"size", 1}}));
  backend.save(doc_with({}, 1)).ok();
  apply::Options o = fast_options();
  o.parallelism = 40;
  std::mutex mu;
  std::vector<std::string> unsaved;
  o.on_event = [&](const apply::Event& e) {
    if (e.kind != apply::Event::Kind::Finished || !e.ok) return;
    const auto saved = backend.saved();
    if (!saved.back().find(e.address)) {
      std::lock_guard<std::mutex> l(mu);
      unsaved.push_back(e.address);
    }
  };
  apply::Report r = apply::execute(plan::diff(desired, {}), doc_with({}, 1), backend, lookup(p), o);
  REQUIRE(r.ok());
  CHECK(r.count(apply::OutcomeStatus::Succeeded) == 40);
  CHECK(unsaved.empty());
  INFO("saves: " << r.saves);
  CHECK(r.saves < 40);
  CHECK(r.saves >= 1);
  const auto saved = backend.saved();
  CHECK(saved.back().resources.size() == 40);
  CHECK(r.final_serial == 1 + r.saves);
  for (size_t i = 1; i < saved.size(); ++i) CHECK(saved[i].serial == saved[i - 1].serial + 1);
}

TEST_CASE("apply: prepare adds what the provider needs beyond the plan, and none of it is recorded", "[apply]") {
  struct Recording : FakeProvider {
    std::mutex mu;
    std::map<std::string, Json> seen;  // address -> computed as create/update received it
    Result<Resource> create(const Resource& desired, Call& c) override {
      {
        std::lock_guard<std::mutex> l(mu);
        seen[desired.address] = desired.computed;
      }
      return FakeProvider::create(desired, c);
    }
  };
  Recording p;
  MemoryBackend backend;
  plan::Plan create_plan = plan::diff(pool("n", 2), {});
  apply::Options o = fast_options();
  std::atomic<int> prepared{0};
  o.prepare = [&](const Resource& r) -> Result<Resource> {
    ++prepared;
    if (r.index == 1) return Error::invalid(r.address + ": the blueprint renders differently; plan again");
    Resource out = r;
    out.computed["user_data"] = "#cloud-config\n";
    return out;
  };
  apply::Report r = apply::execute(create_plan, doc_with({}), backend, lookup(p), o);
  CHECK(prepared == 2);
  CHECK(p.seen["fake.node.n[0]"]["user_data"] == "#cloud-config\n");
  CHECK_FALSE(p.seen.count("fake.node.n[1]"));  // prepare failed: the provider was never called
  CHECK(outcome(r, "fake.node.n[1]").status == OutcomeStatus::Failed);
  CHECK(outcome(r, "fake.node.n[1]").error == "fake.node.n[1]: the blueprint renders differently; plan again");
  const auto saved = backend.saved().back();
  REQUIRE(saved.resources.size() == 1);
  CHECK(saved.resources[0].computed == Json{{"id", "fake-fake.node.n[0]"}});
}

TEST_CASE("apply: on a local state each save appends what changed and what the apply started from but the state "
          "did not hold (a refresh's drift) is saved with the first operation",
          "[apply][state]") {
  test::TempDir dir;
  const std::string path = dir.path() + "/s.json";
  auto backend = state::open_local(path);
  // Stored: a, b and gone. The refresh found `gone` deleted outside Plinth
  // and b changed: the apply starts from that, unsaved.
  Resource a = res("fake.node", "a"), b = res("fake.node", "b"), gone = res("fake.node", "gone");
  REQUIRE(backend->save(doc_with({a, b, gone}, 1)).ok());
  Resource b_now = b;
  b_now.computed["observed"] = "drifted";
  REQUIRE(backend->lock("plinth apply", 0ms).ok());
  auto started = backend->load();
  REQUIRE(started.ok());
  REQUIRE(backend->stores_changes());
  state::StateDocument from = **started;
  from.resources = {a, b_now};

  FakeProvider p;
  std::vector<Resource> desired = {a, b_now};
  for (auto& r : pool("n", 8)) desired.push_back(r);
  plan::Plan plan = plan::diff(desired, from.resources);
  auto opts = fast_options();
  opts.parallelism = 1;  // one save per operation
  apply::Report r = apply::execute(plan, from, *backend, lookup(p), opts);
  REQUIRE(r.ok());
  CHECK(r.saves == 8);
  CHECK(r.state_bytes_written > 0);
  backend->unlock();

  CHECK_FALSE(std::filesystem::exists(path + ".d/changes.log"));  // folded at the end
  auto doc = state::parse(test::slurp(path), path);
  REQUIRE(doc.ok());
  CHECK(doc->serial == 9);
  CHECK(doc->resources.size() == 10);
  CHECK(doc->find("fake.node.gone") == nullptr);
  REQUIRE(doc->find("fake.node.b") != nullptr);
  CHECK(doc->find("fake.node.b")->computed["observed"] == "drifted");
  CHECK(doc->find("fake.node.n[7]") != nullptr);
}
