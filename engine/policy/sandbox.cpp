#include "engine/policy/sandbox.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <lua.hpp>

namespace plinth::policy {

/// Allocator and hook bookkeeping, reached from C callbacks through the
/// allocator's user data. Limits are armed only while a call runs.
struct Sandbox::Governor {
  size_t used = 0;        ///< bytes the Lua heap holds
  size_t fixed = 0;       ///< bytes no policy caused: the libraries and what uncounted() built
  size_t base_fixed = 0;  ///< `fixed` right after the libraries were opened
  size_t extra = 0;       ///< bytes charged outside the heap (verdict text)
  size_t run_budget = SIZE_MAX;
  size_t call_budget = SIZE_MAX;  ///< the per-call figure, for messages
  bool armed = false;             ///< a call runs: the limits apply
  bool lifted = false;            ///< uncounted() runs: the memory limits do not apply
  size_t call_limit = SIZE_MAX;   ///< heap size this call may reach
  long long instructions = 0;
  long long instruction_limit = LLONG_MAX;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  /// An instruction or deadline limit was hit: from here on no pcall,
  /// xpcall or message handler may let the policy carry on.
  bool tripped = false;
  /// A memory error reached a sandboxed pcall: it is passed on, never swallowed.
  bool memory_error = false;
  enum class Refused { None, Call, Run } refused = Refused::None;  ///< which memory limit refused last
  char deadline_text[32] = "";  ///< "10 s", for the message

  size_t charged(size_t heap) const { return (heap > fixed ? heap - fixed : 0) + extra; }
};

namespace {

constexpr int kHookStep = 1000;
const char* const kSandboxLibs =
    "base (without dofile, loadfile, load, rawset, print, collectgarbage), string, table, math, utf8";
const char* const kForbidden[] = {"io",         "os",    "require",  "package", "debug",         "dofile",
                                  "loadfile",   "load",  "loadstring", "print", "rawset",        "coroutine",
                                  "collectgarbage"};
const char* const kSafeBase[] = {"assert", "error",  "getmetatable", "ipairs",   "pairs",    "rawequal",
                                 "rawget", "rawlen", "select",       "tonumber", "tostring", "type",
                                 "_VERSION"};
const char* const kLibs[] = {"string", "table", "math", "utf8"};
// Registry keys.
const char* const kTemplateKey = "plinth.sandbox.template";
// The metatable field of a read-only view that holds its data table (a
// light userdata key no policy can name).
const char kDataKey = 0;

Sandbox::Governor* governor(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return static_cast<Sandbox::Governor*>(ud);
}

}  // namespace

// The allocator and hook need Governor, a private nested type; these
// friends-by-definition live in the class's translation unit.
static void* sandbox_alloc(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* g = static_cast<Sandbox::Governor*>(ud);
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    std::free(ptr);
    g->used -= old;
    return nullptr;
  }
  if (nsize > old && g->armed && !g->lifted) {
    size_t after = g->used - old + nsize;
    // A refusal makes Lua collect garbage and try once more before it
    // raises a memory error, so only record which limit refused.
    if (after > g->call_limit) {
      g->refused = Sandbox::Governor::Refused::Call;
      return nullptr;
    }
    if (g->charged(after) > g->run_budget) {
      g->refused = Sandbox::Governor::Refused::Run;
      return nullptr;
    }
  }
  void* p = std::realloc(ptr, nsize);
  if (!p) return nullptr;
  g->used = g->used - old + nsize;
  return p;
}

static void sandbox_hook(lua_State* L, lua_Debug* ar) {
  auto* g = governor(L);
  g->instructions += kHookStep;
  const bool over = g->instructions > g->instruction_limit;
  if (!over && std::chrono::steady_clock::now() < g->deadline) return;
  g->tripped = true;
  lua_getinfo(L, "Sl", ar);
  if (over)
    lua_pushfstring(L,
                    "%s:%d: instruction limit of %I exceeded (an endless loop?); simplify the check or raise the limit",
                    ar->short_src, ar->currentline, static_cast<lua_Integer>(g->instruction_limit));
  else
    lua_pushfstring(L, "%s:%d: time limit of %s exceeded (wall clock); simplify the check or raise the limit",
                    ar->short_src, ar->currentline, g->deadline_text);
  lua_error(L);
}

