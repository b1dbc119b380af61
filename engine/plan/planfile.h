#pragma once
// Plan files: `plinth plan -out FILE` saves a plan bound to what it was made
// from; `plinth apply FILE` re-checks every binding before executing it, and
// optionally the file's Ed25519 / HMAC-SHA256 signature. docs/plan-files.md
// documents the format.
#include <openssl/evp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.h"
#include "engine/plan/plan.h"
#include "engine/state/state.h"

namespace plinth::plan {

/// The "format_version" this build writes and the only one it reads.
/// 2: the state binding names the state's location and whether it existed,
/// and the signature covers its own algorithm and key id.
inline constexpr int kPlanFileFormatVersion = 2;

/// What a plan was made from. Apply computes the same values again and
/// `verify` compares the two.
struct Bindings {
  std::map<std::string, std::string> blueprints;  ///< blueprint file path (as given) -> sha256 hex
  std::map<std::string, std::string> policies;    ///< policy file path (as given) -> sha256 hex
  /// The state the plan was made against: where it is (as resolved from
  /// --state or the default, lexically normalised, password left out), whether
  /// a state was there, and its lineage and serial. With no state yet: the
  /// lineage of the empty document the plan starts (state::new_document()),
  /// serial 0, and such a plan applies only where no state and no kept
  /// version exist yet (not to another location, not again after a move).
  std::string state_location;
  bool state_existed = false;
  std::string state_lineage;
  uint64_t state_serial = 0;
  /// Provenance, not compared by verify(): the plan binds to the content of
  /// its files, so a merge commit or a squash carrying the same files applies.
  std::string git_commit;  ///< HEAD commit of the blueprint's repository; "" outside one or before the first commit
  bool git_dirty = false;  ///< the blueprint files had uncommitted changes
  std::string plinth_version = PLINTH_VERSION;
  bool operator==(const Bindings&) const = default;
};

/// Where a state is, as a plan binds it: `location` with its password left
/// out and, for a file, lexically normalised ("./a/../s.json" is "s.json").
std::string bound_location(const std::string& location);

/// The state a plan is made against, or an apply finds.
struct StateBinding {
  std::string location;  ///< bound_location() of --state or the default
  bool existed = false;  ///< a state document was there
  const state::StateDocument& doc;
};

/// Bindings for the given inputs: hashes every blueprint and policy file
/// (the error names a file that cannot be read), takes location, existence,
/// lineage and serial from `state`, and this build's version.
Result<Bindings> make_bindings(const std::vector<std::string>& blueprint_files,
                               const std::vector<std::string>& policy_files, const StateBinding& state,
                               const std::string& git_commit, bool git_dirty);

/// A signature over the canonical JSON of the document with the signature's
/// own "algorithm" and "key_id" and without its "value" (so every field
/// `plinth show` prints is covered).
struct PlanSignature {
  std::string algorithm;  ///< "ed25519" | "hmac-sha256"
  std::string key_id;     ///< 16 hex digits identifying the key (not secret), for messages
  std::string value;      ///< hex
  bool operator==(const PlanSignature&) const = default;
};

/// A saved plan: the changes apply executes (with full before/after
/// resources, so apply does not re-read the blueprint) and its bindings.
struct PlanFile {
  Plan plan;
  Bindings bindings;
  std::string created_at;  ///< UTC, "2026-12-02T13:04:05Z"
  std::optional<PlanSignature> signature;  ///< set by write_planfile / read back by read_planfile
  bool operator==(const PlanFile&) const = default;
};

/// A plan file stamped with the current time.
PlanFile make_planfile(Plan plan, Bindings bindings);

/// A signing or verification key read from a file. The kind is detected from
/// the content: a PEM Ed25519 private key ("openssl genpkey -algorithm
/// ed25519"), a PEM Ed25519 public key ("openssl pkey -pubout"), or anything
/// else as an HMAC-SHA256 secret (the file's bytes without trailing
/// whitespace, at least 32 of them, e.g. "openssl rand -hex 32").
class PlanKey {
 public:
  enum class Kind { Ed25519Private, Ed25519Public, Hmac };

