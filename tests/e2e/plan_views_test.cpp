// The plan's views as users run them (docs/plan.md, "Views"): the Markdown
// summary a pull request's comment posts (plan --format markdown, --report
// plan-markdown:FILE, show --format markdown) and the HTML plan view, from
// blueprints copied into a fresh directory; the HTML rendered in headless
// Chromium.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

#include "engine/core/hash.h"
#include "engine/state/state.h"
#include "tests/support/run.h"
#include "tests/support/text.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_plan_views {

namespace fs = std::filesystem;

namespace {

/// bench/gen_blueprint.py's fleet of `pools` pools of `per_pool` nodes, written to `dir`/fleet.yaml.
std::string fleet(const TempDir& dir, int pools, int per_pool) {
  auto g = run_program({"/usr/bin/python3", source_dir() + "/bench/gen_blueprint.py", "--pools", std::to_string(pools),
                        "--nodes-per-pool", std::to_string(per_pool)});
  REQUIRE(g.exit_code == 0);
  return dir.write("fleet.yaml", g.out);
}

std::string copy_example(const TempDir& dir, const std::string& from, const std::string& to) {
  return dir.write(to, slurp(source_dir() + "/" + from));
}

/// "N to VERB" of the listed entries plus the resources of the folded rows, per verb.
std::map<std::string, long> accounted(const std::string& md) {
  std::map<std::string, long> n;
  std::regex listed(R"(</code> (\d+) to (create|update in place|replace|destroy))");
  for (std::sregex_iterator it(md.begin(), md.end(), listed), end; it != end; ++it) n[(*it)[2]] += std::stol((*it)[1]);
  std::regex folded(R"(\n\| (create|update in place|replace|destroy) \| [^|]+ \| (\d+) \| (\d+) \|)");
  for (std::sregex_iterator it(md.begin(), md.end(), folded), end; it != end; ++it) n[(*it)[1]] += std::stol((*it)[3]);
  return n;
}

/// Test output that outlives the test (the screenshots).
std::string output_dir() {
  fs::path dir = fs::path(plinth_binary()).parent_path().parent_path() / "test-output" / "plan-views";
  if (plinth_binary().rfind("/usr/", 0) == 0) dir = fs::temp_directory_path() / "plinth-test-output" / "plan-views";
  fs::create_directories(dir);
  return dir.string();
}

/// Renders `html` in headless Chromium: a screenshot, no console error, the DOM.
std::string rendered_dom(const std::string& html, const std::string& name) {
  auto which = run_program({"sh", "-c", "command -v chromium"});
  INFO("chromium is missing: apt-get install chromium (.ci/setup installs it)");
  REQUIRE(which.exit_code == 0);
  std::string png = output_dir() + "/" + name + ".png";
  auto r = test::render_in_chromium(html, png);
  INFO(r.shot.err);
  CHECK(r.shot.exit_code == 0);
  REQUIRE(fs::exists(png));
  CHECK(fs::file_size(png) > 20000);
  CHECK(r.shot.err.find("CONSOLE") == std::string::npos);
  CHECK(r.shot.err.find("Refused to") == std::string::npos);
  WARN("screenshot: " << png);
  CHECK(r.dom.exit_code == 0);
  return r.dom.out;
}

}  // namespace