namespace {

int forbidden_index(lua_State* L) {
  const char* key = lua_tostring(L, 2);
  if (key) {
    for (const char* f : kForbidden)
      if (std::strcmp(key, f) == 0)
        return luaL_error(L, "'%s' is not available in the policy sandbox (allowed: %s)", key, kSandboxLibs);
  }
  return 0;
}

int forbidden_dump(lua_State* L) {
  return luaL_error(L, "string.dump is not available in the policy sandbox (no bytecode)");
}

// setmetatable without finalizers: a __gc metamethod runs whenever the
// collector gets to it (with the VM's hooks off, so no instruction limit, and
// at lua_close with no limits at all), and __close runs while an error
// unwinds. Otherwise Lua's own setmetatable.
int sandbox_setmetatable(lua_State* L) {
  int t = lua_type(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
  if (t == LUA_TTABLE) {
    // Raw lookups, as Lua's collector does them.
    for (const char* event : {"__gc", "__close"}) {
      lua_pushstring(L, event);
      bool present = lua_rawget(L, 2) != LUA_TNIL;
      lua_pop(L, 1);
      if (present)
        return luaL_error(L, "'%s' metamethods are not available in the policy sandbox (they would run outside the "
                             "check's limits)", event);
    }
  }
  if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL) return luaL_error(L, "cannot change a protected metatable");
  lua_settop(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

// Read-only views: an empty proxy table whose metatable holds the data table
// (under kDataKey, and as __index unless the view computes fields).
int ro_newindex(lua_State* L) {
  return luaL_error(L, "attempt to modify a read-only value (field '%s'); ctx is read-only",
                    lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : luaL_typename(L, 2));
}

int ro_len(lua_State* L) {
  if (!Sandbox::push_readonly_data(L, 1)) lua_pushvalue(L, 1);
  lua_pushinteger(L, static_cast<lua_Integer>(lua_rawlen(L, -1)));
  return 1;
}

/// next() that walks a read-only view's data; any other table as Lua's next.
int sandbox_next(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  if (Sandbox::push_readonly_data(L, 1)) lua_replace(L, 1);
  if (lua_next(L, 1)) return 2;  // an unknown key raises "invalid key to 'next'"
  lua_pushnil(L);
  return 1;
}

int ro_pairs(lua_State* L) {
  lua_pushcfunction(L, sandbox_next);
  if (!Sandbox::push_readonly_data(L, 1)) lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

/// True once a limit was hit in this call: nothing may swallow the error.
bool must_propagate(lua_State* L, int status) {
  auto* g = governor(L);
  if (status == LUA_ERRMEM) g->memory_error = true;
  return g->tripped || g->memory_error;
}

// pcall/xpcall that never swallow a limit: once a policy hit its
// instruction, deadline or memory limit, the error goes straight to the engine.
int sandbox_pcall(lua_State* L) {
  luaL_checkany(L, 1);
  int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  if (status != LUA_OK && must_propagate(L, status)) return lua_error(L);
  lua_pushboolean(L, status == LUA_OK);
  lua_insert(L, 1);
  return lua_gettop(L);
}

/// Runs the policy's xpcall message handler (upvalue 1) unless a limit was
/// hit: then the handler would run after the limit (and, when the hook
/// raised the error, with the hook off), so the error passes through as it is.
int guarded_handler(lua_State* L) {
  auto* g = governor(L);
  if (g->tripped || g->memory_error) return 1;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

int sandbox_xpcall(lua_State* L) {
  int n = lua_gettop(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushvalue(L, 2);
  lua_pushcclosure(L, guarded_handler, 1);
  lua_replace(L, 2);    // the guarded handler
  lua_pushvalue(L, 1);  // f
  lua_copy(L, 2, 1);    // handler at 1
  lua_replace(L, 2);    // f at 2
  int status = lua_pcall(L, n - 2, LUA_MULTRET, 1);
  if (status != LUA_OK && must_propagate(L, status)) return lua_error(L);
  lua_pushboolean(L, status == LUA_OK);
  lua_replace(L, 1);
  return lua_gettop(L);
}

/// The engine's message handler: the error as text. An error object's
/// __tostring runs only while no limit was hit.
int message_handler(lua_State* L) {
  if (lua_type(L, 1) == LUA_TSTRING) return 1;
  auto* g = governor(L);
  if (!g->tripped && !g->memory_error && luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
    return 1;
  lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  return 1;
}

}  // namespace

int rawfield(lua_State* L, int t, const char* key) {
  lua_pushstring(L, key);
  return lua_rawget(L, t);
}

std::string duration_text(std::chrono::milliseconds d) {
  long long ms = d.count();
  if (ms < 1000) return std::to_string(ms) + " ms";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
  return buf;
}

void Sandbox::Closer::operator()(lua_State* L) const { lua_close(L); }

Sandbox::Sandbox(const Limits& limits) : limits_(limits), gov_(std::make_unique<Governor>()) {
  L_.reset(lua_newstate(sandbox_alloc, gov_.get()));
  if (!L_) throw std::bad_alloc();
  lua_State* L = L_.get();
  luaL_requiref(L, "_G", luaopen_base, 1);
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
  luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
  lua_settop(L, 0);

  // The string metatable's __index is the shared string library: drop dump
  // there and hide the metatable so no policy can reach or change it.
  lua_getglobal(L, "string");
  lua_pushcfunction(L, forbidden_dump);
  lua_setfield(L, -2, "dump");
  lua_pop(L, 1);
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_pushliteral(L, "string");
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 2);

  // The template every policy environment is copied from.
  lua_newtable(L);
  for (const char* name : kSafeBase) {
    lua_getglobal(L, name);
    lua_setfield(L, -2, name);
  }
  lua_pushcfunction(L, sandbox_next);
  lua_setfield(L, -2, "next");
  lua_pushcfunction(L, sandbox_pcall);
  lua_setfield(L, -2, "pcall");
  lua_pushcfunction(L, sandbox_xpcall);
  lua_setfield(L, -2, "xpcall");
  lua_pushcfunction(L, sandbox_setmetatable);
  lua_setfield(L, -2, "setmetatable");
  for (const char* lib : kLibs) {
    lua_getglobal(L, lib);
    lua_setfield(L, -2, lib);
  }
  lua_setfield(L, LUA_REGISTRYINDEX, kTemplateKey);
  lua_sethook(L, sandbox_hook, LUA_MASKCOUNT, kHookStep);
  lua_gc(L, LUA_GCCOLLECT);
  gov_->fixed = gov_->base_fixed = gov_->used;
  gov_->run_budget = limits_.run_memory_bytes;
  gov_->call_budget = limits_.memory_bytes;
  std::snprintf(gov_->deadline_text, sizeof gov_->deadline_text, "%s", duration_text(limits_.deadline).c_str());
}

Sandbox::~Sandbox() = default;

size_t Sandbox::memory_in_use() const { return gov_->used; }

void Sandbox::uncounted(const std::function<void()>& fn) {
  Governor& g = *gov_;
  const bool was = g.lifted;
  const size_t before = g.used;
  g.lifted = true;
  fn();
  g.lifted = was;
  if (g.used > before) {
    size_t grown = g.used - before;
    g.fixed += grown;
    if (g.call_limit != SIZE_MAX) g.call_limit += grown;  // not the running policy's either
  }
}

void Sandbox::reset_uncounted() { gov_->fixed = gov_->base_fixed; }

void Sandbox::stop_call() { gov_->tripped = true; }

void Sandbox::charge_held(size_t bytes) { gov_->extra += bytes; }

bool Sandbox::charge(size_t bytes) {
  Governor& g = *gov_;
  if (g.charged(g.used) + bytes > g.run_budget) {
    g.refused = Governor::Refused::Run;
    g.memory_error = true;  // reported as the run-wide memory limit; no pcall swallows it
    return false;
  }
  g.extra += bytes;
  return true;
}

void Sandbox::push_env() {
  lua_State* L = L_.get();
  lua_newtable(L);
  int env = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, kTemplateKey);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    // Library tables are copied so a policy that changes string.x changes its own copy.
    if (lua_istable(L, -1)) {
      lua_newtable(L);
      lua_pushnil(L);
      while (lua_next(L, -3)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4);
      }
      lua_replace(L, -2);
    }
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, env);
  }
  lua_pop(L, 1);
  lua_pushvalue(L, env);
  lua_setfield(L, env, "_G");
  lua_newtable(L);
  lua_pushcfunction(L, forbidden_index);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, env);
}