  /// Reads and classifies `path`. Errors name the file and say what key
  /// files are accepted (another PEM key type, an encrypted PEM, a short or
  /// empty secret).
  static Result<PlanKey> load(const std::string& path);
  /// The same from text in memory; `source` names it in errors.
  static Result<PlanKey> parse(const std::string& content, const std::string& source);

  Kind kind() const { return kind_; }
  /// "ed25519" or "hmac-sha256".
  std::string algorithm() const;
  /// 16 hex digits: from the public key for Ed25519 (the same for a private
  /// key and its public key), from a hash of the secret for HMAC.
  const std::string& id() const { return id_; }

  /// Signs `data`. Fails for an Ed25519 public key (signing needs the private key).
  Result<std::string> sign(const std::string& data) const;
  /// True when `signature_hex` is this key's signature of `data` (an Ed25519
  /// private key verifies with its public half).
  bool verify(const std::string& data, const std::string& signature_hex) const;

 private:
  struct PkeyFree {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
  };
  PlanKey(Kind kind, std::unique_ptr<EVP_PKEY, PkeyFree> pkey, std::string secret);

  Kind kind_;
  std::unique_ptr<EVP_PKEY, PkeyFree> pkey_;  ///< Ed25519 kinds
  std::string secret_;                        ///< Hmac
  std::string id_;
};

/// The file's JSON text: its canonical JSON (keys sorted, no whitespace; what
/// a signature covers, docs/plan-files.md) and a line break, signed with
/// `sign_key` when given (the signature field is replaced).
Result<std::string> to_text(const PlanFile& pf, const PlanKey* sign_key = nullptr);

/// Parses a plan file. Refused with a message naming `source`: text that is
/// not complete JSON (truncated), another document kind, another
/// format_version, missing or mistyped fields. With `verify_key`, also an
/// unsigned file, a file signed with another kind of key or another key, and
/// a signature that does not match the content (altered after signing).
/// Without `verify_key` a signature is read back but not checked.
Result<PlanFile> parse_planfile(const std::string& text, const std::string& source,
                                const PlanKey* verify_key = nullptr);

/// Writes to_text(pf, sign_key) to `path` atomically with mode 0600 (a plan
/// holds resource attributes in clear); on failure `path` is unchanged.
Status write_planfile(const std::string& path, const PlanFile& pf, const PlanKey* sign_key = nullptr);

/// Reads `path` and parse_planfile()s it.
Result<PlanFile> read_planfile(const std::string& path, const PlanKey* verify_key = nullptr);

namespace detail {
/// How parse_planfile reads a file of 256 KiB or more: in pieces of about
/// `piece` bytes (64 KiB there) cut between resource changes, each parsed and
/// taken into the plan in turn. The plan file, or nullopt whenever the pieces
/// do not give a readable plan (the whole text is then read, and names the
/// problem). For tests: whatever it returns, reading the whole gives too.
std::optional<PlanFile> read_in_pieces(std::string_view text, const PlanKey* verify_key, size_t piece);
}  // namespace detail

/// Compares the plan's bindings with `current` (made by make_bindings at
/// apply time from the same files). Succeeds only when every binding holds
/// (the files' content, the state, plinth's version; not the git commit);
/// otherwise the error names each one that changed, e.g.
///   "blueprint blueprints/x.yaml changed since the plan was made (sha256
///   3f2a9c1d0b7e… → 77c0e1a4b2d9…); run plinth plan again"
///   "state serial is 7 but the plan was made at serial 5 (the state changed
///   since, or this plan was already applied); run plinth plan again"
/// several joined by "; ".
Status verify(const PlanFile& pf, const Bindings& current);

/// The state apply starts from: `stored` when there is one; with no state
/// yet, an empty document carrying the plan's lineage at serial 0, so a plan
/// made against an empty state verifies exactly once (the first apply saves
/// serial 1).
state::StateDocument starting_state(const PlanFile& pf, const std::optional<state::StateDocument>& stored);

}  // namespace plinth::plan
