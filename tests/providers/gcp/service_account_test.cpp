// Service-account key files: parsing, errors that name file and field without
// the key, and the assertion made from a key.
#include "providers/gcp/service_account.h"

#include <catch2/catch.hpp>

#include "providers/gcp/jwt.h"
#include "tests/providers/gcp/test_keys.h"
#include "tests/support/run.h"

using namespace plinth;
using namespace plinth::gcp;
using nlohmann::json;

namespace {

std::string parse_error(const json& doc, const std::string& source = "/keys/sa.json") {
  auto r = parse_service_account_key(doc.dump(2), source);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == Error::Kind::Invalid);
  return r.error().message;
}

/// A line of the PEM body: an error message must never contain it.
std::string key_material(int index = 0) {
  std::string pem = test::test_signer(index).private_key_pem();
  return pem.substr(pem.find('\n') + 1, 40);
}

}  // namespace

TEST_CASE("a key file in Google's layout parses into its fields") {
  json doc = test::test_key_json(0);
  auto key = parse_service_account_key(doc.dump(2), "/keys/sa.json");
  REQUIRE(key.ok());
  CHECK(key->source == "/keys/sa.json");
  CHECK(key->project_id == "plinth-test");
  CHECK(key->private_key_id == doc["private_key_id"]);
  CHECK(key->private_key_pem == doc["private_key"]);
  CHECK(key->client_email == "plinth@plinth-test.iam.gserviceaccount.com");
  CHECK(key->client_id == "100000000000000000001");
  CHECK(key->token_uri == "https://oauth2.googleapis.com/token");

  doc.erase("client_id");                            // optional
  doc["token_uri"] = "http://127.0.0.1:8080/token";  // plain http is allowed on loopback only
  CHECK(parse_service_account_key(doc.dump(), "k").ok());
}

TEST_CASE("every required field of a key file is named when it is missing, empty or mistyped") {
  for (const char* field : {"type", "project_id", "private_key_id", "private_key", "client_email", "token_uri"}) {
    INFO(field);
    json doc = test::test_key_json(0);
    doc.erase(field);
    std::string msg = parse_error(doc);
    CHECK(msg == std::string("/keys/sa.json: field '") + field +
                     "' is missing; a service-account key file has type, project_id, private_key_id, private_key, "
                     "client_email and token_uri (a service-account key file is what `gcloud iam service-accounts "
                     "keys create KEY.json --iam-account=NAME@PROJECT.iam.gserviceaccount.com` writes)");
    doc[field] = "";
    CHECK_THAT(parse_error(doc), Catch::StartsWith(std::string("/keys/sa.json: field '") + field + "' is empty;"));
    doc[field] = 42;
    CHECK(parse_error(doc) == std::string("/keys/sa.json: field '") + field + "' must be a string, it is a number");
  }
}

TEST_CASE("a key file of another credential type says what it is instead") {
  json doc = test::test_key_json(0);
  doc["type"] = "authorized_user";
  CHECK_THAT(parse_error(doc),
             Catch::StartsWith("/keys/sa.json: field 'type' is 'authorized_user', not 'service_account': that is a "
                               "user's credential from `gcloud auth application-default login`;"));
  doc["type"] = "external_account";
  CHECK_THAT(parse_error(doc), Catch::Contains("workload identity federation"));
  doc["type"] = "banana";
  CHECK_THAT(parse_error(doc), Catch::StartsWith("/keys/sa.json: field 'type' is 'banana', not 'service_account'; "));
}

TEST_CASE("a broken private key is reported by field, never quoted") {
  json doc = test::test_key_json(0);
  std::string pem = doc["private_key"];
  doc["private_key"] = pem.substr(0, pem.size() / 2);  // cut, as a bad copy-paste does
  std::string msg = parse_error(doc);
  CHECK_THAT(msg, Catch::StartsWith("field 'private_key' of /keys/sa.json is not a readable PEM private key"));
  CHECK(msg.find(key_material()) == std::string::npos);

  doc["private_key"] = "not a key";
  CHECK(parse_error(doc) ==
        "field 'private_key' of /keys/sa.json is not a PEM private key (it has no '-----BEGIN PRIVATE KEY-----' line)");
}

