#pragma once
// Encrypted state (docs/state.md, "Encryption"): sensitive attribute values,
// or the whole list of resources, sealed with AES-256-GCM (OpenSSL EVP)
// under a 256-bit key from PLINTH_STATE_KEY or a key file. A backend wrapped
// by with_encryption() encrypts on save and decrypts on load; the stored
// document keeps its lineage, serial and checksum in clear, so integrity
// checks, history, restore and migration work without the key.
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "engine/state/state.h"

namespace plinth::state {

/// A 256-bit state key and where it came from.
struct StateKey {
  std::array<unsigned char, 32> bytes{};
  /// 16 hex digits naming the key (from SHA-256 of it; the key cannot be
  /// recovered from it). Stored beside every encrypted value so a wrong key is
  /// named as such instead of failing as damage.
  std::string id;
  std::string origin;  ///< "PLINTH_STATE_KEY", "key file /etc/plinth/key"
};

/// Reads a key written as 64 hex digits or as base64 of 32 bytes (what
/// `openssl rand -hex 32` / `openssl rand -base64 32` print); surrounding
/// white space is ignored. The error names `origin` but never the text.
Result<StateKey> parse_state_key(const std::string& text, const std::string& origin);

/// Reads a key file (parse_state_key's formats). Refuses a file that others
/// can read (mode & 077), naming it and saying to chmod 600.
Result<StateKey> read_state_key_file(const std::string& path);

/// The key a command uses: the key file `flag` (--state-key-file) when
/// given, else $PLINTH_STATE_KEY, else the file $PLINTH_STATE_KEY_FILE;
/// nullopt when none is set.
Result<std::optional<StateKey>> state_key_from(const std::optional<std::string>& flag);

/// How a wrapped backend encrypts.
struct EncryptionSettings {
  /// Encrypts what is saved; nullopt: values are saved in clear (a state
  /// that holds encrypted values then cannot be loaded: the error says so).
  std::optional<StateKey> key;
  /// Further keys accepted when loading (`plinth state rekey`: the old key).
  std::vector<StateKey> old_keys;
  /// Seal every resource (addresses included), not only sensitive values.
  /// A state that is sealed stays sealed when saved with a key.
  bool whole_document = false;
  /// The dotted attribute paths of `r` its resource type marks sensitive
  /// (applied to `attributes` and `computed`).
  std::function<std::vector<std::string>(const Resource& r)> sensitive_paths;
  /// The state as errors name it (redact_location of --state); "" = the backend's describe().
  std::string shown;
  /// With a key, a sensitive value stored in clear (or, with whole_document,
  /// resources not sealed) is refused on load: it was not written by plinth
  /// with this key, so it may have been planted to downgrade the state. Only
  /// `plinth state rekey`, which encrypts a state that was in clear, sets this.
  bool allow_cleartext = false;
};

/// `inner` with encryption: save() encrypts the sensitive values (or seals
/// the resources) of a copy and writes format_version 2 when anything is
/// encrypted; load() decrypts. A state holding encrypted values and no key
/// given, or a wrong key, is an error naming the state and the key id; it
/// never loads as empty. With a key, a state whose sensitive values are in
/// clear is refused (no downgrade; see allow_cleartext).
std::unique_ptr<Backend> with_encryption(std::unique_ptr<Backend> inner, EncryptionSettings settings);

/// Encrypts `doc` as save() would (exposed for tests and `state rekey`).
Result<StateDocument> encrypt_document(const StateDocument& doc, const EncryptionSettings& settings);
/// Decrypts `doc` as load() would; `source` names the state in errors.
Result<StateDocument> decrypt_document(StateDocument doc, const EncryptionSettings& settings,
                                       const std::string& source);
/// True when `doc` holds an encrypted value or is sealed.
bool is_encrypted(const StateDocument& doc);

}  // namespace plinth::state
