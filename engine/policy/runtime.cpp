#include "engine/policy/runtime.h"

#include <algorithm>
#include <filesystem>
#include <lua.hpp>
#include <yaml-cpp/yaml.h>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

#include "engine/core/embedded.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/catalog/catalog.h"
#include "engine/provider/registry.h"
#include "engine/core/strings.h"
#include "engine/graph/expand.h"

namespace fs = std::filesystem;

namespace plinth::policy {
namespace {

const char* const kFields[] = {"id", "title", "description", "severity", "enforcement", "controls", "check"};
const std::vector<std::string> kSeverities = {"low", "medium", "high", "critical"};
const std::vector<std::string> kEnforcements = {"advisory", "mandatory"};

Runtime* runtime(lua_State* L) { return static_cast<Runtime*>(lua_touserdata(L, lua_upvalueindex(1))); }

int lua_policy(lua_State* L) { return runtime(L)->declare(L); }
int lua_fail(lua_State* L) { return runtime(L)->report(L, Outcome::Fail); }
int lua_pass(lua_State* L) { return runtime(L)->report(L, Outcome::Pass); }
int lua_not_applicable(lua_State* L) { return runtime(L)->report(L, Outcome::NotApplicable); }

// setting(name, default): the loading pack's setting, else `default`.
int lua_setting(lua_State* L) { return runtime(L)->setting(L); }

// import(name): the value the policy directory's lib/NAME.lua returns.
int lua_import(lua_State* L) { return runtime(L)->import(L); }

/// Registry key of the table of loaded libraries (path -> value; false while one
/// loads, and for good when its chunk raised an error).
const char* const kLibrariesKey = "plinth.libraries";

/// Pushes a copy of the value at `src`: tables copied key by key, all the way
/// down (`seen`, a table at that index, maps each to its copy), anything else as
/// it is. Each importing file gets its own copy of a library's tables, so one
/// policy file cannot change what another one's import returned.
void push_copy(lua_State* L, int src, int seen) {
  if (lua_type(L, src) != LUA_TTABLE) {
    lua_pushvalue(L, src);
    return;
  }
  luaL_checkstack(L, 8, "library nested too deeply");
  lua_pushvalue(L, src);
  if (lua_rawget(L, seen) != LUA_TNIL) return;
  lua_pop(L, 1);
  lua_newtable(L);
  const int dst = lua_gettop(L);
  lua_pushvalue(L, src);
  lua_pushvalue(L, dst);
  lua_rawset(L, seen);
  lua_pushnil(L);
  while (lua_next(L, src)) {
    const int value = lua_gettop(L);
    lua_pushvalue(L, value - 1);
    push_copy(L, value, seen);
    lua_rawset(L, dst);
    lua_pop(L, 1);
  }
}

/// Pushes `j` as Lua values; containers become read-only views. JSON null
/// becomes nil (absent).
void push_json(lua_State* L, const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded: lua_pushnil(L); return;
    case Json::value_t::boolean: lua_pushboolean(L, j.get<bool>()); return;
    case Json::value_t::number_integer: lua_pushinteger(L, j.get<lua_Integer>()); return;
    case Json::value_t::number_unsigned: lua_pushinteger(L, static_cast<lua_Integer>(j.get<uint64_t>())); return;
    case Json::value_t::number_float: lua_pushnumber(L, j.get<double>()); return;
    case Json::value_t::string: {
      const auto& s = j.get_ref<const std::string&>();
      lua_pushlstring(L, s.data(), s.size());
      return;
    }
    case Json::value_t::binary: lua_pushnil(L); return;
    case Json::value_t::array: {
      lua_createtable(L, static_cast<int>(j.size()), 0);
      lua_Integer i = 0;
      for (const auto& v : j) {
        push_json(L, v);
        lua_rawseti(L, -2, ++i);
      }
      Sandbox::make_readonly(L);
      return;
    }
    case Json::value_t::object: {
      lua_createtable(L, 0, static_cast<int>(j.size()));
      for (const auto& [k, v] : j.items()) {
        lua_pushlstring(L, k.data(), k.size());
        push_json(L, v);
        lua_rawset(L, -3);
      }
      Sandbox::make_readonly(L);
      return;
    }
  }
  lua_pushnil(L);
}


/// The fields every resource view has; attributes with these names are only
/// reachable through r.attributes.
const std::set<std::string, std::less<>> kResourceFields = {
    "address", "type", "name", "index", "provider", "source", "depends_on", "attributes", "computed"};

}  // namespace

/// Read-only views of equal JSON containers cannot be told apart by a policy
/// (nothing can change them), so each distinct nested value (a pool's bios,
/// networks, source, ...) is built once and every resource view that holds
/// an equal one shares it: the nodes of a pool share all but their scalars.
/// The views live in a table the registry holds for the whole context;
/// between open() and close() it sits on the Lua stack at index().
class SharedViews {
 public:
  explicit SharedViews(lua_State* L) : L_(L) {
    lua_newtable(L);
    ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  ~SharedViews() { luaL_unref(L_, LUA_REGISTRYINDEX, ref_); }
  SharedViews(const SharedViews&) = delete;
  SharedViews& operator=(const SharedViews&) = delete;

  /// Puts the table of views on the stack for push() and push_dependencies().
  void open() {
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_);
    index_ = lua_gettop(L_);
  }
  /// Takes it off again (what was pushed above it stays).
  void close() {
    lua_remove(L_, index_);
    index_ = 0;
  }

