#include "engine/policy/testing.h"

#include <algorithm>
#include <filesystem>
#include <lua.hpp>
#include <set>

#include "engine/blueprint/json.h"
#include "engine/blueprint/loader.h"
#include "engine/core/embedded.h"
#include "engine/core/files.h"
#include "engine/graph/expand.h"
#include "engine/plan/plan.h"
#include "engine/policy/runtime.h"

namespace fs = std::filesystem;

namespace plinth::policy {
namespace {

/// Written in Lua so it runs under the same limits as the tests.
const char* const kHelpers = R"(
function replace(text, old, new)
  if type(old) ~= "string" or old == "" then error("replace: the text to replace must be a non-empty string", 2) end
  local i = string.find(text, old, 1, true)
  if not i then error("replace: '" .. old .. "' does not occur in the text", 2) end
  local out, pos = {}, 1
  while i do
    out[#out + 1] = string.sub(text, pos, i - 1) .. new
    pos = i + #old
    i = string.find(text, old, pos, true)
  end
  out[#out + 1] = string.sub(text, pos)
  return table.concat(out)
end
)";

struct Collector {
  std::vector<int> refs;
  std::vector<SourceLoc> locs;
  std::string test_file;  ///< as shown in positions
  fs::path test_dir;      ///< absolute
};

Collector* collector(lua_State* L) { return static_cast<Collector*>(lua_touserdata(L, lua_upvalueindex(1))); }

int lua_test(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  Collector* c = collector(L);
  lua_Debug ar;
  int line = lua_getstack(L, 1, &ar) && lua_getinfo(L, "l", &ar) ? ar.currentline : 0;
  lua_pushvalue(L, 1);
  c->refs.push_back(luaL_ref(L, LUA_REGISTRYINDEX));
  c->locs.push_back({c->test_file, line, 0});
  return 0;
}

/// fixtures/NAME.yaml in the test file's folder or the nearest parent that has one; "" when none.
std::string find_fixture(const Collector& c, const std::string& name) {
  for (fs::path d = c.test_dir; !d.empty(); d = d.parent_path()) {
    fs::path f = d / "fixtures" / (name + ".yaml");
    if (is_file_path(f.string())) return f.string();
    if (d == d.parent_path()) break;
  }
  return "";
}

int lua_fixture(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  bool found = false;
  {
    std::string path = find_fixture(*collector(L), name);
    if (!path.empty()) {
      auto text = read_file(path);
      if (text) {
        lua_pushlstring(L, text->data(), text->size());
        found = true;
      }
    }
  }
  if (!found) return luaL_error(L, "fixture '%s' not found: add fixtures/%s.yaml beside the test or in a parent folder", name, name);
  return 1;
}

std::string str_field(lua_State* L, int t, const char* key) {
  lua_getfield(L, t, key);
  std::string s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  return s;
}

using Finding = std::pair<std::string, std::string>;  // policy, address

std::string describe(const std::multiset<Finding>& fs) {
  std::string out;
  for (const auto& [p, a] : fs) out += "\n    " + p + " " + (a.empty() ? "(blueprint)" : a);
  return out;
}

/// Runs one test table (on the stack top) against the loaded policies.
TestResult run_one(Runtime& rt, lua_State* L, const SourceLoc& loc) {
  TestResult r;
  r.file = loc.file;
  r.loc = loc;
  int t = lua_gettop(L);
  r.name = str_field(L, t, "name");
  if (r.name.empty()) r.name = "test at line " + std::to_string(loc.line);
  std::string yaml = str_field(L, t, "blueprint");
  std::multiset<Finding> expected;
  std::set<std::string> only;
  std::string problem;
  lua_getfield(L, t, "expect");
  if (lua_istable(L, -1)) {
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TTABLE; ++i) {
      lua_rawgeti(L, -1, 1);
      lua_rawgeti(L, -2, 2);
      std::string id = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
      std::string addr = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
      lua_pop(L, 3);
      if (id.empty()) problem = "each expect entry is {POLICY_ID, ADDRESS}";
      expected.insert({id, addr});
    }
    lua_pop(L, 1);
  } else {
    problem = "the test has no 'expect' list (use expect = {} for a blueprint that passes)";
  }
  lua_pop(L, 1);
  lua_getfield(L, t, "policies");
  if (lua_istable(L, -1)) {
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TSTRING; ++i) {
      only.insert(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (yaml.empty()) problem = "the test has no 'blueprint' text";
  if (!problem.empty()) {
    r.detail = problem;
    return r;
  }
  auto loaded = bp::load_string(yaml, loc.file + "[" + r.name + "]");
  if (!loaded.ok()) {
    r.detail = "the blueprint does not load:";
    for (const auto& d : loaded.diagnostics)
      if (d.severity == Severity::Error) r.detail += "\n    " + d.loc.str() + ": " + d.message;
    return r;
  }
  auto graph = graph::expand(loaded.blueprint);
  if (!graph) {
    r.detail = "the blueprint does not expand: " + graph.error().message;
    return r;
  }
  plan::Plan plan = plan::diff(graph->resources, {});
  Input in;
  in.blueprint = &loaded.blueprint;
  in.blueprint_json = bp::to_json(loaded.blueprint);
  in.resources = &graph->resources;
  in.plan = &plan;
  rt.set_context(in);
  std::multiset<Finding> got;
  std::string errors;
  for (size_t i = 0; i < rt.size(); ++i) {
    if (!only.empty() && !only.count(rt.info(i).id)) continue;
    for (const auto& v : rt.run(i)) {
      if (v.outcome == Outcome::Fail) got.insert({v.policy, v.address});
      if (v.outcome == Outcome::Error) errors += "\n    " + v.policy + " errored: " + v.loc.str() + ": " + v.message;
    }
  }
  std::multiset<Finding> missing, unexpected;
  std::set_difference(expected.begin(), expected.end(), got.begin(), got.end(),
                      std::inserter(missing, missing.begin()));
  std::set_difference(got.begin(), got.end(), expected.begin(), expected.end(),
                      std::inserter(unexpected, unexpected.begin()));
  if (!missing.empty()) r.detail += "\n  expected failures that did not happen:" + describe(missing);
  if (!unexpected.empty()) r.detail += "\n  unexpected failures:" + describe(unexpected);
  if (!errors.empty()) r.detail += "\n  policy errors:" + errors;
  r.passed = r.detail.empty();
  return r;
}

void run_file(const std::string& test_file, const Limits& limits, TestRun& run) {
  std::string shown = display_path(test_file);
  std::string policy_file = test_file.substr(0, test_file.size() - 9) + ".lua";
  auto fail_file = [&](const std::string& why) {
    run.results.push_back({shown, "(file)", {shown, 0, 0}, false, why});
  };
  std::error_code ec;
  if (!is_file_path(policy_file)) return fail_file("no policy file " + display_path(policy_file) + " beside the test");
  Runtime rt(limits);
  rt.load_file(policy_file, "");
  if (!rt.diagnostics().empty()) {
    std::string why = "the policy file does not load:";
    for (const auto& d : rt.diagnostics()) why += "\n    " + d.loc.str() + ": " + d.message;
    return fail_file(why);
  }
  auto text = read_file(test_file);
  if (!text) return fail_file(text.error().message);
  Sandbox& sb = rt.sandbox();
  lua_State* L = sb.L();
  // The compiled-in packs (engine/core/embedded.h) have no absolute path.
  fs::path where = is_embedded_path(test_file) ? fs::path(test_file) : fs::absolute(test_file, ec);
  Collector c{{}, {}, shown, where.lexically_normal().parent_path()};
  sb.push_env();
  lua_pushlightuserdata(L, &c);
  lua_pushcclosure(L, lua_test, 1);
  lua_setfield(L, -2, "test");
  lua_pushlightuserdata(L, &c);
  lua_pushcclosure(L, lua_fixture, 1);
  lua_setfield(L, -2, "fixture");
  LuaError err;
  if (!sb.run_chunk(kHelpers, "plinth-test-helpers", -1, limits, err) ||
      !sb.run_chunk(*text, shown, -1, limits, err)) {
    lua_pop(L, 1);
    return fail_file("the test file does not run: " + (err.loc.known() ? err.loc.str() + ": " : "") + err.message);
  }
  lua_pop(L, 1);
  if (c.refs.empty()) return fail_file("no test { ... } in the file");
  for (size_t i = 0; i < c.refs.size(); ++i) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, c.refs[i]);
    run.results.push_back(run_one(rt, L, c.locs[i]));
    lua_pop(L, 1);
  }
}

}  // namespace

TestRun run_policy_tests(const std::string& dir, const Limits& limits) {
  TestRun run;
  for (const auto& f : lua_files(dir, true)) run_file(f, limits, run);
  for (const auto& r : run.results) (r.passed ? run.passed : run.failed)++;
  return run;
}

}  // namespace plinth::policy
