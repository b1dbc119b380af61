// SigV4 against every case of the two official AWS test suites in
// tests/data/third_party/aws-sigv4 (PROVENANCE.md there):
//   botocore-aws4_testsuite/  34 cases: .req -> .creq, .sts, .authz, .sreq
//   aws-c-auth-v4/            38 cases, each signed twice: in the Authorization
//                             header (header-*.txt) and presigned (query-*.txt)
// and the server side (verify) on every signed result.
#include "providers/aws/sigv4.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/support/run.h"

using namespace plinth::aws;
using plinth::test::slurp;
namespace fs = std::filesystem;

namespace {

const Credentials kCreds{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};

std::chrono::system_clock::time_point suite_time() { return *parse_amz_date("20150830T123600Z"); }

std::string suite_dir(const std::string& name) { return plinth::test::testdata_dir() + "/aws-sigv4/" + name; }

/// A raw HTTP request as the suites write it: "METHOD target HTTP/1.1", then
/// "Name:value" lines (a line starting with a blank continues the previous
/// value), a blank line, the body. The target may contain spaces.
struct RawRequest {
  std::string method, target, version;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

RawRequest parse_raw(const std::string& text) {
  RawRequest r;
  size_t eol = text.find('\n');
  std::string first = text.substr(0, eol);
  size_t sp1 = first.find(' '), sp2 = first.rfind(' ');
  r.method = first.substr(0, sp1);
  r.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
  r.version = first.substr(sp2 + 1);
  size_t pos = eol == std::string::npos ? text.size() : eol + 1;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) {
      r.body = pos < text.size() ? text.substr(pos) : "";
      break;
    }
    if ((line[0] == ' ' || line[0] == '\t') && !r.headers.empty()) {
      r.headers.back().second += "\n" + line;
      continue;
    }
    size_t colon = line.find(':');
    REQUIRE(colon != std::string::npos);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    r.headers.emplace_back(line.substr(0, colon), value);
  }
  return r;
}

HttpRequest to_request(const RawRequest& raw) {
  HttpRequest r;
  r.method = raw.method;
  size_t q = raw.target.find('?');
  r.path = raw.target.substr(0, q);
  r.query = q == std::string::npos ? "" : raw.target.substr(q + 1);
  r.headers = raw.headers;
  r.body = raw.body;
  return r;
}

/// Headers as a sorted multiset of (lower-case name, value) for comparing
/// signed requests regardless of header order.
std::multiset<std::pair<std::string, std::string>> header_set(
    const std::vector<std::pair<std::string, std::string>>& h) {
  std::multiset<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : h) {
    std::string name = k;
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.emplace(name, v);
  }
  return out;
}

std::string trim_end(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

/// verify() must accept what sign()/presign() produced, and compute the same
/// canonical request on the server side.
void check_verifies(const Signed& s, const Credentials& creds, bool normalize, bool token_signed = true) {
  VerifyParams vp{"us-east-1", "service", suite_time(), std::chrono::seconds(300), normalize, token_signed};
  auto lookup = [&](const std::string& id) -> std::optional<Credentials> {
    if (id == creds.access_key_id) return creds;
    return std::nullopt;
  };
  VerifyResult v = verify(s.request, lookup, vp);
  INFO(v.message);
  CHECK(v.ok());
  CHECK(v.canonical_request == s.canonical_request);
}

/// The session token of the botocore cases that use one (the suite's .req
/// does not say; post-sts-token/readme.txt and PROVENANCE.md do).
struct TokenCase {
  std::string token;
  bool signed_token;
};
std::optional<TokenCase> botocore_token(const std::string& name) {
  std::string readme = slurp(suite_dir("botocore-aws4_testsuite/post-sts-token/readme.txt"));
  std::string sts_token = trim_end(readme.substr(readme.rfind('\n', readme.size() - 2) + 1));
  if (name == "get-vanilla-with-session-token")
    return TokenCase{"6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267", true};
  if (name == "post-sts-header-before") return TokenCase{sts_token, true};
  if (name == "post-sts-header-after") return TokenCase{sts_token, false};
  return std::nullopt;
}

}  // namespace

