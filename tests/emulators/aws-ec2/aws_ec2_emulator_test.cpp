// Drives the built aws-ec2-emulator with the real AWS clients from Debian:
// /usr/bin/aws (AWS CLI v2) and /usr/bin/python3's botocore (through
// botocore_driver.py), plus raw HTTPS requests signed with plinth_aws_sigv4
// for wire details. Every answer the clients get is parsed by botocore with
// its own EC2 model; the tests assert on what the clients parsed.
#include <curl/curl.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "providers/aws/ec2_protocol.h"
#include "providers/aws/sigv4.h"
#include "tests/support/emulator_process.h"
#include "tests/support/run.h"

using nlohmann::json;
using plinth::test::RunResult;
using plinth::test::TempDir;

namespace {

const std::string kKey = "AKIDEXAMPLE";
const std::string kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const std::string kAmi = "ami-0123456789abcdef0";

/// A running aws-ec2-emulator child, stopped with SIGTERM when the object dies.
class Emulator : public plinth::test::EmulatorProcess {
 public:
  explicit Emulator(const std::vector<std::string>& args = {}) : EmulatorProcess(AWS_EC2_EMULATOR_BINARY, args) {}
};

struct Http {
  long status = 0;
  CURLcode code = CURLE_OK;
  std::string body;
  json js() const { return json::parse(body); }
};

size_t on_body(char* p, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, size * n);
  return size * n;
}