  /// Pushes the view of `j`, which must stay alive while this object does.
  void push(const Json& j) {
    if (!j.is_structured()) {
      push_json(L_, j);
      return;
    }
    const size_t h = std::hash<Json>{}(j);
    if (push_seen(j, h)) return;
    push_new(j, h);
  }
  /// Pushes the view of a resource's depends_on, built for the occasion and
  /// kept only when no equal one was seen (consecutive resources, the
  /// nodes of a pool, usually have the same).
  void push_dependencies(const std::vector<std::string>& deps) {
    if (last_deps_ && deps == *last_deps_) {
      lua_rawgeti(L_, index_, last_deps_ref_);
      return;
    }
    Json j(deps);
    const size_t h = std::hash<Json>{}(j);
    if (!push_seen(j, h)) push_new(owned_.emplace_back(std::move(j)), h);
    last_deps_ = &deps;
    lua_pushvalue(L_, -1);  // the view on top, kept under a slot of its own
    lua_rawseti(L_, index_, ++count_);
    last_deps_ref_ = count_;
  }

 private:
  bool push_seen(const Json& j, size_t h) {
    auto [first, last] = seen_.equal_range(h);
    for (auto it = first; it != last; ++it)
      if (*it->second.first == j) {
        lua_rawgeti(L_, index_, it->second.second);
        return true;
      }
    return false;
  }
  void push_new(const Json& j, size_t h) {
    push_json(L_, j);
    lua_pushvalue(L_, -1);
    lua_rawseti(L_, index_, ++count_);
    seen_.emplace(h, std::pair<const Json*, lua_Integer>{&j, count_});
  }

  lua_State* L_;
  int ref_ = LUA_NOREF;
  int index_ = 0;
  lua_Integer count_ = 0;
  std::unordered_multimap<size_t, std::pair<const Json*, lua_Integer>> seen_;
  std::deque<Json> owned_;
  const std::vector<std::string>* last_deps_ = nullptr;  ///< the previous resource's
  lua_Integer last_deps_ref_ = 0;
};

namespace {

/// A resource as policies see it: its wire form (engine/provider/resource.h)
/// with every attribute also reachable as r.NAME (unless NAME is one of the
/// resource's own fields), read-only. `index` is absent for singletons.
/// Built straight from the Resource, keys in the order of the wire form's
/// JSON object (sorted), as push_json of that object would.
void push_resource(lua_State* L, const Resource& r, SharedViews& views) {
  enum class Field { Address, Type, Name, Index, Provider, Source, DependsOn, Attributes, Computed, Attribute };
  struct Key {
    std::string_view name;
    Field field;
    const Json* value = nullptr;
  };
  std::vector<Key> keys = {{"address", Field::Address},       {"type", Field::Type},
                           {"name", Field::Name},             {"provider", Field::Provider},
                           {"source", Field::Source},         {"depends_on", Field::DependsOn},
                           {"attributes", Field::Attributes}, {"computed", Field::Computed}};
  if (r.index >= 0) keys.push_back({"index", Field::Index});
  if (r.attributes.is_object())
    for (auto it = r.attributes.begin(); it != r.attributes.end(); ++it)
      if (!kResourceFields.count(it.key())) keys.push_back({it.key(), Field::Attribute, &it.value()});
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) { return a.name < b.name; });

  auto push_string = [&](const std::string& v) { lua_pushlstring(L, v.data(), v.size()); };
  lua_createtable(L, 0, static_cast<int>(keys.size()));
  for (const auto& k : keys) {
    lua_pushlstring(L, k.name.data(), k.name.size());
    switch (k.field) {
      case Field::Address: push_string(r.address); break;
      case Field::Type: push_string(r.type); break;
      case Field::Name: push_string(r.name); break;
      case Field::Index: lua_pushinteger(L, r.index); break;
      case Field::Provider: push_string(r.provider); break;
      case Field::Source: push_string(r.source.str()); break;
      case Field::DependsOn: views.push_dependencies(r.depends_on); break;
      case Field::Computed: views.push(r.computed); break;
      case Field::Attribute: views.push(*k.value); break;
      case Field::Attributes:
        if (!r.attributes.is_object()) {
          push_json(L, r.attributes);
          break;
        }
        lua_createtable(L, 0, static_cast<int>(r.attributes.size()));
        for (auto it = r.attributes.begin(); it != r.attributes.end(); ++it) {
          lua_pushlstring(L, it.key().data(), it.key().size());
          views.push(it.value());
          lua_rawset(L, -3);
        }
        Sandbox::make_readonly(L);
        break;
    }
    lua_rawset(L, -3);
  }
  Sandbox::make_readonly(L);
}

/// The plan as policies see it: its wire form with sensitive values left out
/// and `before`/`after` reduced to the attributes.
Json plan_json(const plan::Plan& p) {
  Json changes = Json::array();
  for (const auto& c : p.changes) {
    Json x = c;
    for (auto& a : x["changes"])
      if (a.value("sensitive", false)) {
        a.erase("before");
        a.erase("after");
      }
    if (c.before) x["before"] = c.before->attributes;
    if (c.after) x["after"] = c.after->attributes;
    changes.push_back(std::move(x));
  }
  return {{"changes", std::move(changes)}, {"summary", p.summary()}};
}