void Sandbox::make_readonly(lua_State* L) {
  int data = lua_gettop(L);
  lua_newtable(L);  // proxy
  lua_createtable(L, 0, 6);
  lua_pushvalue(L, data);
  lua_setfield(L, -2, "__index");
  lua_pushlightuserdata(L, const_cast<char*>(&kDataKey));
  lua_pushvalue(L, data);
  lua_rawset(L, -3);
  lua_pushcfunction(L, ro_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushcfunction(L, ro_len);
  lua_setfield(L, -2, "__len");
  lua_pushcfunction(L, ro_pairs);
  lua_setfield(L, -2, "__pairs");
  lua_pushliteral(L, "read-only");
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_replace(L, data);
}

bool Sandbox::push_readonly_data(lua_State* L, int idx) {
  if (!lua_istable(L, idx) || !lua_getmetatable(L, idx)) return false;
  lua_pushlightuserdata(L, const_cast<char*>(&kDataKey));
  if (lua_rawget(L, -2) != LUA_TTABLE) {
    lua_pop(L, 2);
    return false;
  }
  lua_remove(L, -2);
  return true;
}

bool Sandbox::call(int nargs, int nresults, LuaError& err) {
  lua_State* L = L_.get();
  Governor& g = *gov_;
  int func = lua_gettop(L) - nargs;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, func);
  g.instructions = 0;
  g.instruction_limit = limits_.instructions;
  g.deadline = std::chrono::steady_clock::now() + limits_.deadline;
  g.call_limit = g.used + std::min(limits_.memory_bytes, SIZE_MAX - g.used);
  g.tripped = g.memory_error = false;
  g.refused = Governor::Refused::None;
  g.armed = true;
  int status = lua_pcall(L, nargs, nresults, func);
  g.armed = false;
  g.call_limit = SIZE_MAX;
  g.instruction_limit = LLONG_MAX;
  g.deadline = std::chrono::steady_clock::time_point::max();
  lua_remove(L, func);
  if (status == LUA_OK) return true;
  std::string text = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "unknown error";
  lua_pop(L, 1);
  if (status == LUA_ERRMEM || g.memory_error) {
    if (g.refused == Governor::Refused::Run)
      err = {"run-wide memory limit of " + std::to_string(limits_.run_memory_bytes >> 20) +
                 " MiB exceeded: the policies of this run together hold too much (tables kept in globals or "
                 "upvalues, too many or too long findings); keep less between checks, or raise the limit",
             {}};
    else if (g.refused == Governor::Refused::Call)
      err = {"memory limit of " + std::to_string(limits_.memory_bytes >> 20) +
                 " MiB exceeded; build smaller tables or strings, or raise the limit",
             {}};
    else
      err = {"out of memory", {}};
  } else {
    err = {text, {}};
  }
  lua_gc(L, LUA_GCCOLLECT);
  return false;
}