/// One HTTPS request, verified against the emulator's CA.
Http http(const Emulator& em, const std::string& method, const std::string& target, const std::string& body = "",
          const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  std::unique_ptr<CURL, void (*)(CURL*)> h(curl_easy_init(), curl_easy_cleanup);
  Http r;
  curl_slist* list = nullptr;
  for (const auto& [k, v] : headers) list = curl_slist_append(list, (k + ": " + v).c_str());
  list = curl_slist_append(list, "Expect:");
  std::string url = em.base() + target;
  curl_easy_setopt(h.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(h.get(), CURLOPT_CAINFO, em.ca().c_str());
  curl_easy_setopt(h.get(), CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "POST") curl_easy_setopt(h.get(), CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(h.get(), CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(h.get(), CURLOPT_TIMEOUT_MS, 15000L);
  curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &r.body);
  r.code = curl_easy_perform(h.get());
  curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(list);
  return r;
}

json control(const Emulator& em, const std::string& method, const std::string& path, const json& body = nullptr) {
  Http r = http(em, method, path, body.is_null() ? "" : body.dump(), {{"Content-Type", "application/json"}});
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.js();
}

json instances(const Emulator& em) { return control(em, "GET", "/__emulator/instances")["instances"]; }

/// A Query API request signed with our own SigV4 (for wire checks the
/// official clients cannot make, e.g. GET with a query string).
Http signed_call(const Emulator& em, const std::string& form, const std::string& secret = kSecret,
                 const std::string& method = "POST") {
  plinth::aws::HttpRequest r;
  r.method = method;
  std::string host = em.base().substr(std::string("https://").size());
  r.headers = {{"Host", host}};
  if (method == "POST") {
    r.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded; charset=utf-8");
    r.body = form;
  } else {
    r.query = form;
  }
  auto s = plinth::aws::sign(r, {kKey, secret, ""}, {"us-east-1", "ec2"});
  REQUIRE(s.ok());
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& [k, v] : s->request.headers)
    if (k != "Host") headers.emplace_back(k, v);
  return http(em, method, method == "GET" ? "/?" + form : "/", s->request.body, headers);
}

/// The real clients, with a fresh HOME so no user configuration is read.
class Clients {
 public:
  Clients() {
    // An empty default profile of our own, so no user configuration is read
    // and an inherited AWS_PROFILE cannot point elsewhere.
    home_.write(".aws/config", "[default]\n");
    home_.write(".aws/credentials", "");
    env_ = {{"HOME", home_.path()},
            {"AWS_ACCESS_KEY_ID", kKey},
            {"AWS_SECRET_ACCESS_KEY", kSecret},
            {"AWS_SESSION_TOKEN", ""},
            {"AWS_DEFAULT_REGION", "us-east-1"},
            {"AWS_PROFILE", "default"},
            {"AWS_CONFIG_FILE", home_.path() + "/.aws/config"},
            {"AWS_SHARED_CREDENTIALS_FILE", home_.path() + "/.aws/credentials"},
            {"AWS_PAGER", ""},
            {"AWS_EC2_METADATA_DISABLED", "true"}};
  }

  /// /usr/bin/aws ARGS --endpoint-url ... --ca-bundle ... --output json
  RunResult aws(const Emulator& em, std::vector<std::string> args,
                const std::map<std::string, std::string>& extra = {}) {
    std::vector<std::string> argv = {"/usr/bin/aws"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--endpoint-url", em.base(), "--ca-bundle", em.ca(), "--output", "json"});
    auto env = env_;
    for (const auto& [k, v] : extra) env[k] = v;
    return plinth::test::run_program(argv, "", env);
  }

  /// botocore calls (botocore_driver.py "calls"): one result per step.
  json calls(const Emulator& em, const json& steps) { return driver(em, "calls", steps); }
  /// AWS CLI commands run in one interpreter (botocore_driver.py "cli").
  json cli(const Emulator& em, const json& commands) { return driver(em, "cli", commands); }

 private:
  json driver(const Emulator& em, const std::string& mode, const json& input) {
    RunResult r = plinth::test::run_program({"/usr/bin/python3", AWS_EC2_BOTOCORE_SCRIPT, em.base(), em.ca(), mode}, "",
                                            env_, input.dump());
    INFO("driver stderr: " << r.err << "\nemulator stderr: " << em.stderr_text());
    REQUIRE(r.exit_code == 0);
    json out = json::parse(r.out);
    REQUIRE(out.size() == input.size());
    return out;
  }

  TempDir home_;
  std::map<std::string, std::string> env_;
};

/// The error botocore parsed from a step, or fails the test with what it got.
json error_of(const json& result) {
  INFO(result.dump(2));
  REQUIRE(result.contains("error"));
  return result["error"];
}
json ok_of(const json& result) {
  INFO(result.dump(2));
  REQUIRE(result.contains("ok"));
  return result["ok"];
}

std::vector<std::string> ids_of(const json& reservations) {
  std::vector<std::string> ids;
  for (const auto& r : reservations)
    for (const auto& i : r["Instances"]) ids.push_back(i["InstanceId"]);
  return ids;
}

json run_params(const std::string& type, int min, int max, const json& extra = json::object()) {
  json p = {{"ImageId", kAmi}, {"InstanceType", type}, {"MinCount", min}, {"MaxCount", max}};
  p.update(extra);
  return p;
}

}  // namespace

TEST_CASE("aws-ec2-emulator: the AWS CLI launches a GPU pool, lists, tags and terminates it, parsing every answer") {
  Emulator em({"--pending-ms", "0", "--shutdown-ms", "0", "--security-group", "sg-0aaaaaaaaaaaaaaaa=gpu-nodes",
               "--key-pair", "ml-team"});
  Clients c;
  const std::string subnet_b = "subnet-00000000000000002";  // the default subnet of the second zone
  json nics = json::array({{{"NetworkCardIndex", 0},
                            {"DeviceIndex", 0},
                            {"InterfaceType", "interface"},
                            {"SubnetId", subnet_b},
                            {"Groups", {"sg-0aaaaaaaaaaaaaaaa"}}}});
  for (int card = 0; card < 4; ++card)
    nics.push_back({{"NetworkCardIndex", card},
                    {"DeviceIndex", card == 0 ? 1 : 0},
                    {"InterfaceType", "efa-only"},
                    {"SubnetId", subnet_b},
                    {"Groups", {"sg-0aaaaaaaaaaaaaaaa"}}});
  std::vector<std::string> run = {
      "ec2",
      "run-instances",
      "--image-id",
      kAmi,
      "--instance-type",
      "p5.48xlarge",
      "--count",
      "2",
      "--placement",
      "GroupName=burst-pg",
      "--network-interfaces",
      nics.dump(),
      "--block-device-mappings",
      R"([{"DeviceName":"/dev/xvda","Ebs":{"VolumeSize":500,"Encrypted":true,"KmsKeyId":"alias/plinth"}}])",
      "--iam-instance-profile",
      "Name=gpu-node",
      "--key-name",
      "ml-team",
      "--user-data",
      "#cloud-config\nruncmd: [nvidia-smi]\n",
      "--instance-market-options",
      "MarketType=spot",
      "--client-token",
      "plinth-burst-0001",
      "--tag-specifications",
      "ResourceType=instance,Tags=[{Key=plinth:address,Value=pools.burst},{Key=plinth:lineage,Value=L1}]",
      "ResourceType=volume,Tags=[{Key=plinth:lineage,Value=L1}]"};

  // (Created over the wire with our own signer; the CLI creates one below.)
  Http group = signed_call(em, "Action=CreatePlacementGroup&Version=2016-11-15&GroupName=burst-pg&Strategy=cluster");
  REQUIRE(group.status == 200);
  CHECK_THAT(group.body, Catch::Contains("<strategy>cluster</strategy>"));

  RunResult launched = c.aws(em, run);
  INFO(launched.err);
  REQUIRE(launched.exit_code == 0);
  json reservation = json::parse(launched.out);
  REQUIRE(reservation["Instances"].size() == 2);
  std::vector<std::string> ids;
  for (const auto& i : reservation["Instances"]) {
    ids.push_back(i["InstanceId"]);
    CHECK(i["State"] == json({{"Code", 0}, {"Name", "pending"}}));
    CHECK(i["Placement"]["AvailabilityZone"] == "us-east-1b");
    CHECK(i["Placement"]["GroupName"] == "burst-pg");
    CHECK(i["InstanceLifecycle"] == "spot");
    CHECK(i["SpotInstanceRequestId"].get<std::string>().rfind("sir-", 0) == 0);
    CHECK(i["IamInstanceProfile"]["Arn"] == "arn:aws:iam::123456789012:instance-profile/gpu-node");
    CHECK(i["KeyName"] == "ml-team");
    CHECK(i["ClientToken"] == "plinth-burst-0001");
    CHECK(i["NetworkInterfaces"].size() == 5);
    CHECK(i["NetworkInterfaces"][4]["InterfaceType"] == "efa-only");
    CHECK(i["NetworkInterfaces"][4]["Attachment"]["NetworkCardIndex"] == 3);
    CHECK(i["SecurityGroups"][0] == json({{"GroupId", "sg-0aaaaaaaaaaaaaaaa"}, {"GroupName", "gpu-nodes"}}));
    CHECK(i["BlockDeviceMappings"][0]["DeviceName"] == "/dev/xvda");
    CHECK(i["Tags"].size() == 2);
    CHECK_FALSE(i["LaunchTime"].get<std::string>().empty());
  }
  // What the CLI sent arrived intact: user data (base64 on the wire), EBS encryption.
  json dumped = instances(em);
  REQUIRE(dumped.size() == 2);
  CHECK(dumped[0]["user_data"] == "#cloud-config\nruncmd: [nvidia-smi]\n");
  CHECK(dumped[0]["volumes"][0] == json({{"id", dumped[0]["volumes"][0]["id"]},
                                         {"device", "/dev/xvda"},
                                         {"size_gib", 500},
                                         {"type", "gp3"},
                                         {"encrypted", true},
                                         {"kms_key_id", "alias/plinth"},
                                         {"tags", {{"plinth:lineage", "L1"}}}}));

  std::vector<std::string> mismatch = run;
  mismatch[7] = "3";  // --count 3 with the same client token
  json batch = c.cli(
      em, json::array({
              {"ec2", "describe-instances", "--filters", "Name=tag:plinth:lineage,Values=L1",
               "Name=instance-state-name,Values=running"},
              run,
              mismatch,
              {"ec2", "create-tags", "--resources", ids[0], "--tags", "Key=owner,Value=ml-platform"},
              {"ec2", "describe-instances", "--instance-ids", ids[0], "--query", "Reservations[0].Instances[0].Tags"},
              {"ec2", "delete-placement-group", "--group-name", "burst-pg"},
              {"ec2", "describe-placement-groups", "--group-names", "burst-pg"},
              {"ec2", "create-placement-group", "--group-name", "spread-pg", "--strategy", "spread",
               "--tag-specifications", "ResourceType=placement-group,Tags=[{Key=plinth:lineage,Value=L1}]"},
          }));
  for (size_t k : {0, 1, 3, 4, 6, 7}) {
    INFO(k << ": " << batch[k].dump());
    CHECK(batch[k]["rc"] == 0);
  }
  json listed = json::parse(batch[0]["stdout"].get<std::string>());
  CHECK(ids_of(listed["Reservations"]) == ids);
  json again = json::parse(batch[1]["stdout"].get<std::string>());  // same token, same parameters
  CHECK(again["ReservationId"] == reservation["ReservationId"]);
  CHECK(ids_of(json::array({again})) == ids);
  CHECK(batch[2]["rc"] == 254);
  CHECK_THAT(batch[2]["stderr"].get<std::string>(),
             Catch::Contains("(IdempotentParameterMismatch) when calling the RunInstances operation: Arguments on this "
                             "idempotent request are inconsistent with arguments used in previous request(s)."));
  CHECK(json::parse(batch[4]["stdout"].get<std::string>()).size() == 3);
  CHECK(batch[5]["rc"] == 254);
  CHECK_THAT(
      batch[5]["stderr"].get<std::string>(),
      Catch::Contains("(InvalidPlacementGroup.InUse) when calling the DeletePlacementGroup operation: The placement "
                      "group 'burst-pg' is in use and may not be deleted."));
  CHECK(json::parse(batch[6]["stdout"].get<std::string>())["PlacementGroups"][0]["GroupName"] == "burst-pg");
  json spread = json::parse(batch[7]["stdout"].get<std::string>())["PlacementGroup"];
  CHECK(spread["Strategy"] == "spread");
  CHECK(spread["Tags"] == json::array({{{"Key", "plinth:lineage"}, {"Value", "L1"}}}));
  CHECK(instances(em).size() == 2);  // the idempotent retry launched nothing

  RunResult terminated = c.aws(em, {"ec2", "terminate-instances", "--instance-ids", ids[0], ids[1]});
  INFO(terminated.err);
  REQUIRE(terminated.exit_code == 0);
  json changes = json::parse(terminated.out)["TerminatingInstances"];
  REQUIRE(changes.size() == 2);
  CHECK(changes[0]["CurrentState"] == json({{"Code", 32}, {"Name", "shutting-down"}}));
  CHECK(changes[0]["PreviousState"] == json({{"Code", 16}, {"Name", "running"}}));

  json after = c.cli(em, json::array({
                             {"ec2", "describe-instances", "--instance-ids", ids[0], ids[1]},
                             {"ec2", "delete-placement-group", "--group-name", "burst-pg"},
                             run,
                         }));
  REQUIRE(after[0]["rc"] == 0);
  json ended = json::parse(after[0]["stdout"].get<std::string>())["Reservations"];
  REQUIRE(ended.size() == 1);
  for (const auto& r : ended)
    for (const auto& i : r["Instances"]) {
      CHECK(i["State"]["Name"] == "terminated");
      CHECK(i["StateReason"]["Code"] == "Client.UserInitiatedShutdown");
      CHECK_THAT(i["StateTransitionReason"].get<std::string>(), Catch::StartsWith("User initiated ("));
    }
  CHECK(after[1]["rc"] == 0);
  CHECK(after[2]["rc"] == 254);  // the token of terminated instances is spent
  CHECK_THAT(after[2]["stderr"].get<std::string>(), Catch::Contains("IdempotentInstanceTerminated"));
  json log = control(em, "GET", "/__emulator/counters");
  CHECK(log["actions"]["RunInstances"]["requests"] == 4);
  CHECK(log["actions"]["RunInstances"]["codes"]["IdempotentParameterMismatch"] == 1);
}

TEST_CASE(
    "aws-ec2-emulator: wrong credentials, a bad signature, another region and a skewed clock get AWS's errors "
    "and change nothing") {
  Emulator em({"--session-token", "the-session-token"});
  Clients c;
  RunResult cli = c.aws(em, {"ec2", "describe-instances"},
                        {{"AWS_ACCESS_KEY_ID", "AKIDWRONG"}, {"AWS_SESSION_TOKEN", "the-session-token"}});
  CHECK(cli.exit_code == 254);
  CHECK_THAT(cli.err,
             Catch::Contains("An error occurred (AuthFailure) when calling the DescribeInstances operation: AWS "
                             "was not able to validate the provided access credentials"));

  json good = {
      {"access_key", kKey}, {"secret_key", kSecret}, {"session_token", "the-session-token"}, {"region", "us-east-1"}};
  auto with = [&](const json& changes) {
    json spec = good;
    spec.update(changes);
    return spec;
  };
  json run = run_params("p5.48xlarge", 1, 1);
  json r = c.calls(
      em,
      json::array({
          {{"op", "RunInstances"}, {"params", run}, {"client", with({{"secret_key", "not-the-secret"}})}},
          {{"op", "RunInstances"}, {"params", run}, {"client", with({{"skew_seconds", 600}})}},
          {{"op", "RunInstances"}, {"params", run}, {"client", with({{"skew_seconds", -600}})}},
          {{"op", "RunInstances"}, {"params", run}, {"client", with({{"region", "us-west-2"}})}},
          {{"op", "RunInstances"}, {"params", run}, {"client", with({{"session_token", ""}})}},
          {{"op", "RunInstances"}, {"params", run}, {"client", with({{"session_token", "stolen"}})}},
          {{"op", "RunInstances"}, {"params", run_params("p5.48xlarge", 1, 1, {{"DryRun", true}})}, {"client", good}},
          {{"op", "DescribeInstances"}, {"client", with({{"skew_seconds", 240}})}},
      }));
  json e = error_of(r[0]);
  CHECK(e["code"] == "SignatureDoesNotMatch");
  CHECK(e["status"] == 403);
  CHECK(
      e["message"] ==
      "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key "
      "and signing method. Consult the service documentation for details.");
  CHECK_FALSE(e["request_id"].get<std::string>().empty());
  for (int k : {1, 2}) {
    e = error_of(r[k]);
    CHECK(e["code"] == "RequestExpired");
    CHECK(e["status"] == 400);
    CHECK_THAT(e["message"].get<std::string>(), Catch::StartsWith("Request has expired."));
  }
  e = error_of(r[3]);
  CHECK(e["code"] == "SignatureDoesNotMatch");
  CHECK_THAT(e["message"].get<std::string>(),
             Catch::StartsWith("Credential should be scoped to a valid region, not 'us-west-2'."));
  for (int k : {4, 5}) {
    e = error_of(r[k]);
    CHECK(e["code"] == "AuthFailure");
    CHECK(e["status"] == 401);
  }
  e = error_of(r[6]);
  CHECK(e["code"] == "DryRunOperation");
  CHECK(e["status"] == 412);
  CHECK(ok_of(r[7])["Reservations"].empty());  // four minutes off is still within AWS's five
  CHECK(instances(em).empty());
}

TEST_CASE("aws-ec2-emulator: capacity per type and zone, capacity reservations, Capacity Blocks and EFA limits") {
  Emulator em({"--pending-ms", "0", "--capacity", "p5.48xlarge:us-east-1a=3", "--capacity", "p5.48xlarge:us-east-1b=0",
               "--capacity-reservation", "cr-0123456789abcdef0=p5.48xlarge:us-east-1b:2:capacity-block",
               "--capacity-reservation", "cr-0fedcba9876543210=p4d.24xlarge:us-east-1c:1"});
  Clients c;
  json zone_a = {{"Placement", {{"AvailabilityZone", "us-east-1a"}}}};
  json block = {{"InstanceMarketOptions", {{"MarketType", "capacity-block"}}},
                {"CapacityReservationSpecification",
                 {{"CapacityReservationTarget", {{"CapacityReservationId", "cr-0123456789abcdef0"}}}}}};
  json efa_nics = json::array();
  for (int card = 0; card < 5; ++card)
    efa_nics.push_back({{"NetworkCardIndex", card}, {"DeviceIndex", card == 0 ? 1 : 0}, {"InterfaceType", "efa-only"}});
  efa_nics.insert(efa_nics.begin(), json{{"NetworkCardIndex", 0}, {"DeviceIndex", 0}, {"InterfaceType", "interface"}});
  json four_efa = efa_nics;
  four_efa.erase(four_efa.end() - 1);
  json r = c.calls(
      em,
      json::array({
          {{"op", "RunInstances"}, {"params", run_params("p5.48xlarge", 2, 2, zone_a)}},  // 0: fits
          {{"op", "RunInstances"}, {"params", run_params("p5.48xlarge", 2, 2, zone_a)}},  // 1: 1 left
          {{"op", "RunInstances"},
           {"params", run_params("p5.48xlarge", 2, 2, zone_a)},
           {"client", {{"max_attempts", 3}}}},
          {{"op", "RunInstances"}, {"params", run_params("p5.48xlarge", 1, 5, zone_a)}},  // 3: partial
          {{"op", "RunInstances"}, {"params", run_params("p5.48xlarge", 1, 1)}},          // 4: picks c
          {{"op", "RunInstances"},
           {"params", run_params("p5.48xlarge", 1, 1,
                                 {{"InstanceMarketOptions", {{"MarketType", "spot"}}},
                                  {"Placement", {{"AvailabilityZone", "us-east-1b"}}}})}},
          {{"op", "RunInstances"}, {"params", run_params("p5.48xlarge", 2, 2, block)}},  // 6: the block
          {{"op", "RunInstances"}, {"params", run_params("p5.48xlarge", 1, 1, block)}},  // 7: block full
          {{"op", "RunInstances"},
           {"params", run_params("p5.48xlarge", 1, 1,
                                 {{"CapacityReservationSpecification", block["CapacityReservationSpecification"]}})}},
          {{"op", "DescribeCapacityReservations"}, {"params", {{"CapacityReservationIds", {"cr-0123456789abcdef0"}}}}},
          {{"op", "RunInstances"}, {"params", run_params("p4d.24xlarge", 1, 1, {{"NetworkInterfaces", efa_nics}})}},
          {{"op", "RunInstances"},
           {"params",
            run_params("p4d.24xlarge", 1, 1,
                       {{"NetworkInterfaces", four_efa},
                        {"CapacityReservationSpecification",
                         {{"CapacityReservationTarget", {{"CapacityReservationId", "cr-0fedcba9876543210"}}}}}})}},
          {{"op", "RunInstances"},
           {"params",
            run_params("t3.micro", 1, 1, {{"NetworkInterfaces", {{{"DeviceIndex", 0}, {"InterfaceType", "efa"}}}}})}},
          {{"control", "POST"},
           {"path", "/__emulator/capacity"},
           {"body", {{"instance_type", "p5.48xlarge"}, {"availability_zone", "us-east-1a"}, {"limit", 10}}}},
          {{"op", "RunInstances"}, {"params", run_params("p5.48xlarge", 2, 2, zone_a)}},  // 14: fits again
      }));
  CHECK(ok_of(r[0])["Instances"].size() == 2);
  json e = error_of(r[1]);
  CHECK(e["code"] == "InsufficientInstanceCapacity");
  CHECK(e["status"] == 500);
  CHECK(e["message"] ==
        "We currently do not have sufficient p5.48xlarge capacity in the Availability Zone you requested (us-east-1a). "
        "Our system will be working on provisioning additional capacity. You can currently get p5.48xlarge capacity by "
        "not specifying an Availability Zone in your request or choosing us-east-1c.");
  CHECK(e["attempts"] == 1);
  CHECK(error_of(r[2])["attempts"] == 3);       // botocore's standard mode retries this 500 (as AWS's does)
  CHECK(ok_of(r[3])["Instances"].size() == 1);  // MaxCount 5, one left: EC2 launches what it can above MinCount
  CHECK(ok_of(r[4])["Instances"][0]["Placement"]["AvailabilityZone"] == "us-east-1c");
  e = error_of(r[5]);
  CHECK(e["code"] == "InsufficientInstanceCapacity");
  CHECK(e["message"] == "There is no Spot capacity available that matches your request.");
  json in_block = ok_of(r[6])["Instances"];
  REQUIRE(in_block.size() == 2);
  CHECK(in_block[0]["Placement"]["AvailabilityZone"] == "us-east-1b");
  CHECK(in_block[0]["InstanceLifecycle"] == "capacity-block");
  CHECK(in_block[0]["CapacityReservationId"] == "cr-0123456789abcdef0");
  CHECK(error_of(r[7])["code"] == "ReservationCapacityExceeded");
  CHECK(error_of(r[8])["code"] == "InvalidParameterCombination");
  json cr = ok_of(r[9])["CapacityReservations"][0];
  CHECK(cr["TotalInstanceCount"] == 2);
  CHECK(cr["AvailableInstanceCount"] == 0);
  // (ReservationType is newer than Debian's botocore, which skips it; the emulator's state has it.)
  CHECK(control(em, "GET", "/__emulator/state")["capacity_reservations"][0]["ReservationType"] == "capacity-block");
  e = error_of(r[10]);
  CHECK(e["code"] == "InvalidParameterValue");
  CHECK(e["message"] == "Network card index 4 is out of range: p4d.24xlarge has 4 network cards (indexes 0 to 3).");
  CHECK(ok_of(r[11])["Instances"][0]["NetworkInterfaces"].size() == 5);
  CHECK(error_of(r[12])["message"] == "EFA interfaces are not supported on instance type 't3.micro'.");
  CHECK(ok_of(r[14])["Instances"].size() == 2);
  CHECK(instances(em).size() == 2 + 1 + 1 + 2 + 1 + 2);
  json counters = control(em, "GET", "/__emulator/counters");
  CHECK(counters["actions"]["RunInstances"]["codes"]["InsufficientInstanceCapacity"] == 1 + 3 + 1);
}

TEST_CASE(
    "aws-ec2-emulator: DescribeInstances pages with botocore's paginator and the CLI, and MaxResults follows EC2's "
    "limits") {
  Emulator em({"--pending-ms", "0"});
  Clients c;
  json tags = {
      {"TagSpecifications", {{{"ResourceType", "instance"}, {"Tags", {{{"Key", "pool"}, {"Value", "burst"}}}}}}}};
  json other = {
      {"TagSpecifications", {{{"ResourceType", "instance"}, {"Tags", {{{"Key", "pool"}, {"Value", "other"}}}}}}}};
  json filter = {{"Filters", {{{"Name", "tag:pool"}, {"Values", {"burst"}}}}}};
  json r = c.calls(
      em,
      json::array({
          {{"op", "RunInstances"}, {"params", run_params("m5.large", 13, 13, tags)}},
          {{"op", "RunInstances"}, {"params", run_params("m5.large", 2, 2, other)}},
          {{"op", "RunInstances"}, {"params", run_params("m5.large", 10, 10, tags)}},
          {{"control", "POST"}, {"path", "/__emulator/counters/reset"}},
          {{"paginate", "DescribeInstances"}, {"params", filter}, {"page_size", 5}},
          {{"control", "GET"}, {"path", "/__emulator/counters"}},
          {{"op", "DescribeInstances"}, {"params", {{"MaxResults", 4}}}},
          {{"op", "DescribeInstances"}, {"params", {{"MaxResults", 1001}}}},
          {{"op", "DescribeInstances"},
           {"params", {{"MaxResults", 5}, {"InstanceIds", {"${0:Instances[0].InstanceId}"}}}}},
          {{"op", "DescribeInstances"}, {"params", {{"MaxResults", 5}, {"NextToken", "${4:[0].NextToken}"}}}},
          {{"op", "DescribeInstances"},
           {"params",
            {{"Filters",
              {{{"Name", "tag:pool"}, {"Values", {"b*"}}}, {{"Name", "instance-state-code"}, {"Values", {"16"}}}}}}}},
          {{"op", "DescribeInstances"}, {"params", {{"Filters", {{{"Name", "no-such-filter"}, {"Values", {"x"}}}}}}}},
          {{"op", "DescribeInstances"}, {"params", {{"InstanceIds", {"i-0000000000000dead"}}}}},
          {{"op", "DescribeInstances"}, {"params", {{"InstanceIds", {"foobar"}}}}},
      }));
  json pages = ok_of(r[4]);
  REQUIRE(pages.size() == 5);
  std::vector<std::string> seen;
  for (size_t k = 0; k < pages.size(); ++k) {
    auto page_ids = ids_of(pages[k]["Reservations"]);
    CHECK(page_ids.size() == (k < 4 ? 5u : 3u));
    CHECK(pages[k].contains("NextToken") == (k < 4));
    seen.insert(seen.end(), page_ids.begin(), page_ids.end());
  }
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == 23);
  // The first reservation (13 instances) spans three pages; each page names it once.
  CHECK(pages[2]["Reservations"].size() == 2);
  CHECK(ok_of(r[5])["actions"]["DescribeInstances"]["requests"] == 5);  // O(pages) requests
  CHECK(error_of(r[6])["message"] ==
        "Value ( 4 ) for parameter maxResults is invalid. Expecting a value greater than 5.");
  CHECK(error_of(r[7])["message"] ==
        "Value ( 1001 ) for parameter maxResults is invalid. Expecting a value less than 1000.");
  json e = error_of(r[8]);
  CHECK(e["code"] == "InvalidParameterCombination");
  CHECK(e["message"] == "The parameter instancesSet cannot be used with the parameter maxResults");
  CHECK(error_of(r[9])["code"] == "InvalidParameterValue");  // a token from another query
  CHECK(ids_of(ok_of(r[10])["Reservations"]).size() == 23);
  CHECK(error_of(r[11])["message"] == "The filter 'no-such-filter' is invalid");
  e = error_of(r[12]);
  CHECK(e["code"] == "InvalidInstanceID.NotFound");
  CHECK(e["message"] == "The instance ID 'i-0000000000000dead' does not exist");
  CHECK(error_of(r[13])["message"] == "Invalid id: \"foobar\"");

  // The CLI follows NextToken itself with --page-size.
  control(em, "POST", "/__emulator/counters/reset");
  json cli =
      c.cli(em, json::array({{"ec2", "describe-instances", "--page-size", "10", "--filters",
                              "Name=tag:pool,Values=burst", "--query", "Reservations[].Instances[].InstanceId"}}));
  REQUIRE(cli[0]["rc"] == 0);
  CHECK(json::parse(cli[0]["stdout"].get<std::string>()).size() == 23);
  CHECK(control(em, "GET", "/__emulator/counters")["actions"]["DescribeInstances"]["requests"] == 3);
}