/// ctx.catalog when the input brings none: the default catalog's GPU facts
/// and, under instance_types (provider -> name -> row), the instance types
/// the registered providers declare, built once per set of providers.
const Json& default_catalog_json() {
  static std::mutex mu;
  static std::map<std::vector<std::string>, Json> built;  // by provider names: a plugin may register later
  const auto providers = schema_registry().providers();
  std::vector<std::string> names;
  for (const ProviderSchema* p : providers) names.push_back(p->name);
  std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = built.try_emplace(names);
  if (!fresh) return it->second;
  auto cat = catalog::default_catalog();
  Json j = cat ? (*cat)->to_json() : Json::object();
  Json types = Json::object();
  for (const ProviderSchema* p : providers) {
    if (p->instance_types.empty()) continue;
    Json rows = Json::object();
    for (const auto& t : p->instance_types) {
      Json row = {{"gpu", t.gpu}, {"gpu_count", t.gpu_count}, {"vcpus", t.vcpus}, {"memory_gb", t.memory_gb},
                  {"nvswitch", t.nvswitch}, {"fabric_manager", t.fabric_manager}};
      for (const auto& [k, v] : t.facts.items()) row[k] = v;
      rows[t.name] = std::move(row);
    }
    types[p->name] = std::move(rows);
  }
  j["instance_types"] = std::move(types);
  it->second = std::move(j);
  return it->second;
}

// Registry keys of the current context.
const char* const kAllKey = "plinth.ctx.all";            // resource index + 1 -> its view, built on first use
const char* const kCacheKey = "plinth.ctx.cache";        // prefix -> read-only list

// ctx.resources(prefix): the views of the resources at or below `prefix`, in
// input order; only those are built.
int lua_resources(lua_State* L) {
  const char* prefix = luaL_optstring(L, 1, "");
  lua_getfield(L, LUA_REGISTRYINDEX, kCacheKey);
  lua_pushstring(L, prefix);
  if (lua_rawget(L, -2) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  Runtime* rt = runtime(L);
  lua_newtable(L);
  lua_Integer n = 0;
  for (size_t i = 0, total = rt->resource_count(); i < total; ++i)
    if (rt->resource_under(i, prefix)) {
      rt->push_resource_view(L, i);
      lua_rawseti(L, -2, ++n);
    }
  Sandbox::make_readonly(L);
  lua_pushstring(L, prefix);
  lua_pushvalue(L, -2);
  lua_rawset(L, -4);  // cache
  return 1;
}

// ctx.resource(address): its view, or nil.
int lua_resource(lua_State* L) {
  const char* address = luaL_checkstring(L, 1);
  Runtime* rt = runtime(L);
  if (size_t i = rt->resource_at(address); i < rt->resource_count()) rt->push_resource_view(L, i);
  else lua_pushnil(L);
  return 1;
}

// __index of ctx: the plain fields, then the lazily built blueprint and plan.
int ctx_index(lua_State* L) {
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  const char* key = lua_tostring(L, 2);
  if (!key) return 0;
  std::string k = key;
  if (k != "blueprint" && k != "plan" && k != "catalog") return 0;
  runtime(L)->push_lazy(L, k);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, -2);
  lua_rawset(L, lua_upvalueindex(2));
  return 1;
}

}  // namespace

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::Pass: return "pass";
    case Outcome::Fail: return "fail";
    case Outcome::Waived: return "waived";
    case Outcome::Error: return "error";
    case Outcome::NotApplicable: return "not_applicable";
  }
  return "error";
}

std::vector<std::string> lua_files(const std::string& dir, bool tests) {
  std::vector<std::string> out;
  const fs::path root = fs::path(dir).lexically_normal();
  for (const auto& file : list_files(dir)) {  // real or compiled-in (engine/core/embedded.h)
    fs::path p(file);
    if (p.extension() != ".lua") continue;
    const fs::path rel = p.lexically_normal().lexically_relative(root);
    if (!rel.empty() && *rel.begin() == "lib") continue;  // libraries: import()
    std::string name = p.filename().string();
    bool is_test = name.size() > 9 && name.compare(name.size() - 9, 9, "_test.lua") == 0;
    if (is_test == tests) out.push_back(file);
  }
  return out;
}

std::string display_path(const std::string& path) {
  if (is_embedded_path(path)) return path;
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return path;
  fs::path cwd = fs::current_path(ec);
  if (ec) return abs.string();
  fs::path rel = abs.lexically_relative(cwd);
  if (rel.empty() || *rel.begin() == "..") return abs.string();
  return rel.string();
}

Runtime::Runtime(const Limits& limits) : sb_(limits) {}

Runtime::~Runtime() = default;

size_t Runtime::find(const std::string& id) const {
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].info.id == id) return i;
  return entries_.size();
}

std::vector<PolicyInfo> Runtime::infos() const {
  std::vector<PolicyInfo> out;
  for (const auto& e : entries_) out.push_back(e.info);
  return out;
}

