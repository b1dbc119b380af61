#pragma once
// Internal to engine/policy: one sandbox holding loaded policies and the
// read-only context they run against. evaluate(), load_policies() and the
// Lua test runner are built on it.
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/policy/policy.h"
#include "engine/policy/sandbox.h"

namespace plinth::policy {

/// Every *.lua below `dir` (recursively, sorted), `*_test.lua` excluded when
/// `tests` is false, or only those when true. Files in `dir`/lib/ are
/// libraries (import), never policy files or tests.
std::vector<std::string> lua_files(const std::string& dir, bool tests);

/// A policy file to load and its pack: the first folder below the policy
/// directory, "" for a file directly in it.
struct PackFile {
  std::string file;
  std::string pack;
};

/// The pack of policy `file` below policy directory `dir`: its first folder
/// there, "" for a file directly in `dir`.
std::string pack_of(const std::string& file, const std::string& dir);

/// The empty subdirectories of `dir` on disk, sorted (a pack turned off:
/// load_dirs); none for the compiled-in directory.
std::vector<std::string> empty_pack_directories(const std::string& dir);

/// The policy files below `dir` (lua_files, tests excluded) with their packs;
/// `dir` may be on disk or compiled in (engine/core/embedded.h). When it is
/// not a directory, a POL001 in `diags` and nothing else.
std::vector<PackFile> policy_files(const std::string& dir, Diagnostics& diags);

/// A pack's settings: name -> the value as written (a YAML scalar).
using PackSettings = std::map<std::string, std::string, std::less<>>;

/// Reads `dir`/<pack>/settings.yaml of every pack below `dir` (on disk or
/// compiled in, like policy_files) into `settings` (pack -> settings); a name
/// read before is overridden, the others kept. A file that cannot be read or
/// is not UTF-8 YAML holding a map is a POL001 in `diags` and sets nothing; a
/// value that is not a single scalar is a POL001 at its name and is skipped.
void read_pack_settings(const std::string& dir, std::map<std::string, PackSettings>& settings, Diagnostics& diags);

/// `path` relative to the working directory when it lies below it, so
/// positions stay short ("policies/soc2/encryption.lua:12").
std::string display_path(const std::string& path);

/// What one finding is charged against the run-wide memory limit.
inline size_t verdict_cost(size_t id_len, size_t address_len, size_t message_len) {
  return sizeof(Verdict) + id_len + address_len + message_len + 64;
}

class SharedViews;

class Runtime {
 public:
  explicit Runtime(const Limits& limits);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// The settings `setting(name, default)` returns to `pack`'s files from now
  /// on (read_pack_settings); replaces what that pack had.
  void set_settings(const std::string& pack, PackSettings settings) { settings_[pack] = std::move(settings); }
  /// Loads every policy file below `dir`; the pack of a file is its first
  /// directory below `dir`.
  void load_dir(const std::string& dir);
  /// Runs one policy file, collecting its `policy { ... }` declarations.
  void load_file(const std::string& path, const std::string& pack);

  size_t size() const { return entries_.size(); }
  const PolicyInfo& info(size_t i) const { return entries_[i].info; }
  /// The index of the policy with `id`, or size() when none has it.
  size_t find(const std::string& id) const;
  std::vector<PolicyInfo> infos() const;
  Diagnostics& diagnostics() { return diags_; }
  const std::vector<std::string>& files() const { return files_; }
  const std::map<std::string, std::string>& hashes() const { return hashes_; }

  /// Builds the read-only ctx for `input` (which must outlive the runs),
  /// replacing the previous one. A resource's view, like the blueprint and
  /// plan views, is built when a policy first asks for it and then shared by
  /// every policy.
  void set_context(const Input& input);

  /// Runs policy `i`'s check against the current context. Every verdict
  /// is the running policy's: fail()/pass() of another file, or outside a
  /// check, raise an error; text is made safe (safe_text) and messages are
  /// cut at the message limit.
  std::vector<Verdict> run(size_t i);

  Sandbox& sandbox() { return sb_; }

  // Called from the Lua C functions (lua_error unwinds them with longjmp:
  // each raises its errors before it creates any C++ object).
  int declare(lua_State* L);
  int report(lua_State* L, Outcome outcome);
  void push_lazy(lua_State* L, const std::string& key);
  /// The context's resources, by their input index.
  size_t resource_count() const;
  /// Whether resource `i`'s address is `prefix` or below it (PREFIX.…, PREFIX[…]).
  bool resource_under(size_t i, std::string_view prefix) const;
  /// The index of the resource at `address`, resource_count() when none.
  size_t resource_at(std::string_view address) const;
  /// Pushes resource `i`'s view, building it on first use.
  void push_resource_view(lua_State* L, size_t i);
  int setting(lua_State* L);
  /// import(name) while a policy file loads: the value `lib/NAME.lua` of the
  /// file's policy directory returns, run once per runtime in an environment
  /// of its own (the safe globals only: it can neither declare policies nor
  /// report findings) and shared by every file that imports it.
  int import(lua_State* L);
  SourceLoc locate(const std::string& address) const;

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  struct Entry {
    PolicyInfo info;
    int check_ref = 0;
    size_t file = 0;  ///< index into files_ of the file that declared it
  };
  void declare_table(lua_State* L);
  /// Whether the file of the calling C function (upvalue 2) is the one loading.
  bool loading(lua_State* L) const;
  /// import's C++ part: pushes library NAME's path, code and chunk name and
  /// records its hash (true), or pushes why it is missing (false).
  bool push_library(lua_State* L, const char* name);
  void build_context(const Input& input);
  /// The first node of pool `address` (TYPE.NAME -> its first TYPE.NAME[i])
  /// among the context's resources, or nullptr.
  const Resource* first_of_pool(const std::string& address) const;
  void add_verdict(Outcome outcome, const char* address, size_t address_len, const char* message,
                   size_t message_len, const std::string& field);

  Sandbox sb_;  // first: the Lua state outlives every reference below
  std::vector<Entry> entries_;
  std::vector<std::string> files_;
  std::map<std::string, std::string> hashes_;
  Diagnostics diags_;
  std::string loading_pack_;
  std::string loading_root_;  ///< the policy directory of the file loading: where lib/ is
  size_t loading_file_ = kNone;  ///< set while a policy file's chunk runs: policy{} is allowed
  std::map<std::string, PackSettings> settings_;  ///< pack -> its settings (set_settings)
  const Input* input_ = nullptr;
  /// An entity's position ("file:line:col") -> its Origin, for fail(address, message, field).
  std::unordered_map<std::string, const bp::Origin*> origins_;
  const std::vector<Resource>* resources_ = nullptr;  ///< the context's (input_->resources)
  std::unique_ptr<SharedViews> views_;                ///< of the context's resource views
  int ctx_ref_ = 0;
  std::vector<Verdict>* current_ = nullptr;  ///< set while a check runs
  size_t running_ = kNone;                   ///< the entry whose check runs
};

}  // namespace plinth::policy
