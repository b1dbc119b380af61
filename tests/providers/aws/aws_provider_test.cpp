// The aws provider's pieces that need no endpoint: its EC2 model against
// botocore's, ClientTokens, credentials and endpoints as the SDKs find them,
// and request-rate buckets.
// End to end: tests/e2e/burst_pool_conformance_test.cpp and aws_test.cpp.
#include <catch2/catch.hpp>
#include <fstream>

#include "providers/aws/aws_provider.h"
#include "providers/aws/ec2_model.h"
#include "providers/aws/schema.h"
#include "tests/support/run.h"

using namespace plinth;
using nlohmann::json;

TEST_CASE("aws: the built-in EC2 model is botocore's, shape by shape and member by member") {
  std::ifstream in(test::testdata_dir() + "/aws-ec2/botocore-model/service-2.json");
  REQUIRE(in);
  json full = json::parse(in);
  json mine = json::parse(aws::client_model_json());
  CHECK(mine["metadata"]["apiVersion"] == full["metadata"]["apiVersion"]);
  for (const auto& [name, op] : mine["operations"].items()) {
    INFO(name);
    REQUIRE(full["operations"].contains(name));
    CHECK(op["input"] == full["operations"][name]["input"]);
    CHECK(op.value("output", json()) == full["operations"][name].value("output", json()));
  }
  for (const auto& [name, shape] : mine["shapes"].items()) {
    INFO(name);
    REQUIRE(full["shapes"].contains(name));
    const json& f = full["shapes"][name];
    CHECK(shape["type"] == f["type"]);
    if (shape["type"] == "structure") {
      for (const auto& [m, ref] : shape["members"].items()) {
        INFO(m);
        REQUIRE(f["members"].contains(m));
        json theirs = f["members"][m];
        theirs.erase("documentation");
        CHECK(ref == theirs);
      }
    } else if (shape["type"] == "list") {
      CHECK(shape["member"]["shape"] == f["member"]["shape"]);
      CHECK(shape["member"].value("locationName", "") == f["member"].value("locationName", ""));
    }
  }
  CHECK(aws::client_model().api_version() == "2016-11-15");
}

TEST_CASE("aws: a ClientToken is stable for the same inputs, changes with any of them and fits EC2's 64 characters") {
  json a = {{"instance_type", "p5.48xlarge"}};
  const std::string t = aws::client_token("lineage-1", "aws.instance.gpu[0]", a, 0);
  CHECK(t == aws::client_token("lineage-1", "aws.instance.gpu[0]", a, 0));
  CHECK(t.size() <= 64);
  CHECK(t != aws::client_token("lineage-2", "aws.instance.gpu[0]", a, 0));
  CHECK(t != aws::client_token("lineage-1", "aws.instance.gpu[1]", a, 0));
  CHECK(t != aws::client_token("lineage-1", "aws.instance.gpu[0]", {{"instance_type", "p5e.48xlarge"}}, 0));
  CHECK(t != aws::client_token("lineage-1", "aws.instance.gpu[0]", a, 1));
}

namespace {
Result<ProviderConfig> config(const std::vector<std::string>& env) {
  return parse_provider_config(aws::schema(), env, {}, {});
}
}  // namespace

TEST_CASE("aws: the endpoint is AWS_ENDPOINT_URL_EC2, then AWS_ENDPOINT_URL, else the regional one") {
  auto both = config({"AWS_ENDPOINT_URL=https://all.example", "AWS_ENDPOINT_URL_EC2=https://ec2.example/"});
  REQUIRE(both.ok());
  CHECK(aws::endpoint_for(both->str("endpoint"), "us-east-1") == "https://ec2.example");
  auto general = config({"AWS_ENDPOINT_URL=https://all.example"});
  CHECK(aws::endpoint_for(general->str("endpoint"), "us-east-1") == "https://all.example");
  CHECK(aws::endpoint_for("", "eu-west-1") == "https://ec2.eu-west-1.amazonaws.com");
}

TEST_CASE("aws: request_rates are SIZE:REFILL per bucket, a bad entry is named") {
  auto ok = aws::parse_rates({{"mutating", "200:5"}, {"RunInstances", "10:0.5"}});
  REQUIRE(ok.ok());
  CHECK(ok->at("RunInstances").refill_per_second == 0.5);
  auto bad = aws::parse_rates({{"mutating", "fast"}});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message ==
        "option request_rates: 'mutating=fast' is not SIZE:REFILL_PER_SECOND with SIZE >= 1 and REFILL > 0, e.g. "
        "mutating=200:5");
}

TEST_CASE("aws: secret options are refused in a blueprint and redacted") {
  auto c = parse_provider_config(aws::schema(), {}, {{"secret_access_key", "x", "blueprint (bp.yaml:3:5)"}}, {});
  REQUIRE_FALSE(c.ok());
  auto env = config({"AWS_SECRET_ACCESS_KEY=topsecret", "AWS_ACCESS_KEY_ID=AKID"});
  REQUIRE(env.ok());
  CHECK(redacted_options(aws::schema(), *env).dump().find("topsecret") == std::string::npos);
}
