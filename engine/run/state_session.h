#pragma once
// The state an operation works on: its backend (with encryption), locked for
// the operation, and what it held.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/run/options.h"
#include "engine/state/encryption.h"
#include "engine/state/state.h"

namespace plinth::run {

/// A state backend locked for one operation, and what it held.
struct StateSession {
  std::string location;  ///< as given (--state, PLINTH_STATE, the default); may hold a password
  std::string path;      ///< location as shown (redacted)
  std::unique_ptr<state::Backend> backend;
  std::optional<state::LockGuard> lock;  ///< declared after backend: unlocks first
  state::StateDocument doc;              ///< empty (serial 0, no lineage) when there is no state yet
  bool existed = false;
  /// What opening did that the user should hear of (a local journal written
  /// into the state); "" when nothing.
  std::string notice;
};

/// The encryption of the state at `location` (docs/state.md, "Encryption"):
/// the key from `options.key_file`, else $PLINTH_STATE_KEY, else
/// $PLINTH_STATE_KEY_FILE; PLINTH_STATE_ENCRYPTION; the sensitive attributes
/// of the registered resource types. `document_needs_key`:
/// PLINTH_STATE_ENCRYPTION=document without a key is an error (state rekey
/// brings its own new key). Errors name the key's origin.
Result<state::EncryptionSettings> state_encryption(const StateOptions& options, const std::string& location,
                                                   bool document_needs_key = true);

/// The backend for `location` with state_encryption.
Result<std::unique_ptr<state::Backend>> open_state_backend(const StateOptions& options, const std::string& location);

/// Opens the state (options.location, else beside the first of `paths`),
/// takes its lock for `operation` ("plinth plan") waiting lock_timeout, and
/// loads it; an apply or destroy first writes a local journal an earlier
/// apply left into it. `untrusted`: nothing is written, not even the lock.
/// Errors name the state.
Result<StateSession> open_state(const StateOptions& options, const std::vector<std::string>& paths,
                                const std::string& operation, bool untrusted = false);

}  // namespace plinth::run
