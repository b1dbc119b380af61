#include "engine/policy/runtime.h"

#include <algorithm>
#include <filesystem>
#include <lua.hpp>
#include <yaml-cpp/yaml.h>
#include <cstring>
#include <set>

#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/catalog/catalog.h"
#include "engine/core/strings.h"

namespace fs = std::filesystem;

namespace plinth::policy {
namespace {

const char* const kFields[] = {"id", "title", "description", "severity", "enforcement", "controls", "check"};
const std::vector<std::string> kSeverities = {"low", "medium", "high", "critical"};
const std::vector<std::string> kEnforcements = {"advisory", "mandatory"};

Runtime* runtime(lua_State* L) { return static_cast<Runtime*>(lua_touserdata(L, lua_upvalueindex(1))); }

int lua_policy(lua_State* L) {
  runtime(L)->declare(L);
  return 0;
}
int lua_fail(lua_State* L) {
  runtime(L)->report(L, Outcome::Fail);
  return 0;
}
int lua_pass(lua_State* L) {
  runtime(L)->report(L, Outcome::Pass);
  return 0;
}
// setting(name, default): the pack's setting, else `default`.
int lua_setting(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  if (!runtime(L)->loading())
    return luaL_error(L, "setting('%s') reads the pack's settings while its file loads; call it at the top of the file", name);
  if (!runtime(L)->push_setting(L, name)) lua_pushvalue(L, 2);
  return 1;
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

void set_string(lua_State* L, const char* key, const std::string& v) {
  lua_pushlstring(L, v.data(), v.size());
  lua_setfield(L, -2, key);
}

/// The fields every resource view has; attributes with these names are only
/// reachable through r.attributes.
const std::set<std::string> kResourceFields = {"address", "type",   "name",       "index",
                                               "provider", "source", "depends_on", "attributes"};

void push_resource(lua_State* L, const Resource& r) {
  lua_createtable(L, 0, static_cast<int>(8 + r.attributes.size()));
  int t = lua_gettop(L);
  lua_createtable(L, 0, static_cast<int>(r.attributes.size()));
  int attrs = lua_gettop(L);
  if (r.attributes.is_object()) {
    for (const auto& [k, v] : r.attributes.items()) {
      push_json(L, v);
      if (!kResourceFields.count(k)) {
        lua_pushvalue(L, -1);
        lua_setfield(L, t, k.c_str());
      }
      lua_setfield(L, attrs, k.c_str());
    }
  }
  Sandbox::make_readonly(L);
  lua_setfield(L, t, "attributes");
  set_string(L, "address", r.address);
  set_string(L, "type", r.type);
  set_string(L, "name", r.name);
  set_string(L, "provider", r.provider);
  set_string(L, "source", r.source.str());
  if (r.index >= 0) {
    lua_pushinteger(L, r.index);
    lua_setfield(L, t, "index");
  }
  push_json(L, Json(r.depends_on));
  lua_setfield(L, t, "depends_on");
  Sandbox::make_readonly(L);
}

Json plan_json(const plan::Plan& p) {
  Json changes = Json::array();
  for (const auto& c : p.changes) {
    Json attrs = Json::array();
    for (const auto& a : c.changes) {
      Json x = {{"path", a.path}, {"forces_replacement", a.forces_replacement}, {"sensitive", a.sensitive}};
      if (a.before && !a.sensitive) x["before"] = *a.before;
      if (a.after && !a.sensitive) x["after"] = *a.after;
      attrs.push_back(std::move(x));
    }
    Json x = {{"address", c.address}, {"type", c.type}, {"action", plan::to_string(c.action)}, {"changes", attrs}};
    if (c.before) x["before"] = c.before->attributes;
    if (c.after) x["after"] = c.after->attributes;
    changes.push_back(std::move(x));
  }
  auto s = p.summary();
  return {{"changes", changes},
          {"summary",
           {{"create", s.create}, {"update", s.update}, {"replace", s.replace}, {"delete", s.remove},
            {"noop", s.noop}}}};
}

/// ctx.catalog when the input brings none: the default catalog's facts, built once.
const Json& default_catalog_json() {
  static const Json j = [] {
    auto cat = catalog::default_catalog();
    return cat ? (*cat)->to_json() : Json::object();
  }();
  return j;
}

bool address_matches(const char* address, const char* prefix) {
  size_t n = std::strlen(prefix);
  if (n == 0) return true;
  if (std::strncmp(address, prefix, n) != 0) return false;
  return address[n] == '\0' || address[n] == '.' || address[n] == '[';
}

// Registry keys of the current context.
const char* const kAllKey = "plinth.ctx.all";            // array of resource views, input order
const char* const kByAddressKey = "plinth.ctx.byaddr";   // address -> view
const char* const kCacheKey = "plinth.ctx.cache";        // prefix -> read-only list

int lua_resources(lua_State* L) {
  const char* prefix = luaL_optstring(L, 1, "");
  lua_getfield(L, LUA_REGISTRYINDEX, kCacheKey);
  lua_pushstring(L, prefix);
  if (lua_rawget(L, -2) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, kAllKey);
  int all = lua_gettop(L);
  lua_newtable(L);
  lua_Integer n = 0;
  lua_Integer total = static_cast<lua_Integer>(lua_rawlen(L, all));
  for (lua_Integer i = 1; i <= total; ++i) {
    lua_rawgeti(L, all, i);
    lua_getfield(L, -1, "address");
    bool match = address_matches(lua_tostring(L, -1), prefix);
    lua_pop(L, 1);
    if (match) lua_rawseti(L, -2, ++n);
    else lua_pop(L, 1);
  }
  Sandbox::make_readonly(L);
  lua_pushstring(L, prefix);
  lua_pushvalue(L, -2);
  lua_rawset(L, all - 1);  // cache
  return 1;
}

int lua_resource(lua_State* L) {
  const char* address = luaL_checkstring(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, kByAddressKey);
  lua_getfield(L, -1, address);
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
  }
  return "error";
}

std::vector<std::string> lua_files(const std::string& dir, bool tests) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".lua") continue;
    std::string name = it->path().filename().string();
    bool is_test = name.size() > 9 && name.compare(name.size() - 9, 9, "_test.lua") == 0;
    if (is_test == tests) out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string display_path(const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return path;
  fs::path cwd = fs::current_path(ec);
  if (ec) return abs.string();
  fs::path rel = abs.lexically_relative(cwd);
  if (rel.empty() || *rel.begin() == "..") return abs.string();
  return rel.string();
}

Runtime::Runtime(const Limits& limits) : limits_(limits) {}

std::vector<PolicyInfo> Runtime::infos() const {
  std::vector<PolicyInfo> out;
  for (const auto& e : entries_) out.push_back(e.info);
  return out;
}

void Runtime::load_settings(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;  // load_dir reports it
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && fs::is_regular_file(e.path() / "settings.yaml")) files.push_back(e.path() / "settings.yaml");
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string pack = f.parent_path().filename().string();
    const std::string shown = display_path(f.string());
    try {
      YAML::Node doc = YAML::LoadFile(f.string());
      if (!doc.IsMap()) {
        diags_.push_back({"POL001", Severity::Error, "pack settings must be a map of names to values", {shown, 1, 0}, "",
                          "write one 'name: value' per line, e.g. transport_baseline: advisory"});
        continue;
      }
      for (const auto& kv : doc) {
        if (!kv.second.IsScalar()) {
          diags_.push_back({"POL001", Severity::Error,
                            "pack setting '" + kv.first.as<std::string>() + "' must be a single value",
                            {shown, kv.first.Mark().line + 1, kv.first.Mark().column + 1}, "",
                            "write name: value (a string, number or true/false)"});
          continue;
        }
        settings_[pack][kv.first.as<std::string>()] = kv.second.as<std::string>();
      }
    } catch (const YAML::Exception& e) {
      diags_.push_back({"POL001", Severity::Error, "cannot read pack settings: " + e.msg, {shown, e.mark.line + 1, 0}, "",
                        "fix the YAML; the packs run with their default settings"});
    }
  }
}