TEST_CASE("aws-ec2-emulator: token-bucket throttling answers RequestLimitExceeded, which botocore retries") {
  Emulator em({"--throttle", "DescribeInstances=2:0"});
  Clients c;
  json r = c.calls(em, json::array({
                           {{"op", "DescribeInstances"}},
                           {{"op", "DescribeInstances"}},
                           {{"op", "DescribeInstances"}},
                           {{"op", "DescribeInstances"}, {"client", {{"max_attempts", 2}}}},
                           {{"op", "DescribeAvailabilityZones"}},  // other actions have their own bucket (none here)
                           {{"control", "POST"},
                            {"path", "/__emulator/throttle"},
                            {"body", {{"action", "DescribeInstances"}, {"size", 1}, {"refill_per_second", 0}}}},
                           {{"op", "DescribeInstances"}},
                       }));
  ok_of(r[0]);
  ok_of(r[1]);
  json e = error_of(r[2]);
  CHECK(e["code"] == "RequestLimitExceeded");
  CHECK(e["status"] == 503);
  CHECK(e["message"] == "Request limit exceeded.");
  CHECK(error_of(r[3])["attempts"] == 2);
  CHECK(ok_of(r[4])["AvailabilityZones"].size() == 3);
  ok_of(r[6]);
  json counters = control(em, "GET", "/__emulator/counters");
  CHECK(counters["actions"]["DescribeInstances"]["codes"]["RequestLimitExceeded"] == 3);
  CHECK(counters["actions"]["DescribeInstances"]["faults"]["throttle"] == 3);
}