void read_pack_settings(const std::string& dir, std::map<std::string, PackSettings>& settings, Diagnostics& diags) {
  if (!is_directory_path(dir)) return;  // policy_files reports it
  const fs::path root = fs::path(dir).lexically_normal();
  for (const auto& file : list_files(dir)) {  // real or compiled-in (engine/core/embedded.h), sorted
    const fs::path rel = fs::path(file).lexically_normal().lexically_relative(root);
    if (std::distance(rel.begin(), rel.end()) != 2 || rel.filename() != "settings.yaml") continue;
    const std::string pack = rel.begin()->string();
    const std::string shown = display_path(file);
    auto bad = [&](const std::string& msg, SourceLoc loc, const std::string& hint) {
      diags.push_back({"POL001", Severity::Error, msg, std::move(loc), "", hint});
    };
    auto text = read_file(file);
    if (!text) {
      bad("cannot read pack settings: " + text.error().message, {shown, 0, 0}, "the packs run with their default settings");
      continue;
    }
    // Settings travel to the policy sandbox as JSON, which holds UTF-8 only.
    if (auto at = invalid_utf8_offset(*text)) {
      const size_t nl = *at == 0 ? std::string::npos : text->rfind('\n', *at - 1);
      const size_t line_start = nl == std::string::npos ? 0 : nl + 1;
      const int line = 1 + static_cast<int>(std::count(text->begin(), text->begin() + static_cast<long>(line_start), '\n'));
      const int column = static_cast<int>(*at - line_start) + 1;
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>((*text)[*at]));
      bad(std::string("pack settings are not valid UTF-8: byte ") + byte + " is not part of a valid UTF-8 sequence",
          {shown, line, column}, "save the file as UTF-8; the pack runs with its default settings");
      continue;
    }
    YAML::Node doc;
    try {
      doc = YAML::Load(*text);
    } catch (const YAML::Exception& e) {
      bad("cannot read pack settings: " + e.msg, {shown, e.mark.line + 1, e.mark.column + 1},
          "fix the YAML; the pack runs with its default settings");
      continue;
    }
    if (doc.IsNull()) continue;  // only comments
    if (!doc.IsMap()) {
      bad("pack settings must be a map of names to values", {shown, doc.Mark().line + 1, doc.Mark().column + 1},
          "write one 'name: value' per line, e.g. transport_baseline: advisory");
      continue;
    }
    for (const auto& kv : doc) {
      const SourceLoc at{shown, kv.first.Mark().line + 1, kv.first.Mark().column + 1};
      if (!kv.first.IsScalar()) {
        bad("a pack setting's name must be a single word", at, "write name: value");
        continue;
      }
      const std::string name = kv.first.Scalar();
      if (!kv.second.IsScalar()) {
        bad("pack setting '" + safe_text(name) + "' must be a single value", at,
            "write name: value (a string, number or true/false)");
        continue;
      }
      settings[pack][name] = kv.second.Scalar();
    }
  }
}

std::string pack_of(const std::string& file, const std::string& dir) {
  const fs::path rel = fs::path(file).lexically_normal().lexically_relative(fs::path(dir).lexically_normal());
  return std::distance(rel.begin(), rel.end()) > 1 ? rel.begin()->string() : "";
}

std::vector<PackFile> policy_files(const std::string& dir, Diagnostics& diags) {
  if (!is_directory_path(dir)) {
    diags.push_back({"POL001", Severity::Error, "policy directory '" + dir + "' does not exist", {}, "",
                     "pass an existing directory to --policy-dir (or in PLINTH_POLICY_DIR); the built-in packs "
                     "need neither"});
    return {};
  }
  std::vector<PackFile> out;
  for (const auto& file : lua_files(dir, false)) out.push_back({file, pack_of(file, dir)});
  return out;
}

std::vector<std::string> empty_pack_directories(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;  // the compiled-in packs are not on disk
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_directory(ec2) && it->path().filename().string().front() != '.' &&
        fs::is_empty(it->path(), ec2) && !ec2)
      out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Runtime::load_dir(const std::string& dir) {
  for (const auto& [file, pack] : policy_files(dir, diags_)) load_file(file, pack);
}

void Runtime::load_file(const std::string& path, const std::string& pack) {
  std::string shown = display_path(path);
  auto text = read_file(path);
  if (!text) {
    diags_.push_back({"POL001", Severity::Error, text.error().message, {shown, 0, 0}, "", ""});
    return;
  }
  const size_t file = files_.size();
  files_.push_back(shown);
  hashes_[shown] = sha256_hex(*text);
  lua_State* L = sb_.L();
  sb_.push_env();
  // Each function knows its file, so a check's findings are bound to it.
  const std::pair<const char*, lua_CFunction> fns[] = {
      {"policy", lua_policy}, {"fail", lua_fail}, {"pass", lua_pass},
      {"not_applicable", lua_not_applicable}, {"setting", lua_setting}, {"import", lua_import}};
  for (auto [name, fn] : fns) {
    lua_pushlightuserdata(L, this);
    lua_pushinteger(L, static_cast<lua_Integer>(file));
    lua_pushcclosure(L, fn, 2);
    lua_setfield(L, -2, name);
  }
  loading_pack_ = pack;
  // The policy directory: above the pack's folder, or the file's own folder.
  fs::path root = fs::path(path).lexically_normal().parent_path();
  if (!pack.empty()) {
    fs::path up = root;
    while (!up.empty() && up.filename() != pack) up = up.parent_path();
    if (!up.empty()) root = up.parent_path();
  }
  loading_root_ = root.string();
  loading_file_ = file;
  LuaError err;
  bool ok = sb_.run_chunk(*text, shown, -1, err);
  loading_file_ = kNone;
  if (!ok) {
    diags_.push_back({"POL001", Severity::Error, "policy file failed to load: " + safe_text(err.message),
                      err.loc.known() ? err.loc : SourceLoc{shown, 0, 0}, "",
                      "fix the Lua error; the other policy files still load"});
  }
  lua_pop(L, 1);
}

