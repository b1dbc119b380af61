// aws-ec2-emulator's identity services (identity.h) checked with Debian's AWS
// CLI and botocore's own credential providers: STS AssumeRoleWithWebIdentity,
// AssumeRole and GetCallerIdentity, IMDSv2 and container credentials found by
// the CLI's default chain, IAM Identity Center's GetRoleCredentials with the
// token cache botocore reads, and EC2 refusing the temporary credentials with
// ExpiredToken once they expire.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/emulator_process.h"
#include "tests/support/run.h"

namespace aws_identity_emulator_test {

using nlohmann::json;
using plinth::test::RunResult;
using plinth::test::TempDir;

const std::string kToken = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOmV4YW1wbGUvZmxlZXQifQ.c2lnbmF0dXJl";

class Emulator : public plinth::test::EmulatorProcess {
 public:
  explicit Emulator(const std::vector<std::string>& args) : EmulatorProcess(AWS_EC2_EMULATOR_BINARY, args) {}
  std::string metadata() const {
    for (const auto& l : lines())
      if (l.rfind("metadata ", 0) == 0) return l.substr(9);
    return "";
  }
};

/// The AWS CLI with no credentials of its own but what `extra` gives.
RunResult aws(const Emulator& em, const TempDir& home, std::vector<std::string> args,
              const std::map<std::string, std::string>& extra = {}) {
  std::map<std::string, std::string> env = {{"HOME", home.path()},
                                            {"AWS_ACCESS_KEY_ID", ""},
                                            {"AWS_SECRET_ACCESS_KEY", ""},
                                            {"AWS_SESSION_TOKEN", ""},
                                            {"AWS_PROFILE", ""},
                                            {"AWS_CONFIG_FILE", home.path() + "/config"},
                                            {"AWS_SHARED_CREDENTIALS_FILE", home.path() + "/credentials"},
                                            {"AWS_DEFAULT_REGION", "us-east-1"},
                                            {"AWS_PAGER", ""},
                                            {"AWS_EC2_METADATA_DISABLED", "true"}};
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> argv = {"/usr/bin/env", "-u", "AWS_PROFILE", "/usr/bin/aws"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--endpoint-url", em.base(), "--ca-bundle", em.ca(), "--output", "json"});
  return plinth::test::run_program(argv, "", env);
}

json ok(const RunResult& r) {
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

TEST_CASE("aws-ec2-emulator identity: the AWS CLI exchanges a web identity token and EC2 takes what STS gave") {
  Emulator em({"--web-identity-token", kToken});
  TempDir home;
  home.write("config", "");
  home.write("credentials", "");
  json out = ok(aws(em, home,
                    {"sts", "assume-role-with-web-identity", "--role-arn", "arn:aws:iam::123456789012:role/ci",
                     "--role-session-name", "gh-run-1", "--web-identity-token", kToken}));
  const json c = out["Credentials"];
  CHECK(c["AccessKeyId"].get<std::string>().rfind("ASIA", 0) == 0);
  CHECK(out["AssumedRoleUser"]["Arn"] == "arn:aws:sts::123456789012:assumed-role/ci/gh-run-1");
  const std::map<std::string, std::string> temporary = {{"AWS_ACCESS_KEY_ID", c["AccessKeyId"]},
                                                        {"AWS_SECRET_ACCESS_KEY", c["SecretAccessKey"]},
                                                        {"AWS_SESSION_TOKEN", c["SessionToken"]}};
  CHECK(ok(aws(em, home, {"ec2", "describe-instances"}, temporary))["Reservations"].empty());
  CHECK(ok(aws(em, home, {"sts", "get-caller-identity"}, temporary))["Arn"] ==
        "arn:aws:sts::123456789012:assumed-role/ci/gh-run-1");
  // AssumeRole, signed with them (a role chain).
  json chained = ok(aws(em, home,
                        {"sts", "assume-role", "--role-arn", "arn:aws:iam::123456789012:role/admin",
                         "--role-session-name", "chain"},
                        temporary));
  CHECK(chained["Credentials"]["AccessKeyId"] != c["AccessKeyId"]);

  // A token STS does not know, a wrong session token, and credentials past their expiration.
  auto refused = aws(em, home,
                     {"sts", "assume-role-with-web-identity", "--role-arn", "arn:aws:iam::123456789012:role/ci",
                      "--role-session-name", "gh", "--web-identity-token", "forged-token"});
  CHECK(refused.exit_code != 0);
  CHECK(refused.err.find("(InvalidIdentityToken) when calling the AssumeRoleWithWebIdentity operation") !=
        std::string::npos);
  auto wrong = temporary;
  wrong["AWS_SESSION_TOKEN"] = "not-the-token";
  CHECK(aws(em, home, {"ec2", "describe-instances"}, wrong).err.find("AuthFailure") != std::string::npos);

  // Credentials that live a second, used after it.
  Emulator brief({"--web-identity-token", kToken, "--credential-ttl", "1"});
  json short_lived = ok(aws(brief, home,
                            {"sts", "assume-role-with-web-identity", "--role-arn", "arn:aws:iam::123456789012:role/ci",
                             "--role-session-name", "gh-run-2", "--web-identity-token", kToken}))["Credentials"];
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  auto late = aws(brief, home, {"ec2", "describe-instances"},
                  {{"AWS_ACCESS_KEY_ID", short_lived["AccessKeyId"]},
                   {"AWS_SECRET_ACCESS_KEY", short_lived["SecretAccessKey"]},
                   {"AWS_SESSION_TOKEN", short_lived["SessionToken"]}});
  CHECK(late.exit_code != 0);
  CHECK(late.err.find("(ExpiredToken) when calling the DescribeInstances operation") != std::string::npos);
}

TEST_CASE("aws-ec2-emulator identity: the AWS CLI's default chain finds IMDSv2 and container credentials") {
  Emulator em({"--metadata-port", "0", "--container-token", "pod-auth", "--instance-role", "gpu-runner"});
  REQUIRE_FALSE(em.metadata().empty());
  TempDir home;
  home.write("config", "");
  home.write("credentials", "");
  json imds = ok(aws(em, home, {"sts", "get-caller-identity"},
                     {{"AWS_EC2_METADATA_DISABLED", "false"}, {"AWS_EC2_METADATA_SERVICE_ENDPOINT", em.metadata() + "/"}}));
  CHECK(imds["Arn"].get<std::string>().find(":assumed-role/gpu-runner/") != std::string::npos);
  json container = ok(aws(em, home, {"ec2", "describe-instances"},
                          {{"AWS_CONTAINER_CREDENTIALS_FULL_URI", em.metadata() + "/v2/credentials/pod"},
                           {"AWS_CONTAINER_AUTHORIZATION_TOKEN", "pod-auth"}}));
  CHECK(container["Reservations"].empty());
  auto denied = aws(em, home, {"ec2", "describe-instances"},
                    {{"AWS_CONTAINER_CREDENTIALS_FULL_URI", em.metadata() + "/v2/credentials/pod"},
                     {"AWS_CONTAINER_AUTHORIZATION_TOKEN", "wrong"}});
  CHECK(denied.exit_code != 0);
  // IMDSv1 (no session token) is refused, as on an instance that requires v2.
  auto v1 = plinth::test::run_program(
      {"/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", em.metadata() + "/latest/meta-data/iam/security-credentials/"});
  CHECK(v1.out == "401");
}

TEST_CASE("aws-ec2-emulator identity: botocore's web identity provider, with its refresh, reads the answer") {
  Emulator em({"--web-identity-token", kToken, "--credential-ttl", "3600"});
  TempDir home;
  home.write("token", kToken);
  // botocore's own fetcher and refreshable credentials, with an STS client on the emulator (Debian's botocore
  // predates AWS_ENDPOINT_URL_STS).
  const std::string script = R"(
import functools, json, sys, botocore.session, botocore.credentials, botocore.utils
endpoint, ca, token = sys.argv[1:4]
session = botocore.session.get_session()
create = functools.partial(session.create_client, endpoint_url=endpoint, verify=ca, region_name="us-east-1")
fetcher = botocore.credentials.AssumeRoleWithWebIdentityCredentialFetcher(
    client_creator=create, web_identity_token_loader=botocore.utils.FileWebIdentityTokenLoader(token),
    role_arn="arn:aws:iam::123456789012:role/ci")
creds = botocore.credentials.DeferredRefreshableCredentials(method="assume-role-with-web-identity",
                                                            refresh_using=fetcher.fetch_credentials)
frozen = creds.get_frozen_credentials()
session.set_credentials(frozen.access_key, frozen.secret_key, frozen.token)
ec2 = session.create_client("ec2", endpoint_url=endpoint, verify=ca, region_name="us-east-1")
print(json.dumps({"key": frozen.access_key, "refresh_needed": creds.refresh_needed(),
                  "reservations": ec2.describe_instances()["Reservations"]}))
)";
  auto r = plinth::test::run_program({"/usr/bin/python3", "-c", script, em.base(), em.ca(), home.path() + "/token"}, "",
                                     {{"HOME", home.path()}, {"AWS_EC2_METADATA_DISABLED", "true"}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  json out = json::parse(r.out);
  CHECK(out["key"].get<std::string>().rfind("ASIA", 0) == 0);
  CHECK(out["refresh_needed"] == false);  // an hour left: botocore parsed the Expiration
  CHECK(out["reservations"].empty());
}

TEST_CASE("aws-ec2-emulator identity: IAM Identity Center's portal answers the AWS CLI and botocore's SSO fetcher") {
  const std::string sso_token = "aoaAAAAAGdtb2NrLXNzby1hY2Nlc3MtdG9rZW4";
  Emulator em({"--sso-token", sso_token});
  TempDir home;
  home.write("config", "");

  // The CLI's own command: GET /federation/credentials with x-amz-sso_bearer_token.
  json got = ok(aws(em, home, {"sso", "get-role-credentials", "--role-name", "GpuFleetAdmin", "--account-id",
                               "123456789012", "--access-token", sso_token}));
  const json rc = got["roleCredentials"];
  CHECK(rc["accessKeyId"].get<std::string>().rfind("ASIA", 0) == 0);
  CHECK(rc["expiration"].get<int64_t>() > 1700000000000);  // milliseconds since 1970
  // EC2 takes what the portal gave.
  json d = ok(aws(em, home, {"ec2", "describe-instances"},
                  {{"AWS_ACCESS_KEY_ID", rc["accessKeyId"]},
                   {"AWS_SECRET_ACCESS_KEY", rc["secretAccessKey"]},
                   {"AWS_SESSION_TOKEN", rc["sessionToken"]}}));
  CHECK(d["Reservations"].empty());
  // A token it does not know: the portal's UnauthorizedException, as the CLI names it.
  auto refused = aws(em, home, {"sso", "get-role-credentials", "--role-name", "GpuFleetAdmin", "--account-id",
                                "123456789012", "--access-token", "not-a-token"});
  CHECK(refused.exit_code != 0);
  CHECK(refused.err.find("UnauthorizedException") != std::string::npos);
  CHECK(refused.err.find("Session token not found or invalid") != std::string::npos);
  auto other = aws(em, home, {"sso", "get-role-credentials", "--role-name", "GpuFleetAdmin", "--account-id",
                              "999999999999", "--access-token", sso_token});
  CHECK(other.err.find("ForbiddenException") != std::string::npos);

  // botocore's SSO fetcher reading the token cache file by the name it computes (SHA-1 of the session
  // name), the name Plinth reads (tests/e2e/aws_identity_test.cpp writes the same file).
  home.write("config", "[profile fleet]\nsso_session = corp\nsso_account_id = 123456789012\n"
                       "sso_role_name = GpuFleetAdmin\n[sso-session corp]\n"
                       "sso_start_url = https://example.awsapps.com/start\nsso_region = us-east-1\n");
  home.write("sso/cache/ee0bfd2552fbd840c02cc48b6e823320543c450f.json",
             "{\"startUrl\": \"https://example.awsapps.com/start\", \"region\": \"us-east-1\", \"accessToken\": \"" +
                 sso_token + "\", \"expiresAt\": \"2099-01-01T00:00:00Z\"}");
  const std::string script = R"(
import functools, json, sys, botocore.session, botocore.credentials, botocore.tokens, botocore.utils
endpoint, ca, cache = sys.argv[1:4]
session = botocore.session.get_session()  # profile fleet of AWS_CONFIG_FILE: sso_session corp
create = functools.partial(session.create_client, endpoint_url=endpoint, verify=ca)
tokens = botocore.tokens.SSOTokenProvider(session, cache=botocore.utils.JSONFileCache(cache))
fetcher = botocore.credentials.SSOCredentialFetcher(
    "https://example.awsapps.com/start", "us-east-1", "GpuFleetAdmin", "123456789012", create,
    token_provider=tokens, sso_session_name="corp")
creds = botocore.credentials.DeferredRefreshableCredentials(method="sso", refresh_using=fetcher.fetch_credentials)
frozen = creds.get_frozen_credentials()
print(json.dumps({"key": frozen.access_key, "refresh_needed": creds.refresh_needed()}))
)";
  auto r = plinth::test::run_program(
      {"/usr/bin/python3", "-c", script, em.base(), em.ca(), home.path() + "/sso/cache"}, "",
      {{"HOME", home.path()},
       {"AWS_EC2_METADATA_DISABLED", "true"},
       {"AWS_CONFIG_FILE", home.path() + "/config"},
       {"AWS_PROFILE", "fleet"}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  json out = json::parse(r.out);
  CHECK(out["key"].get<std::string>().rfind("ASIA", 0) == 0);
  CHECK(out["refresh_needed"] == false);  // an hour left: botocore read the expiration in milliseconds
}

}  // namespace aws_identity_emulator_test