TEST_CASE(
    "aws-ec2-emulator: an answer lost after RunInstances succeeded leaves the instance, and the same ClientToken "
    "finds it instead of launching another") {
  Emulator em({"--lose-response", "RunInstances=1"});
  Clients c;
  json token = {{"ClientToken", "plinth-lost-1"}};
  json r = c.calls(
      em,
      json::array({
          {{"op", "RunInstances"}, {"params", run_params("p5.48xlarge", 1, 1, token)}},
          {{"control", "GET"}, {"path", "/__emulator/instances"}},
          {{"op", "RunInstances"}, {"params", run_params("p5.48xlarge", 1, 1, token)}},
          {{"control", "POST"}, {"path", "/__emulator/faults"}, {"body", {{"lose_response", {{"RunInstances", 1}}}}}},
          // botocore fills in a ClientToken once per call and keeps it across retries.
          {{"op", "RunInstances"}, {"params", run_params("p5.48xlarge", 1, 1)}, {"client", {{"max_attempts", 3}}}},
      }));
  INFO(r.dump(2));
  REQUIRE(r[0].contains("exception"));  // no answer at all
  json first = ok_of(r[1])["instances"];
  REQUIRE(first.size() == 1);
  CHECK(first[0]["client_token"] == "plinth-lost-1");
  CHECK(ok_of(r[2])["Instances"][0]["InstanceId"] == first[0]["instance_id"]);
  ok_of(r[4]);
  CHECK(instances(em).size() == 2);
  json counters = control(em, "GET", "/__emulator/counters");
  CHECK(counters["actions"]["RunInstances"]["faults"]["lose-response"] == 2);
  CHECK(counters["actions"]["RunInstances"]["status"]["200"] == 2);
}

