// AwsCloud: the burst-pool contract's hooks for aws-ec2-emulator. Instances
// made outside plinth are launched with Debian's AWS CLI, as a user would.
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

#include "engine/state/state.h"
#include "tests/support/burst_cloud.h"

namespace plinth::test {

// File-local, in a namespace of its own (plinth_test_support is built in unity batches).
namespace burst_cloud_aws {

const std::string kSessionToken = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN0123456789";
// What the keyless credential sources hold (credential_kinds): each must stay out of everything Plinth writes.
const std::string kOidcToken = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOmNvbmZvcm1hbmNlIn0.Q09ORk9STUFOQ0U";
const std::string kSsoToken = "aoaAAAAAGNvbmZvcm1hbmNlLXNzby1hY2Nlc3MtdG9rZW4";
const std::string kContainerToken = "Y29udGFpbmVyLWF1dGhvcml6YXRpb24tdG9rZW4";

/// How many answers of `action` (every action when "") the counters `c` show with `fault`.
int faults(const Json& c, const std::string& action, const std::string& fault) {
  int n = 0;
  for (const auto& [name, a] : c["actions"].items())
    if (action.empty() || name == action) n += a.value("faults", Json::object()).value(fault, 0);
  return n;
}

class Aws final : public CloudUnderTest {
 public:
  std::string provider() const override { return "aws"; }
  std::string resource_type() const override { return "aws.instance"; }
  std::vector<std::string> zones() const override { return {"us-east-1a", "us-east-1b"}; }
  std::vector<std::string> instance_types() const override { return {"p5.48xlarge", "p5e.48xlarge"}; }

  BurstPool pool(const PoolShape& shape) const override {
    std::string extra;
    if (shape.zones == 1) extra += "    zones: [us-east-1a]\n";
    if (shape.zones == 2) extra += "    zones: [us-east-1a, us-east-1b]\n";
    if (shape.fallback) extra += "    instance_types: [p5.48xlarge, p5e.48xlarge]\n";
    if (shape.own_settings) extra += "    placement_group: true\n";
    return aws_pool(shape.desired, extra + shape.extra, shape.spot);
  }

  Misspelling misspelling() const override {
    return {"    placement_grup: true\n    root_volume: {size_gb: big}\n", "placement_grup", "placement_group", "big"};
  }

  void start(const CloudSetup& setup) override {
    setup_ = setup;
    std::vector<std::string> flags;
    if (setup.operation_ms > 0) {
      const std::string ms = std::to_string(setup.operation_ms);
      flags.insert(flags.end(), {"--pending-ms", ms, "--shutdown-ms", ms});
    }
    // EC2's buckets are per action: RunInstances is the one a pool fills.
    if (setup.throttled)
      flags.insert(flags.end(), {"--throttle", "RunInstances=2:20", "--throttle", "DescribeInstances=3:40"});
    if (setup.rate_limited) flags.insert(flags.end(), {"--throttle", "RunInstances=2:5"});
    if (setup.temporary_credentials)
      flags.insert(flags.end(), {"--session-token", kSessionToken, "--web-identity-token", kOidcToken, "--sso-token",
                                 kSsoToken, "--container-token", kContainerToken, "--metadata-port", "0"});
    ec2_ = std::make_unique<Ec2Emulator>(flags);
  }

  CloudEmulator& emulator() override { return ec2(); }

  std::map<std::string, std::string> env() override {
    auto env = aws_env(ec2(), home_.path());
    if (setup_.throttled) {
      env["PLINTH_AWS_REQUEST_RATES"] = "mutating=1000:1000,non-mutating=1000:1000";  // let the server throttle
      env["PLINTH_AWS_RETRY_ATTEMPTS"] = "12";
      env["PLINTH_AWS_RETRY_THROTTLE_BASE_MS"] = "20";  // EC2-like quota waits (1 s to 60 s) made short
      env["PLINTH_AWS_RETRY_THROTTLE_MAX_MS"] = "500";
    }
    // Slower than the server's bucket: EC2 never has to say RequestLimitExceeded.
    if (setup_.rate_limited)
      env["PLINTH_AWS_REQUEST_RATES"] = "RunInstances=1:4,mutating=1000:1000,non-mutating=1000:1000";
    return env;
  }

