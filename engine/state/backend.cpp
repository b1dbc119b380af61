// Chooses the state backend from a --state/PLINTH_STATE location.
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
