#include "engine/apply/refresh.h"

#include "engine/core/log.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "engine/core/duration.h"

#include "engine/core/strings.h"

namespace plinth::apply {

namespace {

/// One provider's part of a refresh: its read results, by index into prior.
struct ProviderReads {
  std::vector<std::pair<size_t, ReadResult>> results;
};

ProviderReads read_provider(const std::string& name, const std::vector<size_t>& idx,
                            const std::vector<Resource>& prior, Provider* p, const ProviderLimits& limits) {
  ProviderReads out;
  if (!p) {
    for (size_t i : idx) {
      ReadResult r;
      r.address = prior[i].address;
      r.error = Error::fatal("no provider '" + name + "' in this run to read " + prior[i].address +
                             " with; make it available (plinth providers) or remove the resource from state");
      out.results.emplace_back(i, std::move(r));
    }
    return out;
  }
  // Each resource's read gets its own Call (its budget, the provider's retry
  // policy) from the provider; resources the provider returns a retryable
  // error for are read again in a later batch, within what is left.
  const Deadline deadline = Deadline::after(limits.deadlines.read);
  std::mt19937_64 rng{std::random_device{}()};
  std::vector<size_t> pending = idx;
  for (int attempt = 1; !pending.empty(); ++attempt) {
    std::vector<Resource> batch;
    batch.reserve(pending.size());
    for (size_t i : pending) batch.push_back(prior[i]);
    Call call(Deadline::after(deadline.remaining()), limits.retry);
    const auto started = std::chrono::steady_clock::now();
    std::vector<ReadResult> results = p->read(batch, call);
    if (log::enabled(log::Level::Debug))
      log::write(log::Level::Debug, "refresh",
                 "provider " + name + ": read " + std::to_string(batch.size()) + " resource(s) in " +
                     std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::steady_clock::now() - started)
                                        .count()) +
                     " ms (pass " + std::to_string(attempt) + ")");
    std::vector<size_t> again;
    std::chrono::milliseconds wait{0};
    for (size_t k = 0; k < pending.size(); ++k) {
      const size_t i = pending[k];
      ReadResult r;
      if (k < results.size()) {
        r = std::move(results[k]);
      } else {
        r.address = prior[i].address;
        r.error = Error::fatal("provider '" + name + "' returned no result for " + prior[i].address);
      }
      if (r.error && r.error->retryable() && attempt < limits.retry.max_attempts) {
        auto w = backoff_delay(limits.retry, attempt, *r.error, rng);
        if (w < deadline.remaining()) {
          wait = std::max(wait, w);
          again.push_back(i);
          continue;
        }
      }
      if (r.error && r.error->retryable() && attempt > 1)
        r.error->message += " (gave up after " + std::to_string(attempt) + " attempts)";
      if (r.error && (r.error->kind == Error::Kind::DeadlineExceeded || deadline.passed()))
        r.error->message = "read did not finish within its deadline of " + format_duration(limits.deadlines.read) +
                           " (" + name + ".read_deadline): " + r.error->message;
      out.results.emplace_back(i, std::move(r));
    }
    pending = std::move(again);
    if (!pending.empty()) std::this_thread::sleep_for(wait);
  }
  return out;
}

}  // namespace