bool Runtime::loading(lua_State* L) const {
  return loading_file_ != kNone && static_cast<size_t>(lua_tointeger(L, lua_upvalueindex(2))) == loading_file_;
}

int Runtime::declare(lua_State* L) {
  if (!loading(L))
    return luaL_error(L, "policy{} can only be called while its policy file loads, not inside a check");
  // Raw reads only and no memory limit: no policy code runs and nothing
  // raises an error while the C++ objects below are alive.
  sb_.uncounted([&] { declare_table(L); });
  return 0;
}

int Runtime::import(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  if (!loading(L))
    return luaL_error(L, "import('%s') loads a library while its policy file loads; call it at the top of the file, "
                         "not inside a check", name);
  for (const char* c = name; *c; ++c)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
      return luaL_error(L, "import('%s'): a library name is lower-case letters, digits and '_' (lib/NAME.lua)", name);
  // C++ objects live only inside push_library, under no memory limit, so no
  // Lua error unwinds past them; the calls below may raise errors.
  bool found = false;
  sb_.uncounted([&] { found = push_library(L, name); });
  if (!found) {
    luaL_where(L, 1);  // the importing line: "file:line: "
    lua_insert(L, -2);
    lua_concat(L, 2);
    return lua_error(L);
  }
  // Stack: name, key (the path), code, chunk name.
  if (lua_getfield(L, LUA_REGISTRYINDEX, kLibrariesKey) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, kLibrariesKey);
  }
  const int libs = lua_gettop(L);
  lua_pushvalue(L, 2);
  const int cached = lua_rawget(L, libs);
  if (cached == LUA_TBOOLEAN && !lua_toboolean(L, -1))  // its first import raised an error
    return luaL_error(L, "import('%s'): the library did not load (its error is reported with the first file that "
                         "imported it)", name);
  if (cached != LUA_TNIL) {
    lua_newtable(L);
    push_copy(L, lua_gettop(L) - 1, lua_gettop(L));
    return 1;
  }
  lua_pop(L, 1);
  lua_pushvalue(L, 2);
  lua_pushboolean(L, 0);
  lua_rawset(L, libs);  // loading
  size_t code_len = 0;
  const char* code = lua_tolstring(L, 3, &code_len);
  if (luaL_loadbufferx(L, code, code_len, lua_tostring(L, 4), "t") != LUA_OK) return lua_error(L);
  sb_.push_env();  // the safe globals, as a policy file has them, without policy/pass/fail/setting/import
  lua_setupvalue(L, -2, 1);  // _ENV
  lua_call(L, 0, 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushboolean(L, 1);  // a library that returns nothing imports as true
  }
  lua_pushvalue(L, 2);
  lua_pushvalue(L, -2);
  lua_rawset(L, libs);
  lua_newtable(L);
  push_copy(L, lua_gettop(L) - 1, lua_gettop(L));
  return 1;
}

bool Runtime::push_library(lua_State* L, const char* name) {
  // The file's own policy directory first, then the built-in packs' lib/, so a
  // pack copied out of the built-in ones (--policy-dir) still finds theirs.
  const std::string file = std::string(name) + ".lua";
  std::string path = (fs::path(loading_root_) / "lib" / file).string();
  const std::string shown_first = display_path(path);
  if (!is_file_path(path)) path = (fs::path(std::string(kBuiltinPolicyDir)) / "lib" / file).string();
  const std::string shown = display_path(path);
  auto text = is_file_path(path) ? read_file(path) : Result<std::string>(Error::invalid(""));
  if (!text) {
    lua_pushfstring(L, "import('%s'): no library %s (nor in the built-in packs' lib/); a library is lib/NAME.lua in the "
                       "policy directory",
                    name, shown_first.c_str());
    return false;
  }
  hashes_[shown] = sha256_hex(*text);  // the report lists what ran, libraries included
  if (std::find(files_.begin(), files_.end(), shown) == files_.end()) files_.push_back(shown);
  const std::string chunk = "@" + shown;
  lua_pushlstring(L, path.data(), path.size());
  lua_pushlstring(L, text->data(), text->size());
  lua_pushlstring(L, chunk.data(), chunk.size());
  return true;
}

int Runtime::setting(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  if (!loading(L))
    return luaL_error(L,
                      "setting('%s') reads the pack's settings while its policy file loads; call it at the top of "
                      "the file, not inside a check",
                      name);
  // Only iterators below (nothing to destroy if a push raises an error).
  auto pack = settings_.find(loading_pack_);
  auto it = pack == settings_.end() ? PackSettings::const_iterator{} : pack->second.find(std::string_view(name));
  if (pack == settings_.end() || it == pack->second.end()) {
    lua_settop(L, 2);  // the default; nil when none was given
    return 1;
  }
  const std::string& v = it->second;
  if (v == "true" || v == "false") lua_pushboolean(L, v == "true");
  else if (lua_stringtonumber(L, v.c_str()) == 0) lua_pushlstring(L, v.data(), v.size());
  return 1;
}

