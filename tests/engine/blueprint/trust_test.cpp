// engine/blueprint/trust.h: the trust file of an untrusted plan and the
// check of the credentials a plan would send.
#include "engine/blueprint/trust.h"

#include <catch2/catch.hpp>

#include "engine/core/strings.h"
#include "tests/support/run.h"

namespace plinth::test::blueprint_trust {

using namespace plinth::bp;

namespace {

Resource node(int index, const std::string& credentials, const std::string& endpoint) {
  Resource r;
  r.type = "baremetal.node";
  r.provider = "baremetal";
  r.name = "hgx";
  r.index = index;
  r.address = make_address(r.type, r.name, index);
  r.source = {"cluster.yaml", 12, 5};
  r.attributes = {{"bmc_credentials", credentials}, {"bmc_endpoint", endpoint}};
  return r;
}

}  // namespace

TEST_CASE("trust: '*' matches any run of characters, '?' one, everything else only itself", "[security]") {
  CHECK(glob_match("https://bmc-?.dc1.example", "https://bmc-3.dc1.example"));
  CHECK_FALSE(glob_match("https://bmc-?.dc1.example", "https://bmc-13.dc1.example"));
  CHECK(glob_match("https://bmc-*.dc1.example", "https://bmc-3.dc1.example"));
  CHECK(glob_match("https://bmc-*.dc1.example", "https://bmc-.dc1.example"));
  CHECK(glob_match("https://127.0.0.1:*/bmc/*", "https://127.0.0.1:4431/bmc/12"));
  CHECK(glob_match("*", "anything"));
  CHECK_FALSE(glob_match("https://bmc-*.dc1.example", "https://bmc-3.dc1.example.attacker.net"));
  CHECK_FALSE(glob_match("https://bmc-*.dc1.example", "http://bmc-3.dc1.example"));
  CHECK_FALSE(glob_match("https://bmc-1.dc1.example", "https://bmc-10.dc1.example"));
}

TEST_CASE("trust: a trust file is read strictly, with file:line:column", "[security]") {
  TempDir dir;
  const std::string ok = dir.write("trust.yaml", R"(apiVersion: plinth/v1
kind: Trust
credentials:
  - {ref: "env:LAB_BMC_CREDENTIALS", endpoints: ["https://bmc-*.dc1.example"]}
plugins:
  - {name: promsd, sha256: 3f2a9c1d0b7e4f6a8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d}
providers:
  gcp: {endpoint: "https://compute.googleapis.com/compute/v1/"}
)");
  auto t = load_trust_file(ok);
  REQUIRE(t.ok());
  CHECK(t->allows("env:LAB_BMC_CREDENTIALS", "https://bmc-7.dc1.example"));
  CHECK_FALSE(t->allows("env:LAB_BMC_CREDENTIALS", "https://bmc-7.attacker.example"));
  CHECK_FALSE(t->allows("file:/etc/shadow", "https://bmc-7.dc1.example"));
  CHECK(t->plugin_sha256("promsd") == "3f2a9c1d0b7e4f6a8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d");
  CHECK(t->plugin_sha256("other").empty());
  CHECK(t->options.at("gcp").at("endpoint") == "https://compute.googleapis.com/compute/v1/");

  auto bad = [&](const std::string& text) {
    auto r = load_trust_file(dir.write("bad.yaml", text));
    REQUIRE_FALSE(r.ok());
    return r.error().message;
  };
  const std::string head = "apiVersion: plinth/v1\nkind: Trust\n";
  CHECK(bad(head + "credential: []\n") ==
        dir.path() + "/bad.yaml:3:1: unknown key 'credential' in the trust file; did you mean 'credentials'?");
  CHECK(bad(head + "credentials:\n  - {ref: \"env:X\", endpoints: [\"http://bmc\"]}\n") ==
        dir.path() + "/bad.yaml:4:31: endpoint pattern 'http://bmc' must start with https:// (a credential is never "
                     "sent in clear)");
  CHECK(bad(head + "credentials:\n  - {ref: \"root:calvin\", endpoints: []}\n").find(
            "ref must be env:NAME or file:PATH") != std::string::npos);
  CHECK(bad(head + "plugins:\n  - {name: x, sha256: abc}\n").find("sha256 must be 64 lower-case hex digits") !=
        std::string::npos);
  CHECK(bad("kind: Blueprint\napiVersion: plinth/v1\n").find("a trust file starts with apiVersion: plinth/v1 and "
                                                             "kind: Trust") != std::string::npos);
}

TEST_CASE("trust: every credential a resource would send must be allowed for its endpoint", "[security]") {
  TrustFile trust;
  trust.path = "/etc/plinth/trust.yaml";
  trust.credentials.push_back({"env:BMC", {"https://bmc-*.dc1.example"}});
  const std::vector<Resource> nodes = {node(0, "env:BMC", "https://bmc-0.dc1.example"),
                                       node(1, "env:BMC", "https://bmc-1.attacker.example"),
                                       node(2, "file:/etc/shadow", "https://bmc-2.dc1.example")};
  Diagnostics d = check_untrusted_credentials(nodes, trust);
  REQUIRE(d.size() == 2);
  CHECK(d[0].code == "SEC001");
  CHECK(d[0].address == "baremetal.node.hgx[1]");
  CHECK(d[0].loc.str() == "cluster.yaml:12:5");
  CHECK(d[0].message == "untrusted plan: baremetal.node.hgx[1] would send the credential env:BMC to "
                        "https://bmc-1.attacker.example; the trust file /etc/plinth/trust.yaml does not allow it");
  CHECK(d[0].hint == "if the operator means it, add to the trust file: credentials: [{ref: \"env:BMC\", endpoints: "
                     "[\"https://bmc-1.attacker.example\"]}] (docs/security.md)");
  CHECK(d[1].address == "baremetal.node.hgx[2]");
  // No trust file: nothing is allowed.
  CHECK(check_untrusted_credentials(nodes, TrustFile{}).size() == 3);
}

}  // namespace plinth::test::blueprint_trust
