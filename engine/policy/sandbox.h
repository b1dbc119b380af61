#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "engine/core/source_location.h"

struct lua_State;

namespace plinth::policy {

/// What policies may spend (docs/policy-authoring.md, "The sandbox"). A
/// "call" is one check, or the loading of one policy file.
struct Limits {
  /// Lua VM instructions per call (counted in steps of 1000).
  long long instructions = 10'000'000;
  /// Bytes one call may allocate on top of what the Lua state held when it started.
  size_t memory_bytes = size_t{64} << 20;
  /// Everything the policies of one run hold together: the Lua heap above
  /// the sandbox and the shared context (what every file and check keeps,
  /// garbage not yet collected) plus the text of every verdict reported.
  size_t run_memory_bytes = size_t{256} << 20;
  /// Wall-clock time per call. The check is stopped from inside the Lua VM
  /// when it runs Lua code, and its sandbox process is killed from outside
  /// (shortly after) when it is stuck in a library call.
  std::chrono::milliseconds deadline{10'000};
  /// A fail()/pass() message longer than this is cut (and says so).
  size_t message_bytes = 4096;
  /// Findings (fail() and pass() calls) one check may report.
  size_t verdicts = 100'000;
  bool operator==(const Limits&) const = default;
};

/// Pushes t[key] (t a stack index) without metamethods, so no policy code
/// runs outside a check's limits; returns the value's Lua type.
int rawfield(lua_State* L, int t, const char* key);

/// "10 s", "1.5 s", "250 ms": a limit's duration in messages.
std::string duration_text(std::chrono::milliseconds d);

/// An error raised inside the sandbox: the message without its position
/// prefix, and the position (policy file:line) when Lua knew it.
struct LuaError {
  std::string message;
  SourceLoc loc;
};

/// A Lua 5.4 state opened as the policy sandbox (STYLE.md §7). Only base
/// (without dofile, loadfile, load, rawset, print, collectgarbage), string
/// (without dump), table, math and utf8 are reachable. Naming io, os,
/// require, package, debug, load, dofile, loadfile, print, collectgarbage or
/// string.dump raises "... is not available in the policy sandbox".
/// setmetatable refuses __gc and __close metamethods: finalizers would run
/// outside any check's limits (with the VM's hooks off, and at lua_close).
/// Every call runs in protected mode under the instruction, memory and
/// deadline limits; pcall, xpcall and xpcall's message handler never
/// swallow or outlive a limit error.
class Sandbox {
 public:
  explicit Sandbox(const Limits& limits = {});
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  lua_State* L() const { return L_.get(); }

  /// Pushes a fresh global environment for one policy file: its own copies
  /// of the safe libraries, so a file cannot change what another sees.
  void push_env();

  /// Compiles the text chunk `code` (never bytecode) named `path`, sets its
  /// _ENV to the table at `env_index` and runs it under the limits.
  bool run_chunk(const std::string& code, const std::string& path, int env_index, LuaError& err);

  /// Calls the function below its `nargs` arguments on the stack under the
  /// limits, leaving `nresults` results (LUA_MULTRET allowed). On error the
  /// stack is restored to below the function and the LuaError returned.
  bool call(int nargs, int nresults, LuaError& err);

  /// Runs `fn` (which builds shared values: the context, its lazy views)
  /// with the memory limits lifted; what it allocates is not charged to the
  /// running policy nor to the run.
  void uncounted(const std::function<void()>& fn);
  /// Forgets what uncounted() built before (the previous context is gone).
  void reset_uncounted();

  /// Charges `bytes` held outside the Lua heap (a verdict's text) to the
  /// run-wide budget. False, charging nothing, when that would exceed it.
  bool charge(size_t bytes);

  /// Counts `bytes` held elsewhere (findings from an earlier sandbox process
  /// of the same run) against the run-wide budget, whatever it leaves.
  void charge_held(size_t bytes);

  /// Marks the running call as stopped by a limit: the error raised next
  /// passes through every pcall and xpcall handler to the engine.
  void stop_call();

  /// Bytes the Lua state holds right now.
  size_t memory_in_use() const;

  const Limits& limits() const { return limits_; }

  /// Turns a "file:line: message" string into a LuaError; `file` is the
  /// chunk's full path (Lua may have shortened it to "...tail").
  static LuaError split_position(const std::string& text, const std::string& file);

  /// Replaces the table on the stack top with a read-only view of it: reads,
  /// `#`, ipairs, pairs and next see the table; writes raise "read-only".
  static void make_readonly(lua_State* L);

  /// Pushes the table behind the read-only view at `idx` and returns true,
  /// or pushes nothing and returns false when `idx` is not such a view.
  static bool push_readonly_data(lua_State* L, int idx);

  struct Governor;  ///< limit bookkeeping, defined in sandbox.cpp

 private:
  struct Closer {
    void operator()(lua_State* L) const;
  };
  Limits limits_;
  // The governor (allocator bookkeeping) must outlive the state: declared first, destroyed last.
  std::unique_ptr<Governor> gov_;
  std::unique_ptr<lua_State, Closer> L_;
};

}  // namespace plinth::policy
