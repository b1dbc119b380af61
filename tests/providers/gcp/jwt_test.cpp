// RS256 JWTs: base64url, signing and verification, decoding errors.
#include "providers/gcp/jwt.h"

#include <catch2/catch.hpp>

#include "tests/providers/gcp/test_keys.h"
#include "tests/support/run.h"

using namespace plinth;
using namespace plinth::gcp;
using nlohmann::json;

namespace {

AssertionClaims claims() {
  AssertionClaims c;
  c.iss = "plinth@plinth-test.iam.gserviceaccount.com";
  c.scope = "https://www.googleapis.com/auth/cloud-platform";
  c.aud = "https://oauth2.googleapis.com/token";
  c.iat = 1767225600;
  c.exp = 1767229200;
  return c;
}

/// Replaces segment `i` (0 header, 1 payload, 2 signature) of a JWT.
std::string with_segment(const std::string& token, int i, const std::string& text) {
  auto a = token.find('.'), b = token.find('.', a + 1);
  std::string parts[3] = {token.substr(0, a), token.substr(a + 1, b - a - 1), token.substr(b + 1)};
  parts[i] = text;
  return parts[0] + "." + parts[1] + "." + parts[2];
}

}  // namespace

TEST_CASE("base64url encodes the RFC 4648 test vectors without padding") {
  CHECK(base64url_encode("") == "");
  CHECK(base64url_encode("f") == "Zg");
  CHECK(base64url_encode("fo") == "Zm8");
  CHECK(base64url_encode("foo") == "Zm9v");
  CHECK(base64url_encode("foob") == "Zm9vYg");
  CHECK(base64url_encode("fooba") == "Zm9vYmE");
  CHECK(base64url_encode("foobar") == "Zm9vYmFy");
  CHECK(base64url_encode(std::string("\xfb\xff\xbf", 3)) == "-_-_");  // the two url-safe letters
}

TEST_CASE("base64url decodes with or without padding and refuses anything else") {
  CHECK(base64url_decode("Zm9vYmE") == std::optional<std::string>("fooba"));
  CHECK(base64url_decode("Zm9vYmE=") == std::optional<std::string>("fooba"));
  CHECK(base64url_decode("Zg==") == std::optional<std::string>("f"));
  CHECK(base64url_decode("-_-_") == std::optional<std::string>(std::string("\xfb\xff\xbf", 3)));
  CHECK(base64url_decode("") == std::optional<std::string>(""));
  CHECK_FALSE(base64url_decode("Zm9v+/").has_value());  // standard alphabet, not url-safe
  CHECK_FALSE(base64url_decode("Zm9vY").has_value());   // 4n+1 characters cannot happen
  CHECK_FALSE(base64url_decode("Zh").has_value());      // non-zero leftover bits
  CHECK_FALSE(base64url_decode("Zm 9v").has_value());
  for (int n = 0; n < 70; ++n) {
    std::string bytes;
    for (int i = 0; i < n; ++i) bytes += static_cast<char>((i * 37 + n) & 0xff);
    REQUIRE(base64url_decode(base64url_encode(bytes)) == std::optional<std::string>(bytes));
  }
}

TEST_CASE("sign_jwt makes an RS256 JWT with kid that verifies with the public key and only with it") {
  const RsaSigner& key = test::test_signer(0);
  CHECK(key.bits() == 2048);
  auto token = sign_jwt(claims(), "key-1", key);
  REQUIRE(token.ok());
  CHECK(token->find('=') == std::string::npos);
  CHECK(std::count(token->begin(), token->end(), '.') == 2);

  auto jwt = decode_jwt(*token);
  REQUIRE(jwt.ok());
  CHECK(jwt->header == json{{"alg", "RS256"}, {"typ", "JWT"}, {"kid", "key-1"}});
  CHECK(jwt->signature.size() == 256);
  auto c = assertion_claims(*jwt);
  REQUIRE(c.ok());
  CHECK(*c == claims());

  auto verifier = RsaVerifier::of(key);
  CHECK(verify_rs256(*jwt, verifier));
  CHECK_FALSE(verify_rs256(*jwt, RsaVerifier::of(test::test_signer(1))));

  // A changed claim, a changed header or a cut signature no longer verifies.
  AssertionClaims other = claims();
  other.exp += 1;
  json payload = json::parse(std::string(*base64url_decode(base64url_encode(jwt->payload.dump()))));
  payload["exp"] = other.exp;
  CHECK_FALSE(verify_rs256(*decode_jwt(with_segment(*token, 1, base64url_encode(payload.dump()))), verifier));
  json none = {{"alg", "none"}, {"typ", "JWT"}};
  CHECK_FALSE(verify_rs256(*decode_jwt(with_segment(*token, 0, base64url_encode(none.dump()))), verifier));
  std::string short_sig = base64url_encode(jwt->signature.substr(0, 128));
  CHECK_FALSE(verify_rs256(*decode_jwt(with_segment(*token, 2, short_sig)), verifier));
}

