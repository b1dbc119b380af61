// Azure burst pools applied without a client secret: workload identity (an
// OIDC token in AZURE_FEDERATED_TOKEN_FILE sent as the client assertion) and
// managed identities (IMDS, App Service's IDENTITY_ENDPOINT), in
// azure-identity's order. azure-emulator's request log shows the token
// exchange and that Resource Manager was called with the token it gave
// (docs/providers/azure.md, "Credentials"). Run with the installed binary
// from a directory of its own.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <set>

#include "tests/support/blueprints.h"
#include "tests/support/clouds.h"
#include "tests/support/run.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_azure_identity {

namespace {

const std::string kSubject = "repo:example/fleet:environment:production";

/// The tokens issued (by credential kind) and the tokens Resource Manager was called with.
struct Seen {
  std::map<std::string, std::vector<std::string>> issued;
  std::set<std::string> arm_tokens;
  int arm_calls = 0, unauthorized = 0;
};

Seen seen(const AzureEmulator& az) {
  Seen s;
  for (const auto& l : az.log_lines()) {
    if (l["credential"].is_string() && l["token_id"].is_string() && l["status"] == 200)
      s.issued[l["credential"].get<std::string>()].push_back(l["token_id"]);
    if (l["service"] == "arm") {
      ++s.arm_calls;
      if (l["status"] == 401) ++s.unauthorized;
      if (l["token_id"].is_string()) s.arm_tokens.insert(l["token_id"].get<std::string>());
    }
  }
  return s;
}

/// `ws`'s environment without the client secret: only what `extra` sets.
void secretless(Workspace& ws, const AzureEmulator& az, const std::map<std::string, std::string>& extra) {
  ws.env = azure_env(az);
  ws.env["AZURE_CLIENT_SECRET"] = "";
  for (const auto& [k, v] : extra) ws.env[k] = v;
}

}  // namespace

TEST_CASE("azure identity: workload identity (AZURE_FEDERATED_TOKEN_FILE) applies a pool with no secret",
          "[e2e][azure][habits][identity]") {
  AzureEmulator az({"--federated-credential", kGithubIssuer + "," + kSubject});
  TempDir home;
  home.write("azure-identity-token", github_oidc_token(kSubject));
  Workspace ws(&az, "8");
  secretless(ws, az, {{"AZURE_FEDERATED_TOKEN_FILE", home.path() + "/azure-identity-token"}});
  auto r = ws.applied(burst_blueprint({azure_pool(2)}));
  CHECK(az.vms().size() == 2);
  Seen s = seen(az);
  REQUIRE(s.issued["federated"].size() == 1);
  CHECK(s.issued["secret"].empty());
  CHECK(s.arm_tokens == std::set<std::string>{s.issued["federated"][0]});
  CHECK_FALSE(contains(r.out + r.err, github_oidc_token(kSubject).substr(0, 40)));

  SECTION("a token whose subject the app does not trust is refused once, with what to check") {
    home.write("azure-identity-token", github_oidc_token("repo:attacker/fork:pull_request"));
    auto refused = ws.apply(burst_blueprint({azure_pool(4)}));
    INFO(refused.out << refused.err);
    CHECK(refused.exit_code == 1);
    CHECK(contains(refused.out + refused.err,
                   "Microsoft Entra refused the token request: invalid_client: AADSTS70021: No matching federated "
                   "identity record found for presented assertion."));
    CHECK(contains(refused.out + refused.err, "check AZURE_TENANT_ID, AZURE_CLIENT_ID and the federated credential"));
    CHECK(az.vms().size() == 2);
  }
}

TEST_CASE("azure identity: a managed identity from IMDS or App Service's endpoint, refreshed as it expires",
          "[e2e][azure][habits][identity]") {
  SECTION("IMDS (AZURE_POD_IDENTITY_AUTHORITY_HOST), tokens living 6 s through a slow apply") {
    AzureEmulator az({"--metadata-port", "0", "--token-lifetime", "6", "--lro-delay-ms", "2500"});
    Workspace ws(&az, "8");
    secretless(ws, az, {{"AZURE_TENANT_ID", ""}, {"AZURE_CLIENT_ID", ""},
                        {"AZURE_POD_IDENTITY_AUTHORITY_HOST", az.metadata_base()}});
    ws.applied(burst_blueprint({azure_pool(2)}));
    BurstPool regular = azure_pool(2);
    regular.spot = false;
    ws.applied(burst_blueprint({regular}));  // regular priority: replaces both
    Seen s = seen(az);
    CHECK(s.issued["managed-identity"].size() >= 2);
    CHECK(s.issued.count("secret") == 0);
    CHECK(s.unauthorized == 0);  // never sent an expired token
    for (const auto& t : s.arm_tokens) CHECK(std::count(s.issued["managed-identity"].begin(),
                                                        s.issued["managed-identity"].end(), t) == 1);
  }
  SECTION("App Service, Functions, Container Apps: IDENTITY_ENDPOINT with IDENTITY_HEADER") {
    AzureEmulator az({"--metadata-port", "0", "--identity-header", "c2VjcmV0LWhlYWRlcg"});
    Workspace ws(&az, "8");
    secretless(ws, az, {{"AZURE_TENANT_ID", ""}, {"AZURE_CLIENT_ID", ""},
                        {"IDENTITY_ENDPOINT", az.metadata_base() + "/msi/token"},
                        {"IDENTITY_HEADER", "c2VjcmV0LWhlYWRlcg"}});
    auto r = ws.applied(burst_blueprint({azure_pool(1)}));
    Seen s = seen(az);
    REQUIRE(s.issued["managed-identity"].size() == 1);
    CHECK(s.arm_tokens == std::set<std::string>{s.issued["managed-identity"][0]});
    CHECK_FALSE(contains(r.out + r.err, "c2VjcmV0LWhlYWRlcg"));
  }
  SECTION("no credential and no managed identity: PLAN001 says what to set") {
    AzureEmulator az;
    Workspace ws(&az, "8");
    secretless(ws, az, {{"AZURE_TENANT_ID", ""}, {"AZURE_POD_IDENTITY_AUTHORITY_HOST", "http://127.0.0.1:9"}});
    auto r = ws.plan(burst_blueprint({azure_pool(1)}));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "error[PLAN001]: provider azure cannot be used"));
    CHECK(contains(r.err, "no Azure credentials: set AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET"));
    CHECK(contains(r.err, "(managed identity token from http://127.0.0.1:9 for client "));
  }
}

}  // namespace plinth::test::e2e_azure_identity
