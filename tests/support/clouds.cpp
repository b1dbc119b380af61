#include "tests/support/clouds.h"

#include <algorithm>
#include <catch2/catch.hpp>

namespace plinth::test {

std::vector<std::string> with_default_flags(std::vector<std::string> args,
                                            const std::vector<std::pair<std::string, std::string>>& defaults) {
  std::vector<std::string> first;
  for (const auto& [flag, value] : defaults)
    if (std::find(args.begin(), args.end(), flag) == args.end()) first.insert(first.end(), {flag, value});
  args.insert(args.begin(), first.begin(), first.end());
  return args;
}

CloudEmulator::CloudEmulator(const std::string& binary, const std::vector<std::string>& args)
    : EmulatorProcess(binary, args), http_(net::ClientOptions{ca()}) {}

Json CloudEmulator::control(const std::string& method, const std::string& path, const Json& body) {
  net::Request r;
  r.method = method;
  r.url = base() + path;
  if (!body.is_null()) {
    r.body = body.dump();
    r.headers["Content-Type"] = "application/json";
  }
  auto res = http_.send(r);
  REQUIRE(res.ok());
  INFO(res->body);
  REQUIRE(res->status == 200);
  return Json::parse(res->body);
}

Ec2Emulator::Ec2Emulator(const std::vector<std::string>& args)
    : CloudEmulator(AWS_EC2_EMULATOR_BINARY,
                    with_default_flags(args, {{"--pending-ms", "0"}, {"--shutdown-ms", "0"}, {"--latency-ms", "0"}})) {}

Json Ec2Emulator::instances(const std::string& state) {
  return control("GET", "/__emulator/instances" + (state.empty() ? "" : "?state=" + state))["instances"];
}

std::vector<Json> Ec2Emulator::active(const std::string& lineage) {
  std::vector<Json> out;
  for (const auto& i : instances())
    if ((i["state"] == "pending" || i["state"] == "running") &&
        (lineage.empty() || i["tags"].value("plinth:lineage", "") == lineage))
      out.push_back(i);
  return out;
}

Json Ec2Emulator::counters() { return control("GET", "/__emulator/counters"); }

int Ec2Emulator::requests(const std::string& action) {
  Json c = counters();
  return c["actions"].contains(action) ? c["actions"][action]["requests"].get<int>() : 0;
}

void Ec2Emulator::capacity(const std::string& type, const std::string& zone, Json limit) {
  control("POST", "/__emulator/capacity", {{"instance_type", type}, {"availability_zone", zone}, {"limit", limit}});
}

std::map<std::string, std::string> aws_env(const EmulatorProcess& ec2, const std::string& home) {
  return {{"HOME", home},
          {"AWS_ACCESS_KEY_ID", kAwsAccessKey},
          {"AWS_SECRET_ACCESS_KEY", kAwsSecretKey},
          {"AWS_SESSION_TOKEN", ""},
          {"AWS_PROFILE", ""},
          {"AWS_REGION", "us-east-1"},
          {"AWS_ENDPOINT_URL_EC2", ec2.base()},
          {"AWS_CA_BUNDLE", ec2.ca()},
          {"PLINTH_AWS_POLL_MS", "5"}};
}

std::map<std::string, std::string> gcp_env(const EmulatorProcess& gce) {
  return {{"GOOGLE_APPLICATION_CREDENTIALS", gce.dir() + "/tls/service-account.json"},
          {"GOOGLE_OAUTH_ACCESS_TOKEN", ""},
          {"GOOGLE_CLOUD_PROJECT", ""},
          {"CLOUDSDK_CORE_PROJECT", ""},
          {"CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", gce.base() + "/compute/v1/"},
          {"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", gce.ca()},
          {"PLINTH_GCP_POLL_MS", "5"}};
}

std::map<std::string, std::string> azure_env(const EmulatorProcess& az) {
  return {{"AZURE_TENANT_ID", kAzureTenant},
          {"AZURE_CLIENT_ID", kAzureClient},
          {"AZURE_CLIENT_SECRET", kAzureClientSecret},
          {"AZURE_CLIENT_CERTIFICATE_PATH", ""},
          {"AZURE_SUBSCRIPTION_ID", kAzureSubscription},
          {"AZURE_AUTHORITY_HOST", az.base()},
          {"AZURE_RESOURCE_MANAGER_ENDPOINT", az.base()},
          {"REQUESTS_CA_BUNDLE", az.ca()},
          {"PLINTH_AZURE_POLL_MS", "5"}};
}

std::map<std::string, int> count_by(const Json& list, const char* key) {
  std::map<std::string, int> out;
  for (const auto& i : list) ++out[i[key].is_string() ? i[key].get<std::string>() : i[key].dump()];
  return out;
}

}  // namespace plinth::test
