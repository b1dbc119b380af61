// Cross-checks with Google's own Python library (Debian's python3-google-auth,
// run with /usr/bin/python3 through google_auth_check.py): what Plinth signs,
// google-auth verifies, and what google-auth signs, Plinth verifies.
#include <catch2/catch.hpp>
#include <chrono>

#include "providers/gcp/jwt.h"
#include "providers/gcp/service_account.h"
#include "tests/providers/gcp/test_keys.h"
#include "tests/support/run.h"

using namespace plinth;
using namespace plinth::gcp;
using nlohmann::json;

namespace {

/// Runs google_auth_check.py with `job` and returns its answer.
json google_auth(const json& job) {
  auto r = test::run_program({"/usr/bin/python3", GOOGLE_AUTH_CHECK_SCRIPT}, "", {}, job.dump());
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

TEST_CASE("a JWT signed by plinth_gcp_auth verifies with google.auth.jwt.decode") {
  AssertionClaims c;
  c.iss = "plinth@plinth-test.iam.gserviceaccount.com";
  c.scope = kCloudPlatformScope;
  c.aud = "https://oauth2.googleapis.com/token";
  c.iat = unix_now();
  c.exp = c.iat + 3600;
  std::string token = *sign_jwt(c, "kid-0", test::test_signer(0));
  std::string other = *sign_jwt(c, "kid-0", test::test_signer(1));

  json out = google_auth(
      {{"verify", {{"token", token}, {"public_key", test::test_signer(0).public_key_pem()}, {"audience", c.aud}}}});
  INFO(out.dump());
  REQUIRE(out["verify"]["ok"] == true);
  CHECK(out["verify"]["header"] == json{{"alg", "RS256"}, {"typ", "JWT"}, {"kid", "kid-0"}});
  CHECK(out["verify"]["payload"] ==
        json{{"iss", c.iss}, {"scope", c.scope}, {"aud", c.aud}, {"iat", c.iat}, {"exp", c.exp}});

  // Signed with another key: google-auth refuses it.
  json wrong = google_auth(
      {{"verify", {{"token", other}, {"public_key", test::test_signer(0).public_key_pem()}, {"audience", c.aud}}}});
  CHECK(wrong["verify"] == json{{"ok", false}, {"error", "Could not verify token signature."}});
}

TEST_CASE("RS256 signatures are byte for byte those of google.auth.crypt (PKCS#1 v1.5 is deterministic)") {
  std::string input = base64url_encode(R"({"alg":"RS256","typ":"JWT"})") + "." + base64url_encode(R"({"x":1})");
  json out = google_auth({{"sign", {{"private_key", test::test_signer(0).private_key_pem()}, {"input", input}}}});
  CHECK(out["sign"]["signature"] == base64url_encode(*test::test_signer(0).sign(input)));
}

TEST_CASE("the assertion google.oauth2.service_account.Credentials sends verifies with plinth_gcp_auth") {
  test::TempDir dir;
  std::string key_file = dir.write("sa.json", test::test_key_json(0, "https://127.0.0.1:4443/token").dump(2));
  auto key = load_service_account_key(key_file);
  REQUIRE(key.ok());
  std::int64_t before = unix_now();
  json out = google_auth({{"assert", {{"key_file", key_file}, {"scopes", {kCloudPlatformScope}}}}});
  std::int64_t after = unix_now();

  for (const char* which : {"assertion", "jwt_encode"}) {
    INFO(which);
    std::string token = out["assert"][which];
    auto jwt = decode_jwt(token);  // google-auth 1.x pads its base64url: the decoder takes both
    REQUIRE(jwt.ok());
    CHECK(jwt->header["alg"] == "RS256");
    CHECK(jwt->header["kid"] == key->private_key_id);
    CHECK(verify_rs256(*jwt, RsaVerifier::of(test::test_signer(0))));
    CHECK_FALSE(verify_rs256(*jwt, RsaVerifier::of(test::test_signer(1))));
    auto c = assertion_claims(*jwt);
    REQUIRE(c.ok());
    CHECK(c->iss == key->client_email);
    CHECK(c->aud == key->token_uri);
    CHECK(c->scope == kCloudPlatformScope);
    CHECK(c->iat >= before);
    CHECK(c->iat <= after);
    CHECK(c->exp - c->iat == 3600);
  }

  // Plinth's assertion for the same key has the same header and claims.
  auto ours = decode_jwt(*make_assertion(*key, {kCloudPlatformScope}, std::chrono::system_clock::now()));
  auto theirs = decode_jwt(std::string(out["assert"]["assertion"]));
  CHECK(ours->header["kid"] == theirs->header["kid"]);
  json a = ours->payload, b = theirs->payload;
  for (auto* p : {&a, &b}) p->erase("iat"), p->erase("exp");
  CHECK(a == b);
}
