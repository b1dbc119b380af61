// GCP burst pools applied with Application Default Credentials other than a
// key: workload identity federation (an external_account file whose subject
// token comes from a file or a URL (with headers and a JSON answer), exchanged at STS, with or without a
// service account impersonated through IAM Credentials), gcloud's
// authorized_user, and the metadata server. gcp-emulator's request log shows
// the exchanges and who each Compute call came from (docs/providers/gcp.md,
// "Credentials"). Run with the installed binary from a directory of its own.
#include <catch2/catch.hpp>
#include <set>

#include "tests/support/blueprints.h"
#include "tests/support/clouds.h"
#include "tests/support/redfish.h"
#include "tests/support/run.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_gcp_identity {

namespace {

const std::string kSubject = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOmV4YW1wbGUvZmxlZXQifQ.c2ln";

/// The APIs the log shows, and the principals Compute calls came from.
struct Seen {
  std::map<std::string, int> calls;  ///< by api
  std::set<std::string> compute_principals;
};

Seen seen(const GceEmulator& gce) {
  Seen s;
  for (const auto& l : gce.log_lines()) {
    const std::string api = l.value("api", "");
    if (l["status"] == 200) ++s.calls[api];
    if (api.rfind("compute.", 0) == 0 && l["principal"].is_string())
      s.compute_principals.insert(l["principal"].get<std::string>());
  }
  return s;
}

/// `ws`'s environment with no key file: GOOGLE_APPLICATION_CREDENTIALS is `credentials`.
void keyless(Workspace& ws, const GceEmulator& gce, const TempDir& home, const std::string& credentials) {
  ws.env = gcp_env(gce);
  ws.env["GOOGLE_APPLICATION_CREDENTIALS"] = credentials;
  ws.env["GOOGLE_CLOUD_PROJECT"] = "plinth-test";
  ws.env["HOME"] = home.path();
  ws.env["CLOUDSDK_CONFIG"] = "";
}

}  // namespace

TEST_CASE("gcp identity: an external_account file (workload identity federation) applies a pool with no key",
          "[e2e][gcp][habits][identity]") {
  GceEmulator gce({"--subject-token", kSubject});
  TempDir home;
  home.write("oidc-token", kSubject + "\n");
  Workspace ws(&gce, "8");

  SECTION("file-sourced subject token, a service account impersonated") {
    home.write("wif.json", gcp_external_account(gce, Json{{"file", home.path() + "/oidc-token"}}, true).dump());
    keyless(ws, gce, home, home.path() + "/wif.json");
    auto r = ws.applied(burst_blueprint({gcp_pool(2)}));
    CHECK(gce.active().size() == 2);
    Seen s = seen(gce);
    CHECK(s.calls["sts.token"] == 1);
    CHECK(s.calls["iamcredentials.generateAccessToken"] == 1);
    CHECK(s.calls["oauth2.token"] == 0);  // no key was used
    CHECK(s.compute_principals == std::set<std::string>{kGcpAccount});
    CHECK_FALSE(contains(r.out + r.err, kSubject));
  }
  SECTION("a subject token in a JSON file (format json), the federated principal itself") {
    const Json json_field = {{"type", "json"}, {"subject_token_field_name", "value"}};
    home.write("wif.json",
               gcp_external_account(gce, {{"file", home.path() + "/oidc.json"}, {"format", json_field}}, false).dump());
    home.write("oidc.json", Json{{"count", 1}, {"value", kSubject}}.dump());
    keyless(ws, gce, home, home.path() + "/wif.json");
    ws.applied(burst_blueprint({gcp_pool(1)}));
    Seen s = seen(gce);
    CHECK(s.calls["sts.token"] == 1);
    CHECK(s.calls["iamcredentials.generateAccessToken"] == 0);
    CHECK(s.compute_principals == std::set<std::string>{"principal:" + kGcpWifAudience});
  }
  SECTION("a URL-sourced subject token with headers and a JSON answer (GitHub Actions' token URL)") {
    // What google-github-actions/auth writes: the runner's ACTIONS_ID_TOKEN_REQUEST_URL, its bearer token, and
    // the field "value" of the answer.
    TempDir served;
    served.write("oidc", Json{{"count", 1}, {"value", kSubject}}.dump());
    FileServer web(served.path());
    const Json source = {{"url", web.base() + "/oidc?api-version=2.0&audience=" + kGcpWifAudience},
                         {"headers", {{"Authorization", "bearer runner-request-token"}}},
                         {"format", {{"type", "json"}, {"subject_token_field_name", "value"}}}};
    home.write("wif.json", gcp_external_account(gce, source, false).dump());
    keyless(ws, gce, home, home.path() + "/wif.json");
    auto r = ws.applied(burst_blueprint({gcp_pool(1)}));
    Seen s = seen(gce);
    CHECK(s.calls["sts.token"] == 1);
    CHECK(s.compute_principals == std::set<std::string>{"principal:" + kGcpWifAudience});
    const std::string log = web.log();
    CHECK(contains(log, "\"path\": \"/oidc?api-version=2.0&audience="));
    CHECK(contains(log, "\"authorization\": \"bearer runner-request-token\""));
    CHECK_FALSE(contains(r.out + r.err, "runner-request-token"));
    CHECK_FALSE(contains(r.out + r.err, kSubject));
  }
  SECTION("a subject token STS does not trust is refused once, and nothing is made") {
    home.write("oidc-token", "eyJhbGciOiJSUzI1NiJ9.forged.c2ln");
    home.write("wif.json", gcp_external_account(gce, Json{{"file", home.path() + "/oidc-token"}}, false).dump());
    keyless(ws, gce, home, home.path() + "/wif.json");
    auto r = ws.apply(burst_blueprint({gcp_pool(3)}));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.out + r.err, "invalid_grant"));
    CHECK(contains(r.out + r.err, "workload identity federation " + kGcpWifAudience));
    CHECK(gce.active().empty());
    CHECK(gce.log_lines().size() <= 2);  // one token exchange for the run, not one per instance
  }
}

