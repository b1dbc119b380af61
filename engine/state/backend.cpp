// Chooses the state backend from a --state/PLINTH_STATE location.
#include <algorithm>
#include <map>
#include <span>

#include "engine/state/state.h"

namespace plinth::state {

Result<StateDocument> Backend::saved_version(uint64_t serial) {
  return Error{Error::Kind::NotFound,
               describe() + " cannot read saved version " + std::to_string(serial) + " (not supported by this backend)",
               0};
}

Status Backend::adopt(const std::vector<std::pair<HistoryEntry, StateDocument>>&, const StateDocument&) {
  return Error::invalid(describe() + " cannot take in another state (not supported by this backend)");
}

Status Backend::rewrite_version(const StateDocument& doc) {
  return Error::invalid(describe() + " cannot rewrite saved version " + std::to_string(doc.serial) +
                        " (not supported by this backend)");
}

Status Backend::save_changes(const StateChanges&) {
  return Error::invalid(describe() + " stores whole documents, not changes (not supported by this backend)");
}

void apply_changes(StateDocument& doc, std::span<StateChanges> all) {
  if (all.empty()) return;
  doc.serial = all.back().serial;
  bool resources = false, deposed = false;
  for (const auto& c : all) {
    resources = resources || !c.put.empty() || !c.removed.empty();
    deposed = deposed || !c.deposed_added.empty() || !c.deposed_dropped.empty();
  }
  if (resources) {  // one pass over the document, whatever the number of changes
    std::map<std::string, Resource> by_address;
    for (auto& r : doc.resources) by_address.emplace(r.address, std::move(r));
    for (auto& c : all) {
      for (auto& r : c.put) {
        std::string address = r.address;
        by_address.insert_or_assign(std::move(address), std::move(r));
      }
      for (const auto& a : c.removed) by_address.erase(a);
    }
    doc.resources.clear();
    doc.resources.reserve(by_address.size());
    for (auto& [_, r] : by_address) doc.resources.push_back(std::move(r));
  }
  if (!deposed) return;
  for (auto& c : all) {
    for (const auto& gone : c.deposed_dropped) {
      auto it = std::find_if(doc.deposed.begin(), doc.deposed.end(), [&](const Resource& r) {
        return r.address == gone.address && r.computed == gone.computed;
      });
      if (it != doc.deposed.end()) doc.deposed.erase(it);
    }
    for (auto& r : c.deposed_added) doc.deposed.push_back(std::move(r));
  }
  std::stable_sort(doc.deposed.begin(), doc.deposed.end(), [](const Resource& a, const Resource& b) {
      return a.address != b.address ? a.address < b.address : a.computed.dump() < b.computed.dump();
    });
}

void apply_changes(StateDocument& doc, StateChanges change) { apply_changes(doc, std::span<StateChanges>(&change, 1)); }

bool is_postgres_location(const std::string& location) {
  return location.starts_with("postgres://") || location.starts_with("postgresql://");
}

std::unique_ptr<Backend> open_backend(const std::string& location) {
  if (is_postgres_location(location)) return open_postgres(location);
  return open_local(location);
}

std::string redact_location(const std::string& location) {
  if (!is_postgres_location(location)) return location;
  std::string out = location;
  // user:PASSWORD@ in the authority part.
  size_t auth = out.find("://") + 3;
  size_t auth_end = out.find_first_of("/?", auth);
  if (auth_end == std::string::npos) auth_end = out.size();
  size_t at = out.rfind('@', auth_end);
  if (at != std::string::npos && at >= auth) {
    size_t colon = out.find(':', auth);
    if (colon != std::string::npos && colon < at) {
      out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // password=... in the query.
  size_t q = out.find('?');
  while (q != std::string::npos) {
    size_t start = q + 1;
    if (out.compare(start, 9, "password=") == 0) {
      size_t end = out.find('&', start);
      if (end == std::string::npos) end = out.size();
      out.replace(start + 9, end - start - 9, "***");
    }
    q = out.find('&', start);
  }
  return out;
}

}  // namespace plinth::state