void Runtime::declare_table(lua_State* L) {
  lua_Debug ar;
  SourceLoc loc;
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar)) {
    loc = {safe_text(ar.source[0] == '@' ? std::string(ar.source + 1) : std::string(ar.short_src)), ar.currentline, 0};
  }
  auto bad = [&](const std::string& msg, const std::string& hint = "") {
    diags_.push_back({"POL002", Severity::Error, msg, loc, "", hint});
  };
  if (!lua_istable(L, 1)) return bad("policy{} expects a table, got a " + std::string(luaL_typename(L, 1)));
  lua_settop(L, 1);
  PolicyInfo info;
  info.pack = loading_pack_;
  info.loc = loc;
  std::vector<std::string> known(std::begin(kFields), std::end(kFields));
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) continue;
    std::string key = safe_text(lua_tostring(L, -1));
    if (std::find(known.begin(), known.end(), key) == known.end()) bad("unknown policy field '" + key + "'",
                                                                       did_you_mean(key, known));
  }
  auto str_field = [&](const char* key, std::string& out, bool required) {
    rawfield(L, 1, key);
    if (lua_type(L, -1) == LUA_TSTRING) out = safe_text(lua_tostring(L, -1));
    else if (!lua_isnil(L, -1) || required)
      bad(std::string("policy field '") + key + "' must be a string" + (info.id.empty() ? "" : " (in " + info.id + ")"));
    lua_pop(L, 1);
  };
  str_field("id", info.id, true);
  str_field("title", info.title, true);
  str_field("description", info.description, false);
  str_field("severity", info.severity, true);
  str_field("enforcement", info.enforcement, true);
  if (info.id.empty()) return bad("a policy needs a non-empty 'id'");
  size_t before = diags_.size();
  if (!info.severity.empty() && std::find(kSeverities.begin(), kSeverities.end(), info.severity) == kSeverities.end())
    bad("policy " + info.id + ": severity '" + info.severity + "' is not one of low, medium, high, critical",
        did_you_mean(info.severity, kSeverities));
  if (!info.enforcement.empty() &&
      std::find(kEnforcements.begin(), kEnforcements.end(), info.enforcement) == kEnforcements.end())
    bad("policy " + info.id + ": enforcement '" + info.enforcement + "' is not one of advisory, mandatory",
        did_you_mean(info.enforcement, kEnforcements));
  rawfield(L, 1, "controls");
  if (lua_istable(L, -1)) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      if (lua_type(L, -2) != LUA_TSTRING) {
        bad("policy " + info.id + ": controls keys must be framework names such as soc2");
      } else {
        std::string fw = safe_text(lua_tostring(L, -2));
        auto& ids = info.controls[fw];
        if (lua_type(L, -1) == LUA_TSTRING) {
          ids.push_back(safe_text(lua_tostring(L, -1)));
        } else if (lua_istable(L, -1)) {
          for (lua_Integer i = 1;; ++i) {
            int t = lua_rawgeti(L, -1, i);
            if (t == LUA_TNIL) {
              lua_pop(L, 1);
              break;
            }
            if (t == LUA_TSTRING) ids.push_back(safe_text(lua_tostring(L, -1)));
            else bad("policy " + info.id + ": controls." + fw + " must list control IDs as strings");
            lua_pop(L, 1);
          }
        } else {
          bad("policy " + info.id + ": controls." + fw + " must be a list of control IDs");
        }
      }
      lua_pop(L, 1);
    }
  } else if (!lua_isnil(L, -1)) {
    bad("policy " + info.id + ": 'controls' must be a table such as { soc2 = {\"CC6.1\"} }");
  }
  lua_pop(L, 1);
  for (const auto& e : entries_)
    if (e.info.id == info.id)
      bad("duplicate policy ID '" + info.id + "' (first declared at " + e.info.loc.str() + ")",
          "give every policy a unique id");
  rawfield(L, 1, "check");
  if (!lua_isfunction(L, -1)) {
    lua_pop(L, 1);
    bad("policy " + info.id + ": 'check' must be a function(ctx)");
  }
  if (diags_.size() != before) {
    if (lua_isfunction(L, -1)) lua_pop(L, 1);
    return;
  }
  int ref = luaL_ref(L, LUA_REGISTRYINDEX);
  entries_.push_back({std::move(info), ref, loading_file_});
}

