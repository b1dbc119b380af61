// The token endpoint's answers: tokens, Google's OAuth error JSON, throttling.
#include "providers/gcp/oauth_token.h"

#include <catch2/catch.hpp>

using namespace plinth;
using namespace plinth::gcp;
using std::chrono::seconds;

namespace {

const auto kNow = std::chrono::system_clock::time_point(seconds(1767225600));
const std::string kUri = "https://oauth2.googleapis.com/token";
const std::string kWho = "service account plinth@p.iam.gserviceaccount.com (key /k.json)";

Error refused(long status, const std::string& body) {
  auto r = parse_token_response(status, body, kUri, kWho, kNow);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

}  // namespace

TEST_CASE("the token request is the form-encoded JWT bearer grant") {
  CHECK(token_request_body("aaa.bbb-_.ccc") ==
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=aaa.bbb-_.ccc");
  CHECK(token_request_body("a=b&c") ==
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=a%3Db%26c");
}

TEST_CASE("a 200 answer becomes a Bearer token with its expiry") {
  auto t = parse_token_response(200, R"({"access_token":"ya29.c.abc","expires_in":3599,"token_type":"Bearer"})", kUri,
                                kWho, kNow);
  REQUIRE(t.ok());
  CHECK(t->access_token == "ya29.c.abc");
  CHECK(t->token_type == "Bearer");
  CHECK(t->expires_in == seconds(3599));
  CHECK(t->expiry == kNow + seconds(3599));
  CHECK_FALSE(t->expires_within(seconds(300), kNow));
  CHECK(t->expires_within(seconds(300), kNow + seconds(3300)));
  CHECK(t->expires_within(seconds(0), kNow + seconds(3599)));
}

TEST_CASE("an expires_in beyond a day counts as a day, never as more seconds than the clock holds") {
  for (const char* lifetime : {"86401", "2e12", "1e308"}) {
    auto t = parse_token_response(
        200, std::string(R"({"access_token":"ya29.c.abc","token_type":"Bearer","expires_in":)") + lifetime + "}", kUri,
        kWho, kNow);
    REQUIRE(t.ok());
    CHECK(t->expires_in == seconds(86400));
    CHECK(t->expiry == kNow + seconds(86400));
  }
}

TEST_CASE("a 200 answer without a usable token is an error naming what is missing, never the token") {
  CHECK(refused(200, R"({"expires_in":3599,"token_type":"Bearer"})").message ==
        "token endpoint https://oauth2.googleapis.com/token (" + kWho + ") answered 200 without an access_token");
  CHECK(refused(200, R"({"access_token":"ya29.secret","token_type":"Bearer"})").message ==
        "token endpoint https://oauth2.googleapis.com/token (" + kWho + ") answered 200 without a positive expires_in");
  auto mac = refused(200, R"({"access_token":"ya29.secret","expires_in":1,"token_type":"MAC"})");
  CHECK(mac.message.find("ya29.secret") == std::string::npos);
  CHECK_THAT(mac.message, Catch::EndsWith("issued a 'MAC' token; only Bearer tokens are supported"));
  CHECK(refused(200, "<html>").kind == Error::Kind::Fatal);
}

TEST_CASE("Google's OAuth errors are fatal, quoted and explained") {
  auto sig = refused(400, R"({"error": "invalid_grant", "error_description": "Invalid JWT Signature."})");
  CHECK(sig.kind == Error::Kind::Fatal);
  CHECK(sig.message == "token endpoint https://oauth2.googleapis.com/token (" + kWho +
                           ") refused the assertion (HTTP 400) with invalid_grant: Invalid JWT Signature.; the key is "
                           "not (or no longer) a valid key of this service account: it may have been deleted, disabled "
                           "or rotated; create a new key and point the provider at it");

  auto clock =
      refused(400, R"({"error":"invalid_grant","error_description":"Invalid JWT: Token must be a short-lived )"
                   R"(token (60 minutes) and in a reasonable timeframe. Check your iat and exp values and use )"
                   R"(a clock with skew to account for clock differences between systems."})");
  CHECK_THAT(clock.message, Catch::Contains("with invalid_grant: Invalid JWT: Token must be a short-lived token"));
  CHECK_THAT(clock.message, Catch::EndsWith("check this machine's clock (NTP)"));

  auto gone = refused(400, R"({"error":"invalid_grant","error_description":"Invalid grant: account not found"})");
  CHECK_THAT(gone.message, Catch::EndsWith("the service account does not exist (deleted?); check client_email in the "
                                           "key file"));
  auto scope = refused(400, R"({"error":"invalid_scope","error_description":"Invalid OAuth scope or ID token )"
                            R"(audience provided."})");
  CHECK_THAT(scope.message, Catch::Contains("invalid_scope: Invalid OAuth scope or ID token audience provided."));
  auto bare = refused(401, R"({"error":"unauthorized_client"})");
  CHECK_THAT(bare.message, Catch::Contains("(HTTP 401) with unauthorized_client; "));
  CHECK(refused(400, "Bad Request").message == "token endpoint https://oauth2.googleapis.com/token (" + kWho +
                                                   ") answered HTTP 400 without an OAuth error body");
}

TEST_CASE("throttling and server errors from the token endpoint are retryable") {
  auto slow = refused(429, R"({"error":"rate_limit_exceeded","error_description":"Rate limit exceeded"})");
  CHECK(slow.kind == Error::Kind::Throttled);
  CHECK_THAT(slow.message, Catch::EndsWith("is throttling (HTTP 429): rate_limit_exceeded: Rate limit exceeded"));
  auto down = refused(503, "");
  CHECK(down.kind == Error::Kind::Retryable);
  CHECK_THAT(down.message, Catch::EndsWith("failed with HTTP 503"));
}

TEST_CASE("parse_oauth_error reads Google's error JSON and nothing else") {
  CHECK(parse_oauth_error(R"({"error":"invalid_grant","error_description":"Invalid JWT Signature."})") ==
        std::optional<OAuthError>(OAuthError{"invalid_grant", "Invalid JWT Signature."}));
  CHECK(parse_oauth_error(R"({"error":"invalid_request"})") ==
        std::optional<OAuthError>(OAuthError{"invalid_request", ""}));
  // A Google API error ({"error": {"code": ...}}) is not an OAuth error.
  CHECK_FALSE(parse_oauth_error(R"({"error":{"code":401,"message":"x"}})").has_value());
  CHECK_FALSE(parse_oauth_error("not json").has_value());
}