TEST_CASE(
    "SigV4: every botocore aws4_testsuite case signs to the suite's canonical request, string to sign, "
    "Authorization and signed request") {
  std::vector<fs::path> cases;
  for (const auto& e : fs::recursive_directory_iterator(suite_dir("botocore-aws4_testsuite")))
    if (e.path().extension() == ".req") cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  REQUIRE(cases.size() == 34);  // PROVENANCE.md: 34 cases

  for (const auto& req_file : cases) {
    std::string name = req_file.stem().string();
    fs::path base = req_file.parent_path() / name;
    DYNAMIC_SECTION(name) {
      Credentials creds = kCreds;
      SigningParams p{"us-east-1", "service", suite_time()};
      if (auto t = botocore_token(name)) {
        creds.session_token = t->token;
        p.sign_session_token = t->signed_token;
      }
      auto s = sign(to_request(parse_raw(slurp(req_file.string()))), creds, p);
      REQUIRE(s.ok());
      CHECK(s->canonical_request == slurp(base.string() + ".creq"));
      CHECK(s->string_to_sign == slurp(base.string() + ".sts"));
      CHECK(s->authorization == slurp(base.string() + ".authz"));

      RawRequest expected = parse_raw(slurp(base.string() + ".sreq"));
      if (name == "get-vanilla-with-session-token") {
        // Known defect of this suite copy: the .sreq's Signature is not the
        // signature of its own .sts (it is a rotated piece of the token);
        // the .authz carries the right one. Compare against that instead.
        for (auto& [k, v] : expected.headers)
          if (k == "Authorization") {
            CHECK(v != s->authorization);
            v = slurp(base.string() + ".authz");
          }
      }
      CHECK(s->request.method == expected.method);
      CHECK(s->request.path + (s->request.query.empty() ? "" : "?" + s->request.query) == expected.target);
      CHECK(header_set(s->request.headers) == header_set(expected.headers));
      CHECK(s->request.body == expected.body);
      check_verifies(*s, creds, true);
    }
  }
}

TEST_CASE("SigV4: every aws-c-auth v4 case signs in the header and presigned in the query exactly as the suite says") {
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(suite_dir("aws-c-auth-v4")))
    if (e.is_directory()) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  REQUIRE(cases.size() == 38);  // PROVENANCE.md: 38 cases

  for (const auto& dir : cases) {
    std::string name = dir.filename().string();
    auto ctx = nlohmann::json::parse(slurp((dir / "context.json").string()));
    auto file = [&](const std::string& f) { return slurp((dir / f).string()); };
    Credentials creds{ctx["credentials"]["access_key_id"], ctx["credentials"]["secret_access_key"],
                      ctx["credentials"].value("token", "")};
    REQUIRE(ctx["region"] == "us-east-1");
    REQUIRE(ctx["service"] == "service");
    REQUIRE(ctx["timestamp"] == "2015-08-30T12:36:00Z");
    SigningParams p{ctx["region"], ctx["service"], suite_time()};
    p.normalize_path = ctx["normalize"];
    p.sign_session_token = !ctx.value("omit_session_token", false);
    HttpRequest request = to_request(parse_raw(file("request.txt")));

    DYNAMIC_SECTION(name << " (Authorization header)") {
      p.payload_hash_header = ctx["sign_body"];
      auto s = sign(request, creds, p);
      REQUIRE(s.ok());
      CHECK(s->canonical_request == file("header-canonical-request.txt"));
      CHECK(s->string_to_sign == file("header-string-to-sign.txt"));
      CHECK(s->signature == file("header-signature.txt"));
      RawRequest expected = parse_raw(file("header-signed-request.txt"));
      CHECK(s->request.method + " " + s->request.path + (s->request.query.empty() ? "" : "?" + s->request.query) ==
            expected.method + " " + expected.target);
      CHECK(header_set(s->request.headers) == header_set(expected.headers));
      CHECK(s->request.body == expected.body);
      check_verifies(*s, creds, p.normalize_path);
    }
    DYNAMIC_SECTION(name << " (presigned query)") {
      auto s = presign(request, creds, p, ctx["expiration_in_seconds"]);
      REQUIRE(s.ok());
      CHECK(s->canonical_request == file("query-canonical-request.txt"));
      CHECK(s->string_to_sign == file("query-string-to-sign.txt"));
      CHECK(s->signature == file("query-signature.txt"));
      RawRequest expected = parse_raw(file("query-signed-request.txt"));
      CHECK(s->request.method + " " + s->request.path + "?" + s->request.query ==
            expected.method + " " + expected.target);
      CHECK(header_set(s->request.headers) == header_set(expected.headers));
      check_verifies(*s, creds, p.normalize_path, p.sign_session_token);
    }
  }
}

