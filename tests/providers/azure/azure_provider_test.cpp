// The azure provider's pieces that need no endpoint: the VM and NIC bodies it
// sends against the Azure SDK for Python's models (generated from Azure's
// REST API specs) and the spec's own example, VM names, Entra token
// requests, error kinds, rates and options.
// End to end: tests/e2e/burst_pool_conformance_test.cpp and azure_test.cpp.
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "providers/azure/arm_client.h"
#include "providers/azure/azure_provider.h"
#include "providers/azure/schema.h"
#include "tests/support/run.h"

using namespace plinth;
using nlohmann::json;

namespace {

const std::string kChecker = "tests/providers/azure/model_check.py";
const std::string kComputeModels = "azure.mgmt.compute.v2022_08_01.models";
const std::string kNetworkModels = "azure.mgmt.network.v2022_07_01.models";

/// model_check.py's verdict on `body` as `model` of `module`: "ok" or the problems.
std::string sdk_check(const std::string& module, const std::string& model, const json& body) {
  test::TempDir dir;
  const std::string file = dir.write("body.json", body.dump());
  auto r = test::run_program({"/usr/bin/python3", test::source_dir() + "/" + kChecker, module, model, file});
  INFO(r.err);
  return r.out;
}

Resource full_pool_vm() {
  Resource r;
  r.type = "azure.vm";
  r.name = "gpu";
  r.index = 3;
  r.address = "azure.vm.gpu[3]";
  r.provider = "azure";
  r.attributes = {{"instance_type", "Standard_ND96isr_H100_v5"},
                  {"instance_types", {"Standard_ND96isr_H200_v5"}},
                  {"zones", {"1", "2"}},
                  {"region", "eastus"},
                  {"resource_group", "rg"},
                  {"spot", true},
                  {"image", "Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:latest"},
                  {"ssh_public_key", "ssh-ed25519 AAAA ops"},
                  {"admin_username", "ops"},
                  {"eviction_policy", "Delete"},
                  {"max_price", 12.5},
                  {"os_disk",
                   {{"size_gb", 512},
                    {"type", "PremiumV2_LRS"},
                    {"encryption_at_host", true},
                    {"disk_encryption_set_id", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/"
                                               "diskEncryptionSets/des"}}}};
  r.computed = {{"user_data", "#cloud-config\n"}};
  return r;
}

}  // namespace

TEST_CASE("azure: the VM and NIC bodies use only properties of Azure's API, with their types") {
  const Resource r = full_pool_vm();
  const json tags = {{azure::kTagAddress, r.address}, {azure::kTagLineage, "l"}};
  const json vm = azure::vm_body(r, "eastus", "Standard_ND96isr_H100_v5", "2",
                                 "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/n",
                                 "gpu-3-abc", tags);
  CHECK(sdk_check(kComputeModels, "VirtualMachine", vm) == "ok\n");
  const json nic = azure::nic_body(r, "eastus", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/"
                                                "virtualNetworks/v/subnets/gpu",
                                   tags);
  CHECK(sdk_check(kNetworkModels, "NetworkInterface", nic) == "ok\n");
  // What Spot, eviction, the disk and the zone turned into.
  const json& p = vm["properties"];
  CHECK(p["priority"] == "Spot");
  CHECK(p["evictionPolicy"] == "Delete");
  CHECK(p["billingProfile"]["maxPrice"] == 12.5);
  CHECK(vm["zones"] == json::array({"2"}));
  CHECK(p["securityProfile"]["encryptionAtHost"] == true);
  CHECK(p["storageProfile"]["osDisk"]["managedDisk"]["diskEncryptionSet"]["id"].get<std::string>().find("des") !=
        std::string::npos);
  CHECK(p["storageProfile"]["osDisk"]["diskSizeGB"] == 512);
  CHECK(p["osProfile"]["customData"] == "I2Nsb3VkLWNvbmZpZwo=");
  CHECK(p["osProfile"]["linuxConfiguration"]["ssh"]["publicKeys"][0]["path"] == "/home/ops/.ssh/authorized_keys");
  CHECK(nic["properties"]["enableAcceleratedNetworking"] == true);

  // An on-demand VM sends no Spot fields (ARM refuses evictionPolicy on Regular VMs).
  Resource regular = r;
  regular.attributes["spot"] = false;
  const json reg = azure::vm_body(regular, "eastus", "Standard_ND96isr_H100_v5", "", "nic", "n", tags);
  CHECK_FALSE(reg["properties"].contains("priority"));
  CHECK_FALSE(reg["properties"].contains("evictionPolicy"));
  CHECK_FALSE(reg["properties"].contains("billingProfile"));
  CHECK_FALSE(reg.contains("zones"));
}

