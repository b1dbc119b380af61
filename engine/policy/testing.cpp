#include "engine/policy/testing.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <lua.hpp>
#include <map>
#include <set>

#include "engine/blueprint/json.h"
#include "engine/blueprint/loader.h"
#include "engine/core/embedded.h"
#include "engine/core/files.h"
#include "engine/graph/expand.h"
#include "engine/plan/plan.h"
#include "engine/core/strings.h"
#include "engine/policy/isolation.h"
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
  fs::path root;          ///< the directory `plinth policy test` was given: fixtures are looked for up to it
};

/// The directory `dir` as Collector::root and test_dir hold it.
fs::path anchored(const std::string& dir) {
  if (is_embedded_path(dir)) return fs::path(dir).lexically_normal();
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec).lexically_normal();
  return fs::is_regular_file(p, ec) ? p.parent_path() : p;
}

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

/// A fixture name is a plain file name: letters, digits, '_', '-' and '.'
/// (not first), so fixture() cannot leave its pack ("../../etc/x").
bool plain_fixture_name(std::string_view name) {
  if (name.empty() || name.front() == '.' || name.size() > 128) return false;
  return std::all_of(name.begin(), name.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.';
  });
}

/// fixtures/NAME.yaml in the test file's folder or the nearest parent that
/// has one, up to the tested directory (the pack) and no further; "" when none.
std::string find_fixture(const Collector& c, const std::string& name) {
  for (fs::path d = c.test_dir; !d.empty(); d = d.parent_path()) {
    fs::path f = d / "fixtures" / (name + ".yaml");
    if (is_file_path(f.string())) return f.string();
    if (d == c.root || d == d.parent_path()) break;
  }
  return "";
}

int lua_fixture(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  if (!plain_fixture_name(name))
    return luaL_error(L, "fixture name '%s' is not a plain name (letters, digits, '_', '-', '.'): fixtures are "
                         "read from fixtures/NAME.yaml inside the pack only", safe_text(name, false).c_str());
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
  rawfield(L, t, key);
  std::string s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  return s;
}

/// A string from the test file that ends up on the terminal (test names, expectations).
std::string shown_field(lua_State* L, int t, const char* key) { return safe_text(str_field(L, t, key)); }

using Finding = std::pair<std::string, std::string>;  // policy, address

std::string describe(const std::multiset<Finding>& fs) {
  std::string out;
  for (const auto& [p, a] : fs) out += "\n    " + p + " " + (a.empty() ? "(blueprint)" : a);
  return out;
}