TEST_CASE(
    "aws-ec2-emulator: instance states move with the clock, and a reclaimed spot instance ends terminated with "
    "Server.SpotInstanceTermination") {
  Emulator em({"--pending-ms", "60000", "--shutdown-ms", "60000", "--terminated-visible-ms", "3600000"});
  Clients c;
  json spot = {{"InstanceMarketOptions", {{"MarketType", "spot"}}}};
  auto describe = [](const std::string& ref) {
    return json{{"op", "DescribeInstances"}, {"params", {{"InstanceIds", ref}}}};
  };
  auto advance = [](int ms) {
    return json{{"control", "POST"}, {"path", "/__emulator/clock"}, {"body", {{"advance_ms", ms}}}};
  };
  json r = c.calls(
      em, json::array({
              {{"op", "RunInstances"}, {"params", run_params("p5.48xlarge", 2, 2, spot)}},  // 0
              {{"op", "RunInstances"}, {"params", run_params("m5.large", 1, 1)}},           // 1
              describe("${0:Instances[].InstanceId}"),                                      // 2 pending
              advance(60000),                                                               // 3
              describe("${0:Instances[].InstanceId}"),                                      // 4 running
              {{"control", "POST"},
               {"path", "/__emulator/reclaim"},
               {"body", {{"instance_ids", "${0:Instances[:1].InstanceId}"}}}},
              describe("${0:Instances[].InstanceId}"),  // 6 shutting-down
              advance(60000),                           // 7
              describe("${0:Instances[].InstanceId}"),  // 8 terminated
              {{"control", "POST"},
               {"path", "/__emulator/reclaim"},
               {"body", {{"instance_ids", "${1:Instances[].InstanceId}"}}}},
              {{"op", "TerminateInstances"}, {"params", {{"InstanceIds", "${1:Instances[].InstanceId}"}}}},  // 10
              advance(60000 + 3600000),                                                                      // 11
              describe("${0:Instances[].InstanceId}"),                                                       // 12 gone
              {{"op", "DescribeInstances"}},                                                                 // 13
          }));
  auto states = [&](int k) {
    std::vector<std::string> out;
    json reservations = ok_of(r[k])["Reservations"];
    for (const auto& res : reservations)
      for (const auto& i : res["Instances"]) out.push_back(i["State"]["Name"]);
    return out;
  };
  CHECK(states(2) == std::vector<std::string>{"pending", "pending"});
  CHECK(states(4) == std::vector<std::string>{"running", "running"});
  CHECK(states(6) == std::vector<std::string>{"shutting-down", "running"});
  CHECK(states(8) == std::vector<std::string>{"terminated", "running"});
  json reclaimed = ok_of(r[8])["Reservations"][0]["Instances"][0];
  CHECK(reclaimed["StateReason"] == json({{"Code", "Server.SpotInstanceTermination"},
                                          {"Message", "Server.SpotInstanceTermination: Spot instance termination"}}));
  CHECK(reclaimed["InstanceLifecycle"] == "spot");
  CHECK(r[9]["error"]["status"] == 409);  // only spot instances are reclaimed
  CHECK(ok_of(r[10])["TerminatingInstances"][0]["CurrentState"]["Name"] == "shutting-down");
  CHECK(error_of(r[12])["code"] == "InvalidInstanceID.NotFound");  // terminated long enough ago: gone
  json left = ok_of(r[13])["Reservations"];
  REQUIRE(left.size() == 1);
  CHECK(states(13) == std::vector<std::string>{"running"});
}