TEST_CASE("azure: the checker accepts the 2025-04-01 spec's VM example and refuses a misspelt property") {
  std::ifstream in(test::testdata_dir() + "/azure-compute/2025-04-01/examples/virtualMachineExamples/"
                                          "VirtualMachine_Create_WithSshAuthentication.json");
  REQUIRE(in);
  json example = json::parse(in);
  const json body = example["parameters"]["parameters"];
  CHECK(sdk_check(kComputeModels, "VirtualMachine", body) == "ok\n");
  // The example's osProfile/storageProfile/networkProfile nest the way ours do.
  const json mine = azure::vm_body(full_pool_vm(), "westus", "Standard_D1_v2", "", "nic", "myVM", json::object());
  for (const char* k : {"hardwareProfile", "storageProfile", "osProfile", "networkProfile"}) {
    INFO(k);
    CHECK(body["properties"].contains(k));
    CHECK(mine["properties"].contains(k));
    for (const auto& [key, v] : body["properties"][k].items()) {
      INFO(key);
      if (key != "imageReference" || mine["properties"][k].contains(key)) CHECK(mine["properties"][k].contains(key));
    }
  }
  json bad = body;
  bad["properties"]["hardwareProfile"] = {{"vmSise", "Standard_D1_v2"}};
  CHECK(sdk_check(kComputeModels, "VirtualMachine", bad).find("hardwareProfile.vmSise: not a property") !=
        std::string::npos);
}

TEST_CASE("azure: VM names are stable, change with what forces a new VM and not with fallbacks, fit Azure's 64") {
  json a = {{"instance_type", "Standard_ND96isr_H100_v5"}, {"zones", {"1"}}, {"user_data_hash", "aa"}};
  const std::string n = azure::vm_name("lineage-1", "azure.vm.gpu[0]", "gpu", 0, a);
  CHECK(n == azure::vm_name("lineage-1", "azure.vm.gpu[0]", "gpu", 0, a));
  CHECK(n.rfind("gpu-0-", 0) == 0);
  CHECK(n != azure::vm_name("lineage-2", "azure.vm.gpu[0]", "gpu", 0, a));
  CHECK(n != azure::vm_name("lineage-1", "azure.vm.gpu[1]", "gpu", 1, a));
  json stack = a;
  stack["user_data_hash"] = "bb";
  CHECK(n != azure::vm_name("lineage-1", "azure.vm.gpu[0]", "gpu", 0, stack));
  json wider = a;
  wider["zones"] = {"1", "2"};
  wider["instance_types"] = {"Standard_ND96isr_H200_v5"};
  CHECK(n == azure::vm_name("lineage-1", "azure.vm.gpu[0]", "gpu", 0, wider));
  const std::string long_name =
      azure::vm_name("l", "azure.vm.x[123]", std::string(80, 'X') + "_pool", 123, a);
  CHECK(long_name.size() <= 64);
  for (char c : long_name) CHECK((std::islower(static_cast<unsigned char>(c)) || std::isdigit(c) || c == '-'));
}

TEST_CASE("azure: the token request asks for AUDIENCE/.default with a secret or an RS256 client assertion") {
  azure::ArmSettings s;
  s.tenant_id = "t";
  s.client_id = "c1";
  s.client_secret = "s&cret";
  auto body = azure::token_request_body(s, "https://login/t/oauth2/v2.0/token", 1700000000);
  REQUIRE(body.ok());
  CHECK(*body ==
        "grant_type=client_credentials&client_id=c1&scope=https%3A%2F%2Fmanagement.azure.com%2F.default&client_secret="
        "s%26cret");

  // A throw-away certificate + key, as azure-identity reads them from one PEM file.
  test::TempDir dir;
  auto gen = test::run_program({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=app",
                                "-days", "1", "-keyout", dir.path() + "/key.pem", "-out", dir.path() + "/cert.pem"});
  REQUIRE(gen.exit_code == 0);
  s.client_secret.clear();
  s.client_certificate_pem = test::slurp(dir.path() + "/cert.pem") + test::slurp(dir.path() + "/key.pem");
  auto cert_body = azure::token_request_body(s, "https://login/t/oauth2/v2.0/token", 1700000000);
  REQUIRE(cert_body.ok());
  CHECK(cert_body->find("client_secret") == std::string::npos);
  CHECK(cert_body->find("&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer") !=
        std::string::npos);
  const std::string jwt = cert_body->substr(cert_body->find("&client_assertion=") + 18);
  const auto dot1 = jwt.find('.'), dot2 = jwt.rfind('.');
  REQUIRE(dot1 != dot2);
  auto b64url = [](std::string t) {
    for (auto& c : t) c = c == '-' ? '+' : c == '_' ? '/' : c;
    while (t.size() % 4) t += '=';
    std::string out(t.size(), '\0');
    int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(t.data()), static_cast<int>(t.size()));
    out.resize(static_cast<size_t>(n));
    while (!t.empty() && t.back() == '=' && !out.empty()) {
      out.pop_back();
      t.pop_back();
    }
    return out;
  };
  json header = json::parse(b64url(jwt.substr(0, dot1)));
  json claims = json::parse(b64url(jwt.substr(dot1 + 1, dot2 - dot1 - 1)));
  CHECK(header["alg"] == "RS256");
  CHECK(header["x5t"].get<std::string>().size() == 27);  // base64url of a SHA-1
  CHECK(claims["aud"] == "https://login/t/oauth2/v2.0/token");
  CHECK(claims["iss"] == "c1");
  CHECK(claims["sub"] == "c1");
  CHECK(claims["exp"].get<long long>() == 1700000600);
  // The signature verifies with the certificate's public key.
  const std::string pem = test::slurp(dir.path() + "/cert.pem");
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  EVP_PKEY* key = X509_get_pubkey(cert);
  const std::string input = jwt.substr(0, dot2), sig = b64url(jwt.substr(dot2 + 1));
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  CHECK(EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1);
  CHECK(EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                         reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1);
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  X509_free(cert);
  BIO_free(bio);
}