bool Runtime::push_setting(lua_State* L, const std::string& name) {
  auto pack = settings_.find(loading_pack_);
  if (pack == settings_.end()) return false;
  auto it = pack->second.find(name);
  if (it == pack->second.end()) return false;
  const std::string& v = it->second;
  if (v == "true" || v == "false") lua_pushboolean(L, v == "true");
  else if (lua_stringtonumber(L, v.c_str()) == 0) lua_pushlstring(L, v.data(), v.size());
  return true;
}

void Runtime::load_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    diags_.push_back({"POL001", Severity::Error, "policy directory '" + dir + "' does not exist", {}, "",
                      "pass an existing directory to --policy-dir, or set PLINTH_POLICY_DIR"});
    return;
  }
  fs::path root = fs::path(dir).lexically_normal();
  for (const auto& file : lua_files(dir, false)) {
    fs::path rel = fs::path(file).lexically_normal().lexically_relative(root);
    std::string pack = std::distance(rel.begin(), rel.end()) > 1 ? rel.begin()->string() : "";
    load_file(file, pack);
  }
}

void Runtime::load_file(const std::string& path, const std::string& pack) {
  std::string shown = display_path(path);
  auto text = read_file(path);
  if (!text) {
    diags_.push_back({"POL001", Severity::Error, text.error().message, {shown, 0, 0}, "", ""});
    return;
  }
  files_.push_back(shown);
  hashes_[shown] = sha256_hex(*text);
  lua_State* L = sb_.L();
  sb_.push_env();
  const std::pair<const char*, lua_CFunction> fns[] = {
      {"policy", lua_policy}, {"fail", lua_fail}, {"pass", lua_pass}, {"setting", lua_setting}};
  for (auto [name, fn] : fns) {
    lua_pushlightuserdata(L, this);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
  }
  loading_pack_ = pack;
  loading_ = true;
  LuaError err;
  bool loaded = sb_.run_chunk(*text, shown, -1, limits_, err);
  loading_ = false;
  if (!loaded) {
    diags_.push_back({"POL001", Severity::Error, "policy file failed to load: " + err.message,
                      err.loc.known() ? err.loc : SourceLoc{shown, 0, 0}, "",
                      "fix the Lua error; the other policy files still load"});
  }
  lua_pop(L, 1);
}