  std::string parallelism() const override { return "10"; }

  std::vector<CloudInstance> instances() override {
    std::vector<CloudInstance> out;
    for (const auto& i : ec2().instances())
      out.push_back({.id = i["instance_id"],
                     .uid = i["instance_id"],
                     .name = i["instance_id"],
                     .address = i["tags"].value("plinth:address", ""),
                     .lineage = i["tags"].value("plinth:lineage", ""),
                     .type = i["instance_type"],
                     .zone = i["availability_zone"],
                     .spot = i["lifecycle"] == "spot",
                     .active = i["state"] == "pending" || i["state"] == "running",
                     .user_data = i["user_data"],
                     .raw = i});
    return out;
  }

  bool keeps_removed() const override { return true; }  // terminated instances stay listed a while

  void check_companions() override {
    // The cluster placement groups are those of the running instances: the last instance of a zone takes its
    // group with it.
    std::set<std::string> used, groups;
    for (const auto& i : active())
      if (auto g = i.raw.value("placement_group", ""); !g.empty()) used.insert(g);
    const Json state = ec2().control("GET", "/__emulator/state");
    for (const auto& g : state["placement_groups"]) groups.insert(g["GroupName"]);
    CHECK(groups == used);
  }

  void check_pool(const std::vector<CloudInstance>& active, const Workspace&, const RunResult&) override {
    std::set<std::string> groups;
    for (const auto& i : active) {
      groups.insert(i.raw["placement_group"].get<std::string>());
      REQUIRE(i.raw["network_interfaces"].size() == 32);  // one EFA per network card of a p5.48xlarge
      std::map<std::string, int> types;
      for (const auto& n : i.raw["network_interfaces"]) ++types[n["interface_type"].get<std::string>()];
      CHECK(types == std::map<std::string, int>{{"efa", 1}, {"efa-only", 31}});
    }
    CHECK(groups.size() == 2);  // a cluster group per zone
  }

  std::vector<std::string> calls() const override {
    return {"DescribeInstances", "RunInstances", "CreateTags", "TerminateInstances"};
  }

  std::string call_of(const Json& line) const override {
    return line.value("control", false) || !line["action"].is_string() ? "" : line["action"].get<std::string>();
  }

  int launched(const Json& line) const override {
    if (line["status"] != 200) return 0;
    return call_of(line) == call(Call::create) ? 1 : call_of(line) == call(Call::remove) ? -1 : 0;
  }

  int tokens_per_run() const override { return 0; }  // SigV4 signs each request
  std::string token_call() const override { return ""; }
  int throttled() override { return faults(ec2().counters(), "", "throttle"); }
  int throttled(Call c) override { return faults(ec2().counters(), call(c), "throttle"); }
  int lost() override { return faults(ec2().counters(), "", "lose-response"); }
  std::vector<Call> throttled_calls() const override { return {Call::create}; }

  void capacity(const std::string& type, const std::string& zone, Json limit) override {
    ec2().capacity(type, zone.empty() ? "*" : zone, std::move(limit));
  }

  void lose_answers(Call c, int n) override {
    ec2().control("POST", "/__emulator/faults", {{"lose_response", {{call(c), n}}}});
  }

  std::vector<std::string> reclaim_kinds() const override { return {"reclaim"}; }
  std::string reclaim_setting(const std::string&) const override { return ""; }

  Reclaimed reclaim(const Resource& victim, const std::string&) override {
    ec2().control("POST", "/__emulator/reclaim", {{"instance_ids", {victim.computed["id"]}}});
    return {{"reclaimed by AWS (Server.SpotInstanceTermination: Spot instance termination) (the next apply creates "
             "it again)"},
            ""};
  }

  Refusal spoil_credentials(Workspace& ws) override {
    ws.env["AWS_SECRET_ACCESS_KEY"] = "not-the-secret";
    return {"SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided.",
            true, 0};
  }

  std::vector<std::string> credential_kinds() const override {
    return {"access key and session token", "web identity",         "credential_process",
            "IAM Identity Center",          "container credentials", "instance metadata (IMDSv2)"};
  }

