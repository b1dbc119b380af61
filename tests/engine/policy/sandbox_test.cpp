// The sandbox refuses escapes with clear errors, enforces its limits, and a
// policy that breaks never stops the others.
#include <catch2/catch.hpp>

#include "tests/engine/policy/fixture.h"

using namespace plinth;
using namespace plinth::test;
using policy::Outcome;

TEST_CASE("sandbox escapes are refused with a clear error and the other policies still run") {
  TempDir dir;
  const char* const allowed =
      "(allowed: base (without dofile, loadfile, load, rawset, print, collectgarbage), string, table, math, utf8)";
  auto e = run_policies(dir, {
                                 {"a_os.lua", policy_with("OS", "os.execute('touch /tmp/pwned')")},
                                 {"b_io.lua", policy_with("IO", "io.open('/etc/passwd')")},
                                 {"c_require.lua", policy_with("REQ", "require('socket')")},
                                 {"d_dump.lua", policy_with("DUMP", "string.dump(function() end)")},
                                 {"e_load.lua", policy_with("LOAD", "load('\\27Lua')")},
                                 {"f_dofile.lua", policy_with("DOFILE", "dofile('/etc/passwd')")},
                                 {"g_debug.lua", policy_with("DEBUG", "debug.getinfo(1)")},
                                 {"h_gc.lua", policy_with("GC", "collectgarbage('stop')")},
                                 {"i_ok.lua", policy_with("OK", "pass(nil, 'fine')")},
                             });
  std::string base = dir.path() + "/policies/";
  auto expect_error = [&](const std::string& id, const std::string& file, const std::string& message) {
    const auto& v = only_verdict(e, id);
    CHECK(v.outcome == Outcome::Error);
    CHECK(v.message == message);
    CHECK(v.loc.file == base + file);
    CHECK(v.loc.line == 3);
  };
  expect_error("OS", "a_os.lua", std::string("'os' is not available in the policy sandbox ") + allowed);
  expect_error("IO", "b_io.lua", std::string("'io' is not available in the policy sandbox ") + allowed);
  expect_error("REQ", "c_require.lua", std::string("'require' is not available in the policy sandbox ") + allowed);
  expect_error("DUMP", "d_dump.lua", "string.dump is not available in the policy sandbox (no bytecode)");
  expect_error("LOAD", "e_load.lua", std::string("'load' is not available in the policy sandbox ") + allowed);
  expect_error("DOFILE", "f_dofile.lua", std::string("'dofile' is not available in the policy sandbox ") + allowed);
  expect_error("DEBUG", "g_debug.lua", std::string("'debug' is not available in the policy sandbox ") + allowed);
  expect_error("GC", "h_gc.lua", std::string("'collectgarbage' is not available in the policy sandbox ") + allowed);
  CHECK(only_verdict(e, "OK").outcome == Outcome::Pass);
  CHECK(only_verdict(e, "OK").message == "fine");
  CHECK(e.blocked());
}

TEST_CASE("string methods cannot reach string.dump or the string metatable") {
  TempDir dir;
  auto e = run_policies(dir, {
                                 {"a.lua", policy_with("METHOD", "local s = ''; s.dump(function() end)")},
                                 {"b.lua", policy_with("META", "assert(getmetatable('') == 'string'); pass(nil, 'hidden')")},
                             });
  CHECK(only_verdict(e, "METHOD").message == "string.dump is not available in the policy sandbox (no bytecode)");
  CHECK(only_verdict(e, "META").outcome == Outcome::Pass);
}

TEST_CASE("an endless loop hits the instruction limit, pcall cannot swallow it") {
  TempDir dir;
  policy::Options opt;
  opt.limits.instructions = 200'000;
  auto e = run_policies(dir,
                        {
                            {"a_loop.lua", policy_with("LOOP", "while true do end")},
                            {"b_pcall.lua", policy_with("PCALL", "while true do pcall(function() while true do end end) end")},
                            {"c_ok.lua", policy_with("OK", "for i = 1, 1000 do end")},
                        },
                        kSmallBlueprint, opt);
  const auto& loop = only_verdict(e, "LOOP");
  CHECK(loop.outcome == Outcome::Error);
  CHECK(loop.message ==
        "instruction limit of 200000 exceeded (an endless loop?); simplify the check or raise the limit");
  CHECK(loop.loc.line == 3);
  CHECK(only_verdict(e, "PCALL").outcome == Outcome::Error);
  CHECK(only_verdict(e, "PCALL").message == loop.message);
  CHECK(only_verdict(e, "OK").outcome == Outcome::Pass);
}