void Runtime::declare(lua_State* L) {
  lua_Debug ar;
  SourceLoc loc;
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar)) {
    loc = {ar.source[0] == '@' ? std::string(ar.source + 1) : std::string(ar.short_src), ar.currentline, 0};
  }
  auto bad = [&](const std::string& msg, const std::string& hint = "") {
    diags_.push_back({"POL002", Severity::Error, msg, loc, "", hint});
  };
  if (!lua_istable(L, 1)) return bad("policy{} expects a table, got a " + std::string(luaL_typename(L, 1)));
  PolicyInfo info;
  info.pack = loading_pack_;
  info.loc = loc;
  std::vector<std::string> known(std::begin(kFields), std::end(kFields));
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) continue;
    std::string key = lua_tostring(L, -1);
    if (std::find(known.begin(), known.end(), key) == known.end()) bad("unknown policy field '" + key + "'",
                                                                       did_you_mean(key, known));
  }
  auto str_field = [&](const char* key, std::string& out, bool required) {
    lua_getfield(L, 1, key);
    if (lua_type(L, -1) == LUA_TSTRING) out = lua_tostring(L, -1);
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
  lua_getfield(L, 1, "controls");
  if (lua_istable(L, -1)) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      if (lua_type(L, -2) != LUA_TSTRING) {
        bad("policy " + info.id + ": controls keys must be framework names such as soc2");
      } else {
        std::string fw = lua_tostring(L, -2);
        auto& ids = info.controls[fw];
        if (lua_type(L, -1) == LUA_TSTRING) {
          ids.push_back(lua_tostring(L, -1));
        } else if (lua_istable(L, -1)) {
          for (lua_Integer i = 1;; ++i) {
            int t = lua_rawgeti(L, -1, i);
            if (t == LUA_TNIL) {
              lua_pop(L, 1);
              break;
            }
            if (t == LUA_TSTRING) ids.push_back(lua_tostring(L, -1));
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
  lua_getfield(L, 1, "check");
  if (!lua_isfunction(L, -1)) {
    lua_pop(L, 1);
    bad("policy " + info.id + ": 'check' must be a function(ctx)");
  }
  if (diags_.size() != before) {
    if (lua_isfunction(L, -1)) lua_pop(L, 1);
    return;
  }
  int ref = luaL_ref(L, LUA_REGISTRYINDEX);
  entries_.push_back({std::move(info), ref});
}

void Runtime::report(lua_State* L, Outcome outcome) {
  // Argument errors are raised before any C++ object is alive: lua_error
  // unwinds with longjmp.
  bool fail = outcome == Outcome::Fail;
  const char* fn = fail ? "fail" : "pass";
  const char* what = fail ? "message" : "evidence";
  if (!current_) luaL_error(L, "%s() can only be called while a check runs", fn);
  if (lua_istable(L, 1)) {  // a resource view: take its address
    lua_getfield(L, 1, "address");
    lua_replace(L, 1);
  }
  if (lua_type(L, 1) != LUA_TSTRING && !lua_isnil(L, 1))
    luaL_error(L, "%s(address, %s): address must be a string, a resource or nil, got a %s", fn, what,
               luaL_typename(L, 1));
  bool has_message = lua_type(L, 2) == LUA_TSTRING || lua_type(L, 2) == LUA_TNUMBER;
  if (!has_message && (fail || !lua_isnil(L, 2)))
    luaL_error(L, "%s(address, %s): %s must be a string, got %s", fn, what, what,
               lua_isnone(L, 2) ? "nothing" : lua_pushfstring(L, "a %s", luaL_typename(L, 2)));
  std::string address = lua_isnil(L, 1) ? "" : lua_tostring(L, 1);
  std::string message = has_message ? lua_tostring(L, 2) : "";
  current_->push_back({current_info_->id, outcome, address, message, locate(address), "", "", {}});
}

SourceLoc Runtime::locate(const std::string& address) const {
  if (address.empty() || !input_) return {};
  if (auto it = sources_.find(address); it != sources_.end()) return it->second;
  if (input_->resources) {
    for (const auto& r : *input_->resources)
      if (r.address.size() > address.size() && r.address.compare(0, address.size(), address) == 0 &&
          r.address[address.size()] == '[')
        return r.source;
  }
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
  sources_.clear();
  static const std::vector<Resource> kNone;
  const auto& resources = input.resources ? *input.resources : kNone;
  lua_createtable(L, static_cast<int>(resources.size()), 0);
  lua_createtable(L, 0, static_cast<int>(resources.size()));
  for (size_t i = 0; i < resources.size(); ++i) {
    const Resource& r = resources[i];
    sources_[r.address] = r.source;
    push_resource(L, r);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, r.address.c_str());
    lua_rawseti(L, -3, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, LUA_REGISTRYINDEX, kByAddressKey);
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
  lua_pushcfunction(L, lua_resources);
  lua_setfield(L, data, "resources");
  lua_pushcfunction(L, lua_resource);
  lua_setfield(L, data, "resource");
  lua_pushvalue(L, data);
  Sandbox::make_readonly(L);
  lua_getmetatable(L, -1);
  lua_pushlightuserdata(L, this);
  lua_pushvalue(L, data);
  lua_pushcclosure(L, ctx_index, 2);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  if (ctx_ref_) luaL_unref(L, LUA_REGISTRYINDEX, ctx_ref_);
  ctx_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pop(L, 1);  // data
}

void Runtime::push_lazy(lua_State* L, const std::string& key) {
  // Built once for every policy: not charged to the policy that asked first.
  sb_.uncounted([&] {
    if (key == "blueprint") push_json(L, input_ ? input_->blueprint_json : Json::object());
    else if (key == "catalog") push_json(L, input_ && !input_->catalog.is_null() ? input_->catalog : default_catalog_json());
    else if (input_ && input_->plan) push_json(L, plan_json(*input_->plan));
    else push_json(L, plan_json(plan::Plan{}));
  });
}

std::vector<Verdict> Runtime::run(size_t i) {
  const Entry& e = entries_[i];
  std::vector<Verdict> out;
  current_ = &out;
  current_info_ = &e.info;
  lua_State* L = sb_.L();
  lua_rawgeti(L, LUA_REGISTRYINDEX, e.check_ref);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ctx_ref_);
  LuaError err;
  bool ok = sb_.call(1, 1, limits_, err);
  current_ = nullptr;
  current_info_ = nullptr;
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
  return {{e.info.id, Outcome::Error, "", err.message, err.loc.known() ? err.loc : e.info.loc, "", "", {}}};
}

}  // namespace plinth::policy