int Runtime::report(lua_State* L, Outcome outcome) {
  // Every Lua call and every error is here, before any C++ object exists:
  // lua_error unwinds with longjmp.
  // fail() and not_applicable() need their message; pass()'s evidence is optional.
  const bool fail = outcome == Outcome::Fail || outcome == Outcome::NotApplicable;
  const char* fn = outcome == Outcome::Fail ? "fail" : outcome == Outcome::NotApplicable ? "not_applicable" : "pass";
  const char* what = outcome == Outcome::Fail ? "message" : outcome == Outcome::NotApplicable ? "reason" : "evidence";
  if (!current_ || running_ == kNone) return luaL_error(L, "%s() can only be called while a check runs", fn);
  if (static_cast<size_t>(lua_tointeger(L, lua_upvalueindex(2))) != entries_[running_].file)
    return luaL_error(L, "%s() of another policy file was called while policy %s runs; a check reports only its own "
                         "findings", fn, entries_[running_].info.id.c_str());
  if (current_->size() >= sb_.limits().verdicts) {
    sb_.stop_call();
    return luaL_error(L, "limit of %I findings for one check exceeded; report per pool or for the whole blueprint "
                         "rather than per node, or raise the limit", static_cast<lua_Integer>(sb_.limits().verdicts));
  }
  if (lua_istable(L, 1)) {  // a resource view: take its address
    lua_getfield(L, 1, "address");
    lua_replace(L, 1);
  }
  if (lua_type(L, 1) != LUA_TSTRING && !lua_isnil(L, 1))
    return luaL_error(L, "%s(address, %s): address must be a string, a resource or nil, got a %s", fn, what,
                      luaL_typename(L, 1));
  bool has_message = lua_type(L, 2) == LUA_TSTRING || lua_type(L, 2) == LUA_TNUMBER;
  if (!has_message && (fail || !lua_isnil(L, 2)))
    return luaL_error(L, "%s(address, %s): %s must be a string, got %s", fn, what, what,
                      lua_isnone(L, 2) ? "nothing" : lua_pushfstring(L, "a %s", luaL_typename(L, 2)));
  if (!lua_isnoneornil(L, 3) && lua_type(L, 3) != LUA_TSTRING)
    return luaL_error(L, "%s(address, %s, field): field must be a string (a key of the entity, e.g. "
                         "\"retention_days\" or \"encryption.at_rest\"), got a %s",
                      fn, what, luaL_typename(L, 3));
  size_t address_len = 0, message_len = 0, field_len = 0;
  const char* address = lua_isnil(L, 1) ? "" : lua_tolstring(L, 1, &address_len);
  const char* message = has_message ? lua_tolstring(L, 2, &message_len) : "";  // both stay on the stack
  const char* field = lua_type(L, 3) == LUA_TSTRING ? lua_tolstring(L, 3, &field_len) : "";
  const size_t kept = std::min(message_len, sb_.limits().message_bytes);
  if (!sb_.charge(verdict_cost(entries_[running_].info.id.size(), address_len, kept) + field_len))
    return luaL_error(L, "run-wide memory limit exceeded by findings");
  add_verdict(outcome, address, address_len, message, message_len, std::string(field, std::min<size_t>(field_len, 256)));
  return 0;
}

void Runtime::add_verdict(Outcome outcome, const char* address, size_t address_len, const char* message,
                          size_t message_len, const std::string& field) {
  const size_t limit = sb_.limits().message_bytes;
  std::string text;
  if (message_len > limit) {
    size_t cut = limit;
    while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    text = safe_text(std::string_view(message, cut)) + " [... message cut: " + std::to_string(message_len - cut) +
           " more bytes; the limit is " + std::to_string(limit) + "]";
  } else {
    text = safe_text(std::string_view(message, message_len));
  }
  std::string addr = safe_text(std::string_view(address, address_len));
  SourceLoc loc = locate(addr);
  // fail(address, message, field): the field's own position when the
  // blueprint wrote it (else the entity's).
  if (!field.empty() && loc.known())
    if (auto it = origins_.find(loc.str()); it != origins_.end()) loc = it->second->at(field);
  current_->push_back({entries_[running_].info.id, outcome, std::move(addr), std::move(text), std::move(loc), "", "", {}});
}

const Resource* Runtime::first_of_pool(const std::string& address) const {
  if (!resources_) return nullptr;
  // The nodes of TYPE.NAME follow each other, lowest index first (Input:
  // address_less order), so this searches instead of indexing every address.
  auto parts = parse_address(address);
  if (!parts || parts->index != -1 || address.find('[') != std::string::npos) return nullptr;
  auto it = std::lower_bound(resources_->begin(), resources_->end(), std::tie(parts->type, parts->name),
                             [](const Resource& r, const auto& k) { return std::tie(r.type, r.name) < k; });
  for (; it != resources_->end() && it->type == parts->type && it->name == parts->name; ++it)
    if (it->address.size() > address.size() && it->address[address.size()] == '[' &&
        it->address.compare(0, address.size(), address) == 0)
      return &*it;
  return nullptr;
}

SourceLoc Runtime::locate(const std::string& address) const {
  if (address.empty() || !input_) return {};
  if (const Resource* r = resources_ ? graph::find_sorted(*resources_, address) : nullptr) return r->source;
  // A pool's address (TYPE.NAME): where its first node is declared.
  if (const Resource* r = first_of_pool(address)) return r->source;
  if (!input_->blueprint) return {};
  const bp::Blueprint& b = *input_->blueprint;
  auto parts = parse_address(address);
  std::string name = parts ? parts->name : address;
  if (const auto* p = b.find_burst_pool(name)) return p->origin.loc;
  if (const auto* p = b.find_node_pool(name)) return p->origin.loc;
  return {};
}

void Runtime::set_context(const Input& input) {
  input_ = &input;
  lua_State* L = sb_.L();
  origins_.clear();
  if (input.blueprint)
    for (const auto& e : bp::entity_origins(*input.blueprint))
      if (e.origin->loc.known()) origins_.emplace(e.origin->loc.str(), e.origin);
  // The previous context becomes garbage; collect it before measuring the
  // new one, which (like the lazy views) is not charged to the policies.
  if (ctx_ref_) luaL_unref(L, LUA_REGISTRYINDEX, ctx_ref_);
  ctx_ref_ = 0;
  views_.reset();
  resources_ = nullptr;
  for (const char* key : {kAllKey, kCacheKey}) {
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, key);
  }
  lua_gc(L, LUA_GCCOLLECT);
  sb_.reset_uncounted();
  sb_.uncounted([&] { build_context(input); });
}