TEST_CASE("a 1 GB string hits the memory limit and the memory is given back") {
  TempDir dir;
  auto e = run_policies(dir, {
                                 {"a_big.lua", policy_with("BIG", "local s = string.rep('x', 1 << 30)")},
                                 {"b_pcall.lua", policy_with("PCALL", "pcall(string.rep, 'x', 1 << 30); fail(nil, 'kept going')")},
                                 {"c_ok.lua", policy_with("OK", "local t = {} for i = 1, 10000 do t[i] = i end")},
                             });
  const auto& big = only_verdict(e, "BIG");
  CHECK(big.outcome == Outcome::Error);
  CHECK(big.message == "memory limit of 64 MiB exceeded; build smaller tables or strings, or raise the limit");
  CHECK(big.loc.file == dir.path() + "/policies/a_big.lua");
  CHECK(only_verdict(e, "PCALL").outcome == Outcome::Error);
  CHECK(only_verdict(e, "OK").outcome == Outcome::Pass);
}

TEST_CASE("error() and garbage return values become error verdicts with file:line") {
  TempDir dir;
  auto e = run_policies(dir, {
                                 {"a.lua", policy_with("ERR", "error('boom')")},
                                 {"b.lua", policy_with("TABLE", "error({code = 1})")},
                                 {"c.lua", policy_with("RET", "return 42")},
                                 {"d.lua", policy_with("BADFAIL", "fail('storage.tier.hot')")},
                                 {"e.lua", policy_with("BADADDR", "fail(42, 'x')")},
                             });
  CHECK(only_verdict(e, "ERR").message == "boom");
  CHECK(only_verdict(e, "ERR").loc.line == 3);
  CHECK(only_verdict(e, "TABLE").message == "(error object is a table value)");
  CHECK(only_verdict(e, "TABLE").loc.line == 1);  // no position: the policy's declaration
  CHECK(only_verdict(e, "RET").message ==
        "check returned a number value; report findings with fail(address, message) and return nothing");
  CHECK(only_verdict(e, "BADFAIL").message == "fail(address, message): message must be a string, got nothing");
  CHECK(only_verdict(e, "BADADDR").message ==
        "fail(address, message): address must be a string, a resource or nil, got a number");
}

TEST_CASE("ctx is read-only everywhere and shared views stay intact between policies") {
  TempDir dir;
  auto e = run_policies(dir, {
                                 {"a.lua", policy_with("W1", "ctx.resources('storage.tier')[1].kind = 'x'")},
                                 {"b.lua", policy_with("W2", "ctx.blueprint.metadata.name = 'x'")},
                                 {"c.lua", policy_with("W3", "table.insert(ctx.compliance, 'hipaa')")},
                                 {"d.lua", policy_with("W4", "setmetatable(ctx.blueprint, nil)")},
                                 {"e.lua", policy_with("W5", "string.upper = nil; _G.x = 1")},
                                 {"f.lua", policy_with("READ",
                                                       "local t = ctx.resources('storage.tier')[1]; "
                                                       "pass(t, t.kind .. ' ' .. ctx.blueprint.metadata.name .. ' ' .. "
                                                       "#ctx.compliance .. ' ' .. ('x'):upper() .. ' ' .. tostring(x))")},
                             });
  CHECK(only_verdict(e, "W1").message == "attempt to modify a read-only value (field 'kind'); ctx is read-only");
  CHECK(only_verdict(e, "W2").message == "attempt to modify a read-only value (field 'name'); ctx is read-only");
  CHECK(only_verdict(e, "W3").outcome == Outcome::Error);
  CHECK(only_verdict(e, "W4").message == "cannot change a protected metatable");
  CHECK(only_verdict(e, "W5").outcome == Outcome::Pass);
  const auto& read = only_verdict(e, "READ");
  CHECK(read.message == "nvme small 1 X nil");
  CHECK(read.address == "storage.tier.hot");
  CHECK(read.loc.str() == "bp.yaml:14:7");
}