RefreshResult refresh(const std::vector<Resource>& prior, const ProviderLookup& providers, const LimitsLookup& limits,
                      const Discovery& discovery) {
  RefreshResult out;
  std::map<std::string, std::vector<size_t>> by_provider;
  for (size_t i = 0; i < prior.size(); ++i) by_provider[prior[i].provider].push_back(i);

  // Providers are read in parallel; each provider parallelises its own batch.
  std::vector<ProviderReads> reads(by_provider.size());
  std::vector<std::thread> threads;
  size_t slot = 0;
  for (const auto& [name, idx] : by_provider) {
    Provider* p = providers ? providers(name) : nullptr;
    ProviderLimits lim = limits ? limits(name) : ProviderLimits{};
    threads.emplace_back([&, slot, p, lim, name = name, idx = idx] {
      reads[slot] = read_provider(name, idx, prior, p, lim);
    });
    ++slot;
  }
  for (auto& t : threads) t.join();

  std::vector<std::optional<Resource>> observed(prior.begin(), prior.end());
  for (auto& pr : reads) {
    for (auto& [i, r] : pr.results) {
      out.diagnostics.insert(out.diagnostics.end(), r.diagnostics.begin(), r.diagnostics.end());
      if (r.error) {
        out.failures.push_back({prior[i].address, *r.error});
        continue;
      }
      if (!r.current) {
        observed[i].reset();
        out.drift.push_back({prior[i].address, true, {}, r.gone_reason});
        continue;
      }
      Resource cur = std::move(*r.current);
      cur.depends_on = prior[i].depends_on;
      // Drift is attribute-level: what the planner would see change.
      plan::Plan d = plan::diff({cur}, {prior[i]});
      if (!d.changes.empty() && d.changes.front().action != plan::Action::NoOp)
        out.drift.push_back({prior[i].address, false, d.changes.front().changes});
      observed[i] = std::move(cur);
    }
  }
  for (auto& r : observed)
    if (r) out.resources.push_back(std::move(*r));
  std::set<std::string> known;
  for (const auto& r : prior) known.insert(r.address);
  for (const auto& name : discovery.providers) {
    Provider* p = providers ? providers(name) : nullptr;
    if (!p) continue;
    const ProviderLimits lim = limits ? limits(name) : ProviderLimits{};
    std::vector<Resource> mine, wanted;
    for (const auto& r : out.resources)
      if (r.provider == name) mine.push_back(r);
    for (const auto& r : discovery.deposed)
      if (r.provider == name) mine.push_back(r);
    for (const auto& r : discovery.desired)
      if (r.provider == name) wanted.push_back(r);
    Call call(Deadline::after(lim.deadlines.read), lim.retry);
    auto found = p->discover(mine, wanted, call);
    if (!found) {
      out.failures.push_back({"provider " + name, found.error()});
      continue;
    }
    for (auto& r : *found) {
      if (known.insert(r.address).second) {
        out.adopted.push_back(std::move(r));
        continue;
      }
      // The state holds this address with another object: the found one is
      // deposed, unless it is what the blueprint wants and the recorded one
      // is not (then it takes the address and the recorded one is deposed).
      auto cur = std::find_if(out.resources.begin(), out.resources.end(),
                              [&](const Resource& x) { return x.address == r.address; });
      auto want = std::find_if(discovery.desired.begin(), discovery.desired.end(),
                               [&](const Resource& x) { return x.address == r.address; });
      if (cur != out.resources.end() && want != discovery.desired.end() && r.attributes == want->attributes &&
          cur->attributes != want->attributes) {
        r.depends_on = cur->depends_on;
        std::swap(*cur, r);
      }
      out.deposed.push_back(std::move(r));
    }
  }
  auto by_res = [](const Resource& a, const Resource& b) { return a.address < b.address; };
  std::sort(out.adopted.begin(), out.adopted.end(), by_res);
  std::stable_sort(out.deposed.begin(), out.deposed.end(), by_res);
  if (!out.adopted.empty()) {
    out.resources.insert(out.resources.end(), out.adopted.begin(), out.adopted.end());
    std::stable_sort(out.resources.begin(), out.resources.end(), by_res);
  }
  auto by_address = [](const auto& a, const auto& b) { return a.address < b.address; };
  std::stable_sort(out.drift.begin(), out.drift.end(), by_address);
  std::stable_sort(out.failures.begin(), out.failures.end(), by_address);
  return out;
}

namespace {
std::string value_text(const Shared<Json>& v, bool sensitive) {
  if (!v) return "(absent)";
  if (sensitive) return "(sensitive)";
  return v->dump();
}
}  // namespace

std::string drift_text(const std::vector<Drift>& drift) {
  std::string out;
  for (const auto& d : drift) {
    if (d.gone) {
      out += "  - " + d.address + ": " + (d.reason.empty() ? "no longer exists" : safe_text(d.reason)) +
             " (the next apply creates it again)\n";
      continue;
    }
    out += "  ~ " + d.address + "\n";
    for (const auto& c : d.changes)
      out += "      " + safe_text(c.path) + ": " + value_text(c.before, c.sensitive) + " -> " +
             value_text(c.after, c.sensitive) +
             "\n";
  }
  return out;
}

}  // namespace plinth::apply