TEST_CASE("a JSON syntax error gives file:line:column and no key material") {
  json doc = test::test_key_json(0);
  std::string text = doc.dump(2);
  // Drop the closing quote of private_key: the parser then reads the key as far as it can.
  auto start = text.find("\"private_key\": \"");
  auto end = text.find("\",", start + 16);
  text.erase(end, 1);
  auto r = parse_service_account_key(text, "/keys/sa.json");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message, Catch::Matches(R"(/keys/sa\.json:\d+:\d+: not valid JSON; a service-account key.*)"));
  CHECK(r.error().message.find(key_material()) == std::string::npos);
  CHECK(r.error().message.find("BEGIN") == std::string::npos);

  auto top = parse_service_account_key("[1]", "k.json");
  REQUIRE_FALSE(top.ok());
  CHECK_THAT(top.error().message, Catch::StartsWith("k.json: a key file is a JSON object, this is an array;"));
  auto pos = parse_service_account_key("{\n  \"type\": \"service_account\",\n  oops\n}", "k.json");
  CHECK_THAT(pos.error().message, Catch::StartsWith("k.json:3:3: not valid JSON;"));
}

TEST_CASE("client_email and token_uri are checked for their form") {
  json doc = test::test_key_json(0);
  doc["client_email"] = "plinth";
  CHECK(parse_error(doc) ==
        "/keys/sa.json: field 'client_email' is 'plinth', not an address like NAME@PROJECT.iam.gserviceaccount.com");
  doc = test::test_key_json(0);
  doc["token_uri"] = "http://oauth2.example.com/token";
  CHECK(parse_error(doc) ==
        "/keys/sa.json: field 'token_uri' is 'http://oauth2.example.com/token', not an https:// "
        "URL (Google's is https://oauth2.googleapis.com/token)");
}

TEST_CASE("load_service_account_key reads the file and names it when it cannot") {
  test::TempDir dir;
  std::string path = dir.write("sa.json", test::test_key_json(1).dump(2));
  auto key = load_service_account_key(path);
  REQUIRE(key.ok());
  CHECK(key->source == path);
  CHECK(key->private_key_pem == test::test_signer(1).private_key_pem());

  auto missing = load_service_account_key(dir.path() + "/nope.json");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::StartsWith("cannot read the service-account key file: "));
  CHECK_THAT(missing.error().message, Catch::Contains(dir.path() + "/nope.json"));
  CHECK_THAT(missing.error().message, Catch::EndsWith("(check GOOGLE_APPLICATION_CREDENTIALS or the provider's "
                                                      "credentials option)"));
}

TEST_CASE("make_assertion signs iss/scope/aud/iat/exp with the key's kid") {
  auto key = *parse_service_account_key(test::test_key_json(0, "https://127.0.0.1:4443/token").dump(), "k.json");
  auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1767225600));
  auto token = make_assertion(key, {kCloudPlatformScope, "https://www.googleapis.com/auth/compute"}, now);
  REQUIRE(token.ok());
  auto jwt = decode_jwt(*token);
  REQUIRE(jwt.ok());
  CHECK(jwt->header["kid"] == key.private_key_id);
  CHECK(jwt->header["alg"] == "RS256");
  CHECK(verify_rs256(*jwt, RsaVerifier::of(test::test_signer(0))));
  auto c = *assertion_claims(*jwt);
  CHECK(c.iss == key.client_email);
  CHECK(c.aud == "https://127.0.0.1:4443/token");
  CHECK(c.scope == "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/compute");
  CHECK(c.iat == 1767225600);
  CHECK(c.exp == 1767225600 + 3600);
  CHECK(c.sub.empty());

  auto short_lived = decode_jwt(*make_assertion(key, {kCloudPlatformScope}, now, std::chrono::seconds(60)));
  CHECK(assertion_claims(*short_lived)->exp == 1767225660);

  CHECK(make_assertion(key, {kCloudPlatformScope}, now, std::chrono::seconds(3601)).error().message ==
        "an assertion lives between 1 and 3600 seconds, not 3601");
  CHECK(make_assertion(key, {}, now).error().message ==
        "an assertion needs at least one OAuth scope, e.g. https://www.googleapis.com/auth/cloud-platform");
}
