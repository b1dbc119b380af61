#include "tests/support/clouds.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <sstream>

#include "providers/gcp/jwt.h"
#include "providers/gcp/oauth_token.h"
#include "providers/gcp/service_account.h"

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

GceEmulator::GceEmulator(const std::vector<std::string>& args)
    : CloudEmulator(GCP_EMULATOR_BINARY, with_default_flags(args, {{"--operation-ms", "0"}})) {}

std::string GceEmulator::key_file(const std::string& name) const { return dir() + "/tls/" + name; }

std::string GceEmulator::compute_root() const { return base() + "/compute/v1/"; }

Json GceEmulator::state() { return control("GET", "/__emulator/state"); }

std::vector<Json> GceEmulator::active() {
  std::vector<Json> out;
  const Json s = state();
  for (const auto& i : s["instances"])
    if (i["status"] != "TERMINATED") out.push_back(i);
  return out;
}

size_t GceEmulator::all_instances() { return state()["instances"].size(); }

int GceEmulator::count(const std::string& method, const std::string& outcome) {
  Json m = control("GET", "/__emulator/counters")["methods"];
  return m.contains(method) ? m[method].value(outcome, 0) : 0;
}

void GceEmulator::capacity(const std::string& zone, const std::string& type, Json available) {
  Json body = {{"machineType", type}, {"available", available}};
  if (!zone.empty()) body["zone"] = zone;
  control("POST", "/__emulator/capacity", body);
}

std::string GceEmulator::access_token() {
  auto key = gcp::load_service_account_key(key_file());
  REQUIRE(key.ok());
  auto assertion = gcp::make_assertion(*key, {gcp::kCloudPlatformScope}, std::chrono::system_clock::now());
  REQUIRE(assertion.ok());
  net::Request r;
  r.method = "POST";
  r.url = key->token_uri;
  r.headers["Content-Type"] = "application/x-www-form-urlencoded";
  r.body = gcp::token_request_body(*assertion);
  auto res = http().send(r);
  REQUIRE(res.ok());
  auto t = gcp::parse_token_response(res->status, res->body, r.url, "test", std::chrono::system_clock::now());
  REQUIRE(t.ok());
  return t->access_token;
}

namespace {

std::vector<std::string> azure_flags(std::vector<std::string> args, bool fast) {
  if (fast) args.insert(args.begin(), {"--lro-delay-ms", "0", "--retry-after", "0"});
  return args;
}

}  // namespace

AzureEmulator::AzureEmulator(std::vector<std::string> args, bool fast)
    : CloudEmulator(AZURE_EMULATOR_BINARY, azure_flags(std::move(args), fast)) {}

Json AzureEmulator::vms() { return control("GET", "/__emulator/vms"); }

Json AzureEmulator::nics() { return control("GET", "/__emulator/state")["networkInterfaces"]; }

std::vector<Json> CloudEmulator::log_lines() const {
  std::vector<Json> out;
  std::istringstream in(log());
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

std::string CloudEmulator::metadata_base() const {
  for (const auto& line : lines())
    if (line.rfind("metadata ", 0) == 0) return line.substr(9);
  FAIL("the emulator printed no metadata line (started without --metadata-port?)");
  return "";
}

std::vector<Json> AzureEmulator::arm_log() {
  std::vector<Json> out;
  std::istringstream in(log());
  for (std::string line; std::getline(in, line);)
    if (auto j = Json::parse(line); j.value("service", "") == "arm") out.push_back(j);
  return out;
}

int AzureEmulator::requests(const std::string& operation, const std::string& method) {
  int n = 0;
  for (const auto& l : arm_log())
    n += l.value("operation", "") == operation && (method.empty() || l.value("method", "") == method) ? 1 : 0;
  return n;
}

std::map<std::string, std::string> aws_env(const EmulatorProcess& ec2, const std::string& home) {
  return {{"HOME", home},
          {"AWS_ACCESS_KEY_ID", kAwsAccessKey},
          {"AWS_SECRET_ACCESS_KEY", kAwsSecretKey},
          {"AWS_SESSION_TOKEN", ""},
          {"AWS_PROFILE", ""},
          {"AWS_REGION", "us-east-1"},
          {"AWS_ENDPOINT_URL_EC2", ec2.base()},
          {"AWS_EC2_METADATA_DISABLED", "true"},  // no instance profile of the machine running the tests
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

std::string github_oidc_token(const std::string& subject) {
  const long long now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const Json claims = {{"iss", kGithubIssuer}, {"sub", subject}, {"aud", "api://AzureADTokenExchange"},
                       {"iat", now}, {"exp", now + 3600}};
  return gcp::base64url_encode(Json{{"alg", "RS256"}, {"typ", "JWT"}, {"kid", "gh-1"}}.dump()) + "." +
         gcp::base64url_encode(claims.dump()) + ".c2lnbmF0dXJl";
}

Json gcp_external_account(const EmulatorProcess& gce, const Json& credential_source, bool impersonate) {
  Json j = {{"type", "external_account"},
            {"audience", kGcpWifAudience},
            {"subject_token_type", "urn:ietf:params:oauth:token-type:jwt"},
            {"token_url", gce.base() + "/v1/token"},
            {"credential_source", credential_source}};
  if (impersonate)
    j["service_account_impersonation_url"] =
        gce.base() + "/v1/projects/-/serviceAccounts/" + kGcpAccount + ":generateAccessToken";
  return j;
}

std::map<std::string, std::string> azure_env(const EmulatorProcess& az) {
  return {{"AZURE_TENANT_ID", kAzureTenant},
          {"AZURE_CLIENT_ID", kAzureClient},
          {"AZURE_CLIENT_SECRET", kAzureClientSecret},
          {"AZURE_CLIENT_CERTIFICATE_PATH", ""},
          {"AZURE_FEDERATED_TOKEN_FILE", ""},
          {"IDENTITY_ENDPOINT", ""},
          {"IDENTITY_HEADER", ""},
          {"AZURE_POD_IDENTITY_AUTHORITY_HOST", ""},
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