TEST_CASE("sign_jwt leaves kid out when there is no key id, and sub in when there is one") {
  AssertionClaims c = claims();
  c.sub = "admin@example.com";
  auto jwt = decode_jwt(*sign_jwt(c, "", test::test_signer(0)));
  REQUIRE(jwt.ok());
  CHECK_FALSE(jwt->header.contains("kid"));
  CHECK(jwt->payload["sub"] == "admin@example.com");
}

TEST_CASE("decode_jwt says which part of a malformed JWT is wrong") {
  auto token = *sign_jwt(claims(), "k", test::test_signer(0));
  auto err = [](const std::string& t) {
    auto r = decode_jwt(t);
    REQUIRE_FALSE(r.ok());
    return r.error().message;
  };
  CHECK(err("abc.def") == "the JWT does not have three '.'-separated segments (header.payload.signature)");
  CHECK(err(token + ".x") == "the JWT does not have three '.'-separated segments (header.payload.signature)");
  CHECK(err(with_segment(token, 0, "e30*")) == "the JWT's header is not base64url");
  CHECK(err(with_segment(token, 1, base64url_encode("[1,2]"))) == "the JWT's payload is not a JSON object");
  CHECK(err(with_segment(token, 1, base64url_encode("{\"iss\":"))) == "the JWT's payload is not a JSON object");
  CHECK(err(with_segment(token, 2, "")) == "the JWT's signature is missing or not base64url");
}

TEST_CASE("assertion_claims names a missing or mistyped claim") {
  auto make = [](json payload) {
    DecodedJwt j;
    j.payload = std::move(payload);
    return assertion_claims(j);
  };
  json good = {{"iss", "a@b.c"}, {"aud", "https://x/token"}, {"iat", 1}, {"exp", 2}};
  CHECK(make(good).ok());
  json p = good;
  p.erase("iss");
  CHECK(make(p).error().message == "the JWT has no 'iss' claim");
  p = good;
  p["exp"] = "soon";
  CHECK(make(p).error().message == "the JWT's 'exp' claim is not a number of seconds");
  p = good;
  p["scope"] = json::array({"a"});
  CHECK(make(p).error().message == "the JWT's 'scope' claim is not a string");
  p = good;
  p["iat"] = 1.9;  // NumericDate may be fractional
  CHECK(make(p)->iat == 1);
}

TEST_CASE("RsaSigner refuses keys it cannot use, without quoting them") {
  auto err = [](const std::string& pem) {
    auto r = RsaSigner::from_pem(pem, "field 'private_key' of key.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == Error::Kind::Invalid);
    return r.error().message;
  };
  CHECK(err("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC") ==
        "field 'private_key' of key.json is not a PEM private key (it has no '-----BEGIN PRIVATE KEY-----' line)");
  std::string cut = test::test_signer(0).private_key_pem();
  cut = cut.substr(0, cut.size() / 2) + "\n-----END PRIVATE KEY-----\n";
  std::string msg = err(cut);
  CHECK_THAT(msg, Catch::StartsWith("field 'private_key' of key.json is not a readable PEM private key"));
  CHECK_THAT(msg, Catch::EndsWith("the file may be truncated or edited: download a new key"));
  CHECK(msg.find(cut.substr(40, 20)) == std::string::npos);
  CHECK(err("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n") ==
        "field 'private_key' of key.json is an encrypted private key; a service-account key file holds an "
        "unencrypted one");

  // An EC key is a valid PEM key, but not one RS256 can use.
  test::TempDir dir;
  auto ec = test::run_program({"openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"});
  REQUIRE(ec.exit_code == 0);
  CHECK(err(ec.out) == "field 'private_key' of key.json is not an RSA key; Google service accounts use RSA (RS256)");
}

TEST_CASE("RsaVerifier reads a public key or an X.509 certificate, as Google publishes them") {
  const RsaSigner& key = test::test_signer(0);
  auto token = *sign_jwt(claims(), "k", key);
  auto jwt = *decode_jwt(token);

  auto from_pub = RsaVerifier::from_pem(key.public_key_pem(), "public key");
  REQUIRE(from_pub.ok());
  CHECK(verify_rs256(jwt, *from_pub));

  test::TempDir dir;
  std::string key_file = dir.write("key.pem", key.private_key_pem());
  auto cert = test::run_program(
      {"openssl", "req", "-x509", "-key", key_file, "-subj", "/CN=plinth-test", "-days", "1", "-out", "-"});
  REQUIRE(cert.exit_code == 0);
  auto from_cert = RsaVerifier::from_pem(cert.out, "certificate");
  REQUIRE(from_cert.ok());
  CHECK(verify_rs256(jwt, *from_cert));
  CHECK_FALSE(verify_rs256(jwt, *RsaVerifier::from_pem(test::test_signer(1).public_key_pem(), "other")));

  auto bad = RsaVerifier::from_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "the key of x");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Catch::StartsWith("the key of x is not a PEM public key or certificate"));
}
