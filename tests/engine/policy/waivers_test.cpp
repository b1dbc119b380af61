// waivers.yaml: parsing with positions, glob matching, waived / expired / unused.
#include <catch2/catch.hpp>

#include "engine/policy/waivers.h"
#include "tests/engine/policy/fixture.h"

using namespace plinth;
using namespace plinth::test;
using policy::Outcome;

namespace {

policy::Evaluation two_failures() {
  policy::Evaluation e;
  e.policies.push_back({"ENC", "t", "", "high", "mandatory", {}, "", {}});
  e.verdicts.push_back({"ENC", Outcome::Fail, "storage.tier.hot", "no encryption", {}, "", "", {}});
  e.verdicts.push_back({"ENC", Outcome::Fail, "baremetal.node.train-a[3]", "no encryption", {}, "", "", {}});
  return e;
}

policy::Waiver waiver(const std::string& pattern, const std::string& expires) {
  return {"ENC", pattern, "vendor ships SED next quarter", "ciso@example.com", expires, {"waivers.yaml", 2, 5}};
}

}  // namespace

TEST_CASE("address patterns: * and ? glob, brackets are literal") {
  CHECK(policy::address_glob("storage.tier.hot", "storage.tier.hot"));
  CHECK(policy::address_glob("storage.tier.*", "storage.tier.hot"));
  CHECK(policy::address_glob("baremetal.node.train-a[*]", "baremetal.node.train-a[12]"));
  CHECK(policy::address_glob("baremetal.node.train-a[3]", "baremetal.node.train-a[3]"));
  CHECK_FALSE(policy::address_glob("baremetal.node.train-a[3]", "baremetal.node.train-a3"));
  CHECK(policy::address_glob("*.node.*[?]", "baremetal.node.x[7]"));
  CHECK_FALSE(policy::address_glob("*.node.*[?]", "baremetal.node.x[17]"));
  CHECK(policy::address_glob("*", ""));
  CHECK_FALSE(policy::address_glob("storage.tier.hot", "storage.tier.hotter"));
}

TEST_CASE("a live waiver turns a matching failure into waived, others stand") {
  auto e = two_failures();
  policy::apply_waivers({waiver("storage.tier.*", "2099-12-31")}, "2026-12-02", e);
  CHECK(e.verdicts[0].outcome == Outcome::Waived);
  CHECK(e.verdicts[0].waiver_justification == "vendor ships SED next quarter");
  CHECK(e.verdicts[0].waiver_approver == "ciso@example.com");
  CHECK(e.verdicts[0].waiver_loc.str() == "waivers.yaml:2:5");
  CHECK(e.verdicts[1].outcome == Outcome::Fail);
  CHECK(e.diagnostics.empty());
  CHECK(e.blocked());  // the node failure is mandatory and not waived
}

TEST_CASE("a waiver holds through its expiry day and fails the day after") {
  auto e = two_failures();
  policy::apply_waivers({waiver("*", "2026-12-02")}, "2026-12-02", e);
  CHECK(summarize(e) == "ENC waived storage.tier.hot\nENC waived baremetal.node.train-a[3]");
  CHECK_FALSE(e.blocked());

  auto late = two_failures();
  policy::apply_waivers({waiver("*", "2026-12-01")}, "2026-12-02", late);
  CHECK(summarize(late) == "ENC fail storage.tier.hot\nENC fail baremetal.node.train-a[3]");
  REQUIRE(late.diagnostics.size() == 1);
  const auto& d = late.diagnostics[0];
  CHECK(d.code == "POL021");
  CHECK(d.severity == Severity::Error);
  CHECK(d.message == "waiver for ENC on '*' expired on 2026-12-01; the 2 failure(s) it covered stand");
  CHECK(d.loc.str() == "waivers.yaml:2:5");
}

TEST_CASE("an expired waiver fails even when nothing matches, an unused live one warns") {
  auto e = two_failures();
  policy::apply_waivers({waiver("storage.tier.cold", "2020-01-01"), waiver("storage.tier.cold", "2099-01-01"),
                         {"NOPE", "*", "j", "a", "2099-01-01", {"waivers.yaml", 9, 5}}},
                        "2026-12-02", e);
  REQUIRE(e.diagnostics.size() == 3);
  CHECK(e.diagnostics[0].code == "POL021");
  CHECK(e.diagnostics[0].message == "waiver for ENC on 'storage.tier.cold' expired on 2020-01-01");
  CHECK(e.diagnostics[1].code == "POL022");
  CHECK(e.diagnostics[1].severity == Severity::Warning);
  CHECK(e.diagnostics[1].message == "waiver for ENC on 'storage.tier.cold' matches no failure");
  CHECK(e.diagnostics[2].message == "waiver names policy NOPE, which did not run for this blueprint");
  CHECK(e.diagnostics[2].loc.str() == "waivers.yaml:9:5");
}

TEST_CASE("waivers.yaml is parsed strictly with positions") {
  TempDir dir;
  std::string path = dir.write("waivers.yaml", R"(waivers:
  - policy: SOC2-ENC-001
    resource: "storage.tier.*"
    justification: legacy NAS, replaced in Q1
    approver: ciso@example.com
    expires: 2027-03-31
  - policy: SOC2-TLS-001
    resource: access.transport.default
    approver: ciso@example.com
    expires: 2027-02-30
    justifcation: typo
)");
  auto w = policy::load_waivers(path);
  REQUIRE(w.waivers.size() == 1);
  CHECK(w.waivers[0] == policy::Waiver{"SOC2-ENC-001", "storage.tier.*", "legacy NAS, replaced in Q1",
                                       "ciso@example.com", "2027-03-31", {path, 2, 5}});
  // The misspelt field is reported once, with a did-you-mean, not also as missing.
  REQUIRE(w.diagnostics.size() == 2);
  CHECK(w.diagnostics[0].message == "unknown waiver field 'justifcation'");
  CHECK(w.diagnostics[0].hint == "did you mean 'justification'?");
  CHECK(w.diagnostics[0].loc.str() == path + ":11:5");
  CHECK(w.diagnostics[1].message == "waiver expiry '2027-02-30' is not a date in the form YYYY-MM-DD");
  CHECK(w.diagnostics[1].loc.str() == path + ":10:14");
  CHECK(policy::load_waivers(dir.path() + "/missing.yaml").waivers.empty());
  CHECK(policy::load_waivers(dir.path() + "/missing.yaml").diagnostics.empty());
}
