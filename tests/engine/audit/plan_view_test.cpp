// The plan's Markdown summary and HTML view (engine/audit/plan_view.h) on
// plans built with plan::diff: the size bound, counts that add up, the
// order, hostile values, verdicts and drift.
#include <catch2/catch.hpp>

#include <regex>

#include "engine/audit/plan_view.h"

namespace plinth::audit {
namespace {

Resource node(const std::string& pool, int index, const std::string& driver, const std::string& extra = "") {
  Resource r;
  r.type = "baremetal.node";
  r.name = pool;
  r.index = index;
  r.provider = "baremetal";
  r.address = make_address(r.type, r.name, index);
  r.attributes = {{"driver", driver},
                  {"bmc_endpoint", "https://10.0." + std::to_string(index) + ".1"},
                  {"note", extra.empty() ? "plain" : extra}};
  return r;
}

std::vector<Resource> pools(int n, int per_pool, const std::string& driver) {
  std::vector<Resource> out;
  for (int p = 0; p < n; ++p)
    for (int i = 0; i < per_pool; ++i) out.push_back(node("pool-" + std::to_string(1000 + p), i, driver));
  return out;
}

/// Sums "N to VERB" of the listed entries and the resource column of the
/// folded rows, per verb.
std::map<std::string, long> accounted(const std::string& md) {
  std::map<std::string, long> n;
  std::regex listed(R"(</code> (\d+) to (create|update in place|replace|destroy))");
  for (std::sregex_iterator it(md.begin(), md.end(), listed), end; it != end; ++it)
    n[(*it)[2]] += std::stol((*it)[1]);
  std::regex folded(R"(\n\| (create|update in place|replace|destroy) \| [^|]+ \| (\d+) \| (\d+) \|)");
  for (std::sregex_iterator it(md.begin(), md.end(), folded), end; it != end; ++it)
    n[(*it)[1]] += std::stol((*it)[3]);
  return n;
}

PlanView view_of(const plan::Plan& p) {
  PlanView v;
  v.plan = &p;
  v.blueprint_name = "fleet";
  v.plan_file = "release.plan";
  v.plan_sha256 = std::string(64, 'a');
  return v;
}

}  // namespace

TEST_CASE("plan markdown: under the limit for any size, counts that add up, folds what does not fit",
          "[audit][plan-view]") {
  for (int n : {1, 10, 200, 3000}) {
    // Every pool updates its driver (identical changes), a third are also
    // recreated elsewhere (creates), a few are deleted.
    auto prior = pools(n, 4, "550.54.15");
    auto desired = pools(n, 4, "550.90.07");
    for (int p = 0; p < n / 3; ++p) desired.push_back(node("new-" + std::to_string(p), 0, "550.90.07"));
    std::vector<Resource> kept;
    for (auto& r : desired)
      if (r.name != "pool-1000" || n < 10) kept.push_back(r);
    plan::Plan p = plan::diff(kept, prior);
    const auto s = p.summary();
    for (size_t limit : {size_t(65536), size_t(8000)}) {
      std::string md = plan_markdown(view_of(p), limit);
      INFO("pools " << n << ", limit " << limit << ", size " << md.size());
      CHECK(md.size() < limit);
      auto counts = accounted(md);
      CHECK(counts["create"] == s.create);
      CHECK(counts["update in place"] == s.update);
      CHECK(counts["destroy"] == s.remove);
      CHECK(md.find("sha256 <code>" + std::string(64, 'a') + "</code>") != std::string::npos);
      if (n >= 3000 || (n >= 200 && limit == 8000)) {
        CHECK(md.find("### Folded") != std::string::npos);
        CHECK(md.find("plinth show --no-group release.plan") != std::string::npos);
      }
      if (n == 1) CHECK(md.find("### Folded") == std::string::npos);
    }
  }
}

TEST_CASE("plan markdown: pools with identical changes fold into one row", "[audit][plan-view]") {
  plan::Plan p = plan::diff(pools(3000, 2, "550.90.07"), pools(3000, 2, "550.54.15"));
  std::string md = plan_markdown(view_of(p));
  INFO(md.substr(md.find("### Folded")));
  CHECK(md.size() < kCommentLimit);
  CHECK(md.find("of entries with identical changes") != std::string::npos);
  // One row: every pool not listed, driver old -> new.
  std::regex row(R"(\n\| update in place \| <code>baremetal\.node</code> \| (\d+) \| (\d+) \| <code>baremetal\.node\.pool-\d+</code> … <code>baremetal\.node\.pool-3999</code> \| driver: "550\.54\.15" -&gt; "550\.90\.07" \|)");
  std::smatch m;
  REQUIRE(std::regex_search(md, m, row));
  CHECK(accounted(md)["update in place"] == 6000);
}

TEST_CASE("plan markdown: replaces and deletes come first, with what forces them", "[audit][plan-view]") {
  Resource ns;
  ns.type = "access.namespace";
  ns.name = "zeta";
  ns.address = "access.namespace.zeta";
  ns.provider = "kubernetes";
  ns.attributes = {{"gpu_quota", 8}};
  auto prior = pools(2, 3, "550.54.15");
  auto desired = prior;
  desired.erase(desired.begin(), desired.begin() + 3);  // pool-1000 goes
  desired.push_back(ns);
  plan::Plan p = plan::diff(desired, prior);
  std::string md = plan_markdown(view_of(p));
  auto del = md.find("<code>- baremetal.node.pool-1000&#91;0..2&#93;</code> 3 to destroy");
  auto add = md.find("<code>+ access.namespace.zeta</code> 1 to create");
  REQUIRE(del != std::string::npos);
  REQUIRE(add != std::string::npos);
  CHECK(del < add);
  CHECK(md.find("**Plan: 1 to create, 0 to update, 0 to replace, 3 to destroy.**") != std::string::npos);
}

TEST_CASE("plan markdown and html: a hostile value makes no tag, link or mention", "[audit][plan-view]") {
  const std::string evil = "</pre><img src=\"https://evil.example/x.png\">[click](https://evil.example) @everyone "
                           "| cell \x1b[31m";
  std::vector<Resource> desired = {node("pool-a", 0, "550.90.07", evil), node("pool-a", 1, "550.90.07", evil)};
  plan::Plan p = plan::diff(desired, {});
  policy::Evaluation ev;
  policy::PolicyInfo info;
  info.id = "SEC-001";
  info.severity = "high";
  info.enforcement = "mandatory";
  ev.policies.push_back(info);
  policy::Verdict v;
  v.policy = "SEC-001";
  v.outcome = policy::Outcome::Fail;
  v.address = "baremetal.node.pool-a[0]";
  v.message = evil;
  ev.verdicts.push_back(v);
  PlanView view = view_of(p);
  view.evaluation = &ev;
  std::string md = plan_markdown(view);
  INFO(md);
  CHECK(md.find("<img") == std::string::npos);
  CHECK(md.find("</pre><") == std::string::npos);
  CHECK(md.find("](https") == std::string::npos);
  CHECK(md.find("@everyone") == std::string::npos);
  CHECK(md.find('\x1b') == std::string::npos);
  CHECK(md.find("❌ **Blocked**: 1 mandatory policy finding") != std::string::npos);
  CHECK(md.find("| <code>SEC-001</code> high | <code>baremetal.node.pool-a&#91;0&#93;</code> |") != std::string::npos);

  std::string html = plan_html(view);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find('\x1b') == std::string::npos);
  CHECK(html.find("<span class=\"badge block\">1 blocks</span>") != std::string::npos);
  CHECK(html.find("Content-Security-Policy") != std::string::npos);
}