TEST_CASE("ctx gives resources by prefix, single resources, the plan, pairs and #") {
  TempDir dir;
  auto e = run_policies(dir, {{"a.lua", policy_with("CTX", R"(
    local nodes = ctx.resources('baremetal.node')
    local n = 0
    for k, v in pairs(ctx.resource('baremetal.node.train-a[1]').attributes) do n = n + 1 end
    local creates = 0
    for _, c in ipairs(ctx.plan.changes) do if c.action == 'create' then creates = creates + 1 end end
    pass(nodes[2], #nodes .. ' ' .. nodes[2].index .. ' ' .. nodes[2].gpu .. ' ' .. tostring(n > 10) .. ' ' ..
         #ctx.resources() .. ' ' .. creates .. ' ' .. ctx.plan.summary.create .. ' ' ..
         tostring(next(ctx.blueprint.stacks)) .. ' ' .. #ctx.resources('baremetal.node.train-a') .. ' ' ..
         #ctx.resources('baremetal.node.train'))
  )")}});
  const auto& v = only_verdict(e, "CTX");
  INFO(v.message);
  REQUIRE(v.outcome == Outcome::Pass);
  CHECK(v.address == "baremetal.node.train-a[1]");
  // 2 nodes + stack + vlan + tier + namespace + audit + transport + monitoring = 9 resources.
  CHECK(v.message == "2 1 H100-80GB true 9 9 9 train 2 0");
}

TEST_CASE("ctx: each resource's depends_on, shared between the nodes of a pool, read-only") {
  TempDir dir;
  auto e = run_policies(dir, {{"a.lua", policy_with("DEPS", R"(
    local a, b = ctx.resource('baremetal.node.train-a[0]'), ctx.resource('baremetal.node.train-a[1]')
    local tier = ctx.resource('storage.tier.hot')
    pass(b, table.concat(a.depends_on, ',') .. ' ' .. table.concat(b.depends_on, ',') .. ' ' ..
         #tier.depends_on .. ' ' .. tostring(rawequal(a.depends_on, b.depends_on)))
  )")},
                              {"b.lua", policy_with("WRITE", "ctx.resource('baremetal.node.train-a[1]').depends_on[1] = 'x'")}});
  const auto& v = only_verdict(e, "DEPS");
  INFO(v.message);
  REQUIRE(v.outcome == Outcome::Pass);
  CHECK(v.message ==
        "net.vlan.ml,plinth.stack.train,storage.tier.hot net.vlan.ml,plinth.stack.train,storage.tier.hot 0 true");
  CHECK(only_verdict(e, "WRITE").outcome == Outcome::Error);
}

TEST_CASE("broken policy files are reported with file:line and the good ones still load") {
  TempDir dir;
  auto e = run_policies(dir, {
                                 {"a_syntax.lua", "policy {\n  id = 'SYN',\n  check = function(ctx) if end,\n}\n"},
                                 {"b_bad.lua", "policy { id = 'BAD', title = 't', severity = 'huge', enforcement = "
                                               "'mandatory', check = function() end, controlz = {} }\n"},
                                 {"c_dup.lua", policy_with("OK", "") + policy_with("OK", "")},
                                 {"d_nocheck.lua", "\n\npolicy { id = 'NOCHECK', title = 't', severity = 'low', "
                                                   "enforcement = 'advisory' }\n"},
                             });
  std::string base = dir.path() + "/policies/";
  REQUIRE(e.diagnostics.size() == 5);
  CHECK(e.diagnostics[0].loc.str() == base + "a_syntax.lua:3");
  CHECK(e.diagnostics[0].message == "policy file failed to load: unexpected symbol near 'end'");
  CHECK(e.diagnostics[1].message == "unknown policy field 'controlz'");
  CHECK(e.diagnostics[1].hint == "did you mean 'controls'?");
  CHECK(e.diagnostics[2].message == "policy BAD: severity 'huge' is not one of low, medium, high, critical");
  CHECK(e.diagnostics[3].message == "duplicate policy ID 'OK' (first declared at " + base + "c_dup.lua:1)");
  CHECK(e.diagnostics[3].loc.str() == base + "c_dup.lua:5");
  CHECK(e.diagnostics[4].message == "policy NOCHECK: 'check' must be a function(ctx)");
  CHECK(e.diagnostics[4].loc.str() == base + "d_nocheck.lua:3");
  CHECK(summarize(e) == "OK pass");
  CHECK(e.blocked());
}

TEST_CASE("metadata.compliance selects framework packs, other packs always run") {
  TempDir dir;
  auto pol = [](const std::string& id, const std::string& fw) {
    return "policy { id = '" + id + "', title = 't', severity = 'low', enforcement = 'advisory', controls = { " + fw +
           " = {'X.1'} }, check = function(ctx) end }\n";
  };
  auto e = run_policies(dir, {
                                 {"soc2/a.lua", pol("S", "soc2")},
                                 {"hipaa/a.lua", pol("H", "hipaa")},
                                 {"ml/a.lua", pol("M", "soc2")},
                                 {"root.lua", pol("R", "gdpr")},
                             });
  CHECK(summarize(e) == "M pass\nR pass\nS pass");
  REQUIRE(e.skipped.size() == 1);
  CHECK(e.skipped[0].id == "H");
  CHECK(e.skipped[0].pack == "hipaa");
  policy::Options all;
  all.all_packs = true;
  TempDir dir2;
  auto e2 = run_policies(dir2, {{"hipaa/a.lua", pol("H", "hipaa")}}, kSmallBlueprint, all);
  CHECK(summarize(e2) == "H pass");
}