TEST_CASE("plan views: the Markdown summary of 100,000 nodes in 2,000 pools fits a comment and adds up",
          "[e2e][plan][views][habits]") {
  TempDir dir;
  fleet(dir, 2000, 50);
  auto r = run_plinth({"plan", "fleet.yaml", "--state", "none.json", "--refresh=false", "-lock=false", "--format",
                       "markdown"},
                      dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string& md = r.out;
  INFO(md.substr(0, 3000));
  CHECK(md.size() < 65536);
  CHECK(contains(md, "**Plan: 100019 to create, 0 to update, 0 to replace, 0 to destroy.**"));
  CHECK(contains(md, "| Resources | 100019 | 0 | 0 | 0 | 0 |\n"));
  auto counts = accounted(md);
  CHECK(counts["create"] == 100019);
  CHECK(counts["update in place"] == 0);
  // The pools that did not fit, folded with their counts and first … last pool.
  CHECK(contains(md, "### Folded\n"));
  std::regex folded(R"(\n\| create \| <code>baremetal\.node</code> \| (\d+) \| (\d+) \| <code>baremetal\.node\.pool-\d+</code> … <code>baremetal\.node\.pool-01999</code> \|)");
  std::smatch m;
  REQUIRE(std::regex_search(md, m, folded));
  CHECK(std::stol(m[2]) == 50 * std::stol(m[1]));
  CHECK(contains(md, "Every change: plinth plan --no-group (or --json)."));
  CHECK(contains(md, "Plan not saved (plinth plan -out PLANFILE saves it)"));
}

TEST_CASE("plan views: 2,000 pools with the same change fold into one row", "[e2e][plan][views][habits]") {
  TempDir dir;
  const std::string bp = fleet(dir, 2000, 2);
  state::StateDocument doc = expanded_state({bp});
  for (auto& res : doc.resources)
    if (res.type == "baremetal.node") res.attributes["bios"]["SriovEnable"] = "Disabled";
  doc.serial = 1;
  dir.write("plinth.state.json", state::to_json_text(doc));
  auto r = run_plinth({"plan", "fleet.yaml", "--refresh=false", "-lock=false", "--report", "plan-markdown:plan.md"},
                      dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.err, "wrote the plan's markdown view to plan.md\n"));
  const std::string md = slurp(dir.path() + "/plan.md");
  CHECK(md.size() < 65536);
  CHECK(contains(md, "of entries with identical changes"));
  std::regex row(R"(\n\| update in place \| <code>baremetal\.node</code> \| (\d+) \| (\d+) \| <code>baremetal\.node\.pool-\d+</code> … <code>baremetal\.node\.pool-01999</code> \| bios\.SriovEnable: "Disabled" -&gt; "Enabled" \|)");
  std::smatch m;
  REQUIRE(std::regex_search(md, m, row));
  CHECK(accounted(md)["update in place"] == 4000);
  // The listed ones show their change.
  CHECK(contains(md, "<details><summary><code>~ baremetal.node.pool-00000&#91;0, 1&#93;</code> 2 to update in place</summary>\n"
                     "\n<pre>\nbios.SriovEnable: \"Disabled\" -&gt; \"Enabled\"\n</pre>"));
}

TEST_CASE("plan views: a blocked plan's summary names the failures, -out is refused, the views are written",
          "[e2e][plan][views][habits]") {
  TempDir dir;
  copy_example(dir, "blueprints/invalid/policy-hipaa-gaps.yaml", "gaps.yaml");
  auto r = run_plinth({"plan", "gaps.yaml", "--refresh=false", "--report", "plan-markdown:plan.md", "--report",
                       "plan-html:plan.html", "-out", "release.plan"},
                      dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "not writing release.plan: the policy check failed"));
  CHECK_FALSE(fs::exists(dir.path() + "/release.plan"));
  const std::string md = slurp(dir.path() + "/plan.md");
  CHECK(contains(md, "❌ **Blocked**: "));
  CHECK(contains(md, "### Blocking (mandatory policies)\n\n| Policy | Resource | Finding |\n"));
  CHECK(contains(md, "| <code>storage.tier.records</code> |"));
  CHECK(contains(slurp(dir.path() + "/plan.html"), "<div class=\"banner blocked\" id=\"verdict\">Blocked: "));
}

