// Hostile policy packs (issue 16): each case broke the sandbox once (a crash,
// a use-after-free, a hang, a forged verdict, unbounded memory). Each must
// now end as an error verdict or diagnostic of the policy that did it, with
// the other policies unaffected.
#include <catch2/catch.hpp>

#include "engine/core/strings.h"
#include "engine/policy/testing.h"
#include "tests/engine/policy/fixture.h"
#include "tests/support/text.h"

using namespace plinth;
using namespace plinth::test;
using policy::Outcome;

namespace {

std::vector<policy::Verdict> verdicts_of(const policy::Evaluation& e, const std::string& id) {
  std::vector<policy::Verdict> out;
  for (const auto& v : e.verdicts)
    if (v.policy == id) out.push_back(v);
  return out;
}

/// Small limits so the cases run in well under a second each.
policy::Options quick() {
  policy::Options o;
  o.limits.instructions = 2'000'000;
  o.limits.deadline = std::chrono::milliseconds(5000);  // roomy for sanitizer builds
  return o;
}

}  // namespace

TEST_CASE("next(ctx, k) walks ctx's fields instead of crashing the process") {
  TempDir dir;
  auto e = run_policies(dir, {
                                 {"a.lua", policy_with("NEXT", R"(
    local keys, k = {}, next(ctx)
    while k ~= nil do keys[#keys + 1] = k; k = next(ctx, k) end
    table.sort(keys)
    local n = 0
    for _ in pairs(ctx) do n = n + 1 end
    pass(nil, table.concat(keys, ',') .. ' ' .. n .. ' ' .. #ctx))")},
                                 {"b.lua", policy_with("BADKEY", "for i = 1, 1000 do local k = next(ctx, i) end")},
                                 {"c.lua", policy_with("AFTER", "pass(nil, 'still running')")},
                             });
  const auto& v = only_verdict(e, "NEXT");
  INFO(v.message);
  CHECK(v.outcome == Outcome::Pass);
  CHECK(v.message == "compliance,resource,resources 3 0");
  CHECK(only_verdict(e, "BADKEY").outcome == Outcome::Error);
  CHECK(contains(only_verdict(e, "BADKEY").message, "invalid key to 'next'"));
  CHECK(only_verdict(e, "AFTER").message == "still running");
}

TEST_CASE("policy{} inside a check is an error of that check, it declares nothing and forges nothing") {
  TempDir dir;
  auto e = run_policies(dir, {{"a.lua", policy_with("INNER", R"(
    for i = 1, 50 do
      pcall(policy, { id = 'DECLARED-' .. i, title = 't', severity = 'low', enforcement = 'advisory',
                      check = function() end })
    end
    fail(nil, 'reported after the policy{} calls')
    policy { id = 'LATE', title = 't', severity = 'low', enforcement = 'advisory', check = function() end })")},
                              {"b.lua", policy_with("OK", "")}});
  CHECK(e.policies.size() == 2);
  CHECK(summarize(e) == "INNER error\nOK pass");
  const auto& v = only_verdict(e, "INNER");
  CHECK(v.message == "policy{} can only be called while its policy file loads, not inside a check");
  CHECK(v.loc.line == 9);
}

TEST_CASE("__gc and __close metamethods are refused, so finalizers cannot outrun the limits or forge verdicts") {
  TempDir dir;
  const std::string refused =
      "'__gc' metamethods are not available in the policy sandbox (they would run outside the check's limits)";
  auto e = run_policies(
      dir,
      {
          // A finalizer that loops forever used to run with the instruction hook off.
          {"a_loop.lua", policy_with("GCLOOP", R"(
    for i = 1, 100 do setmetatable({}, { __gc = function() while true do end end }) end)", "advisory")},
          // A finalizer that reports used to record its verdict under whichever policy ran next.
          {"b_forge.lua", policy_with("FORGER", R"(
    setmetatable({}, { __gc = function() fail('storage.tier.hot', 'forged') end }))", "advisory")},
          {"c_victim.lua", policy_with("VICTIM", "local t = {} for i = 1, 200000 do t[i] = {} end")},
          {"d_close.lua", policy_with("CLOSE", R"(
    local x <close> = setmetatable({}, { __close = function() while true do end end }))")},
          // Through a metatable that gets __gc only after setmetatable: not a finalizer (Lua's rule).
          {"e_late.lua", policy_with("LATE", R"(
    local mt = {}
    local t = setmetatable({}, mt)
    mt.__gc = function() fail(nil, 'forged late') end
    t = nil
    pass(nil, 'ok'))")},
      },
      kSmallBlueprint, quick());
  CHECK(only_verdict(e, "GCLOOP").message == refused);
  CHECK(only_verdict(e, "GCLOOP").loc.line == 4);
  CHECK(only_verdict(e, "FORGER").message == refused);
  CHECK(only_verdict(e, "VICTIM").outcome == Outcome::Pass);
  CHECK(only_verdict(e, "VICTIM").message.empty());
  CHECK(only_verdict(e, "CLOSE").message ==
        "'__close' metamethods are not available in the policy sandbox (they would run outside the check's limits)");
  CHECK(only_verdict(e, "LATE").message == "ok");
  for (const auto& v : e.verdicts) CHECK_FALSE(contains(v.message, "forged"));
}

TEST_CASE("a finalizer declared while a file loads cannot hang loading or lua_close") {
  TempDir dir;
  auto set = [&] {
    dir.write("policies/a.lua", "setmetatable({}, { __gc = function() while true do end end })\n" +
                                    policy_with("A", ""));
    dir.write("policies/b.lua", policy_with("B", ""));
    return policy::load_policies({dir.path() + "/policies"}, quick().limits);
  }();
  REQUIRE(set.diagnostics.size() == 1);
  CHECK(set.diagnostics[0].message ==
        "policy file failed to load: '__gc' metamethods are not available in the policy sandbox (they would run "
        "outside the check's limits)");
  REQUIRE(set.policies.size() == 1);
  CHECK(set.policies[0].id == "B");
}

TEST_CASE("an xpcall message handler cannot run after a limit error") {
  TempDir dir;
  auto e = run_policies(dir,
                        {
                            {"a.lua", policy_with("XPCALL", R"(
    xpcall(function() while true do end end, function(m) while true do end end)
    fail(nil, 'kept going'))")},
                            {"b.lua", policy_with("NESTED", R"(
    while true do xpcall(function() while true do end end, function(m) return pcall(error, m) end) end)")},
                            {"c.lua", policy_with("HANDLED", R"(
    local ok, m = xpcall(function() error('plain error') end, function(m) return 'handled: ' .. m end)
    pass(nil, m))")},
                        },
                        kSmallBlueprint, quick());
  const std::string limit =
      "instruction limit of 2000000 exceeded (an endless loop?); simplify the check or raise the limit";
  CHECK(only_verdict(e, "XPCALL").outcome == Outcome::Error);
  CHECK(only_verdict(e, "XPCALL").message == limit);
  CHECK(only_verdict(e, "NESTED").message == limit);
  CHECK(contains(only_verdict(e, "HANDLED").message, "handled: "));
  CHECK(contains(only_verdict(e, "HANDLED").message, "plain error"));
}

TEST_CASE("collectgarbage is not reachable") {
  TempDir dir;
  auto e = run_policies(dir, {{"a.lua", policy_with("GC", "collectgarbage('count')")},
                              {"b.lua", policy_with("GCFIELD", "local f = _G.collectgarbage; pass(nil, type(f))")}});
  CHECK(only_verdict(e, "GC").message ==
        "'collectgarbage' is not available in the policy sandbox (allowed: base (without dofile, loadfile, load, "
        "rawset, print, collectgarbage), string, table, math, utf8)");
  CHECK(only_verdict(e, "GCFIELD").outcome == Outcome::Error);
}

TEST_CASE("a check stuck in a library call is stopped at its wall-clock deadline and the others still run") {
  TempDir dir;
  // Lua's matcher backtracks exponentially on this pattern: hours, in one C call.
  const std::string stuck = "string.find(string.rep('a', 40), string.rep('a?', 40) .. string.rep('a', 40))";
  auto options = quick();
  options.limits.deadline = std::chrono::milliseconds(800);
  auto e = run_policies(dir,
                        {
                            {"a_before.lua", policy_with("BEFORE", "pass(nil, 'before')")},
                            {"b_stuck.lua", policy_with("STUCK", stuck)},
                            {"c_slow.lua", policy_with("SLOW", "local x = 0 while true do x = x + 1 end")},
                            {"d_after.lua", policy_with("AFTER", "pass(nil, ctx.resources('storage.tier')[1].kind)")},
                        },
                        kSmallBlueprint, [&] {
                          auto o = options;
                          o.limits.instructions = 1'000'000'000'000;  // the deadline, not the count, must stop SLOW
                          return o;
                        }());
  CHECK(only_verdict(e, "BEFORE").message == "before");
  const auto& v = only_verdict(e, "STUCK");
  CHECK(v.outcome == Outcome::Error);
  CHECK(v.message ==
        "the check did not finish within 800 ms (wall clock) and was stopped by killing its sandbox process (stuck in "
        "a library call such as a pathological string pattern?)");
  CHECK(v.loc.str() == dir.path() + "/policies/b_stuck.lua:1");
  CHECK(only_verdict(e, "SLOW").message ==
        "time limit of 800 ms exceeded (wall clock); simplify the check or raise the limit");
  CHECK(only_verdict(e, "SLOW").loc.line == 3);
  CHECK(only_verdict(e, "AFTER").message == "nvme");  // a fresh sandbox, with the context again
  CHECK(e.blocked());
}

TEST_CASE("a policy file stuck while it loads is a diagnostic, and the files after it load") {
  TempDir dir;
  dir.write("policies/a.lua", policy_with("A", ""));
  dir.write("policies/b.lua", "string.find(string.rep('a', 40), string.rep('a?', 40) .. string.rep('a', 40))\n");
  dir.write("policies/c.lua", policy_with("C", ""));
  auto limits = quick().limits;
  limits.deadline = std::chrono::milliseconds(500);
  auto set = policy::load_policies({dir.path() + "/policies"}, limits);
  REQUIRE(set.diagnostics.size() == 1);
  CHECK(set.diagnostics[0].message ==
        "policy file " + dir.path() +
            "/policies/b.lua could not be loaded: it did not finish within 500 ms (wall clock) and was stopped by "
            "killing its sandbox process (stuck in a library call such as a pathological string pattern?)");
  REQUIRE(set.policies.size() == 2);
  CHECK(set.policies[1].id == "C");
}

TEST_CASE("memory kept between checks counts against one run-wide limit") {
  TempDir dir;
  std::map<std::string, std::string> files;
  // Each policy keeps 6 MiB in its file's globals; 12 of them would keep 72 MiB.
  for (int i = 10; i < 22; ++i)
    files["p" + std::to_string(i) + ".lua"] = policy_with("KEEP" + std::to_string(i), "KEPT = string.rep('x', 6 << 20)");
  auto options = quick();
  options.limits.memory_bytes = size_t{16} << 20;
  options.limits.run_memory_bytes = size_t{40} << 20;
  auto e = run_policies(dir, files, kSmallBlueprint, options);
  int passed = 0, stopped = 0;
  for (const auto& v : e.verdicts) {
    if (v.outcome == Outcome::Pass) ++passed;
    if (v.outcome == Outcome::Error) {
      ++stopped;
      CHECK(v.message ==
            "run-wide memory limit of 40 MiB exceeded: the policies of this run together hold too much (tables kept in "
            "globals or upvalues, too many or too long findings); keep less between checks, or raise the limit");
    }
  }
  CHECK(passed >= 5);
  CHECK(passed <= 6);
  CHECK(stopped == 12 - passed);
}

TEST_CASE("findings are capped: long messages are cut, too many findings stop the check, their text is charged") {
  TempDir dir;
  auto options = quick();
  options.limits.message_bytes = 100;
  options.limits.verdicts = 50;
  options.limits.run_memory_bytes = size_t{8} << 20;
  auto e = run_policies(dir,
                        {
                            {"a_long.lua", policy_with("LONG", "fail(nil, string.rep('y', 1000))")},
                            {"b_many.lua", policy_with("MANY", "for i = 1, 51 do fail(nil, 'x' .. i) end")},
                            {"c_pcall.lua", policy_with("PCALL", "for i = 1, 60 do pcall(fail, nil, 'x') end")},
                            {"d_flood.lua", policy_with("FLOOD", "for i = 1, 40 do fail(nil, string.rep('z', 100)) end")},
                        },
                        kSmallBlueprint, options);
  const auto& v = only_verdict(e, "LONG");
  CHECK(v.message == std::string(100, 'y') + " [... message cut: 900 more bytes; the limit is 100]");
  CHECK(only_verdict(e, "MANY").message ==
        "limit of 50 findings for one check exceeded; report per pool or for the whole blueprint rather than per "
        "node, or raise the limit");
  CHECK(only_verdict(e, "PCALL").outcome == Outcome::Error);  // pcall cannot swallow the limit
  CHECK(verdicts_of(e, "FLOOD").size() == 40);

  // The same flood against a run-wide limit it does not fit in.
  TempDir dir2;
  options.limits.verdicts = 100'000;
  options.limits.message_bytes = 4096;
  options.limits.run_memory_bytes = size_t{4} << 20;
  auto e2 = run_policies(dir2, {{"a.lua", policy_with("FLOOD", R"(
    local s = string.rep('z', 4000)
    for i = 1, 100000 do pcall(fail, nil, s) end)")}},
                         kSmallBlueprint, options);
  const auto& flood = only_verdict(e2, "FLOOD");
  CHECK(flood.outcome == Outcome::Error);
  CHECK(contains(flood.message, "run-wide memory limit of 4 MiB exceeded"));
}

TEST_CASE("invalid UTF-8 and terminal escapes in what a policy reports are made safe at the boundary") {
  TempDir dir;
  auto e = run_policies(dir, {{"a.lua", R"(policy {
  id = "ESC-\27[31m", title = "red \27[0m title", severity = "low", enforcement = "advisory",
  check = function(ctx)
    fail("storage.tier.hot\255", "bad \255\254 bytes and \27[2J\27]8;;http://x\7 escapes")
    error("\27[31m boom \255")
  end,
})"}});
  REQUIRE(e.policies.size() == 1);
  CHECK(e.policies[0].id == "ESC-\\x1b[31m");
  CHECK(e.policies[0].title == "red \\x1b[0m title");
  const auto& v = only_verdict(e, "ESC-\\x1b[31m");  // the check errored: only the error verdict
  CHECK(v.message == "\\x1b[31m boom \xef\xbf\xbd");
  for (const auto& x : e.verdicts) {
    CHECK(valid_utf8(x.message));
    CHECK_FALSE(contains(x.message, "\x1b"));
  }
  TempDir dir2;
  auto e2 = run_policies(dir2, {{"a.lua", policy_with("ESC", R"(fail("storage.tier.hot\255", "bad \255\254 bytes and \27[2J\27]8;;http://x\7 escapes"))")}});
  const auto& f = only_verdict(e2, "ESC");
  CHECK(f.address == "storage.tier.hot\xef\xbf\xbd");
  CHECK(f.message == "bad \xef\xbf\xbd\xef\xbf\xbd bytes and \\x1b[2J\\x1b]8;;http://x\\x07 escapes");
}

TEST_CASE("plinth policy test: a test whose policy gets stuck fails with the policy named, the next test still runs") {
  TempDir dir;
  dir.write("p/fixtures/small.yaml", kSmallBlueprint);
  dir.write("p/stuck.lua", R"(policy {
  id = "STUCK-ON-HOT", title = "t", severity = "low", enforcement = "advisory",
  check = function(ctx)
    if ctx.resource('storage.tier.hot') then
      string.find(string.rep('a', 40), string.rep('a?', 40) .. string.rep('a', 40))
    end
  end,
}
)");
  dir.write("p/stuck_test.lua", R"(local base = fixture("small")
test { name = "stuck \27[31m", blueprint = base, expect = {} }
test { name = "no hot tier", blueprint = replace(base, "hot", "warm"), expect = {} }
)");
  auto limits = quick().limits;
  limits.deadline = std::chrono::milliseconds(500);
  auto run = policy::run_policy_tests(dir.path() + "/p", limits);
  REQUIRE(run.results.size() == 2);
  CHECK_FALSE(run.results[0].passed);
  CHECK(run.results[0].name == "test at line 2");
  CHECK(run.results[0].detail == "policy STUCK-ON-HOT (" + dir.path() +
                                     "/p/stuck.lua:1) in test 'stuck \\x1b[31m' did not finish within 500 ms (wall "
                                     "clock) and was stopped by killing its sandbox process (stuck in a library call "
                                     "such as a pathological string pattern?)");
  CHECK(run.results[1].passed);
  CHECK(run.results[1].name == "no hot tier");
}

TEST_CASE("plinth policy test: fixture() reads only fixtures/NAME.yaml inside the tested pack", "[security]") {
  TempDir dir;
  dir.write("outside.yaml", kSmallBlueprint);              // beside the pack: never reachable
  dir.write("fixtures/above.yaml", kSmallBlueprint);       // above the pack: not looked up
  dir.write("pack/fixtures/small.yaml", kSmallBlueprint);
  dir.write("pack/p.lua", policy_with("P", ""));
  dir.write("pack/p_test.lua", R"(test { name = "escape", blueprint = fixture("../../outside"), expect = {} }
test { name = "above", blueprint = fixture("above"), expect = {} }
test { name = "inside", blueprint = fixture("small"), expect = {} }
)");
  auto run = policy::run_policy_tests(dir.path() + "/pack", quick().limits);
  INFO(run.results.size());
  REQUIRE(run.results.size() == 1);  // the file stops at the first refused fixture
  CHECK_FALSE(run.results[0].passed);
  CHECK(run.results[0].detail.find("fixture name '../../outside' is not a plain name") != std::string::npos);

  dir.write("pack/p_test.lua", R"(test { name = "above", blueprint = fixture("above"), expect = {} }
)");
  run = policy::run_policy_tests(dir.path() + "/pack", quick().limits);
  REQUIRE(run.results.size() == 1);
  CHECK_FALSE(run.results[0].passed);
  CHECK(run.results[0].detail.find("fixture 'above' not found") != std::string::npos);

  dir.write("pack/p_test.lua", R"(test { name = "inside", blueprint = fixture("small"), expect = {} }
)");
  run = policy::run_policy_tests(dir.path() + "/pack", quick().limits);
  REQUIRE(run.results.size() == 1);
  CHECK(run.results[0].passed);
}

TEST_CASE("a sandbox restart does not reset the run-wide memory limit: findings already held still count") {
  TempDir dir;
  auto options = quick();
  // Roomy: 700 findings of 4,000 bytes must fit in FLOOD-A's time even in a
  // sanitizer build under load; STUCK waits all of it out.
  options.limits.deadline = std::chrono::milliseconds(5000);
  options.limits.run_memory_bytes = size_t{4} << 20;
  const std::string flood = "local s = string.rep('z', 4000) for i = 1, 700 do fail(nil, s) end";
  auto e = run_policies(dir,
                        {
                            {"a.lua", policy_with("FLOOD-A", flood)},
                            {"b.lua", policy_with("STUCK", "string.find(string.rep('a', 40), string.rep('a?', 40) .. "
                                                           "string.rep('a', 40))")},
                            {"c.lua", policy_with("FLOOD-C", flood)},
                        },
                        kSmallBlueprint, options);
  CHECK(verdicts_of(e, "FLOOD-A").size() == 700);
  CHECK(only_verdict(e, "STUCK").outcome == Outcome::Error);
  const auto& c = only_verdict(e, "FLOOD-C");
  CHECK(c.outcome == Outcome::Error);
  CHECK(contains(c.message, "run-wide memory limit of 4 MiB exceeded"));
}
