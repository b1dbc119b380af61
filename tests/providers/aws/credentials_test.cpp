// The AWS credential chain (providers/aws/credentials.h) without an endpoint:
// which source each environment and profile picks, credential_process run as
// the SDKs run it, refresh before expiry and remembered refusals. With STS,
// the metadata service and container credentials: tests/e2e/aws_identity_test.cpp.
#include <catch2/catch.hpp>
#include <thread>

#include "providers/aws/credentials.h"
#include "providers/aws/schema.h"
#include "tests/support/run.h"

using namespace plinth;

namespace aws_credentials_test {

Result<ProviderConfig> chain_config(std::vector<std::string> env) {
  env.push_back("AWS_EC2_METADATA_DISABLED=true");
  return parse_provider_config(aws::schema(), env, {}, {});
}

Result<std::shared_ptr<aws::CredentialSource>> find(const std::vector<std::string>& env, const std::string& home) {
  static net::Client http;
  auto c = chain_config(env);
  REQUIRE(c.ok());
  return aws::find_credentials(*c, {home, &http, "us-east-1"});
}

std::string key_of(const std::shared_ptr<aws::CredentialSource>& s) {
  auto c = s->get(Deadline::after(std::chrono::seconds(20)));
  INFO((c ? "" : c.error().message));
  REQUIRE(c.ok());
  return c->access_key_id;
}

}  // namespace aws_credentials_test

using namespace aws_credentials_test;

TEST_CASE("aws credentials: the environment, else the profile of the shared files, as the SDKs do") {
  test::TempDir home;
  auto env_only = find({"AWS_ACCESS_KEY_ID=AKID1", "AWS_SECRET_ACCESS_KEY=s1", "AWS_SESSION_TOKEN=t1"}, home.path());
  REQUIRE(env_only.ok());
  auto c = (*env_only)->get(Deadline::never());
  REQUIRE(c.ok());
  CHECK(c->access_key_id == "AKID1");
  CHECK(c->session_token == "t1");

  home.write(".aws/credentials", "[default]\naws_access_key_id = AKIDDEF\naws_secret_access_key = sdef\n"
                                 "[ml]\naws_access_key_id=AKIDML\naws_secret_access_key=sml\n");
  home.write(".aws/config", "[profile ml]\nregion = eu-west-1\n[profile cfg]\naws_access_key_id=AKIDCFG\n"
                            "aws_secret_access_key=scfg\n");
  CHECK(key_of(*find({}, home.path())) == "AKIDDEF");
  CHECK(key_of(*find({"AWS_PROFILE=ml"}, home.path())) == "AKIDML");
  CHECK(aws::config_file_region(*chain_config({"AWS_PROFILE=ml"}), home.path()) == "eu-west-1");
  CHECK(key_of(*find({"AWS_PROFILE=cfg"}, home.path())) == "AKIDCFG");

  auto none = find({"AWS_PROFILE=nobody"}, home.path());
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") == 0);
  CHECK(none.error().message.find("profile 'nobody' of " + home.path() + "/.aws/credentials") != std::string::npos);
  auto half = find({"AWS_ACCESS_KEY_ID=AKID1"}, home.path());
  REQUIRE_FALSE(half.ok());
  CHECK(half.error().message.find("no secret access key") != std::string::npos);
}