TEST_CASE("plan views: the summary names the saved plan's sha256, and show --format markdown the same",
          "[e2e][plan][views][habits]") {
  TempDir dir;
  copy_example(dir, "blueprints/examples/cluster.yaml", "cluster.yaml");
  auto r = run_plinth({"plan", "cluster.yaml", "--refresh=false", "--format", "markdown", "-out", "release.plan"},
                      dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string digest = sha256_hex(slurp(dir.path() + "/release.plan"));
  CHECK(contains(r.out, "Plan file <code>release.plan</code> sha256 <code>" + digest + "</code>"));
  CHECK(contains(r.out, "✅ **No mandatory policy failures**"));
  CHECK(contains(r.out, "## Plinth plan: ml-prod\n"));
  auto show = run_plinth({"show", "release.plan", "--format", "markdown"}, dir.path());
  INFO(show.err);
  REQUIRE(show.exit_code == 0);
  CHECK(contains(show.out, "Plan file <code>release.plan</code> sha256 <code>" + digest + "</code>"));
  CHECK(contains(show.out, "Policy verdicts are not part of a saved plan"));
  CHECK(accounted(show.out) == accounted(r.out));

  auto both = run_plinth({"plan", "cluster.yaml", "--refresh=false", "--json", "--format", "html"}, dir.path());
  CHECK(both.exit_code == 1);
  CHECK(contains(both.err, "--json and --format html ask for two outputs; keep one"));
  auto bad = run_plinth({"plan", "cluster.yaml", "--refresh=false", "--format", "yaml"}, dir.path());
  CHECK(bad.exit_code == 1);
  CHECK(contains(bad.err, "--format yaml: use text, json, markdown or html"));
}

TEST_CASE("plan views: an invalid blueprint's summary names file:line:column", "[e2e][plan][views][habits]") {
  TempDir dir;
  copy_example(dir, "blueprints/invalid/bp-unknown-key.yaml", "bad.yaml");
  auto r = run_plinth({"plan", "bad.yaml", "--refresh=false", "--report", "plan-markdown:plan.md"}, dir.path());
  CHECK(r.exit_code == 1);
  const std::string md = slurp(dir.path() + "/plan.md");
  INFO(md);
  CHECK(contains(md, "❌ **The blueprint is invalid** (1 error): nothing was planned."));
  CHECK(std::regex_search(md, std::regex(R"(- bad\.yaml:\d+:\d+ BP\d+ )")));
}

TEST_CASE("plan views: the HTML view of the example cluster and of 10,000 nodes renders in Chromium",
          "[e2e][plan][views][habits]") {
  TempDir dir;
  const std::string bp = copy_example(dir, "blueprints/examples/cluster.yaml", "cluster.yaml");
  auto r = run_plinth({"plan", "cluster.yaml", "--refresh=false", "--format", "html"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string small = dir.write("cluster.html", r.out);
  std::string dom = rendered_dom(small, "cluster");
  CHECK(contains(dom, "<h1>Plinth plan: ml-prod</h1>"));
  CHECK(contains(dom, "<div class=\"row head\"><span>Pool or resource</span>"));
  CHECK(std::regex_search(dom, std::regex(R"(<code>baremetal\.node\.[a-z0-9-]+</code></span><span class="c">\d+</span>)")));

  // Applied, then the training stack's driver moves: its pool's replace comes first, open.
  state::StateDocument doc = expanded_state({bp});
  doc.serial = 1;
  dir.write("plinth.state.json", state::to_json_text(doc));
  std::string text = slurp(bp);
  const std::string pin = "driver: \"580.126.20\"";
  REQUIRE(text.find(pin) != std::string::npos);
  dir.write("cluster.yaml", text.replace(text.find(pin), pin.size(), "driver: \"580.159.03\""));
  auto changed = run_plinth({"plan", "cluster.yaml", "--refresh=false", "--format", "html"}, dir.path());
  INFO(changed.err);
  REQUIRE(changed.exit_code == 0);
  std::string changed_dom = rendered_dom(dir.write("changed.html", changed.out), "cluster-driver-change");
  const auto first_row = changed_dom.find("<details class=\"pool\"");
  REQUIRE(first_row != std::string::npos);
  CHECK(std::regex_search(changed_dom.substr(first_row, 400),
                          std::regex(R"(open=""><summary class="row"><span><code>[a-z_]+\.[a-z_]+\.[a-z0-9-]+</code></span><span class="z">0</span><span class="z">0</span><span class="r">\d+</span>)")));
  CHECK(contains(changed_dom, "<code>baremetal.node.train-a</code></span><span class=\"z\">0</span><span "
                              "class=\"z\">0</span><span class=\"r\">32</span>"));
  CHECK(contains(changed_dom, "forced by: user_data_hash"));
  CHECK(contains(changed_dom, "because plinth.stack."));

  TempDir big;
  fleet(big, 500, 20);
  auto b = run_plinth({"plan", "fleet.yaml", "--state", "none.json", "--refresh=false", "-lock=false", "--report",
                       "plan-html:fleet.html"},
                      big.path());
  INFO(b.err);
  REQUIRE(b.exit_code == 0);
  const std::string html = big.path() + "/fleet.html";
  const auto size = fs::file_size(html);
  INFO("HTML view of 10,019 resources: " << size << " bytes");
  CHECK(size < 5u * 1024 * 1024);
  std::string big_dom = rendered_dom(html, "fleet-10000");
  CHECK(contains(big_dom, "<code>baremetal.node.pool-00499</code></span><span class=\"c\">20</span>"));
  CHECK(contains(big_dom, "<tr><td><code>baremetal.node.pool-00499[19]</code></td>"));
}

}  // namespace plinth::test::e2e_plan_views
