#pragma once
// Steps shared by plan, apply, refresh and destroy:
//   load -> expand -> state (locked) -> refresh (providers) -> diff
// Each step prints its own errors; callers add policy, output and execution.
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "engine/apply/refresh.h"
#include "engine/cli/common.h"
#include "engine/cli/providers.h"
#include "engine/graph/expand.h"
#include "engine/plan/plan.h"
#include "engine/state/encryption.h"
#include "engine/state/state.h"

namespace plinth::cli {

/// A state backend locked for one command, and what it held.
struct StateSession {
  std::string location;  ///< as given (--state, PLINTH_STATE, the default); may hold a password
  std::string path;      ///< location as shown (redacted)
  std::unique_ptr<state::Backend> backend;
  std::optional<state::LockGuard> lock;  ///< declared after backend: unlocks first
  state::StateDocument doc;              ///< empty (serial 0, no lineage) when there is no state yet
  bool existed = false;
  /// What opening did that the user should hear of (a local journal written
  /// into the state); "" when nothing. Printed to stderr by the command.
  std::string notice;
};

/// The state backend for `location` (--state, PLINTH_STATE) with encryption
/// (docs/state.md, "Encryption"): the key from --state-key-file, else
/// $PLINTH_STATE_KEY, else $PLINTH_STATE_KEY_FILE; values that resource types
/// mark sensitive are encrypted when a key is given, and the whole document
/// with PLINTH_STATE_ENCRYPTION=document. Errors name the key's origin.
Result<std::unique_ptr<state::Backend>> open_state_backend(const Args& args, const std::string& location);

/// The encryption open_state_backend uses for `location`: the key (as above),
/// PLINTH_STATE_ENCRYPTION and the sensitive attributes of the registered
/// resource types. `document_needs_key`: PLINTH_STATE_ENCRYPTION=document
/// without a key is an error (state rekey brings its own new key).
Result<state::EncryptionSettings> state_encryption(const Args& args, const std::string& location,
                                                   bool document_needs_key = true);

/// --state-key-file FILE, for commands that read or write the state.
FlagSpec state_key_flag();

/// Opens the state for PATH... (--state, $PLINTH_STATE, else beside the first
/// blueprint), takes its lock for `operation` waiting --lock-timeout (default
/// 0s) and loads it. Errors name the file.
Result<StateSession> open_state(const Args& args, const std::string& operation);

/// The refresh step: reads every resource of `session.doc` through its
/// provider (opened in `providers`) and replaces them with what was observed.
/// Prints provider diagnostics; prints drift to `drift_out` (null: not at
/// all) under a heading. Read failures and provider diagnostics of error
/// severity are errors, printed to io.err naming each address; returns
/// nullopt then (the state is left as it was).
/// Diagnostics of addresses in `rechecked` are left out (plan checks those
/// against the blueprint instead: check_inventory).
/// With `desired` (the blueprint's resources) the providers also look for
/// objects of this state it does not record; they are adopted into the
/// state and listed ("Adopted: ...") on io.err.
std::optional<apply::RefreshResult> refresh_state(StateSession& session, ProviderSet& providers, Io& io,
                                                  const std::string& command, FILE* drift_out,
                                                  const std::set<std::string>& rechecked = {},
                                                  const std::vector<Resource>& desired = {});

/// Reads `desired` (resources of types whose schema sets `inventory`)
/// through their providers and prints what they find: the real objects
/// checked against the blueprint, before anything changes. False when a
/// check found an error (a server whose GPUs differ from its pool's); a
/// resource that cannot be read is a warning (apply will fail it).
bool check_inventory(const std::vector<Resource>& desired, ProviderSet& providers, Io& io,
                     const std::string& command);

/// Everything a plan needs, and the plan.
struct Planned {
  Loaded loaded;
  std::shared_ptr<const graph::ResourceGraph> desired;  ///< never null; shared with the plan's `after`s
  StateSession state;
  plan::Plan plan;
  std::vector<apply::Drift> drift;
  /// Desired resources of inventory types the plan creates, changes or
  /// keeps: check_inventory() reads them after the policy gate.
  std::vector<Resource> inventory;
  /// The refresh adopted objects the state did not record (saved even when
  /// the plan has no changes).
  bool adopted = false;
};

/// For a command about to exit: moves the plan, the desired graph, the state
/// document and the blueprint out of `planned` into storage that is never
/// freed, so that destroying `planned` only releases the state lock and the
/// backend. The process's exit returns the memory at once; freeing the tens
/// of millions of allocations of a 100,000-node plan one by one took a third
/// of the plan's time (docs/benchmarks.md). The storage stays reachable, so
/// leak checkers do not report it.
void release_at_exit(Planned& planned);

/// load -> expand -> state -> refresh (unless --refresh=false; nothing to do
/// without state) -> diff. With `destroy`, the desired set is empty so every
/// resource in state is planned for deletion. Prints what went wrong and
/// returns nullopt on any failure. Drift goes to io.err. `on_invalid` is
/// called with the diagnostics of an invalid blueprint (plan --report).
std::optional<Planned> build_plan(const Args& args, Io& io, const std::string& command, ProviderSet& providers,
                                  bool destroy = false,
                                  const std::function<void(const Checked&)>& on_invalid = nullptr);

/// Providers named by the resources of `desired` and `state`.
std::set<std::string> providers_of(const std::vector<Resource>& desired, const std::vector<Resource>& state);

}  // namespace plinth::cli