/// Runs one test table (on the stack top) against the loaded policies,
/// each policy's check as a step the parent times.
TestResult run_one(Runtime& rt, lua_State* L, const SourceLoc& loc, Progress& progress) {
  TestResult r;
  r.file = loc.file;
  r.loc = loc;
  int t = lua_gettop(L);
  r.name = shown_field(L, t, "name");
  if (r.name.empty()) r.name = "test at line " + std::to_string(loc.line);
  std::string yaml = str_field(L, t, "blueprint");
  std::multiset<Finding> expected;
  std::vector<std::pair<Finding, std::string>> wording;  // {id, address, "part of the message"}
  std::set<std::string> only;
  std::string problem;
  rawfield(L, t, "expect");
  if (lua_istable(L, -1)) {
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TTABLE; ++i) {
      lua_rawgeti(L, -1, 1);
      lua_rawgeti(L, -2, 2);
      lua_rawgeti(L, -3, 3);
      std::string id = lua_type(L, -3) == LUA_TSTRING ? safe_text(lua_tostring(L, -3)) : "";
      std::string addr = lua_type(L, -2) == LUA_TSTRING ? safe_text(lua_tostring(L, -2)) : "";
      std::string words = lua_type(L, -1) == LUA_TSTRING ? safe_text(lua_tostring(L, -1)) : "";
      lua_pop(L, 4);
      if (id.empty()) problem = "each expect entry is {POLICY_ID, ADDRESS} or {POLICY_ID, ADDRESS, MESSAGE_PART}";
      expected.insert({id, addr});
      if (!words.empty()) wording.push_back({{id, addr}, words});
    }
    lua_pop(L, 1);
  } else {
    problem = "the test has no 'expect' list (use expect = {} for a blueprint that passes)";
  }
  lua_pop(L, 1);
  rawfield(L, t, "policies");
  if (lua_istable(L, -1)) {
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TSTRING; ++i) {
      only.insert(safe_text(lua_tostring(L, -1)));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  // not_applicable = {POLICY_ID, ...}: each must say only not_applicable.
  std::set<std::string> inapplicable;
  rawfield(L, t, "not_applicable");
  if (lua_istable(L, -1)) {
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TSTRING; ++i) {
      inapplicable.insert(safe_text(lua_tostring(L, -1)));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  } else if (!lua_isnil(L, -1)) {
    problem = "'not_applicable' lists policy IDs, e.g. not_applicable = { \"HIPAA-BAA-001\" }";
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
  std::multimap<Finding, std::string> messages;
  std::string errors;
  std::map<std::string, std::vector<std::string>> said_other;  // policy -> its verdicts other than not applicable
  std::set<std::string> ran;
  for (size_t i = 0; i < rt.size(); ++i) {
    if (!only.empty() && !only.count(rt.info(i).id)) continue;
    progress.begin("policy " + rt.info(i).id + " (" + rt.info(i).loc.str() + ") in test '" + r.name + "'",
                   rt.sandbox().limits().deadline);
    auto verdicts = rt.run(i);
    progress.end();
    ran.insert(rt.info(i).id);
    for (const auto& v : verdicts) {
      if (v.outcome != Outcome::NotApplicable)
        said_other[v.policy].push_back(std::string(to_string(v.outcome)) + " " +
                                       (v.address.empty() ? "(blueprint)" : v.address) + ": " + v.message);
      if (v.outcome == Outcome::Fail) {
        got.insert({v.policy, v.address});
        messages.insert({{v.policy, v.address}, v.message});
      }
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
  for (const auto& id : inapplicable) {
    if (!ran.count(id)) {
      r.detail += "\n  " + id + " is listed in not_applicable but did not run (no such policy in this file?)";
      continue;
    }
    auto it = said_other.find(id);
    if (it == said_other.end()) continue;
    r.detail += "\n  " + id + " was expected to say not_applicable only; it said:";
    for (const auto& s : it->second) r.detail += "\n    " + safe_text(s);
  }
  for (const auto& [f, words] : wording) {
    auto [from, to] = messages.equal_range(f);
    bool said = false;
    std::string seen;
    for (auto it = from; it != to; ++it) {
      said = said || it->second.find(words) != std::string::npos;
      seen += "\n    \"" + safe_text(it->second) + "\"";
    }
    if (from != to && !said)
      r.detail += "\n  " + f.first + " " + (f.second.empty() ? "(blueprint)" : f.second) + " does not say \"" + words +
                  "\"; it said:" + seen;
  }
  r.passed = r.detail.empty();
  return r;
}

/// The child side of one test file: loads the policy file and the test
/// file once ("file"), then runs the tests one at a time ("test").
struct TestServer {
  Limits limits;
  std::shared_ptr<Runtime> rt;
  std::shared_ptr<Collector> c;

  Json operator()(const Json& req, Progress& progress) {
    const std::string op = req.value("op", "");
    if (op == "file") return load(req.value("file", ""), req.value("root", ""), progress);
    if (op == "test") {
      size_t k = req.value("k", size_t{0});
      if (!rt || !c || k >= c->refs.size()) return {{"exception", "no such test"}};
      lua_State* L = rt->sandbox().L();
      lua_rawgeti(L, LUA_REGISTRYINDEX, c->refs[k]);
      TestResult r = run_one(*rt, L, c->locs[k], progress);
      lua_pop(L, 1);
      return to_json(r);
    }
    return {{"exception", "unknown request '" + op + "'"}};
  }

  Json load(const std::string& test_file, const std::string& root, Progress& progress) {
    std::string shown = display_path(test_file);
    std::string policy_file = test_file.substr(0, test_file.size() - 9) + ".lua";
    rt = std::make_shared<Runtime>(limits);
    progress.begin("policy file " + display_path(policy_file), limits.deadline);
    // Its pack, as policy_files finds it, so import() finds the directory's lib/.
    rt->load_file(policy_file, pack_of(policy_file, root));
    progress.end();
    if (!rt->diagnostics().empty()) {
      std::string why = "the policy file does not load:";
      for (const auto& d : rt->diagnostics()) why += "\n    " + d.loc.str() + ": " + d.message;
      return {{"error", why}};
    }
    auto text = read_file(test_file);
    if (!text) return {{"error", text.error().message}};
    Sandbox& sb = rt->sandbox();
    lua_State* L = sb.L();
    std::error_code ec;
    // The compiled-in packs (engine/core/embedded.h) have no absolute path.
    fs::path where = is_embedded_path(test_file) ? fs::path(test_file) : fs::absolute(test_file, ec);
    c = std::make_shared<Collector>(
        Collector{{}, {}, shown, where.lexically_normal().parent_path(), anchored(root.empty() ? test_file : root)});
    sb.push_env();
    lua_pushlightuserdata(L, c.get());
    lua_pushcclosure(L, lua_test, 1);
    lua_setfield(L, -2, "test");
    lua_pushlightuserdata(L, c.get());
    lua_pushcclosure(L, lua_fixture, 1);
    lua_setfield(L, -2, "fixture");
    LuaError err;
    progress.begin("test file " + shown, limits.deadline);
    bool ok = sb.run_chunk(kHelpers, "plinth-test-helpers", -1, err) && sb.run_chunk(*text, shown, -1, err);
    progress.end();
    lua_pop(L, 1);
    if (!ok)
      return {{"error", "the test file does not run: " + (err.loc.known() ? err.loc.str() + ": " : "") +
                            safe_text(err.message)}};
    if (c->refs.empty()) return {{"error", "no test { ... } in the file"}};
    Json tests = Json::array();
    for (const auto& loc : c->locs) tests.push_back(to_json(loc));
    return {{"tests", tests}};
  }
};

void run_file(const std::string& test_file, const std::string& root, const Limits& limits, TestRun& run) {
  std::string shown = display_path(test_file);
  std::string policy_file = test_file.substr(0, test_file.size() - 9) + ".lua";
  auto fail_file = [&](const std::string& why) {
    run.results.push_back({shown, "(file)", {shown, 0, 0}, false, why});
  };
  if (!is_file_path(policy_file)) return fail_file("no policy file " + display_path(policy_file) + " beside the test");
  // No step is open while a test's blueprint loads and expands (Plinth's own code).
  const auto idle = std::max<std::chrono::milliseconds>(std::chrono::minutes(1), limits.deadline * 6);
  Isolated child(TestServer{limits, nullptr, nullptr}, idle,
                 limits.run_memory_bytes * 2 + (size_t{16} << 20));
  const Json load = {{"op", "file"}, {"file", test_file}, {"root", root}};
  auto file = child.call(load);
  if (!file.value) return fail_file((file.failure.step.empty() ? "" : file.failure.step + ": ") + "it " + file.failure.why);
  if (file.value->contains("error")) return fail_file(file.value->value("error", ""));
  if (file.value->contains("exception")) return fail_file("internal error: " + file.value->value("exception", ""));
  const Json tests = file.value->value("tests", Json::array());
  for (size_t k = 0; k < tests.size(); ++k) {
    const SourceLoc loc = loc_from_json(tests[k]);
    auto failed = [&](const std::string& why) {
      run.results.push_back({shown, "test at line " + std::to_string(loc.line), loc, false, why});
    };
    if (child.fresh()) {  // the previous test stopped the sandbox: load the files again
      auto again = child.call(load);
      if (!again.value || !again.value->contains("tests")) {
        failed("the policy sandbox could not load the files again after the previous test stopped it");
        continue;
      }
    }
    auto r = child.call({{"op", "test"}, {"k", k}});
    if (!r.value) {
      failed((r.failure.step.empty() ? "the test" : r.failure.step) + " " + r.failure.why);
      continue;
    }
    if (r.value->contains("exception")) {
      failed("internal error: " + r.value->value("exception", ""));
      continue;
    }
    run.results.push_back(test_result_from_json(*r.value));
  }
}

}  // namespace

TestRun run_policy_tests(const std::string& dir, const Limits& limits) {
  TestRun run;
  for (const auto& f : lua_files(dir, true)) run_file(f, dir, limits, run);
  for (const auto& r : run.results) (r.passed ? run.passed : run.failed)++;
  return run;
}

}  // namespace plinth::policy
