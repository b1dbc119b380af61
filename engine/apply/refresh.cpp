#include "engine/apply/refresh.h"

#include <map>

#include "engine/core/strings.h"

namespace plinth::apply {

RefreshResult refresh(const std::vector<Resource>& prior, const ProviderLookup& providers) {
  RefreshResult out;
  std::map<std::string, std::vector<size_t>> by_provider;
  for (size_t i = 0; i < prior.size(); ++i)
    if (prior[i].provider != "plinth") by_provider[prior[i].provider].push_back(i);

  std::vector<std::optional<Resource>> observed(prior.begin(), prior.end());
  for (const auto& [name, idx] : by_provider) {
    Provider* p = providers ? providers(name) : nullptr;
    if (!p) {
      for (size_t i : idx)
        out.failures.push_back({prior[i].address, Error::fatal("no provider '" + name + "' in this build to read " +
                                                               prior[i].address + " with")});
      continue;
    }
    std::vector<Resource> batch;
    for (size_t i : idx) batch.push_back(prior[i]);
    std::vector<ReadResult> results = p->read(batch);
    for (size_t k = 0; k < idx.size(); ++k) {
      const size_t i = idx[k];
      if (k >= results.size()) {
        out.failures.push_back({prior[i].address, Error::fatal("provider '" + name + "' returned no result for " +
                                                               prior[i].address)});
        continue;
      }
      ReadResult& r = results[k];
      out.diagnostics.insert(out.diagnostics.end(), r.diagnostics.begin(), r.diagnostics.end());
      if (r.error) {
        out.failures.push_back({prior[i].address, *r.error});
        continue;
      }
      if (!r.current) {
        observed[i].reset();
        out.drift.push_back({prior[i].address, true, {}});
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
  auto by_address = [](const auto& a, const auto& b) { return a.address < b.address; };
  std::stable_sort(out.drift.begin(), out.drift.end(), by_address);
  std::stable_sort(out.failures.begin(), out.failures.end(), by_address);
  return out;
}

namespace {
std::string value_text(const std::optional<Json>& v, bool sensitive) {
  if (!v) return "(absent)";
  if (sensitive) return "(sensitive)";
  return v->dump();
}
}  // namespace

std::string drift_text(const std::vector<Drift>& drift) {
  std::string out;
  for (const auto& d : drift) {
    if (d.gone) {
      out += "  - " + d.address + ": no longer exists (the next apply creates it again)\n";
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
