// Drives the built azure-emulator with Microsoft's own clients from Debian
// (azure-cli, and the Azure SDK for Python through sdk_check.py) and, for the
// wire details those clients hide, with libcurl verifying the emulator's CA.
#include <curl/curl.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "tests/emulators/azure/crypto.h"
#include "tests/support/emulator_process.h"
#include "tests/support/run.h"

using nlohmann::json;
using plinth::test::RunResult;
using plinth::test::TempDir;

namespace {

const std::string kTenant = "72f1c1a4-8a9e-4c0c-9d4b-2f7a1e5b6c3d";
const std::string kClient = "3c9d7e2a-41f6-4b8a-9c0d-8e7f6a5b4c3d";
const std::string kSecret = "plinth-emulator-secret";
const std::string kSub = "5f3c2a1b-9d8e-4f7a-8b6c-0d1e2f3a4b5c";
const std::string kCompute = "2024-07-01";
const std::string kNetwork = "2024-05-01";
const std::string kResources = "2021-04-01";

class Emulator : public plinth::test::EmulatorProcess {
 public:
  explicit Emulator(std::vector<std::string> args) : EmulatorProcess(AZURE_EMULATOR_BINARY, std::move(args)) {}
  /// The value of `key=` on the listening line (tenant, subscription, client-id, proxy).
  std::string field(const std::string& key) const {
    std::istringstream in(lines()[0]);
    for (std::string w; in >> w;)
      if (w.rfind(key + "=", 0) == 0) return w.substr(key.size() + 1);
    return "";
  }
};

struct Http {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::map<std::string, std::string> headers;  ///< lower-cased names
  std::string body;
  json js() const { return json::parse(body); }
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

size_t on_body(char* p, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, size * n);
  return size * n;
}

size_t on_header(char* p, size_t size, size_t n, void* out) {
  std::string line(p, size * n);
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string k = line.substr(0, colon), v = line.substr(colon + 1);
    for (auto& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    v.erase(0, v.find_first_not_of(' '));
    while (!v.empty() && (v.back() == '\r' || v.back() == '\n')) v.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(out))[k] = v;
  }
  return size * n;
}

/// One HTTPS request verified against the emulator's CA. `token` adds
/// "Authorization: Bearer TOKEN"; `form` sends the body as a form.
Http call(const Emulator& em, const std::string& method, const std::string& path, const std::string& body = "",
          const std::string& token = "", bool form = false, bool fresh = false) {
  std::unique_ptr<CURL, void (*)(CURL*)> handle(curl_easy_init(), curl_easy_cleanup);
  CURL* h = handle.get();
  Http r;
  curl_slist* hdrs = nullptr;
  if (!token.empty()) hdrs = curl_slist_append(hdrs, ("Authorization: Bearer " + token).c_str());
  if (!body.empty())
    hdrs = curl_slist_append(
        hdrs, form ? "Content-Type: application/x-www-form-urlencoded" : "Content-Type: application/json");
  std::string url = path.rfind("https://", 0) == 0 ? path : em.base() + path;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_CAINFO, em.ca().c_str());
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (!body.empty() || method == "POST") curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 15000L);
  if (fresh) curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &r.headers);
  r.code = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(hdrs);
  return r;
}

std::string token_form(const std::string& client, const std::string& secret,
                       const std::string& scope = "https%3A%2F%2Fmanagement.azure.com%2F.default") {
  return "grant_type=client_credentials&client_id=" + client + "&client_secret=" + secret + "&scope=" + scope;
}

std::string token(const Emulator& em) {
  Http r = call(em, "POST", "/" + kTenant + "/oauth2/v2.0/token", token_form(kClient, kSecret), "", true);
  REQUIRE(r.status == 200);
  return r.js()["access_token"];
}

json control(const Emulator& em, const std::string& method, const std::string& what, const json& body = nullptr) {
  Http r = call(em, method, "/__emulator/" + what, body.is_null() ? "" : body.dump());
  INFO(r.body);
  REQUIRE(r.status == 200);
  return r.js();
}

std::string rg_path(const std::string& rg) { return "/subscriptions/" + kSub + "/resourceGroups/" + rg; }
std::string vm_path(const std::string& rg, const std::string& vm) {
  return rg_path(rg) + "/providers/Microsoft.Compute/virtualMachines/" + vm;
}

/// A resource group with a vnet "net" (10.1.0.0/16, subnet "default").
void make_network(const Emulator& em, const std::string& tok, const std::string& rg,
                  const std::string& location = "eastus") {
  REQUIRE(
      call(em, "PUT", rg_path(rg) + "?api-version=" + kResources, json{{"location", location}}.dump(), tok).status ==
      201);
  json vnet = {{"location", location},
               {"properties",
                {{"addressSpace", {{"addressPrefixes", {"10.1.0.0/16"}}}},
                 {"subnets", {{{"name", "default"}, {"properties", {{"addressPrefix", "10.1.0.0/24"}}}}}}}}};
  REQUIRE(call(em, "PUT", rg_path(rg) + "/providers/Microsoft.Network/virtualNetworks/net?api-version=" + kNetwork,
               vnet.dump(), tok)
              .status == 201);
}

json vm_body(const std::string& nic_id, const std::string& size, const std::string& zone, const std::string& priority,
             const std::string& eviction = "") {
  json props = {
      {"hardwareProfile", {{"vmSize", size}}},
      {"osProfile", {{"adminUsername", "plinth"}, {"customData", "I2Nsb3VkLWNvbmZpZwo="}}},
      {"networkProfile", {{"networkInterfaces", {{{"id", nic_id}, {"properties", {{"deleteOption", "Delete"}}}}}}}},
      {"priority", priority}};
  if (!eviction.empty()) props["evictionPolicy"] = eviction;
  json body = {{"location", "eastus"}, {"properties", props}};
  if (!zone.empty()) body["zones"] = {zone};
  return body;
}