TEST_CASE("SigV4: the signing key derivation matches AWS's documented example") {
  // docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
  // (the suite's secret, 20150830/us-east-1/iam).
  CHECK(hex(signing_key("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830", "us-east-1", "iam")) ==
        "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
  CHECK(hex(hmac_sha256("key", "The quick brown fox jumps over the lazy dog")) ==
        "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");  // the HMAC example on Wikipedia
}

TEST_CASE("SigV4 verify: names the part that is wrong") {
  Credentials creds{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
  auto lookup = [&](const std::string& id) -> std::optional<Credentials> {
    if (id == creds.access_key_id) return creds;
    return std::nullopt;
  };
  auto now = suite_time();
  HttpRequest r;
  r.method = "POST";
  r.headers = {{"Host", "127.0.0.1:8443"}, {"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"}};
  r.body = "Action=DescribeInstances&Version=2016-11-15";
  SigningParams sp{"us-east-1", "ec2", now};
  VerifyParams vp{"us-east-1", "ec2", now};
  auto s = sign(r, creds, sp);
  REQUIRE(s.ok());
  REQUIRE(verify(s->request, lookup, vp).ok());

  SECTION("a changed body no longer matches the signature") {
    HttpRequest t = s->request;
    t.body = "Action=TerminateInstances&Version=2016-11-15";
    auto v = verify(t, lookup, vp);
    CHECK(v.failure == VerifyFailure::SignatureMismatch);
    CHECK_THAT(v.message, Catch::StartsWith("The request signature we calculated does not match"));
    CHECK(v.canonical_request.find("POST\n/\n\ncontent-type:") == 0);
  }
  SECTION("a wrong secret gives a signature mismatch") {
    Credentials wrong = creds;
    wrong.secret_access_key = "not-the-secret";
    auto t = sign(r, wrong, sp);
    REQUIRE(t.ok());
    CHECK(verify(t->request, lookup, vp).failure == VerifyFailure::SignatureMismatch);
  }
  SECTION("an unknown access key is reported as such") {
    Credentials other{"AKIDUNKNOWN", "x", ""};
    auto t = sign(r, other, sp);
    REQUIRE(t.ok());
    auto v = verify(t->request, lookup, vp);
    CHECK(v.failure == VerifyFailure::UnknownAccessKey);
    CHECK(v.access_key_id == "AKIDUNKNOWN");
  }
  SECTION("a credential scoped to another region or service is refused") {
    SigningParams west = sp;
    west.region = "us-west-2";
    auto v = verify(sign(r, creds, west)->request, lookup, vp);
    CHECK(v.failure == VerifyFailure::WrongScope);
    CHECK_THAT(v.message, Catch::Contains("not 'us-west-2'"));
    SigningParams s3 = sp;
    s3.service = "s3";
    CHECK(verify(sign(r, creds, s3)->request, lookup, vp).failure == VerifyFailure::WrongScope);
  }
  SECTION("a clock more than five minutes off is refused, either way") {
    VerifyParams later = vp;
    later.now = now + std::chrono::seconds(301);
    auto v = verify(s->request, lookup, later);
    CHECK(v.failure == VerifyFailure::Expired);
    CHECK_THAT(v.message, Catch::StartsWith("Request has expired."));
    later.now = now - std::chrono::seconds(301);
    CHECK(verify(s->request, lookup, later).failure == VerifyFailure::Expired);
    later.now = now + std::chrono::seconds(299);
    CHECK(verify(s->request, lookup, later).ok());
  }
  SECTION("a request without Authorization, or with a broken one") {
    HttpRequest t = r;
    CHECK(verify(t, lookup, vp).failure == VerifyFailure::MissingAuthentication);
    t.set_header("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/ec2/aws4_request");
    t.set_header("X-Amz-Date", "20150830T123600Z");
    auto v = verify(t, lookup, vp);
    CHECK(v.failure == VerifyFailure::IncompleteSignature);
    CHECK(v.message ==
          "Authorization header requires 'Signature' parameter. Authorization header requires 'SignedHeaders' "
          "parameter.");
  }
  SECTION("host must be signed") {
    HttpRequest t = r;
    t.headers = {{"Content-Type", "text/plain"}};
    auto u = sign(t, creds, sp);
    u->request.headers.emplace_back("Host", "127.0.0.1:8443");
    auto v = verify(u->request, lookup, vp);
    CHECK(v.failure == VerifyFailure::IncompleteSignature);
    CHECK(v.message == "'Host' must be a 'SignedHeader' in the AWS Authorization.");
  }
  SECTION("session tokens must match the key's") {
    Credentials temp{"ASIATEMP", "tempsecret", "the-token"};
    auto lookup_temp = [&](const std::string& id) -> std::optional<Credentials> {
      if (id == temp.access_key_id) return temp;
      return std::nullopt;
    };
    CHECK(verify(sign(r, temp, sp)->request, lookup_temp, vp).ok());
    Credentials no_token = temp;
    no_token.session_token = "";
    CHECK(verify(sign(r, no_token, sp)->request, lookup_temp, vp).failure == VerifyFailure::InvalidToken);
    Credentials other_token = temp;
    other_token.session_token = "stolen";
    CHECK(verify(sign(r, other_token, sp)->request, lookup_temp, vp).failure == VerifyFailure::InvalidToken);
  }
  SECTION("presigned requests verify until they expire") {
    HttpRequest g;
    g.method = "GET";
    g.query = "Action=DescribeInstances&Version=2016-11-15";
    g.headers = {{"Host", "127.0.0.1:8443"}};
    auto p = presign(g, creds, sp, 60);
    REQUIRE(p.ok());
    CHECK(verify(p->request, lookup, vp).ok());
    VerifyParams later = vp;
    later.now = now + std::chrono::seconds(61);
    CHECK(verify(p->request, lookup, later).failure == VerifyFailure::Expired);
    HttpRequest tampered = p->request;
    tampered.query.replace(tampered.query.find("DescribeInstances"), 17, "TerminateInstances");
    CHECK(verify(tampered, lookup, vp).failure == VerifyFailure::SignatureMismatch);
  }
}

TEST_CASE("SigV4: signing refuses unusable input with a message") {
  HttpRequest r;
  auto s = sign(r, Credentials{"", "x", ""}, SigningParams{"us-east-1", "ec2", suite_time()});
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message, Catch::Contains("no access key id"));
  auto p = presign(r, kCreds, SigningParams{"us-east-1", "ec2", suite_time()}, 0);
  REQUIRE_FALSE(p.ok());
  CHECK_THAT(p.error().message, Catch::Contains("1 to 604800 seconds"));
}
