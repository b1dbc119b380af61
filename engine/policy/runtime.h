#pragma once
// Internal to engine/policy: one sandbox holding loaded policies and the
// read-only context they run against. evaluate(), load_policies() and the
// Lua test runner are built on it.
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/policy/policy.h"
#include "engine/policy/sandbox.h"

namespace plinth::policy {

/// Every *.lua below `dir` (recursively, sorted), `*_test.lua` excluded when
/// `tests` is false, or only those when true.
std::vector<std::string> lua_files(const std::string& dir, bool tests);

/// `path` relative to the working directory when it lies below it, so
/// positions stay short ("policies/soc2/encryption.lua:12").
std::string display_path(const std::string& path);

class Runtime {
 public:
  explicit Runtime(const Limits& limits);
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// Reads `dir`/<pack>/settings.yaml of every pack below `dir`; names
  /// override those read before. Call for every directory before load_dir.
  void load_settings(const std::string& dir);
  /// Loads every policy file below `dir`; the pack of a file is its first
  /// directory below `dir`.
  void load_dir(const std::string& dir);
  /// Runs one policy file, collecting its `policy { ... }` declarations.
  void load_file(const std::string& path, const std::string& pack);

  size_t size() const { return entries_.size(); }
  const PolicyInfo& info(size_t i) const { return entries_[i].info; }
  std::vector<PolicyInfo> infos() const;
  Diagnostics& diagnostics() { return diags_; }
  const std::vector<std::string>& files() const { return files_; }
  const std::map<std::string, std::string>& hashes() const { return hashes_; }

  /// Builds the read-only ctx for `input` (which must outlive the runs),
  /// replacing the previous one. Resource tables are built once here and
  /// shared by every policy; the blueprint and plan views are built on
  /// first use.
  void set_context(const Input& input);

  /// Runs policy `i`'s check against the current context.
  std::vector<Verdict> run(size_t i);

  Sandbox& sandbox() { return sb_; }

  // Called from the Lua C functions.
  void declare(lua_State* L);
  void report(lua_State* L, Outcome outcome);
  void push_lazy(lua_State* L, const std::string& key);
  /// The loading pack's setting `name` pushed as a Lua value; false when unset.
  bool push_setting(lua_State* L, const std::string& name);
  bool loading() const { return loading_; }  ///< a policy file's top level is running
  SourceLoc locate(const std::string& address) const;

 private:
  struct Entry {
    PolicyInfo info;
    int check_ref = 0;
  };
  Sandbox sb_;  // first: the Lua state outlives every reference below
  Limits limits_;
  std::vector<Entry> entries_;
  std::vector<std::string> files_;
  std::map<std::string, std::string> hashes_;
  Diagnostics diags_;
  std::string loading_pack_;
  bool loading_ = false;
  std::map<std::string, std::map<std::string, std::string>> settings_;  ///< pack -> name -> value
  const Input* input_ = nullptr;
  std::unordered_map<std::string, SourceLoc> sources_;
  int ctx_ref_ = 0;
  std::vector<Verdict>* current_ = nullptr;  ///< set while a check runs
  const PolicyInfo* current_info_ = nullptr;
};

}  // namespace plinth::policy
