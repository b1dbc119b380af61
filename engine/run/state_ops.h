#pragma once
// The state subcommands as operations (plinth state rm|mv|restore|migrate|
// rekey|push-journal; docs/state.md): each locks the state it changes, checks
// what it is asked, and saves a new serial, or changes nothing and says why.
// They print nothing: the CLI renders what they return.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/run/options.h"
#include "engine/state/encryption.h"
#include "engine/state/state.h"

namespace plinth::run {

/// The state's addresses `pattern` names: the address itself, or every index
/// of a counted resource written without one ("baremetal.node.a").
std::vector<std::string> matching(const state::StateDocument& doc, const std::string& pattern);

/// "no resource 'A' in state PATH", with the closest address or a pointer
/// to `plinth state list`.
std::string not_in_state(const state::StateDocument& doc, const std::string& path, const std::string& address);

/// state rm: forgets the resources `patterns` name (they keep running).
/// The lines to show; an error naming the first pattern that matches nothing
/// (then nothing is removed).
Result<std::vector<std::string>> remove_resources(state::StateDocument& doc, const std::string& path,
                                                  const std::vector<std::string>& patterns);

/// state mv: the resources `src` names under address `dst` (a renamed pool
/// keeps its servers); dependencies follow. Refused: another type, an
/// address the state already has, an index for a whole pool.
Result<std::vector<std::string>> move_resources(state::StateDocument& doc, const std::string& path,
                                                const std::string& src, const std::string& dst);

/// What an edit of the state did.
struct StateEdit {
  std::vector<std::string> lines;  ///< what changed, one line per resource
  uint64_t from_serial = 0;        ///< the serial edited
  uint64_t to_serial = 0;          ///< the serial saved; 0 on a dry run
};

/// Locks `backend` for "plinth state WHAT" (waiting `lock_timeout`), loads
/// the state (it must exist), lets `change` edit it and saves it as the next
/// serial unless `dry_run`. An error from `change` writes nothing.
Result<StateEdit> edit_state(state::Backend& backend, const std::string& path, const std::string& what,
                             std::chrono::milliseconds lock_timeout, bool dry_run,
                             const std::function<Result<std::vector<std::string>>(state::StateDocument&)>& change);

/// state restore SERIAL: the kept version as the next serial (under the lock).
Result<std::string> restore_state(state::Backend& backend, uint64_t serial, std::chrono::milliseconds lock_timeout);

/// What state migrate copied.
struct Migrated {
  std::string lineage;
  uint64_t serial = 0;
  size_t versions = 0;  ///< kept versions copied
  size_t skipped = 0;   ///< damaged (or foreign) kept versions left behind
};

/// state migrate: copies the state at `from`, its lineage, serial and kept
/// versions as stored (encrypted values stay encrypted; no key needed) to
/// `to`, both locked. `from_shown` names it in errors.
Result<Migrated> migrate_state(const std::string& from, const std::string& from_shown, const std::string& to,
                               std::chrono::milliseconds lock_timeout);

/// What state rekey did.
struct Rekeyed {
  uint64_t serial = 0;            ///< saved under the new key
  size_t rewritten = 0;           ///< kept versions sealed again with it
  std::vector<std::string> left;  ///< kept versions the old key still opens, each with why
};

/// state rekey: loads the state at `location` with its current key
/// (`current`), saves it under `new_key` and re-seals every kept version, so
/// the old key opens nothing. Also how a clear state gets encrypted.
Result<Rekeyed> rekey_state(const StateOptions& current, const std::string& location, const std::string& path,
                            const state::StateKey& new_key, std::chrono::milliseconds lock_timeout);

/// state push-journal: writes the local journal at `journal` (an apply kept
/// it when the state could not be written; encrypted as the state is, with
/// `key`) into `backend`, under its lock. The line to show.
Result<std::string> push_journal(const StateOptions& key, state::Backend& backend, const std::string& location,
                                 const std::string& journal, std::chrono::milliseconds lock_timeout);

}  // namespace plinth::run