TEST_CASE("aws credentials: each source of the chain is found where the SDKs look, in their order") {
  test::TempDir home;
  home.write(".aws/config", "[profile ci]\nrole_arn = arn:aws:iam::123456789012:role/ci\n"
                            "web_identity_token_file = /run/token\n"
                            "[profile proc]\ncredential_process = /usr/bin/helper --json\n"
                            "[profile chained]\nrole_arn = arn:aws:iam::123456789012:role/admin\nsource_profile = proc\n"
                            "[profile onbox]\nrole_arn = arn:aws:iam::123456789012:role/x\n"
                            "credential_source = Ec2InstanceMetadata\n"
                            "[profile loop-a]\nrole_arn = arn:a\nsource_profile = loop-b\n"
                            "[profile loop-b]\nrole_arn = arn:b\nsource_profile = loop-a\n"
                            "[profile sso]\nsso_session = corp\nsso_account_id = 1\n"
                            "[profile sso-ok]\nsso_session = team\nsso_account_id = 123456789012\n"
                            "sso_role_name = Admin\naws_access_key_id = AKIDLATER\n"
                            "[sso-session team]\nsso_start_url = https://team.awsapps.com/start\nsso_region = eu-west-1\n"
                            "[profile sso-half]\nsso_session = team\nsso_account_id = 1\n"
                            "[profile sso-mismatch]\nsso_session = team\nsso_region = us-east-1\n"
                            "[profile bare]\nrole_arn = arn:aws:iam::123456789012:role/x\n");
  auto origin = [&](const std::vector<std::string>& env) {
    auto s = find(env, home.path());
    INFO((s ? "" : s.error().message));
    REQUIRE(s.ok());
    return (*s)->origin();
  };
  // Web identity from the environment; the environment's keys still come first.
  CHECK(origin({"AWS_WEB_IDENTITY_TOKEN_FILE=/run/gh-token", "AWS_ROLE_ARN=arn:aws:iam::1:role/gh"}) ==
        "web identity (AWS_WEB_IDENTITY_TOKEN_FILE /run/gh-token, role arn:aws:iam::1:role/gh)");
  CHECK(origin({"AWS_WEB_IDENTITY_TOKEN_FILE=/run/t", "AWS_ROLE_ARN=arn:r", "AWS_ACCESS_KEY_ID=A",
                "AWS_SECRET_ACCESS_KEY=s"}) == "environment AWS_ACCESS_KEY_ID");
  auto no_role = find({"AWS_WEB_IDENTITY_TOKEN_FILE=/run/t"}, home.path());
  REQUIRE_FALSE(no_role.ok());
  CHECK(no_role.error().message.find("AWS_ROLE_ARN is not") != std::string::npos);
  // Profiles: a role with a token file, a process, a role on top of a process, on top of the metadata service.
  CHECK(origin({"AWS_PROFILE=ci"}).find("web identity (profile 'ci'") == 0);
  CHECK(origin({"AWS_PROFILE=proc"}).find("credential_process of profile 'proc'") == 0);
  CHECK(origin({"AWS_PROFILE=chained"}) ==
        "role arn:aws:iam::123456789012:role/admin assumed with credential_process of profile 'proc' (" + home.path() +
            "/.aws/config, " + home.path() + "/.aws/credentials)");
  // IAM Identity Center before the profile's keys, as botocore.
  CHECK(origin({"AWS_PROFILE=sso-ok"}) == "IAM Identity Center (profile 'sso-ok' (" + home.path() + "/.aws/config, " +
                                              home.path() + "/.aws/credentials): account 123456789012, role Admin)");
  CHECK(origin({"AWS_PROFILE=onbox"}).find("assumed with the instance metadata service (IMDSv2) at "
                                           "http://169.254.169.254") != std::string::npos);
  // Container credentials before the metadata service; the metadata service last.
  CHECK(origin({"AWS_PROFILE=nobody", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI=/v2/credentials/abc"}) ==
        "container credentials at http://169.254.170.2/v2/credentials/abc");
  auto imds = aws::find_credentials(*parse_provider_config(aws::schema(), {"AWS_PROFILE=nobody"}, {}, {}),
                                    {home.path(), nullptr, ""});
  REQUIRE(imds.ok());
  CHECK((*imds)->origin() == "the instance metadata service (IMDSv2) at http://169.254.169.254");
  // Mistakes say what to do.
  for (const auto& [profile, words] : std::vector<std::pair<std::string, std::string>>{
           {"loop-a", "a loop of source_profile"},
           {"sso", "names sso_session 'corp', but " + home.path() + "/.aws/config has no [sso-session corp] section"},
           {"sso-half", "signs in with IAM Identity Center but lacks sso_role_name (aws configure sso writes them)"},
           {"sso-mismatch", "sso_region 'us-east-1' differs from [sso-session team]'s 'eu-west-1'"},
           {"bare", "sets role_arn without source_profile, credential_source or web_identity_token_file"}}) {
    auto r = find({"AWS_PROFILE=" + profile}, home.path());
    INFO(profile);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find(words) != std::string::npos);
  }
}

TEST_CASE("aws credentials: credential_process runs without a shell and its JSON is read, never echoed") {
  test::TempDir home;
  home.write("helper.sh", "#!/bin/sh\n[ \"$1\" = 'two words' ] || exit 3\n"
                          "printf '{\"Version\": 1, \"AccessKeyId\": \"ASIAPROC\", \"SecretAccessKey\": \"s3cr3t\", "
                          "\"SessionToken\": \"tok\", \"Expiration\": \"2999-01-01T00:00:00Z\"}'\n");
  home.write("bad.sh", "#!/bin/sh\necho '{\"AccessKeyId\": \"ASIALEAK\", \"SecretAccessKey\": \"leaked\"}'\n");
  home.write("fail.sh", "#!/bin/sh\necho 'token expired; run aws sso login' >&2\nexit 2\n");
  for (const char* f : {"helper.sh", "bad.sh", "fail.sh"})
    REQUIRE(test::run_program({"/bin/chmod", "+x", home.path() + "/" + f}).exit_code == 0);
  home.write(".aws/config", "[profile ok]\ncredential_process = " + home.path() + "/helper.sh 'two words'\n" +
                                "[profile bad]\ncredential_process = " + home.path() + "/bad.sh\n" +
                                "[profile fail]\ncredential_process = " + home.path() + "/fail.sh\n");
  auto ok = find({"AWS_PROFILE=ok"}, home.path());
  REQUIRE(ok.ok());
  auto c = (*ok)->get(Deadline::after(std::chrono::seconds(20)));
  REQUIRE(c.ok());
  CHECK(c->access_key_id == "ASIAPROC");
  CHECK(c->session_token == "tok");
  CHECK((*ok)->get(Deadline::never()).ok());
  CHECK((*ok)->fetches() == 1);  // held until near its expiration

  auto bad = (*find({"AWS_PROFILE=bad"}, home.path()))->get(Deadline::after(std::chrono::seconds(20)));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("did not print a JSON object with \"Version\": 1") != std::string::npos);
  CHECK(bad.error().message.find("leaked") == std::string::npos);
  auto fail_source = *find({"AWS_PROFILE=fail"}, home.path());
  auto fail = fail_source->get(Deadline::after(std::chrono::seconds(20)));
  REQUIRE_FALSE(fail.ok());
  CHECK(fail.error().message.find("exited with status 2: token expired; run aws sso login") != std::string::npos);
  // Remembered: the process is not run again for every request of the run.
  CHECK(fail_source->get(Deadline::never()).error().message == fail.error().message);

  auto split = aws::split_command("a 'b c' \"d \\\"e\\\"\" f\\ g");
  REQUIRE(split.ok());
  CHECK(*split == std::vector<std::string>{"a", "b c", "d \"e\"", "f g"});
  CHECK_FALSE(aws::split_command("a 'b").ok());
}

TEST_CASE("aws credentials: fetched again when less than a quarter of their life (at most 5 minutes) is left") {
  int calls = 0;
  aws::CredentialSource s("test", [&](const Deadline&) -> Result<aws::Issued> {
    ++calls;
    aws::Issued i;
    i.credentials = {"ASIA" + std::to_string(calls), "secret", "token"};
    i.expiration = std::chrono::system_clock::now() + std::chrono::seconds(calls == 1 ? 2 : 3600);
    return i;
  });
  CHECK(s.get(Deadline::never())->access_key_id == "ASIA1");
  CHECK(s.get(Deadline::never())->access_key_id == "ASIA1");
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));  // 0.4 s of 2 s left: inside the window
  CHECK(s.get(Deadline::never())->access_key_id == "ASIA2");
  CHECK(s.get(Deadline::never())->access_key_id == "ASIA2");  // 55 of 60 minutes: held
  s.expired();                                               // the service said ExpiredToken
  CHECK(s.get(Deadline::never())->access_key_id == "ASIA3");
  CHECK(s.fetches() == 3);
}
