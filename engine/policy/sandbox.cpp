#include "engine/policy/sandbox.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <lua.hpp>

namespace plinth::policy {

/// Allocator and hook bookkeeping, reached from C callbacks through the
/// allocator's user data. Limits are armed only while a policy runs.
struct Sandbox::Governor {
  size_t used = 0;
  size_t memory_limit = SIZE_MAX;
  size_t memory_budget = 0;  ///< the per-policy figure, for messages
  long long instructions = 0;
  long long instruction_limit = LLONG_MAX;
  bool tripped = false;  ///< a limit was hit; sandboxed pcall must not swallow it
  bool memory_hit = false;
};

namespace {

constexpr int kHookStep = 1000;
const char* const kSandboxLibs = "base (without dofile, loadfile, load, rawset, print), string, table, math, utf8";
const char* const kForbidden[] = {"io", "os", "require", "package", "debug", "dofile", "loadfile", "load",
                                  "loadstring", "print", "rawset", "coroutine"};
const char* const kSafeBase[] = {"assert",   "error",  "getmetatable", "ipairs",   "pairs",   "rawequal",
                                 "rawget",   "rawlen", "select",       "setmetatable", "tonumber", "tostring",
                                 "type",     "_VERSION"};
const char* const kLibs[] = {"string", "table", "math", "utf8"};
// Registry keys.
const char* const kTemplateKey = "plinth.sandbox.template";

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
  if (nsize > old && g->used - old + nsize > g->memory_limit) {
    g->memory_hit = true;
    g->tripped = true;
    return nullptr;
  }
  void* p = std::realloc(ptr, nsize);
  if (!p) return nullptr;
  g->used = g->used - old + nsize;
  return p;
}

static void sandbox_hook(lua_State* L, lua_Debug* ar) {
  auto* g = governor(L);
  g->instructions += kHookStep;
  if (g->instructions <= g->instruction_limit) return;
  g->tripped = true;
  lua_getinfo(L, "Sl", ar);
  lua_pushfstring(L, "%s:%d: instruction limit of %I exceeded (an endless loop?); simplify the check or raise the limit",
                  ar->short_src, ar->currentline, static_cast<lua_Integer>(g->instruction_limit));
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

int sandbox_collectgarbage(lua_State* L) {
  const char* opt = luaL_optstring(L, 1, "collect");
  if (std::strcmp(opt, "count") != 0)
    return luaL_error(L, "collectgarbage('%s') is not available in the policy sandbox; only 'count' is", opt);
  int kb = lua_gc(L, LUA_GCCOUNT, 0);
  int b = lua_gc(L, LUA_GCCOUNTB, 0);
  lua_pushnumber(L, static_cast<lua_Number>(kb) + static_cast<lua_Number>(b) / 1024.0);
  return 1;
}

// Read-only views: a proxy table whose metatable holds the data in __index.
int ro_newindex(lua_State* L) {
  return luaL_error(L, "attempt to modify a read-only value (field '%s'); ctx is read-only",
                    lua_isstring(L, 2) ? lua_tostring(L, 2) : luaL_typename(L, 2));
}

// Pushes the data table behind the proxy at `idx` and returns true, or pushes nothing.
bool push_data(lua_State* L, int idx) {
  if (!lua_istable(L, idx) || !lua_getmetatable(L, idx)) return false;
  lua_getfield(L, -1, "__newindex");
  bool proxy = lua_tocfunction(L, -1) == ro_newindex;
  lua_pop(L, 1);
  if (!proxy) {
    lua_pop(L, 1);
    return false;
  }
  lua_getfield(L, -1, "__index");
  lua_remove(L, -2);
  return true;
}

int ro_len(lua_State* L) {
  push_data(L, 1);
  lua_pushinteger(L, static_cast<lua_Integer>(lua_rawlen(L, -1)));
  return 1;
}

int sandbox_next(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  if (push_data(L, 1)) lua_replace(L, 1);
  if (lua_next(L, 1)) return 2;
  lua_pushnil(L);
  return 1;
}

int ro_pairs(lua_State* L) {
  lua_pushcfunction(L, sandbox_next);
  push_data(L, 1);
  lua_pushnil(L);
  return 3;
}

// pcall/xpcall that never swallow a tripped limit: once a policy hit its
// instruction or memory limit, the error goes straight to the engine.
int sandbox_pcall(lua_State* L) {
  luaL_checkany(L, 1);
  int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  if (status != LUA_OK && governor(L)->tripped) return lua_error(L);
  lua_pushboolean(L, status == LUA_OK);
  lua_insert(L, 1);
  return lua_gettop(L);
}

int sandbox_xpcall(lua_State* L) {
  int n = lua_gettop(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushvalue(L, 1);  // f
  lua_copy(L, 2, 1);    // handler at 1
  lua_replace(L, 2);    // f at 2
  int status = lua_pcall(L, n - 2, LUA_MULTRET, 1);
  if (status != LUA_OK && governor(L)->tripped) return lua_error(L);
  lua_pushboolean(L, status == LUA_OK);
  lua_replace(L, 1);
  return lua_gettop(L);
}

int message_handler(lua_State* L) {
  if (lua_type(L, 1) == LUA_TSTRING) return 1;
  if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
  lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  return 1;
}

}  // namespace

void Sandbox::Closer::operator()(lua_State* L) const { lua_close(L); }

Sandbox::Sandbox() : gov_(std::make_unique<Governor>()) {
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
  lua_pushcfunction(L, sandbox_collectgarbage);
  lua_setfield(L, -2, "collectgarbage");
  for (const char* lib : kLibs) {
    lua_getglobal(L, lib);
    lua_setfield(L, -2, lib);
  }
  lua_setfield(L, LUA_REGISTRYINDEX, kTemplateKey);
  lua_sethook(L, sandbox_hook, LUA_MASKCOUNT, kHookStep);
}

Sandbox::~Sandbox() = default;

size_t Sandbox::memory_in_use() const { return gov_->used; }

void Sandbox::uncounted(const std::function<void()>& fn) {
  Governor& g = *gov_;
  size_t limit = g.memory_limit;
  size_t before = g.used;
  g.memory_limit = SIZE_MAX;
  fn();
  g.memory_limit = limit == SIZE_MAX ? limit : limit + (g.used > before ? g.used - before : 0);
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
  lua_createtable(L, 0, 5);
  lua_pushvalue(L, data);
  lua_setfield(L, -2, "__index");
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

bool Sandbox::call(int nargs, int nresults, const Limits& limits, LuaError& err) {
  lua_State* L = L_.get();
  Governor& g = *gov_;
  int func = lua_gettop(L) - nargs;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, func);
  g.instructions = 0;
  g.instruction_limit = limits.instructions;
  g.memory_budget = limits.memory_bytes;
  g.memory_limit = g.used + limits.memory_bytes;
  g.tripped = g.memory_hit = false;
  int status = lua_pcall(L, nargs, nresults, func);
  g.memory_limit = SIZE_MAX;
  g.instruction_limit = LLONG_MAX;
  lua_remove(L, func);
  if (status == LUA_OK) return true;
  std::string text = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "unknown error";
  lua_pop(L, 1);
  if (g.memory_hit) {
    err = {"memory limit of " + std::to_string(g.memory_budget >> 20) +
               " MiB exceeded; build smaller tables or strings, or raise the limit",
           {}};
  } else if (status == LUA_ERRMEM) {
    err = {"out of memory", {}};
  } else {
    err = {text, {}};
  }
  lua_gc(L, LUA_GCCOLLECT, 0);
  return false;
}

bool Sandbox::run_chunk(const std::string& code, const std::string& path, int env_index, const Limits& limits,
                        LuaError& err) {
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
  if (!call(0, 0, limits, err)) {
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