void Runtime::build_context(const Input& input) {
  lua_State* L = sb_.L();
  static const std::vector<Resource> kNone;
  resources_ = input.resources ? input.resources : &kNone;
  // The resources' views are built when a policy first asks for them
  // (push_resource_view): a check that reads the blueprint builds none.
  views_ = std::make_unique<SharedViews>(L);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kAllKey);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kCacheKey);

  // ctx: a read-only view whose __index also builds blueprint and plan on first use.
  lua_newtable(L);
  int data = lua_gettop(L);
  std::vector<std::string> compliance;
  if (input.blueprint) compliance = input.blueprint->metadata.compliance;
  push_json(L, Json(compliance));
  lua_setfield(L, data, "compliance");
  lua_pushlightuserdata(L, this);
  lua_pushcclosure(L, lua_resources, 1);
  lua_setfield(L, data, "resources");
  lua_pushlightuserdata(L, this);
  lua_pushcclosure(L, lua_resource, 1);
  lua_setfield(L, data, "resource");
  lua_pushvalue(L, data);
  Sandbox::make_readonly(L);
  lua_getmetatable(L, -1);
  lua_pushlightuserdata(L, this);
  lua_pushvalue(L, data);
  lua_pushcclosure(L, ctx_index, 2);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  ctx_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pop(L, 1);  // data
}

size_t Runtime::resource_count() const { return resources_ ? resources_->size() : 0; }

bool Runtime::resource_under(size_t i, std::string_view prefix) const {
  if (prefix.empty()) return true;
  const Resource& r = (*resources_)[i];
  // An address starts with its type: a type that disagrees with the prefix
  // rules the resource out without reading its address, which lives elsewhere
  // on the heap (at 100,000 resources the reads of the addresses alone took
  // about 0.4 s, most of them misses).
  size_t common = std::min(r.type.size(), prefix.size());
  if (r.type.compare(0, common, prefix, 0, common) != 0) return false;
  std::string_view address = r.address;
  if (address.substr(0, prefix.size()) != prefix) return false;
  return address.size() == prefix.size() || address[prefix.size()] == '.' || address[prefix.size()] == '[';
}

size_t Runtime::resource_at(std::string_view address) const {
  const Resource* r = resources_ ? graph::find_sorted(*resources_, std::string(address)) : nullptr;
  return r ? static_cast<size_t>(r - resources_->data()) : resource_count();
}

void Runtime::push_resource_view(lua_State* L, size_t i) {
  lua_getfield(L, LUA_REGISTRYINDEX, kAllKey);
  if (lua_rawgeti(L, -1, static_cast<lua_Integer>(i + 1)) == LUA_TNIL) {
    lua_pop(L, 1);
    // Built once for every policy: not charged to the policy that asked first.
    sb_.uncounted([&] {
      views_->open();
      push_resource(L, (*resources_)[i], *views_);
      views_->close();
    });
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, static_cast<lua_Integer>(i + 1));
  }
  lua_remove(L, -2);
}

void Runtime::push_lazy(lua_State* L, const std::string& key) {
  // Built once for every policy: not charged to the policy that asked first.
  sb_.uncounted([&] {
    // Not `input_ ? input_->blueprint_json : Json::object()`: a conditional
    // with a temporary on one side copies the other (the whole blueprint).
    static const Json kEmpty = Json::object();
    if (key == "blueprint") push_json(L, input_ ? input_->blueprint_json : kEmpty);
    else if (key == "catalog") push_json(L, input_ && !input_->catalog.is_null() ? input_->catalog : default_catalog_json());
    else if (input_ && input_->plan) push_json(L, plan_json(*input_->plan));
    else push_json(L, plan_json(plan::Plan{}));
  });
}

std::vector<Verdict> Runtime::run(size_t i) {
  const Entry& e = entries_[i];
  std::vector<Verdict> out;
  current_ = &out;
  running_ = i;
  lua_State* L = sb_.L();
  lua_rawgeti(L, LUA_REGISTRYINDEX, e.check_ref);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ctx_ref_);
  LuaError err;
  bool ok = sb_.call(1, 1, err);
  current_ = nullptr;
  running_ = kNone;
  if (ok) {
    int t = lua_type(L, -1);
    bool fine = t == LUA_TNIL || (t == LUA_TBOOLEAN && lua_toboolean(L, -1));
    std::string type = luaL_typename(L, -1);
    lua_pop(L, 1);
    if (fine) {
      if (out.empty()) out.push_back({e.info.id, Outcome::Pass, "", "", {}, "", "", {}});
      return out;
    }
    err = {"check returned a " + type + " value; report findings with fail(address, message) and return nothing", {}};
  } else {
    err = Sandbox::split_position(err.message, e.info.loc.file);
  }
  return {{e.info.id, Outcome::Error, "", safe_text(err.message), err.loc.known() ? err.loc : e.info.loc, "", "", {}}};
}

}  // namespace plinth::policy