bool Sandbox::run_chunk(const std::string& code, const std::string& path, int env_index, LuaError& err) {
  lua_State* L = L_.get();
  env_index = lua_absindex(L, env_index);
  std::string chunkname = "@" + path;
  if (luaL_loadbufferx(L, code.data(), code.size(), chunkname.c_str(), "t") != LUA_OK) {
    err = split_position(lua_tostring(L, -1), path);
    lua_pop(L, 1);
    return false;
  }
  lua_pushvalue(L, env_index);
  lua_setupvalue(L, -2, 1);  // _ENV
  if (!call(0, 0, err)) {
    err = split_position(err.message, path);
    return false;
  }
  return true;
}

LuaError Sandbox::split_position(const std::string& text, const std::string& file) {
  // "short_src:line: message"; short_src is the path or "...tail" of it.
  size_t p = 0;
  while ((p = text.find(':', p)) != std::string::npos) {
    size_t q = p + 1;
    while (q < text.size() && text[q] >= '0' && text[q] <= '9') ++q;
    if (q > p + 1 && q + 1 < text.size() && text[q] == ':' && text[q + 1] == ' ') {
      std::string src = text.substr(0, p);
      bool same = src == file || (src.rfind("...", 0) == 0 && file.size() >= src.size() - 3 &&
                                  file.compare(file.size() - (src.size() - 3), src.size() - 3, src.substr(3)) == 0);
      if (!same) return {text, {}};
      return {text.substr(q + 2), {file, std::atoi(text.c_str() + p + 1), 0}};
    }
    p = q;
  }
  return {text, {}};
}

}  // namespace plinth::policy