TEST_CASE("azure: capacity codes fall back, 429 and 5xx are retried, the rest fail with their kind") {
  using K = Error::Kind;
  CHECK(azure::kind_of("SkuNotAvailable", 409, "") == K::Conflict);
  CHECK(azure::kind_of("AllocationFailed", 200, "") == K::Conflict);
  CHECK(azure::kind_of("ZonalAllocationFailed", 200, "") == K::Conflict);
  CHECK(azure::kind_of("OperationNotAllowed", 409, "... exceeding approved Low Priority Cores quota ...") ==
        K::Conflict);
  CHECK(azure::kind_of("OperationNotAllowed", 409, "the VM is marked for deletion") == K::Invalid);
  CHECK(azure::kind_of("SubscriptionRequestsThrottled", 429, "") == K::Throttled);
  CHECK(azure::kind_of("ServiceUnavailable", 503, "") == K::Throttled);
  CHECK(azure::kind_of("InternalServerError", 500, "") == K::Retryable);
  CHECK(azure::kind_of("ResourceNotFound", 404, "") == K::NotFound);
  CHECK(azure::kind_of("AuthorizationFailed", 403, "") == K::Fatal);
  CHECK(azure::kind_of("InvalidParameter", 400, "") == K::Invalid);
  CHECK(azure::describe_error({{"code", "A"},
                               {"message", "m"},
                               {"target", "vmSize"},
                               {"details", {{{"code", "B"}, {"message", "n"}}}}}) ==
        "A: m (target vmSize) (details: B: n)");
}

TEST_CASE("azure: request_rates are reads/writes/deletes=SIZE:REFILL, a bad entry is named") {
  auto ok = azure::parse_rates({{"writes", "200:10"}, {"reads", "250:25"}});
  REQUIRE(ok.ok());
  CHECK(ok->at("writes").size == 200);
  CHECK(ok->at("reads").refill_per_second == 25);
  auto bad = azure::parse_rates({{"writes", "200"}});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("'writes=200' is not SIZE:REFILL_PER_SECOND") != std::string::npos);
  CHECK_FALSE(azure::parse_rates({{"puts", "1:1"}}).ok());
}

TEST_CASE("azure: credentials come from AZURE_* variables, a missing one is named, the secret is refused in a "
          "blueprint and redacted") {
  auto c = parse_provider_config(azure::schema(),
                                 {"AZURE_TENANT_ID=t", "AZURE_CLIENT_ID=c", "AZURE_CLIENT_SECRET=topsecret",
                                  "AZURE_SUBSCRIPTION_ID=s", "AZURE_AUTHORITY_HOST=https://login.microsoftonline.us",
                                  "AZURE_RESOURCE_MANAGER_ENDPOINT=https://management.usgovcloudapi.net"},
                                 {}, {});
  REQUIRE(c.ok());
  CHECK(c->str("authority_host") == "https://login.microsoftonline.us");
  CHECK(c->str("resource_manager_endpoint") == "https://management.usgovcloudapi.net");
  CHECK(redacted_options(azure::schema(), *c).dump().find("topsecret") == std::string::npos);
  azure::AzureProvider p;
  CHECK(p.configure(*c).ok());

  auto lacking = parse_provider_config(azure::schema(), {"AZURE_CLIENT_ID=c", "AZURE_SUBSCRIPTION_ID=s",
                                                        "PLINTH_AZURE_MANAGED_IDENTITY=false"}, {}, {});
  REQUIRE(lacking.ok());
  azure::AzureProvider q;
  auto st = q.configure(*lacking);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message ==
        "Azure credentials are incomplete: set option tenant_id (AZURE_TENANT_ID), option client_secret "
        "(AZURE_CLIENT_SECRET), option client_certificate_path (AZURE_CLIENT_CERTIFICATE_PATH) or option "
        "federated_token_file (AZURE_FEDERATED_TOKEN_FILE) (a service principal: az ad sp create-for-rbac prints "
        "them; workload identity: AZURE_FEDERATED_TOKEN_FILE with the app's tenant and client ids)");

  CHECK_FALSE(parse_provider_config(azure::schema(), {}, {{"client_secret", "x", "blueprint (bp.yaml:3:5)"}}, {}).ok());
}