  void use_credentials(Workspace& ws, const std::string& kind) override {
    REQUIRE(setup_.temporary_credentials);
    if (kind == "access key and session token") {
      ws.env["AWS_SESSION_TOKEN"] = kSessionToken;
      return;
    }
    // The others hold no keys: what the source gives is all there is.
    ws.env["AWS_ACCESS_KEY_ID"] = "";
    ws.env["AWS_SECRET_ACCESS_KEY"] = "";
    home_.write("oidc-token", kOidcToken);
    home_.write("process.sh", "#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"" + kAwsAccessKey +
                                  "\", \"SecretAccessKey\": \"" + kAwsSecretKey + "\", \"SessionToken\": \"" +
                                  kSessionToken + "\"}'\n");
    REQUIRE(run_program({"/bin/chmod", "+x", home_.path() + "/process.sh"}).exit_code == 0);
    home_.write(".aws/config", "[profile process]\ncredential_process = " + home_.path() + "/process.sh\n"
                               "[profile sso]\nsso_session = corp\nsso_account_id = 123456789012\n"
                               "sso_role_name = GpuFleetAdmin\n[sso-session corp]\n"
                               "sso_start_url = https://example.awsapps.com/start\nsso_region = us-east-1\n");
    // The AWS CLI's token cache: the SHA-1 of the session name.
    home_.write(".aws/sso/cache/ee0bfd2552fbd840c02cc48b6e823320543c450f.json",
                "{\"accessToken\": \"" + kSsoToken + "\", \"expiresAt\": \"2099-01-01T00:00:00Z\"}");
    if (kind == "web identity") {
      ws.env["AWS_WEB_IDENTITY_TOKEN_FILE"] = home_.path() + "/oidc-token";
      ws.env["AWS_ROLE_ARN"] = "arn:aws:iam::123456789012:role/plinth-ci";
      ws.env["AWS_ENDPOINT_URL_STS"] = ec2().base();
    } else if (kind == "credential_process") {
      ws.env["AWS_PROFILE"] = "process";
    } else if (kind == "IAM Identity Center") {
      ws.env["AWS_PROFILE"] = "sso";
      ws.env["AWS_ENDPOINT_URL_SSO"] = ec2().base();
    } else if (kind == "container credentials") {
      ws.env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = ec2().metadata_base() + "/v2/credentials/pod";
      ws.env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = kContainerToken;
    } else {
      REQUIRE(kind == "instance metadata (IMDSv2)");
      ws.env["AWS_EC2_METADATA_DISABLED"] = "";
      ws.env["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = ec2().metadata_base();
    }
  }

  std::vector<std::string> secrets() override {
    std::vector<std::string> out = {kAwsSecretKey, kSessionToken, kOidcToken, kSsoToken, kContainerToken};
    // Everything STS, the portal and the metadata listener issued.
    const Json identity = ec2().control("GET", "/__emulator/identity");
    for (const auto& c : identity["credentials"]) {
      out.push_back(c["secret_access_key"]);
      out.push_back(c["session_token"]);
    }
    // Each keyless kind made its exchange (web identity, SSO, container, IMDS), so the secrets above are real.
    CHECK(identity["credentials"].size() >= 4);
    return out;
  }

  Population populate(Workspace& ws) override {
    // 1,000 instances launched with one request by the AWS CLI, tagged with the state's lineage, and the state
    // recording them.
    const std::string lineage = "0e2e0000-0000-4000-8000-000000001000";
    auto cli = run_program({"/usr/bin/aws", "ec2", "run-instances", "--image-id", kAwsImage, "--instance-type",
                            "p5.48xlarge", "--count", "1000", "--tag-specifications",
                            "ResourceType=instance,Tags=[{Key=plinth:lineage,Value=" + lineage + "}]", "--endpoint-url",
                            ec2().base(), "--ca-bundle", ec2().ca(), "--output", "json", "--query",
                            "Instances[].InstanceId"},
                           "", cli_env());
    INFO(cli.err);
    REQUIRE(cli.exit_code == 0);
    Json ids = Json::parse(cli.out);
    REQUIRE(ids.size() == 1000);
    state::StateDocument doc;
    doc.lineage = lineage;
    doc.serial = 1;
    doc.plinth_version = "0.1.0";
    for (int i = 0; i < 1000; ++i) {
      Resource r =
          make_resource("aws.instance", "gpu", i, "aws", {{"instance_type", "p5.48xlarge"}, {"region", "us-east-1"}});
      r.computed = {{"id", ids[static_cast<size_t>(i)]}};
      doc.resources.push_back(r);
    }
    std::sort(doc.resources.begin(), doc.resources.end(),
              [](const Resource& a, const Resource& b) { return a.address < b.address; });
    REQUIRE(state::open_local(ws.state())->save(doc).ok());
    // The default page size: 1,000 p5.48xlarge (32 network interfaces each, ~65 KB of XML an instance) in one
    // page would pass the HTTP client's 32 MiB limit and fail the refresh.
    return {1000, 200};
  }

  std::string make_stray(Workspace& ws, const std::string& address) override {
    const Json spec = Json::array({{{"ResourceType", "instance"},
                                    {"Tags",
                                     {{{"Key", "plinth:lineage"}, {"Value", ws.doc().lineage}},
                                      {{"Key", "plinth:address"}, {"Value", address}},
                                      {{"Key", "plinth:attributes"}, {"Value", "0123456789abcdef"}}}}}});
    auto cli = run_program({"/usr/bin/aws", "ec2", "run-instances", "--image-id", kAwsImage, "--instance-type",
                            "p5.48xlarge", "--tag-specifications", spec.dump(), "--endpoint-url", ec2().base(),
                            "--ca-bundle", ec2().ca(), "--output", "text", "--query", "Instances[0].InstanceId"},
                           "", cli_env());
    INFO(cli.err);
    REQUIRE(cli.exit_code == 0);
    const std::string id = cli.out.substr(0, cli.out.find_first_of(" \t\r\n"));
    REQUIRE(id.rfind("i-", 0) == 0);
    return id;
  }

  ExampleBlueprint example() override {
    return {"blueprints/examples/cluster.yaml",
            {"-target", "aws.instance.aws-p5"},
            2,
            {{"us-east-1a", 2}},  // one zone: the pool's cluster placement group cannot span two (BURST003)
            [](const std::vector<CloudInstance>& active) {
              for (const auto& i : active) {
                CHECK(i.raw["network_interfaces"].size() == 32);
                CHECK(i.raw["volumes"][0]["encrypted"] == true);
              }
            }};
  }

  InPlaceSetting in_place_setting() const override { return {}; }
  std::string capacity_code() const override { return "InsufficientInstanceCapacity"; }

  std::string no_capacity(const std::string& type, const std::string& zone) const override {
    return "no capacity for " + type + " in " + zone + ": InsufficientInstanceCapacity: We currently do not have " +
           "sufficient " + type + " capacity in the Availability Zone you requested (" + zone + ").";
  }

  std::string fallback_hint() const override {
    return "List fallbacks in the pool (instance_types, zones or subnets) to let Plinth try elsewhere";
  }

  std::string throttle_words() const override { return "RequestLimitExceeded: Request limit exceeded."; }

 private:
  Ec2Emulator& ec2() {
    REQUIRE(ec2_);
    return *ec2_;
  }

  /// The environment of the AWS CLI run against the emulator.
  std::map<std::string, std::string> cli_env() {
    home_.write(".aws/config", "[default]\n");
    auto env = aws_env(ec2(), home_.path());
    env["AWS_DEFAULT_REGION"] = "us-east-1";
    env["AWS_PROFILE"] = "default";
    env["AWS_PAGER"] = "";
    return env;
  }

  TempDir home_;  ///< HOME, for ~/.aws/config
  CloudSetup setup_;
  std::unique_ptr<Ec2Emulator> ec2_;
};

}  // namespace burst_cloud_aws

std::unique_ptr<CloudUnderTest> AwsCloud::make() { return std::make_unique<burst_cloud_aws::Aws>(); }

}  // namespace plinth::test