TEST_CASE("gcp identity: federated tokens that expire during an apply are exchanged again before they do",
          "[e2e][gcp][habits][identity]") {
  // Tokens living 4 s (STS's and the impersonated account's) through an apply and a destroy whose operations
  // take 5 s each: the token is renewed when a quarter of its life is left, and Compute never says 401.
  GceEmulator gce({"--subject-token", kSubject, "--token-lifetime-s", "4", "--operation-ms", "5000"});
  TempDir home;
  home.write("oidc-token", kSubject + "\n");
  home.write("wif.json", gcp_external_account(gce, Json{{"file", home.path() + "/oidc-token"}}, true).dump());
  Workspace ws(&gce, "8");
  keyless(ws, gce, home, home.path() + "/wif.json");
  ws.applied(burst_blueprint({gcp_pool(2)}));
  auto d = ws.run({"destroy", "--auto-approve"}, burst_blueprint({gcp_pool(2)}));
  INFO(d.out << d.err);
  CHECK(d.exit_code == 0);
  int unauthorized = 0;
  for (const auto& l : gce.log_lines())
    if (l["status"] == 401) ++unauthorized;
  CHECK(unauthorized == 0);
  Seen s = seen(gce);
  CHECK(s.calls["sts.token"] >= 4);  // one as each run starts, and again within it
  CHECK(s.calls["iamcredentials.generateAccessToken"] == s.calls["sts.token"]);
  CHECK(s.compute_principals == std::set<std::string>{kGcpAccount});
}

TEST_CASE("gcp identity: gcloud's authorized_user and the metadata server", "[e2e][gcp][habits][identity]") {
  SECTION("gcloud auth application-default login's file, found where gcloud writes it") {
    GceEmulator gce({"--refresh-token", "1//0gPlinthRefresh"});
    TempDir home;
    home.write(".config/gcloud/application_default_credentials.json",
               Json{{"type", "authorized_user"},
                    {"client_id", "764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com"},
                    {"client_secret", "d-FL95Q19q7MQmFpd7hHD0Ty"},
                    {"refresh_token", "1//0gPlinthRefresh"},
                    {"token_uri", gce.base() + "/token"}}
                   .dump());
    Workspace ws(&gce, "8");
    keyless(ws, gce, home, "");
    ws.applied(burst_blueprint({gcp_pool(1)}));
    Seen s = seen(gce);
    CHECK(s.calls["oauth2.token"] == 1);
    CHECK(s.compute_principals == std::set<std::string>{"user:ml-platform@example.com"});
  }
  SECTION("the metadata server (GCE_METADATA_HOST), the last resort") {
    GceEmulator gce({"--metadata-port", "0"});
    TempDir home;
    Workspace ws(&gce, "8");
    keyless(ws, gce, home, "");
    ws.env["GCE_METADATA_HOST"] = gce.metadata_base().substr(7);
    ws.applied(burst_blueprint({gcp_pool(1)}));
    Seen s = seen(gce);
    CHECK(s.calls["metadata.token"] == 1);
    CHECK(s.compute_principals == std::set<std::string>{kGcpAccount});
  }
  SECTION("nothing at all: PLAN001 says what to set") {
    GceEmulator gce;
    TempDir home;
    Workspace ws(&gce, "8");
    keyless(ws, gce, home, "");
    ws.env["GCE_METADATA_HOST"] = "127.0.0.1:9";
    auto r = ws.plan(burst_blueprint({gcp_pool(1)}));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "error[PLAN001]: provider gcp cannot be used"));
    CHECK(contains(r.err, "no GCP credentials: set GOOGLE_APPLICATION_CREDENTIALS"));
    CHECK(contains(r.err, "the metadata server at 127.0.0.1:9 gave none either"));
  }
}

}  // namespace plinth::test::e2e_gcp_identity
