#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/provider/resource.h"

namespace plinth::state {

/// The state document: what Plinth last saw of every managed resource.
/// `lineage` is fixed at creation; `serial` grows with every write.
struct StateDocument {
  int format_version = 1;
  std::string lineage;
  uint64_t serial = 0;
  std::string plinth_version;
  std::vector<Resource> resources;  ///< sorted by address

  const Resource* find(const std::string& address) const;
  bool operator==(const StateDocument&) const = default;
};

}  // namespace plinth::state

#include <chrono>
#include <memory>
#include <optional>

namespace plinth::state {

/// A fresh, empty document with a new random lineage (UUID v4).
StateDocument new_document();

/// The JSON text of a state document (docs/state.md documents the format).
std::string to_json_text(const StateDocument& doc);

/// Parses a state document. A corrupt or truncated file is an error that
/// names `source` and says not to overwrite it; it is never "repaired".
Result<StateDocument> parse(const std::string& text, const std::string& source);

/// Where state lives. A backend is locked for the whole of a plan or apply.
class Backend {
 public:
  virtual ~Backend() = default;
  /// "local file plinth.state.json" — used in messages.
  virtual std::string describe() const = 0;
  /// Takes the exclusive lock, waiting up to `timeout`. When another process
  /// holds it the error says who: "locked by PID 1234 on host-a since
  /// 2026-12-02T13:04:05Z (plinth apply)".
  virtual Status lock(const std::string& operation, std::chrono::milliseconds timeout) = 0;
  virtual void unlock() = 0;
  /// The stored document, or nullopt when there is no state yet.
  virtual Result<std::optional<StateDocument>> load() = 0;
  /// Stores `doc` atomically; on failure the stored state is unchanged.
  virtual Status save(const StateDocument& doc) = 0;
};

/// The local-file backend: PATH, with PATH.lock beside it.
std::unique_ptr<Backend> open_local(const std::string& path);

}  // namespace plinth::state