TEST_CASE(
    "aws-ec2-emulator: the wire: EC2's error XML and status codes, GET with a query string, unknown actions and "
    "parameters, the request log") {
  Emulator em;
  Http unsigned_call = http(em, "POST", "/", "Action=DescribeInstances&Version=2016-11-15",
                            {{"Content-Type", "application/x-www-form-urlencoded"}});
  CHECK(unsigned_call.status == 401);
  auto err = plinth::aws::ec2::parse_error(*plinth::aws::ec2::Model::from_json({{"shapes", json::object()}}),
                                           unsigned_call.body);
  REQUIRE(err.ok());
  CHECK(err->code == "MissingAuthenticationToken");
  CHECK_THAT(unsigned_call.body,
             Catch::StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response><Errors><Error><Code>"));
  CHECK_FALSE(err->request_id.empty());

  Http get =
      signed_call(em, "Action=DescribeAvailabilityZones&Version=2016-11-15&ZoneName.1=us-east-1b", kSecret, "GET");
  CHECK(get.status == 200);
  CHECK_THAT(get.body,
             Catch::Contains("<DescribeAvailabilityZonesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"));
  CHECK_THAT(get.body, Catch::Contains("<zoneName>us-east-1b</zoneName>"));
  CHECK_THAT(get.body, Catch::Contains("<requestId>"));

  Http unknown = signed_call(em, "Action=DescribeInstancez&Version=2016-11-15");
  CHECK(unknown.status == 400);
  CHECK_THAT(unknown.body, Catch::Contains("<Code>InvalidAction</Code><Message>The action DescribeInstancez is not "
                                           "valid for this web service.</Message>"));
  Http unimplemented = signed_call(em, "Action=DescribeVolumes&Version=2016-11-15");
  CHECK_THAT(
      unimplemented.body,
      Catch::Contains("<Code>UnsupportedOperation</Code><Message>aws-ec2-emulator does not implement DescribeVolumes"));
  Http param = signed_call(em, "Action=DescribeInstances&Version=2016-11-15&InstanceIds.1=i-1");
  CHECK_THAT(
      param.body,
      Catch::Contains("<Code>UnknownParameter</Code><Message>The parameter InstanceIds.1 is not recognized</Message>"));
  Http version = signed_call(em, "Action=DescribeInstances&Version=2099-01-01");
  CHECK_THAT(version.body, Catch::Contains("<Code>NoSuchVersion</Code>"));
  Http enum_value = signed_call(
      em, "Action=RunInstances&Version=2016-11-15&ImageId=" + kAmi + "&MinCount=1&MaxCount=1&InstanceType=p5.49xlarge");
  CHECK_THAT(
      enum_value.body,
      Catch::Contains("<Code>InvalidParameterValue</Code><Message>Invalid value 'p5.49xlarge' for InstanceType."));
  Http user_data = signed_call(
      em, "Action=RunInstances&Version=2016-11-15&ImageId=" + kAmi + "&MinCount=1&MaxCount=1&UserData=%21%21");
  CHECK_THAT(user_data.body, Catch::Contains("<Message>Invalid BASE64 encoding of user data.</Message>"));
  Http kms = signed_call(
      em,
      "Action=RunInstances&Version=2016-11-15&ImageId=" + kAmi +
          "&MinCount=1&MaxCount=1&BlockDeviceMapping.1.DeviceName=%2Fdev%2Fxvda&BlockDeviceMapping.1.Ebs.KmsKeyId=k");
  CHECK_THAT(kms.body, Catch::Contains("<Code>InvalidParameterDependency</Code>"));

  Http missing = http(em, "GET", "/__emulator/nothing");
  CHECK(missing.status == 404);
  json log = json::array();
  std::istringstream lines(em.log());
  for (std::string line; std::getline(lines, line);) log.push_back(json::parse(line));
  REQUIRE(log.size() == 10);
  CHECK(log[0]["action"] == "DescribeInstances");
  CHECK(log[0]["status"] == 401);
  CHECK(log[0]["code"] == "MissingAuthenticationToken");
  CHECK(log[1]["method"] == "GET");
  CHECK(log[1]["action"] == "DescribeAvailabilityZones");
  CHECK(log[1]["status"] == 200);
  CHECK(log[9]["control"] == true);
}

TEST_CASE("aws-ec2-emulator: 5xx rates and dropped connections follow the seed") {
  auto statuses = [](const std::string& seed) {
    Emulator em({"--rate-503", "0.3", "--rate-500", "0.2", "--drop-rate", "0.1", "--seed", seed});
    std::string out;
    for (int k = 0; k < 30; ++k) {
      Http r = signed_call(em, "Action=DescribeAvailabilityZones&Version=2016-11-15");
      out += r.code != CURLE_OK ? 'x' : r.status == 200 ? '.' : r.status == 503 ? 'u' : r.status == 500 ? 'i' : '?';
    }
    return out;
  };
  std::string a = statuses("7"), b = statuses("7"), c = statuses("8");
  INFO(a << "\n" << b << "\n" << c);
  CHECK(a == b);
  CHECK(a != c);
  for (char kind : {'.', 'u', 'i', 'x'}) CHECK(a.find(kind) != std::string::npos);
  CHECK(a.find('?') == std::string::npos);
}

TEST_CASE("aws-ec2-emulator: bad flags are refused with what to do") {
  auto run = [](std::vector<std::string> args) {
    args.insert(args.begin(), AWS_EC2_EMULATOR_BINARY);
    return plinth::test::run_program(args);
  };
  RunResult r = run({"--capacity", "p5.48xlarge=3"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--capacity needs TYPE:ZONE=N with N >= 0, e.g. p5.48xlarge:us-east-1a=25"));
  r = run({"--capacity", "p5.48xlarge:eu-west-1a=3"});
  CHECK_THAT(r.err, Catch::Contains("names zone 'eu-west-1a', which is not one of --zones"));
  r = run({"--throttle", "DescribeInstancez=1:1"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--throttle names 'DescribeInstancez', which is not an EC2 action"));
  r = run({"--model", "/nonexistent.json"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("cannot read the service model /nonexistent.json"));
}