TEST_CASE("plan markdown: hostile sizes (long messages of '<', sparse indexes, long names) stay under the limit",
          "[audit][plan-view]") {
  // Every other node of 4,000 pools of 40 changes (sparse indexes), with long hostile notes.
  const std::string wall(5000, '<');
  std::vector<Resource> prior, desired;
  for (int p = 0; p < 400; ++p)
    for (int i = 0; i < 40; ++i) {
      prior.push_back(node("pool-" + std::string(150, 'x') + std::to_string(p), i, "550.54.15", "a"));
      desired.push_back(node("pool-" + std::string(150, 'x') + std::to_string(p), i, "550.54.15", i % 2 ? "a" : wall));
    }
  plan::Plan p = plan::diff(desired, prior);
  policy::Evaluation ev;
  policy::PolicyInfo info;
  info.id = "SEC-001";
  info.enforcement = "mandatory";
  ev.policies.push_back(info);
  std::vector<plan::Drift> drift;
  for (int i = 0; i < 500; ++i) {
    policy::Verdict v;
    v.policy = "SEC-001";
    v.outcome = policy::Outcome::Fail;
    v.address = "baremetal.node." + std::string(300, '[') + std::to_string(i);
    v.message = wall;
    ev.verdicts.push_back(v);
    plan::Drift d;
    d.address = v.address;
    for (int k = 0; k < 9; ++k) d.changes.push_back({wall, Shared<Json>(Json(wall)), Shared<Json>(Json(wall)), false, false});
    drift.push_back(d);
  }
  PlanView view = view_of(p);
  view.evaluation = &ev;
  view.drift = &drift;
  view.blueprint_name = wall;
  view.provenance = wall;
  std::string md = plan_markdown(view);
  CHECK(md.size() < kCommentLimit);
  CHECK(accounted(md)["update in place"] == p.summary().update);
  CHECK(md.find("… and ") != std::string::npos);
  CHECK(md.find("(cut at ") == std::string::npos);
}