/// PUT a NIC and a VM; returns the VM PUT's answer.
Http make_vm(const Emulator& em, const std::string& tok, const std::string& rg, const std::string& name,
             const std::string& size = "Standard_ND96isr_H100_v5", const std::string& zone = "1",
             const std::string& priority = "Spot", const std::string& eviction = "Deallocate") {
  std::string nic_path = rg_path(rg) + "/providers/Microsoft.Network/networkInterfaces/" + name + "-nic";
  json nic = {
      {"location", "eastus"},
      {"properties",
       {{"enableAcceleratedNetworking", true},
        {"ipConfigurations",
         {{{"name", "ipconfig1"},
           {"properties",
            {{"subnet",
              {{"id", rg_path(rg) + "/providers/Microsoft.Network/virtualNetworks/net/subnets/default"}}}}}}}}}}};
  Http n = call(em, "PUT", nic_path + "?api-version=" + kNetwork, nic.dump(), tok);
  INFO(n.body);
  REQUIRE((n.status == 201 || n.status == 200));
  return call(em, "PUT", vm_path(rg, name) + "?api-version=" + kCompute,
              vm_body(n.js()["id"], size, zone, priority, eviction).dump(), tok);
}

/// Polls an operation URL (Azure-AsyncOperation) until it leaves InProgress; at most 10 s.
json wait_operation(const Emulator& em, const std::string& url, const std::string& tok) {
  json last;
  for (int i = 0; i < 400; ++i) {
    Http r = call(em, "GET", url, "", tok);
    REQUIRE(r.status == 200);
    last = r.js();
    if (last["status"] != "InProgress") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return last;
}

std::vector<json> read_log(const std::string& path) {
  std::vector<json> out;
  std::istringstream in(plinth::test::slurp(path));
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

/// Runs sdk_check.py SCENARIO with Debian's python3 and the Azure SDK.
json sdk(const Emulator& em, const std::string& scenario, const std::string& certificate = "") {
  json cfg = {{"base", em.base()},    {"tenant", kTenant}, {"client", kClient},         {"secret", kSecret},
              {"subscription", kSub}, {"ca", em.ca()},     {"certificate", certificate}};
  RunResult r = plinth::test::run_program(
      {"/usr/bin/python3", AZURE_SDK_SCRIPT, scenario, cfg.dump()}, "",
      {{"REQUESTS_CA_BUNDLE", em.ca()}, {"HTTPS_PROXY", ""}, {"HTTP_PROXY", ""}, {"NO_PROXY", "127.0.0.1,localhost"}});
  INFO("sdk_check.py " << scenario << " stderr:\n" << r.err << "\nemulator stderr:\n" << em.stderr_text());
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

}  // namespace

// ---------------------------------------------------------------- Entra

TEST_CASE("Entra: discovery documents, client-credentials tokens and AADSTS errors") {
  Emulator em({"--token-lifetime", "120"});
  REQUIRE(em.field("tenant") == kTenant);

  Http config = call(em, "GET", "/" + kTenant + "/v2.0/.well-known/openid-configuration");
  REQUIRE(config.status == 200);
  CHECK(config.js()["token_endpoint"] == em.base() + "/" + kTenant + "/oauth2/v2.0/token");
  CHECK(config.js()["issuer"] == em.base() + "/" + kTenant + "/v2.0");

  Http no_tenant = call(em, "GET", "/11111111-2222-3333-4444-555555555555/v2.0/.well-known/openid-configuration");
  CHECK(no_tenant.status == 400);
  CHECK(no_tenant.js()["error"] == "invalid_tenant");
  CHECK(no_tenant.js()["error_codes"] == json{90002});
  CHECK(no_tenant.js()["error_description"].get<std::string>().rfind(
            "AADSTS90002: Tenant '11111111-2222-3333-4444-555555555555' not found. Check to make sure you have the "
            "correct tenant ID",
            0) == 0);

  // MSAL asks about https://127.0.0.1/TENANT/... (it drops the port); the answer points back at the real port.
  Http discovery = call(em, "GET",
                        "/common/discovery/instance?api-version=1.1&authorization_endpoint=https%3A%2F%2F127.0.0.1%2F" +
                            kTenant + "%2Foauth2%2Fv2.0%2Fauthorize");
  REQUIRE(discovery.status == 200);
  CHECK(discovery.js()["tenant_discovery_endpoint"] ==
        em.base() + "/" + kTenant + "/v2.0/.well-known/openid-configuration");
  Http stranger = call(em, "GET",
                       "/common/discovery/instance?api-version=1.1&authorization_endpoint="
                       "https%3A%2F%2Flogin.example.com%2Fx%2Foauth2%2Fv2.0%2Fauthorize");
  CHECK(stranger.status == 400);
  CHECK(stranger.js()["error"] == "invalid_instance");

  std::string token_path = "/" + kTenant + "/oauth2/v2.0/token";
  Http ok = call(em, "POST", token_path, token_form(kClient, kSecret), "", true);
  REQUIRE(ok.status == 200);
  CHECK(ok.js()["token_type"] == "Bearer");
  CHECK(ok.js()["expires_in"] == 120);
  auto jwt = plinth::azure_emulator::jwt_decode(ok.js()["access_token"].get<std::string>());
  REQUIRE(jwt);
  CHECK(jwt->claims["aud"] == "https://management.azure.com/");
  CHECK(jwt->claims["tid"] == kTenant);
  CHECK(jwt->claims["appid"] == kClient);
  CHECK(jwt->claims["exp"].get<long long>() - jwt->claims["nbf"].get<long long>() == 120 + 300);
  Http keys = call(em, "GET", "/" + kTenant + "/discovery/v2.0/keys");
  REQUIRE(keys.status == 200);
  CHECK(keys.js()["keys"][0]["kid"] == jwt->header["kid"]);

  struct Case {
    std::string name, form;
    long status;
    std::string error;
    int code;
    std::string starts;
  };
  std::vector<Case> cases = {
      {"wrong secret", token_form(kClient, "wrong"), 401, "invalid_client", 7000215,
       "AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client "
       "secret value, not the client secret ID, for a secret added to app '" +
           kClient + "'."},
      {"unknown app", token_form("00000000-aaaa-bbbb-cccc-000000000000", kSecret), 400, "unauthorized_client", 700016,
       "AADSTS700016: Application with identifier '00000000-aaaa-bbbb-cccc-000000000000' was not found in the "
       "directory '" +
           kTenant + "'."},
      {"no grant type", "client_id=" + kClient, 400, "invalid_request", 900144,
       "AADSTS900144: The request body must contain the following parameter: 'grant_type'."},
      {"no credential", "grant_type=client_credentials&client_id=" + kClient + "&scope=x%2F.default", 401,
       "invalid_client", 7000216,
       "AADSTS7000216: 'client_assertion', 'client_secret' or 'request' is required for the 'client_credentials' "
       "grant type."},
      {"scope without .default",
       token_form(kClient, kSecret, "https%3A%2F%2Fmanagement.azure.com%2Fuser_impersonation"), 400, "invalid_scope",
       1002012, "AADSTS1002012: The provided value for scope"},
      {"unknown resource", token_form(kClient, kSecret, "https%3A%2F%2Fvault.azure.net%2F.default"), 400,
       "invalid_resource", 500011, "AADSTS500011: The resource principal named https://vault.azure.net was not found"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    Http r = call(em, "POST", token_path, c.form, "", true);
    CHECK(r.status == c.status);
    json e = r.js();
    CHECK(e["error"] == c.error);
    CHECK(e["error_codes"] == json{c.code});
    CHECK(e["error_description"].get<std::string>().rfind(c.starts, 0) == 0);
    CHECK(e["error_description"].get<std::string>().find("\r\nTrace ID: ") != std::string::npos);
    CHECK(e["error_uri"] == em.base() + "/error?code=" + std::to_string(c.code));
  }
  Http wrong_tenant = call(em, "POST", "/11111111-2222-3333-4444-555555555555/oauth2/v2.0/token",
                           token_form(kClient, kSecret), "", true);
  CHECK(wrong_tenant.status == 400);
  CHECK(wrong_tenant.js()["error_codes"] == json{90002});
  CHECK(call(em, "GET", token_path).js()["error_codes"] == json{900561});
}

// ---------------------------------------------------------------- Resource Manager basics

TEST_CASE("Resource Manager checks the bearer token and the api-version on every call") {
  Emulator em({});
  std::string tok = token(em);
  std::string groups = "/subscriptions/" + kSub + "/resourcegroups?api-version=" + kResources;

  Http none = call(em, "GET", groups);
  CHECK(none.status == 401);
  CHECK(none.js()["error"]["code"] == "AuthenticationFailed");
  CHECK(none.js()["error"]["message"] == "Authentication failed. The 'Authorization' header is missing.");
  CHECK(none.header("www-authenticate").find("Bearer authorization_uri=") == 0);
  CHECK(none.header("www-authenticate").find("error=\"invalid_token\"") != std::string::npos);
  CHECK(none.header("x-ms-ratelimit-remaining-subscription-reads") != "");

  CHECK(call(em, "GET", groups, "", "not.a.token").js()["error"]["code"] == "InvalidAuthenticationToken");
  json expired = control(em, "POST", "token", {{"lifetimeSeconds", -60}});
  Http old = call(em, "GET", groups, "", expired["access_token"]);
  CHECK(old.status == 401);
  CHECK(old.js()["error"]["code"] == "ExpiredAuthenticationToken");
  CHECK(old.js()["error"]["message"].get<std::string>().find("' is earlier than current UTC time '") !=
        std::string::npos);
  json graph = control(em, "POST", "token", {{"resource", "https://graph.microsoft.com/"}});
  Http audience = call(em, "GET", groups, "", graph["access_token"]);
  CHECK(audience.status == 401);
  CHECK(audience.js()["error"]["code"] == "InvalidAuthenticationTokenAudience");

  Http missing = call(em, "GET", "/subscriptions/" + kSub + "/resourcegroups", "", tok);
  CHECK(missing.status == 400);
  CHECK(missing.js()["error"]["code"] == "MissingApiVersionParameter");
  CHECK(missing.js()["error"]["message"] ==
        "The api-version query parameter (?api-version=) is required for all requests.");
  Http bad_rg = call(em, "GET", "/subscriptions/" + kSub + "/resourcegroups?api-version=2099-01-01", "", tok);
  CHECK(bad_rg.status == 400);
  CHECK(bad_rg.js()["error"]["code"] == "InvalidApiVersionParameter");
  Http bad_vm = call(em, "GET", vm_path("rg", "vm") + "?api-version=2099-01-01", "", tok);
  CHECK(bad_vm.status == 400);
  CHECK(bad_vm.js()["error"]["code"] == "NoRegisteredProviderFound");
  CHECK(bad_vm.js()["error"]["message"].get<std::string>().find("for type 'virtualMachines'. The supported "
                                                                "api-versions are '") != std::string::npos);
  Http other_sub =
      call(em, "GET", "/subscriptions/00000000-0000-0000-0000-00000000000f/resourcegroups?api-version=" + kResources,
           "", tok);
  CHECK(other_sub.status == 404);
  CHECK(other_sub.js()["error"]["code"] == "SubscriptionNotFound");

  Http ok = call(em, "GET", groups, "", tok);
  REQUIRE(ok.status == 200);
  CHECK(ok.js()["value"] == json::array());
  CHECK(ok.header("x-ms-request-id").size() == 36);
  CHECK(ok.header("x-ms-correlation-request-id").size() == 36);
  CHECK(call(em, "GET", rg_path("nope") + "?api-version=" + kResources, "", tok).js()["error"]["code"] ==
        "ResourceGroupNotFound");
  CHECK(call(em, "GET", vm_path("nope", "vm") + "?api-version=" + kCompute, "", tok).js()["error"]["code"] ==
        "ResourceGroupNotFound");
  // The cloud metadata azure-cli reads when a cloud is registered needs no token.
  Http meta = call(em, "GET", "/metadata/endpoints?api-version=2015-01-01");
  CHECK(meta.status == 200);
  CHECK(meta.js()["authentication"]["loginEndpoint"] == em.base() + "/");
}

TEST_CASE("A VM PUT is a long-running operation: 201 with Azure-AsyncOperation, InProgress, then Succeeded") {
  // Operations never finish on their own here; /__emulator/complete-operations ends them.
  Emulator em({"--lro-delay-ms", "3600000", "--retry-after", "7"});
  std::string tok = token(em);
  make_network(em, tok, "pool");
  Http put = make_vm(em, tok, "pool", "gpu-0");
  INFO(put.body);
  REQUIRE(put.status == 201);
  CHECK(put.js()["properties"]["provisioningState"] == "Creating");
  CHECK(put.header("retry-after") == "7");
  std::string async = put.header("azure-asyncoperation");
  CHECK(async.find(em.base() + "/subscriptions/" + kSub +
                   "/providers/Microsoft.Compute/locations/eastus/operations/") == 0);
  CHECK(put.header("location") == "");
  // customData is write-only: never returned, kept by the emulator.
  CHECK_FALSE(put.js()["properties"]["osProfile"].contains("customData"));

  Http poll = call(em, "GET", async, "", tok);
  REQUIRE(poll.status == 200);
  CHECK(poll.js()["status"] == "InProgress");
  CHECK(poll.header("retry-after") == "7");
  CHECK(call(em, "GET", vm_path("pool", "gpu-0") + "?api-version=" + kCompute, "", tok)
            .js()["properties"]["provisioningState"] == "Creating");

  // The same PUT again while the first runs: same VM (same vmId), the first operation is preempted.
  Http again = make_vm(em, tok, "pool", "gpu-0");
  REQUIRE(again.status == 200);
  CHECK(again.js()["properties"]["vmId"] == put.js()["properties"]["vmId"]);
  CHECK(call(em, "GET", async, "", tok).js()["status"] == "Canceled");
  CHECK(call(em, "GET", async, "", tok).js()["error"]["code"] == "OperationPreempted");

  CHECK(control(em, "POST", "complete-operations")["completed"] == 1);
  json done = call(em, "GET", again.header("azure-asyncoperation"), "", tok).js();
  CHECK(done["status"] == "Succeeded");
  CHECK(done.contains("endTime"));
  Http vm = call(em, "GET", vm_path("pool", "gpu-0") + "?api-version=" + kCompute + "&$expand=instanceView", "", tok);
  CHECK(vm.js()["properties"]["provisioningState"] == "Succeeded");
  CHECK(vm.js()["properties"]["instanceView"]["statuses"][1]["code"] == "PowerState/running");
  json dump = control(em, "GET", "vms");
  REQUIRE(dump.size() == 1);
  CHECK(dump[0]["model"]["properties"]["osProfile"]["customData"] == "I2Nsb3VkLWNvbmZpZwo=");

  // DELETE: 202 with Location (monitor) and Azure-AsyncOperation; the monitor answers 202 until done, then 200.
  Http del = call(em, "DELETE", vm_path("pool", "gpu-0") + "?api-version=" + kCompute, "", tok);
  REQUIRE(del.status == 202);
  std::string monitor = del.header("location");
  CHECK(monitor.find("monitor=true") != std::string::npos);
  CHECK(call(em, "GET", monitor, "", tok).status == 202);
  CHECK(call(em, "GET", vm_path("pool", "gpu-0") + "?api-version=" + kCompute, "", tok)
            .js()["properties"]["provisioningState"] == "Deleting");
  Http put_while_deleting = make_vm(em, tok, "pool", "gpu-0");
  CHECK(put_while_deleting.status == 409);
  CHECK(put_while_deleting.js()["error"]["code"] == "OperationNotAllowed");
  control(em, "POST", "complete-operations");
  CHECK(call(em, "GET", monitor, "", tok).status == 200);
  Http gone = call(em, "GET", vm_path("pool", "gpu-0") + "?api-version=" + kCompute, "", tok);
  CHECK(gone.status == 404);
  CHECK(gone.js()["error"]["code"] == "ResourceNotFound");
  CHECK(call(em, "DELETE", vm_path("pool", "gpu-0") + "?api-version=" + kCompute, "", tok).status == 204);
  // The NIC had deleteOption Delete: it went with the VM; the other one stays.
  CHECK(call(em, "GET",
             rg_path("pool") + "/providers/Microsoft.Network/networkInterfaces/gpu-0-nic?api-version=" + kNetwork, "",
             tok)
            .status == 404);
}

TEST_CASE("A PUT's location is checked as ARM does: missing, not offered, or not where the resource is") {
  Emulator em({"--locations", "eastus,westus2"});
  std::string tok = token(em);
  make_network(em, tok, "pool");
  const std::string vnet = rg_path("pool") + "/providers/Microsoft.Network/virtualNetworks/net?api-version=" + kNetwork;
  json body = {{"properties", {{"addressSpace", {{"addressPrefixes", {"10.1.0.0/16"}}}}}}};
  Http missing = call(em, "PUT", vnet, body.dump(), tok);
  CHECK(missing.status == 400);
  CHECK(missing.js()["error"]["code"] == "LocationRequired");
  body["location"] = "mars";
  Http unknown = call(em, "PUT", vnet, body.dump(), tok);
  CHECK(unknown.status == 400);
  CHECK(unknown.js()["error"]["message"] ==
        "The provided location 'mars' is not available for resource type 'Microsoft.Network/virtualNetworks'.");
  body["location"] = "westus2";
  Http moved = call(em, "PUT", vnet, body.dump(), tok);
  CHECK(moved.status == 409);
  CHECK(moved.js()["error"]["code"] == "InvalidResourceLocation");
  CHECK(moved.js()["error"]["message"] ==
        "The resource 'net' already exists in location 'eastus' in resource group 'pool'. A resource with the same "
        "name cannot be created in location 'westus2'. Please select a new resource name.");
  // A VM's answer lists the regions the type is offered in.
  json vm = vm_body("/x", "Standard_ND96isr_H100_v5", "1", "Spot", "Deallocate");
  vm["location"] = "mars";
  Http vm_unknown = call(em, "PUT", vm_path("pool", "gpu-0") + "?api-version=" + kCompute, vm.dump(), tok);
  CHECK(vm_unknown.status == 400);
  CHECK(vm_unknown.js()["error"]["message"] ==
        "The provided location 'mars' is not available for resource type 'Microsoft.Compute/virtualMachines'. List "
        "of available regions for the resource type is 'eastus,westus2'.");
}

TEST_CASE("Capacity, SKU restrictions and quota answer with ARM's codes and wording") {
  Emulator em({"--lro-delay-ms", "0", "--capacity", "eastus/1:Standard_ND96isr_H100_v5=1", "--sku-unavailable",
               "eastus/3:Standard_ND96isr_H100_v5", "--quota", "eastus:lowPriorityCores=192"});
  std::string tok = token(em);
  make_network(em, tok, "pool");
  Http first = make_vm(em, tok, "pool", "a");
  REQUIRE(first.status == 201);
  Http second = make_vm(em, tok, "pool", "b");
  REQUIRE(second.status == 201);  // accepted; allocation fails in the operation
  json op = wait_operation(em, second.header("azure-asyncoperation"), tok);
  CHECK(op["status"] == "Failed");
  CHECK(op["error"]["code"] == "ZonalAllocationFailed");
  CHECK(op["error"]["message"] ==
        "Allocation failed. We do not have sufficient capacity for the requested VM size in this zone. Read more "
        "about improving likelihood of allocation success at http://aka.ms/allocation-guidance");
  Http failed = call(em, "GET", vm_path("pool", "b") + "?api-version=" + kCompute + "&$expand=instanceView", "", tok);
  CHECK(failed.js()["properties"]["provisioningState"] == "Failed");
  CHECK(failed.js()["properties"]["instanceView"]["statuses"][0]["code"] ==
        "ProvisioningState/failed/ZonalAllocationFailed");

  Http sku = make_vm(em, tok, "pool", "c", "Standard_ND96isr_H100_v5", "3");
  CHECK(sku.status == 409);
  CHECK(sku.js()["error"]["code"] == "SkuNotAvailable");
  CHECK(sku.js()["error"]["message"].get<std::string>().rfind(
            "The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: "
            "Standard_ND96isr_H100_v5' is currently not available in location 'eastus'",
            0) == 0);
  // Two Spot ND96 (a, and the failed b) hold 192 low-priority vCPUs: a third is over quota.
  Http quota = make_vm(em, tok, "pool", "d", "Standard_ND96isr_H100_v5", "2");
  CHECK(quota.status == 409);
  CHECK(quota.js()["error"]["code"] == "OperationNotAllowed");
  CHECK(quota.js()["error"]["message"].get<std::string>().rfind(
            "Operation could not be completed as it results in exceeding approved Low Priority Cores quota. Additional "
            "details - Deployment Model: Resource Manager, Location: eastus, Current Limit: 192, Current Usage: 192, "
            "Additional Required: 96, (Minimum) New Limit Required: 288.",
            0) == 0);
  // Control endpoints change the limits at run time.
  control(em, "POST", "quota", {{"location", "eastus"}, {"family", "lowPriorityCores"}, {"limit", nullptr}});
  control(em, "POST", "capacity",
          {{"location", "eastus"}, {"zone", "2"}, {"size", "Standard_ND96isr_H100_v5"}, {"count", 0}});
  Http zonal = make_vm(em, tok, "pool", "d", "Standard_ND96isr_H100_v5", "2");
  REQUIRE(zonal.status == 201);
  CHECK(wait_operation(em, zonal.header("azure-asyncoperation"), tok)["error"]["code"] == "ZonalAllocationFailed");
  Http small = make_vm(em, tok, "pool", "e", "Standard_B2s", "", "Regular", "");
  CHECK(small.status == 400);
  CHECK(small.js()["error"]["code"] == "VMSizeIsNotPermittedToEnableAcceleratedNetworking");
  Http unknown = make_vm(em, tok, "pool", "f", "Standard_Imaginary_v9", "");
  CHECK(unknown.status == 400);
  CHECK(unknown.js()["error"]["code"] == "InvalidParameter");
  CHECK(unknown.js()["error"]["target"] == "vmSize");
  // A zone change on an existing VM is refused.
  json body = vm_body(first.js()["properties"]["networkProfile"]["networkInterfaces"][0]["id"],
                      "Standard_ND96isr_H100_v5", "2", "Spot", "Deallocate");
  Http move = call(em, "PUT", vm_path("pool", "a") + "?api-version=" + kCompute, body.dump(), tok);
  CHECK(move.status == 409);
  CHECK(move.js()["error"]["code"] == "PropertyChangeNotAllowed");
  CHECK(move.js()["error"]["message"] == "Changing property 'zones' is not allowed.");
}

TEST_CASE("Spot eviction on demand honours each VM's evictionPolicy") {
  Emulator em({"--lro-delay-ms", "0", "--capacity", "eastus/1:Standard_ND96isr_H100_v5=2"});
  std::string tok = token(em);
  make_network(em, tok, "pool");
  std::string dealloc_op = make_vm(em, tok, "pool", "keep", "Standard_ND96isr_H100_v5", "1", "Spot", "Deallocate")
                               .header("azure-asyncoperation");
  std::string delete_op = make_vm(em, tok, "pool", "drop", "Standard_ND96isr_H100_v5", "1", "Spot", "Delete")
                              .header("azure-asyncoperation");
  REQUIRE(wait_operation(em, dealloc_op, tok)["status"] == "Succeeded");
  REQUIRE(wait_operation(em, delete_op, tok)["status"] == "Succeeded");
  Http regular = make_vm(em, tok, "pool", "reg", "Standard_D4s_v5", "", "Regular", "");
  REQUIRE(regular.status == 201);

  json keep = control(em, "POST", "evict", {{"id", vm_path("pool", "keep")}});
  CHECK(keep["evictionPolicy"] == "Deallocate");
  CHECK(keep["deleted"] == false);
  Http kept = call(em, "GET", vm_path("pool", "keep") + "/instanceView?api-version=" + kCompute, "", tok);
  CHECK(kept.js()["statuses"][1]["code"] == "PowerState/deallocated");
  json drop = control(em, "POST", "evict", {{"id", vm_path("pool", "drop")}});
  CHECK(drop["deleted"] == true);
  CHECK(call(em, "GET", vm_path("pool", "drop") + "?api-version=" + kCompute, "", tok).status == 404);
  CHECK(call(em, "POST", "/__emulator/evict", json{{"id", vm_path("pool", "reg")}}.dump()).status == 409);
  // Both evictions gave their zone capacity back: two new VMs fit in zone 1.
  std::string n1 = make_vm(em, tok, "pool", "new1").header("azure-asyncoperation");
  CHECK(wait_operation(em, n1, tok)["status"] == "Succeeded");
  // Starting the deallocated VM needs capacity again: zone 1 now has one free slot.
  Http start = call(em, "POST", vm_path("pool", "keep") + "/start?api-version=" + kCompute, "", tok);
  REQUIRE(start.status == 202);
  CHECK(wait_operation(em, start.header("azure-asyncoperation"), tok)["status"] == "Succeeded");
  std::string n2 = make_vm(em, tok, "pool", "new2").header("azure-asyncoperation");
  CHECK(wait_operation(em, n2, tok)["error"]["code"] == "ZonalAllocationFailed");
  CHECK(control(em, "GET", "counters")["events"]["evictions"] == 2);
}

// ---------------------------------------------------------------- throttling, faults, log

TEST_CASE("Throttling: a token bucket per subscription, 429 with Retry-After, remaining counts on every answer") {
  std::string second_sub = "0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e";
  Emulator em({"--reads-bucket", "3:0.001", "--subscription", kSub, "--subscription", second_sub});
  std::string tok = token(em);
  std::string groups = "/subscriptions/" + kSub + "/resourcegroups?api-version=" + kResources;
  std::vector<std::string> remaining;
  for (int i = 0; i < 3; ++i) {
    Http r = call(em, "GET", groups, "", tok);
    REQUIRE(r.status == 200);
    remaining.push_back(r.header("x-ms-ratelimit-remaining-subscription-reads"));
  }
  CHECK(remaining == std::vector<std::string>{"2", "1", "0"});
  Http throttled = call(em, "GET", groups, "", tok);
  CHECK(throttled.status == 429);
  CHECK(throttled.js()["error"]["code"] == "SubscriptionRequestsThrottled");
  CHECK(throttled.js()["error"]["message"].get<std::string>().rfind(
            "Number of 'read' requests for subscription '" + kSub + "' actor '", 0) == 0);
  CHECK(std::stoi(throttled.header("retry-after")) >= 1);
  CHECK(throttled.header("x-ms-ratelimit-remaining-subscription-reads") == "0");
  // Writes have their own bucket, and so does every other subscription.
  Http write = call(em, "PUT", rg_path("rg") + "?api-version=" + kResources, R"({"location":"eastus"})", tok);
  CHECK(write.status == 201);
  CHECK(write.header("x-ms-ratelimit-remaining-subscription-writes") == "199");
  CHECK(call(em, "GET", "/subscriptions/" + second_sub + "/resourcegroups?api-version=" + kResources, "", tok).status ==
        200);
  CHECK(control(em, "GET", "counters")["events"]["throttled"] == 1);
}

TEST_CASE("Injected faults are deterministic for a seed, and a lost answer still performed its PUT") {
  auto statuses = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--rate-500", "0.2", "--rate-503", "0.2", "--rate-429", "0.1", "--seed", "7"};
    args.insert(args.end(), extra.begin(), extra.end());
    Emulator em(args);
    std::string tok = token(em);  // Entra is never faulted
    std::vector<long> seen;
    for (int i = 0; i < 30; ++i) {
      Http r = call(em, "GET", "/subscriptions/" + kSub + "/resourcegroups?api-version=" + kResources, "", tok);
      seen.push_back(r.status);
      if (r.status == 500) CHECK(r.js()["error"]["code"] == "InternalServerError");
      if (r.status == 503) CHECK(r.header("retry-after") == "1");
      if (r.status == 429) CHECK(r.js()["error"]["code"] == "SubscriptionRequestsThrottled");
    }
    return seen;
  };
  std::vector<long> a = statuses({}), b = statuses({});
  CHECK(a == b);
  std::set<long> kinds(a.begin(), a.end());
  CHECK(kinds == std::set<long>{200, 429, 500, 503});

  Emulator em({"--lro-delay-ms", "0", "--drop-rate", "0"});
  std::string tok = token(em);
  make_network(em, tok, "pool");
  control(em, "POST", "faults", {{"loseNextResponses", 1}, {"methods", {"PUT"}}});
  Http nic =
      call(em, "PUT", rg_path("pool") + "/providers/Microsoft.Network/networkInterfaces/n?api-version=" + kNetwork,
           json{{"location", "eastus"},
                {"properties",
                 {{"ipConfigurations",
                   {{{"name", "c"},
                     {"properties",
                      {{"subnet",
                        {{"id", rg_path("pool") +
                                    "/providers/Microsoft.Network/virtualNetworks/net/subnets/default"}}}}}}}}}}}
               .dump(),
           tok, false, true);
  CHECK(nic.code != CURLE_OK);  // the connection closed before any answer
  CHECK(nic.status == 0);
  CHECK(call(em, "GET", rg_path("pool") + "/providers/Microsoft.Network/networkInterfaces/n?api-version=" + kNetwork,
             "", tok)
            .status == 200);
  auto log = read_log(em.log_path());
  bool lost_logged = false;
  for (const auto& line : log)
    lost_logged = lost_logged || (line["method"] == "PUT" && line["fault"] == "lose" && line["status"].is_null() &&
                                  line["operation"] == "Microsoft.Network/networkInterfaces/write");
  CHECK(lost_logged);
}

TEST_CASE("The request log and counters record every request with its api-version and operation") {
  Emulator em({});
  std::string tok = token(em);
  call(em, "GET", "/subscriptions/" + kSub + "/resourcegroups?api-version=" + kResources, "", tok);
  call(em, "GET", "/subscriptions/" + kSub + "/resourcegroups", "", tok);
  auto log = read_log(em.log_path());
  REQUIRE(log.size() == 3);
  CHECK(log[0]["service"] == "entra");
  CHECK(log[0]["operation"] == "Entra/oauth2/v2.0/token");
  CHECK(log[1]["method"] == "GET");
  CHECK(log[1]["path"] == "/subscriptions/" + kSub + "/resourcegroups");
  CHECK(log[1]["apiVersion"] == kResources);
  CHECK(log[1]["status"] == 200);
  CHECK(log[1]["operation"] == "Microsoft.Resources/subscriptions/resourceGroups/read");
  CHECK(log[2]["apiVersion"].is_null());
  CHECK(log[2]["status"] == 400);
  json counters = control(em, "GET", "counters");
  CHECK(counters["requests"] == 3);
  CHECK(counters["byOperation"]["Microsoft.Resources/subscriptions/resourceGroups/read"] == 2);
  CHECK(counters["byStatus"]["400"] == 1);
  control(em, "DELETE", "counters");
  CHECK(control(em, "GET", "counters")["requests"] == 0);
}

TEST_CASE("azure-emulator rejects bad flags and stops cleanly on SIGTERM") {
  auto run = [](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {AZURE_EMULATOR_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return plinth::test::run_program(argv);
  };
  RunResult r = run({"--capacity", "mars:Standard_D2s_v5=1"});
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "azure-emulator: --capacity names location 'mars', which is not in --locations "
        "(eastus,westus2,westus3,southcentralus)\n");
  CHECK(run({"--quota", "eastus:x"}).exit_code == 2);
  CHECK(run({"--client-certificate"}).err.find("add --tls-dir DIR") != std::string::npos);
  CHECK(run({"--bogus"}).err == "azure-emulator: unknown flag '--bogus'; run azure-emulator --help for the list\n");
  Emulator em({});
  CHECK(em.stop() == 0);
}

// ---------------------------------------------------------------- Microsoft's clients

TEST_CASE("Azure SDK for Python: a Spot GPU VM with a NIC, LRO polling, nextLink paging, power actions, delete") {
  Emulator em({"--lro-delay-ms", "150", "--retry-after", "0", "--page-size", "2"});
  json out = sdk(em, "lifecycle");
  INFO(out.dump(1));
  CHECK(out["nic"]["ip"] == "10.0.0.4");
  CHECK(out["nic"]["accelerated"] == true);
  CHECK(out["initial_status"] == "InProgress");
  CHECK(out["created"]["state"] == "Succeeded");
  CHECK(out["created"]["size"] == "Standard_ND96isr_H100_v5");
  CHECK(out["created"]["zones"] == json{"1"});
  CHECK(out["created"]["priority"] == "Spot");
  CHECK(out["created"]["eviction"] == "Deallocate");
  CHECK(out["created"]["max_price"] == -1);
  CHECK(out["created"]["encryption_at_host"] == true);
  CHECK(out["created"]["disk_type"] == "Premium_LRS");
  CHECK(out["created"]["custom_data_returned"].is_null());
  CHECK(out["power"] == "PowerState/running");
  CHECK(out["nic_attached_to"] == vm_path("pool", "gpu-0"));
  CHECK(out["updated"]["vm_id"] == out["created"]["vm_id"]);
  CHECK(out["updated"]["tags"]["gen"] == "2");
  CHECK(out["after_deallocate"] == "PowerState/deallocated");
  CHECK(out["after_start"] == "PowerState/running");
  json five = {"gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4"};
  CHECK(out["listed"] == five);
  CHECK(out["listed_all"] == five);
  CHECK(out["resources_tagged"] == json{"gpu-0"});
  CHECK(out["after_delete"]["code"] == "ResourceNotFound");
  CHECK(out["nics_left"] == json{"gpu-1-nic", "gpu-2-nic", "gpu-3-nic", "gpu-4-nic"});
  CHECK(out["patched"]["tags"] == json{{"patched", "yes"}});
  CHECK(out["patched"]["state"] == "Succeeded");
  CHECK(out["groups_after_delete"] == json::array());
  CHECK(control(em, "GET", "vms") == json::array());
  // Five VMs at two per page: the SDK followed nextLink twice for each list.
  int list_pages = 0;
  for (const auto& line : read_log(em.log_path()))
    if (line["method"] == "GET" && line["path"] == rg_path("pool") + "/providers/Microsoft.Compute/virtualMachines")
      ++list_pages;
  CHECK(list_pages == 3);
}

TEST_CASE("Azure SDK for Python: ARM's errors surface with their codes and a throttled call is retried") {
  Emulator em({"--lro-delay-ms", "50", "--retry-after", "0", "--capacity", "eastus/1:Standard_ND96isr_H100_v5=1",
               "--capacity", "westus3:Standard_ND96isr_H100_v5=0", "--sku-unavailable",
               "eastus/2:Standard_ND96isr_H100_v5", "--quota", "eastus:standardNCadsH100v5Family=40"});
  json out = sdk(em, "errors");
  INFO(out.dump(1));
  CHECK(out["zonal_allocation"]["code"] == "ZonalAllocationFailed");
  CHECK(out["failed_vm"]["state"] == "Failed");
  CHECK(out["regional_allocation"]["code"] == "AllocationFailed");
  CHECK(out["sku"]["code"] == "SkuNotAvailable");
  CHECK(out["sku"]["status"] == 409);
  CHECK(out["sku_vm_exists"] == false);
  CHECK(out["quota"]["code"] == "OperationNotAllowed");
  CHECK(out["quota"]["message"].get<std::string>().find("exceeding approved standardNCadsH100v5Family Cores quota") !=
        std::string::npos);
  CHECK(out["not_found"]["type"] == "ResourceNotFoundError");
  CHECK(out["not_found"]["code"] == "ResourceNotFound");
  CHECK(out["no_group"]["code"] == "ResourceGroupNotFound");
  CHECK(out["accel"]["code"] == "VMSizeIsNotPermittedToEnableAcceleratedNetworking");
  CHECK(out["missing_api_version"]["status"] == 400);
  CHECK(out["missing_api_version"]["body"]["error"]["code"] == "MissingApiVersionParameter");
  CHECK(out["bad_api_version"]["body"]["error"]["code"] == "NoRegisteredProviderFound");
  CHECK(out["throttled_then_listed"]["names"] == json{"first", "nc-0", "second"});
  bool throttled_logged = false;
  for (const auto& line : read_log(em.log_path())) throttled_logged = throttled_logged || line["status"] == 429;
  CHECK(throttled_logged);
}

TEST_CASE("azure-identity: certificate credential, Entra's AADSTS errors, ARM's expired-token 401") {
  Emulator em({"--client-certificate"});
  std::string certificate = em.dir() + "/tls/client.pem";
  REQUIRE(plinth::test::slurp(certificate).find("BEGIN CERTIFICATE") != std::string::npos);
  json out = sdk(em, "auth", certificate);
  INFO(out.dump(1));
  CHECK(out["wrong_secret"].get<std::string>().find("AADSTS7000215: Invalid client secret provided.") !=
        std::string::npos);
  CHECK(out["unknown_client"].get<std::string>().find("AADSTS700016: Application with identifier "
                                                      "'00000000-1111-2222-3333-444444444444' was not found") !=
        std::string::npos);
  // MSAL 1.21 replaces the discovery error with its own sentence; Entra's
  // AADSTS90002 answer is in the request log (azure-cli shows it, below).
  CHECK(out["unknown_tenant"].get<std::string>().find("Unable to get authority configuration for " + em.base() +
                                                      "/99999999-8888-7777-6666-555555555555") != std::string::npos);
  bool tenant_refused = false;
  for (const auto& line : read_log(em.log_path()))
    tenant_refused = tenant_refused || (line["path"] ==
                                            "/99999999-8888-7777-6666-555555555555/v2.0/.well-known/"
                                            "openid-configuration" &&
                                        line["status"] == 400);
  CHECK(tenant_refused);
  CHECK(out["certificate_groups"] == json{"certs"});
  CHECK(out["expired"]["status"] == 401);
  CHECK(out["expired"]["code"] == "ExpiredAuthenticationToken");
  // Wrong credentials never reached Resource Manager: its only requests are
  // the certificate client's PUT and list, and the expired token's list.
  int arm_requests = 0;
  for (const auto& line : read_log(em.log_path())) arm_requests += line["service"] == "arm";
  CHECK(arm_requests == 3);
}

TEST_CASE("Azure SDK for Python: a PUT whose answer was lost is retried and makes one VM") {
  Emulator em({"--lro-delay-ms", "50", "--retry-after", "0"});
  json out = sdk(em, "lost");
  INFO(out.dump(1));
  CHECK(out["state"] == "Succeeded");
  CHECK(out["vms"] == json{"only"});
  int puts = 0, lost = 0;
  for (const auto& line : read_log(em.log_path()))
    if (line["method"] == "PUT" && line["path"] == vm_path("lost", "only")) {
      ++puts;
      lost += line["fault"] == "lose";
    }
  CHECK(puts == 2);
  CHECK(lost == 1);
  CHECK(control(em, "GET", "vms").size() == 1);
}

TEST_CASE("azure-cli: az cloud register, az login --service-principal, az group create, az vm list/show") {
  Emulator em({"--lro-delay-ms", "0", "--proxy-port", "0", "--client-certificate"});
  std::string proxy = em.field("proxy");
  REQUIRE(proxy.rfind("http://127.0.0.1:", 0) == 0);
  TempDir config;
  // MSAL checks an authority it does not know at login.microsoftonline.com; the
  // emulator's CONNECT proxy answers for that host (and refuses all others).
  std::map<std::string, std::string> env = {{"AZURE_CONFIG_DIR", config.path()},
                                            {"REQUESTS_CA_BUNDLE", em.ca()},
                                            {"HTTPS_PROXY", proxy},
                                            {"HTTP_PROXY", proxy},
                                            {"NO_PROXY", "127.0.0.1,localhost"},
                                            {"AZURE_CORE_COLLECT_TELEMETRY", "false"},
                                            {"AZURE_CORE_OUTPUT", "json"},
                                            {"AZURE_CORE_NO_COLOR", "true"}};
  auto az = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/az"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = plinth::test::run_program(argv, "", env);
    return r;
  };
  // Debian's azure-cli 2.45 'latest' profile wants compute 2022-11-01, which its
  // python3-azure lacks; the 2020-09-01-hybrid profile (compute 2020-06-01) works.
  RunResult reg = az({"cloud", "register", "-n", "PlinthEmulator", "--endpoint-resource-manager", em.base() + "/",
                      "--profile", "2020-09-01-hybrid"});
  INFO(reg.err);
  REQUIRE(reg.exit_code == 0);
  REQUIRE(az({"cloud", "set", "-n", "PlinthEmulator"}).exit_code == 0);

  RunResult bad = az({"login", "--service-principal", "-u", kClient, "-p", "wrong", "--tenant", kTenant});
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("AADSTS7000215: Invalid client secret provided.") != std::string::npos);

  // The certificate --client-certificate wrote: MSAL signs a client assertion with it.
  RunResult cert =
      az({"login", "--service-principal", "-u", kClient, "-p", em.dir() + "/tls/client.pem", "--tenant", kTenant});
  INFO(cert.err);
  CHECK(cert.exit_code == 0);

  RunResult login = az({"login", "--service-principal", "-u", kClient, "-p", kSecret, "--tenant", kTenant});
  INFO(login.err);
  REQUIRE(login.exit_code == 0);
  json accounts = json::parse(login.out);
  REQUIRE(accounts.size() == 1);
  CHECK(accounts[0]["id"] == kSub);
  CHECK(accounts[0]["tenantId"] == kTenant);
  CHECK(accounts[0]["cloudName"] == "PlinthEmulator");

  RunResult group = az({"group", "create", "-n", "pool", "-l", "eastus"});
  INFO(group.err);
  REQUIRE(group.exit_code == 0);
  CHECK(json::parse(group.out)["properties"]["provisioningState"] == "Succeeded");

  // A VM made through the API, then read with az.
  std::string tok = token(em);
  REQUIRE(call(em, "PUT", rg_path("pool") + "/providers/Microsoft.Network/virtualNetworks/net?api-version=" + kNetwork,
               json{{"location", "eastus"},
                    {"properties",
                     {{"addressSpace", {{"addressPrefixes", {"10.1.0.0/16"}}}},
                      {"subnets", {{{"name", "default"}, {"properties", {{"addressPrefix", "10.1.0.0/24"}}}}}}}}}
                   .dump(),
               tok)
              .status == 201);
  REQUIRE(make_vm(em, tok, "pool", "gpu-0").status == 201);

  RunResult list = az({"vm", "list", "-g", "pool"});
  INFO(list.err);
  REQUIRE(list.exit_code == 0);
  json vms = json::parse(list.out);
  REQUIRE(vms.size() == 1);
  CHECK(vms[0]["name"] == "gpu-0");
  CHECK(vms[0]["priority"] == "Spot");
  CHECK(vms[0]["hardwareProfile"]["vmSize"] == "Standard_ND96isr_H100_v5");

  RunResult show = az({"vm", "get-instance-view", "-g", "pool", "-n", "gpu-0"});
  INFO(show.err);
  REQUIRE(show.exit_code == 0);
  json view = json::parse(show.out);
  CHECK(view["instanceView"]["statuses"][1]["code"] == "PowerState/running");

  RunResult missing = az({"vm", "show", "-g", "pool", "-n", "nope"});
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("(ResourceNotFound)") != std::string::npos);

  // What the CLI reached: the emulator directly, login.microsoftonline.com
  // through the proxy, and nothing else but its own update check (refused).
  std::set<std::string> proxied;
  for (const auto& line : read_log(em.log_path()))
    if (line["service"] == "proxy") proxied.insert(line["path"].get<std::string>() + " " + line["status"].dump());
  CHECK(proxied.count("login.microsoftonline.com:443 200") == 1);
  for (const auto& p : proxied) CHECK((p == "login.microsoftonline.com:443 200" || p == "azure.microsoft.com:443 403"));
}
