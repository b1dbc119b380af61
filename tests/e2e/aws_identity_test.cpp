// AWS burst pools applied with CI-native credentials and no keys: a web
// identity token exchanged with STS, a profile whose credential_process
// prints them, the instance metadata service (IMDSv2), container credentials,
// IAM Identity Center (the token `aws sso login` cached), and a role assumed
// on top of one of them. Each case checks in
// aws-ec2-emulator's request log that the exchange happened and that EC2 was
// called with the temporary credentials it gave (docs/providers/aws.md,
// "Credentials"). Run with the installed binary from a directory of its own.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/support/blueprints.h"
#include "tests/support/clouds.h"
#include "tests/support/run.h"
#include "tests/support/workspace.h"

namespace plinth::test::e2e_aws_identity {

namespace {

const std::string kOidcToken = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOmV4YW1wbGUvZmxlZXQifQ.c2lnbmF0dXJl";
const std::string kRole = "arn:aws:iam::123456789012:role/plinth-ci";

/// What the log shows: the keys each exchange issued (by action) and the keys EC2's calls were signed with.
struct Seen {
  std::map<std::string, std::vector<std::string>> issued;  ///< by action
  std::set<std::string> ec2_keys;
  int ec2_calls = 0;
  int expired = 0;
};

Seen seen(const Ec2Emulator& ec2) {
  Seen s;
  for (const auto& l : ec2.log_lines()) {
    if (l.value("control", false)) continue;
    const std::string action = l["action"].is_string() ? l["action"].get<std::string>() : "";
    if (l["issued"].is_string()) s.issued[action].push_back(l["issued"]);
    if (l["code"] == "ExpiredToken") ++s.expired;
    const bool ec2_action = action == "RunInstances" || action == "DescribeInstances" || action == "CreateTags" ||
                            action == "TerminateInstances" || action == "CreatePlacementGroup";
    if (ec2_action && l["access_key"].is_string()) {
      s.ec2_keys.insert(l["access_key"].get<std::string>());
      ++s.ec2_calls;
    }
  }
  return s;
}

/// The environment of `ws` on `ec2` with no keys: only what `extra` sets.
void keyless(Workspace& ws, Ec2Emulator& ec2, const TempDir& home, const std::map<std::string, std::string>& extra) {
  ws.env = aws_env(ec2, home.path());
  ws.env["AWS_ACCESS_KEY_ID"] = "";
  ws.env["AWS_SECRET_ACCESS_KEY"] = "";
  ws.env["AWS_EC2_METADATA_DISABLED"] = "true";
  ws.env["AWS_ENDPOINT_URL_STS"] = ec2.base();
  for (const auto& [k, v] : extra) ws.env[k] = v;
}

}  // namespace

TEST_CASE("aws identity: a web identity token (AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN) applies a pool with no keys",
          "[e2e][aws][habits][identity]") {
  Ec2Emulator ec2({"--web-identity-token", kOidcToken});
  TempDir home;
  home.write("gh-oidc-token", kOidcToken + "\n");
  Workspace ws(&ec2, "4");
    keyless(ws, ec2, home,
                         {{"AWS_WEB_IDENTITY_TOKEN_FILE", home.path() + "/gh-oidc-token"},
                          {"AWS_ROLE_ARN", kRole},
                          {"AWS_ROLE_SESSION_NAME", "github-actions-1234"}});
  auto r = ws.applied(burst_blueprint({aws_pool(3)}));
  CHECK(ec2.active().size() == 3);
  Seen s = seen(ec2);
  REQUIRE(s.issued["AssumeRoleWithWebIdentity"].size() == 1);  // one exchange for the whole run
  CHECK(s.ec2_keys == std::set<std::string>{s.issued["AssumeRoleWithWebIdentity"][0]});
  CHECK(s.issued["AssumeRoleWithWebIdentity"][0].rfind("ASIA", 0) == 0);
  // Neither the token nor the temporary secret shows, in the output or the state.
  std::ifstream state(ws.state());
  std::stringstream st;
  st << state.rdbuf();
  for (const std::string& where : {r.out + r.err, st.str()}) CHECK(where.find(kOidcToken) == std::string::npos);

  SECTION("a token STS refuses stops the run at once, naming where the credentials came from") {
    home.write("gh-oidc-token", "eyJhbGciOiJSUzI1NiJ9.forged.token");
    auto refused = ws.apply(burst_blueprint({aws_pool(5)}));
    INFO(refused.out << refused.err);
    CHECK(refused.exit_code == 1);
    CHECK(contains(refused.err, "AWS credentials from web identity (AWS_WEB_IDENTITY_TOKEN_FILE " + home.path() +
                                    "/gh-oidc-token, role " + kRole + "): STS AssumeRoleWithWebIdentity at " +
                                    ec2.base() + "/: InvalidIdentityToken: The web identity token that was passed "
                                    "could not be validated by AWS."));
    CHECK(ec2.active().size() == 3);
    CHECK_FALSE(contains(refused.out + refused.err, "forged"));
  }
}

TEST_CASE("aws identity: credentials that expire during an apply are fetched again before they do, failing nothing",
          "[e2e][aws][habits][identity]") {
  // They live 8 s (refreshed with 2 s left); each instance takes 3 s to start and as long to stop: the two
  // applies outlive several of them.
  Ec2Emulator ec2({"--web-identity-token", kOidcToken, "--credential-ttl", "8", "--pending-ms", "3000",
                   "--shutdown-ms", "3000"});
  TempDir home;
  home.write("token", kOidcToken);
  Workspace ws(&ec2, "4");
    keyless(ws, ec2, home, {{"AWS_WEB_IDENTITY_TOKEN_FILE", home.path() + "/token"}, {"AWS_ROLE_ARN", kRole}});
  ws.env["PLINTH_AWS_POLL_MS"] = "400";
  ws.applied(burst_blueprint({aws_pool(4)}));
  ws.applied(burst_blueprint({aws_pool(4, "", false)}));  // on demand: replaces all four
  Seen s = seen(ec2);
  INFO(ec2.log_lines().size());
  CHECK(s.issued["AssumeRoleWithWebIdentity"].size() >= 2);
  CHECK(s.expired == 0);  // never sent after they expired
  const auto& issued = s.issued["AssumeRoleWithWebIdentity"];
  for (const auto& key : s.ec2_keys) CHECK(std::find(issued.begin(), issued.end(), key) != issued.end());
  CHECK(s.ec2_keys.size() >= 2);  // EC2 saw the new ones as they came
}

TEST_CASE("aws identity: a profile whose credential_process prints them, and a role assumed with it",
          "[e2e][aws][habits][identity]") {
  Ec2Emulator ec2({"--web-identity-token", kOidcToken});
  TempDir home;
  // The helper gets its keys from the emulator's STS the way a real helper (a vault, an SSO bridge) would
  // get them from somewhere: here, the web identity exchange done by the AWS CLI.
  home.write("helper.sh", "#!/bin/sh\nset -e\n"
                          // Without the profile that runs this helper, or the CLI would run it too.
                          "env -u AWS_PROFILE /usr/bin/aws sts assume-role-with-web-identity --role-arn " + kRole +
                          " --role-session-name helper --web-identity-token \"$(cat \"$HOME/token\")\" "
                          "--endpoint-url \"$STS\" --ca-bundle \"$AWS_CA_BUNDLE\" --region us-east-1 --output json "
                          "--query '{Version: `1`, AccessKeyId: Credentials.AccessKeyId, SecretAccessKey: "
                          "Credentials.SecretAccessKey, SessionToken: Credentials.SessionToken, Expiration: "
                          "Credentials.Expiration}'\n");
  home.write("token", kOidcToken);
  REQUIRE(run_program({"/bin/chmod", "+x", home.path() + "/helper.sh"}).exit_code == 0);
  home.write(".aws/config", "[profile fleet]\ncredential_process = " + home.path() + "/helper.sh\n"
                            "[profile admin]\nrole_arn = arn:aws:iam::123456789012:role/fleet-admin\n"
                            "source_profile = fleet\nrole_session_name = plinth-admin\n");
  home.write(".aws/credentials", "");

  SECTION("credential_process") {
    Workspace ws(&ec2, "4");
    keyless(ws, ec2, home, {{"AWS_PROFILE", "fleet"}, {"STS", ec2.base()}, {"AWS_PAGER", ""}});
    ws.applied(burst_blueprint({aws_pool(2)}));
    Seen s = seen(ec2);
    REQUIRE(s.issued["AssumeRoleWithWebIdentity"].size() == 1);  // the helper ran once
    CHECK(s.ec2_keys == std::set<std::string>{s.issued["AssumeRoleWithWebIdentity"][0]});
  }
  SECTION("role_arn with source_profile: AssumeRole signed with the helper's credentials") {
    Workspace ws(&ec2, "4");
    keyless(ws, ec2, home, {{"AWS_PROFILE", "admin"}, {"STS", ec2.base()}, {"AWS_PAGER", ""}});
    ws.applied(burst_blueprint({aws_pool(2)}));
    Seen s = seen(ec2);
    REQUIRE(s.issued["AssumeRole"].size() == 1);
    CHECK(s.ec2_keys == std::set<std::string>{s.issued["AssumeRole"][0]});
    bool signed_by_helper = false;
    for (const auto& l : ec2.log_lines())
      if (l["action"] == "AssumeRole")
        signed_by_helper = l["access_key"] == s.issued["AssumeRoleWithWebIdentity"].at(0);
    CHECK(signed_by_helper);
  }
}

TEST_CASE("aws identity: on a runner with an instance profile (IMDSv2) or a container role, and none at all",
          "[e2e][aws][habits][identity]") {
  Ec2Emulator ec2({"--metadata-port", "0", "--container-token", "ecs-auth-token"});
  TempDir home;
  const std::string meta = ec2.metadata_base();

  SECTION("IMDSv2: a session token first, then the role's credentials") {
    Workspace ws(&ec2, "4");
    keyless(ws, ec2, home, {{"AWS_EC2_METADATA_DISABLED", ""}, {"AWS_EC2_METADATA_SERVICE_ENDPOINT", meta}});
    ws.applied(burst_blueprint({aws_pool(2)}));
    auto log = ec2.log_lines();
    REQUIRE(log.size() > 3);
    CHECK(log[0]["action"] == "IMDS token");
    CHECK(log[0]["method"] == "PUT");
    Seen s = seen(ec2);
    REQUIRE(s.issued["IMDS credentials"].size() == 1);
    CHECK(s.ec2_keys == std::set<std::string>{s.issued["IMDS credentials"][0]});
  }
  SECTION("container credentials with their authorization token file") {
    home.write("eks-pod-identity-token", "ecs-auth-token\n");
    Workspace ws(&ec2, "4");
    keyless(ws, ec2, home,
                           {{"AWS_CONTAINER_CREDENTIALS_FULL_URI", meta + "/v2/credentials/pod"},
                            {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", home.path() + "/eks-pod-identity-token"}});
    ws.applied(burst_blueprint({aws_pool(2)}));
    Seen s = seen(ec2);
    REQUIRE(s.issued["container credentials"].size() == 1);
    CHECK(s.ec2_keys == std::set<std::string>{s.issued["container credentials"][0]});
  }
  SECTION("no source at all: the metadata service does not answer and the error says what to set") {
    Workspace ws(&ec2, "4");
    keyless(ws, ec2, home,
                           {{"AWS_EC2_METADATA_DISABLED", ""}, {"AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9"}});
    auto r = ws.plan(burst_blueprint({aws_pool(2)}));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "error[PLAN001]: provider aws cannot be used"));
    CHECK(contains(r.err, "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"));
    CHECK(contains(r.err, "; the instance metadata service (IMDSv2) at http://127.0.0.1:9 gave none either: PUT "
                          "http://127.0.0.1:9/latest/api/token"));
  }
}

TEST_CASE("aws identity: an IAM Identity Center profile reads the token aws sso login cached",
          "[e2e][aws][habits][identity]") {
  const std::string sso_token = "aoaAAAAAGdtb2NrLXNzby1hY2Nlc3MtdG9rZW4tZm9yLXBsaW50aA";
  Ec2Emulator ec2({"--sso-token", sso_token});
  TempDir home;
  home.write(".aws/config", "[profile fleet]\nsso_session = corp\nsso_account_id = 123456789012\n"
                            "sso_role_name = GpuFleetAdmin\nregion = us-east-1\n"
                            "[sso-session corp]\nsso_start_url = https://example.awsapps.com/start\n"
                            "sso_region = us-east-1\nsso_registration_scopes = sso:account:access\n"
                            "[profile legacy]\nsso_start_url = https://example.awsapps.com/start\n"
                            "sso_region = us-east-1\nsso_account_id = 123456789012\nsso_role_name = GpuFleetAdmin\n");
  home.write(".aws/credentials", "");
  // The cache files the AWS CLI writes: named by the SHA-1 of the session name (or, for a legacy
  // profile, of the start URL); botocore reads these very names (tests/emulators/aws-ec2/identity_test.cpp).
  const std::string session_cache = ".aws/sso/cache/ee0bfd2552fbd840c02cc48b6e823320543c450f.json";
  const std::string legacy_cache = ".aws/sso/cache/e8be5486177c5b5392bd9aa76563515b29358e6e.json";
  auto cached = [&](const std::string& token, const std::string& expires) {
    return "{\"startUrl\": \"https://example.awsapps.com/start\", \"region\": \"us-east-1\", \"accessToken\": \"" +
           token + "\", \"expiresAt\": \"" + expires + "\", \"clientId\": \"abc\", \"clientSecret\": \"def\", "
           "\"refreshToken\": \"ghi\"}";
  };

  SECTION("sso_session: GetRoleCredentials with the cached token, EC2 signed with what it gave") {
    home.write(session_cache, cached(sso_token, "2099-01-01T00:00:00Z"));
    Workspace ws(&ec2, "4");
    keyless(ws, ec2, home, {{"AWS_PROFILE", "fleet"}, {"AWS_ENDPOINT_URL_SSO", ec2.base()}});
    auto out = ws.applied(burst_blueprint({aws_pool(2)}));
    Seen s = seen(ec2);
    REQUIRE(s.issued["GetRoleCredentials"].size() == 1);
    CHECK(s.ec2_keys == std::set<std::string>{s.issued["GetRoleCredentials"][0]});
    CHECK(s.ec2_calls > 0);
    std::ifstream in(ws.state());
    std::stringstream state;
    state << in.rdbuf();
    CHECK_FALSE(contains(state.str() + out.out + out.err, sso_token));
  }
  SECTION("a legacy profile: the cache named by its start URL, older CLIs' UTC suffix") {
    home.write(legacy_cache, cached(sso_token, "2099-01-01T00:00:00UTC"));
    Workspace ws(&ec2, "4");
    keyless(ws, ec2, home, {{"AWS_PROFILE", "legacy"}, {"AWS_ENDPOINT_URL_SSO", ec2.base()}});
    ws.applied(burst_blueprint({aws_pool(1)}));
    Seen s = seen(ec2);
    REQUIRE(s.issued["GetRoleCredentials"].size() == 1);
    CHECK(s.ec2_keys == std::set<std::string>{s.issued["GetRoleCredentials"][0]});
  }
  SECTION("an expired cached token: sign in again, nothing asked") {
    home.write(session_cache, cached(sso_token, "2020-01-01T00:00:00Z"));
    Workspace ws(&ec2, "4");
    keyless(ws, ec2, home, {{"AWS_PROFILE", "fleet"}, {"AWS_ENDPOINT_URL_SSO", ec2.base()}});
    auto r = ws.plan(burst_blueprint({aws_pool(2)}));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "error[PLAN001]: provider aws cannot be used"));
    CHECK(contains(r.err, "expired at 2020-01-01T00:00:00Z: run aws sso login --sso-session corp"));
    CHECK(ec2.log_lines().empty());
  }
  SECTION("a token the portal refuses: its words, one request, the token never shown") {
    home.write(session_cache, cached("aoaAAAAArevoked-token-value", "2099-01-01T00:00:00Z"));
    Workspace ws(&ec2, "4");
    keyless(ws, ec2, home, {{"AWS_PROFILE", "fleet"}, {"AWS_ENDPOINT_URL_SSO", ec2.base()}});
    auto r = ws.plan(burst_blueprint({aws_pool(2)}));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "IAM Identity Center GetRoleCredentials at " + ec2.base() +
                              " (account 123456789012, role GpuFleetAdmin): UnauthorizedException: Session token not "
                              "found or invalid; sign in again: aws sso login --sso-session corp"));
    CHECK_FALSE(contains(r.out + r.err, "revoked-token-value"));
    CHECK(ec2.log_lines().size() == 1);
  }
}

}  // namespace plinth::test::e2e_aws_identity