TEST_CASE("plan html: a row per pool with its counts, replaces and deletes first, members with what differs",
          "[audit][plan-view]") {
  auto prior = pools(3, 2, "550.54.15");
  auto desired = pools(3, 2, "550.54.15");
  desired[2].attributes["driver"] = "570.86.15";  // pool-1001[0]: update
  desired.erase(desired.begin() + 4, desired.end());  // pool-1002 goes
  desired.push_back(node("pool-1003", 0, "570.86.15"));
  plan::Plan p = plan::diff(desired, prior);
  plan::Drift d;
  d.address = "baremetal.node.pool-1000[1]";
  d.changes.push_back({"note", Shared<Json>(Json("plain")), Shared<Json>(Json("edited")), false, false});
  std::vector<plan::Drift> drift = {d};
  PlanView view = view_of(p);
  view.drift = &drift;
  std::string html = plan_html(view);
  auto del = html.find("<code>baremetal.node.pool-1002</code></span><span class=\"z\">0</span><span class=\"z\">0"
                       "</span><span class=\"z\">0</span><span class=\"d\">2</span>");
  auto upd = html.find("<code>baremetal.node.pool-1001</code></span><span class=\"z\">0</span><span class=\"u\">1</span>");
  auto add = html.find("<code>baremetal.node.pool-1003</code></span><span class=\"c\">1</span>");
  REQUIRE(del != std::string::npos);
  REQUIRE(upd != std::string::npos);
  REQUIRE(add != std::string::npos);
  CHECK(del < upd);
  CHECK(upd < add);
  CHECK(html.find("<td><code>baremetal.node.pool-1000[1]</code></td><td class=\"v\">note: &quot;plain&quot; -&gt; "
                  "&quot;edited&quot;</td>") != std::string::npos);
  // The deleted pool's members, each with its address.
  CHECK(html.find("<tr><td><code>baremetal.node.pool-1002[1]</code></td>") != std::string::npos);
}

TEST_CASE("plan views of an invalid blueprint name its errors", "[audit][plan-view]") {
  Diagnostics ds = {{"BP002", Severity::Error, "unknown key 'gpus'", SourceLoc{"fleet.yaml", 7, 3}, ""}};
  PlanView view;
  view.validation = &ds;
  view.blueprint_name = "fleet.yaml";
  std::string md = plan_markdown(view);
  CHECK(md.find("❌ **The blueprint is invalid** (1 error)") != std::string::npos);
  CHECK(md.find("fleet.yaml:7:3 BP002 unknown key 'gpus'") != std::string::npos);
  CHECK(plan_html(view).find("fleet.yaml:7:3 BP002") != std::string::npos);
}

}  // namespace plinth::audit
