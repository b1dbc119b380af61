#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "engine/core/source_location.h"

struct lua_State;

namespace plinth::policy {

/// What one policy may spend: Lua VM instructions (counted in steps of 1000)
/// and bytes allocated on top of what the shared context already uses.
struct Limits {
  long long instructions = 10'000'000;
  size_t memory_bytes = size_t{64} << 20;
  bool operator==(const Limits&) const = default;
};

/// An error raised inside the sandbox: the message without its position
/// prefix, and the position (policy file:line) when Lua knew it.
struct LuaError {
  std::string message;
  SourceLoc loc;
};

/// A Lua 5.4 state opened as the policy sandbox (STYLE.md §7). Only base
/// (without dofile, loadfile, load, rawset, print), string (without dump),
/// table, math and utf8 are reachable; `collectgarbage` answers "count" only.
/// Naming io, os, require, package, debug, load, dofile, loadfile, print or
/// string.dump raises "... is not available in the policy sandbox". Every
/// call runs in protected mode under the instruction and memory limits.
class Sandbox {
 public:
  Sandbox();
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  lua_State* L() const { return L_.get(); }

  /// Pushes a fresh global environment for one policy file: its own copies
  /// of the safe libraries, so a file cannot change what another sees.
  void push_env();

  /// Compiles the text chunk `code` (never bytecode) named `path`, sets its
  /// _ENV to the table at `env_index` and runs it under `limits`.
  bool run_chunk(const std::string& code, const std::string& path, int env_index, const Limits& limits,
                 LuaError& err);

  /// Calls the function below its `nargs` arguments on the stack under
  /// `limits`, leaving `nresults` results (LUA_MULTRET allowed). On error the
  /// stack is restored to below the function and the LuaError returned.
  bool call(int nargs, int nresults, const Limits& limits, LuaError& err);

  /// Runs `fn` (which builds shared values) with the memory limit lifted;
  /// what it allocates is not charged to the running policy.
  void uncounted(const std::function<void()>& fn);

  /// Bytes the Lua state holds right now.
  size_t memory_in_use() const;

  /// Turns a "file:line: message" string into a LuaError; `file` is the
  /// chunk's full path (Lua may have shortened it to "...tail").
  static LuaError split_position(const std::string& text, const std::string& file);

  /// Replaces the table on the stack top with a read-only view of it: reads,
  /// `#`, ipairs, pairs and next see the table; writes raise "read-only".
  static void make_readonly(lua_State* L);

  struct Governor;  ///< limit bookkeeping, defined in sandbox.cpp

 private:
  struct Closer {
    void operator()(lua_State* L) const;
  };
  // The governor (allocator bookkeeping) must outlive the state: declared first, destroyed last.
  std::unique_ptr<Governor> gov_;
  std::unique_ptr<lua_State, Closer> L_;
};

}  // namespace plinth::policy
