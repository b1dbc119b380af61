// azure-emulator's workload and managed identities checked with Debian's
// azure-identity: ManagedIdentityCredential exchanging a federated token
// (its TokenExchangeCredential, what AKS workload identity uses), the
// ClientAssertionCredential that newer releases' WorkloadIdentityCredential
// wraps (Debian's 1.13.0b2 has no WorkloadIdentityCredential), asking IMDS
// (AZURE_POD_IDENTITY_AUTHORITY_HOST) and App Service (IDENTITY_ENDPOINT with
// IDENTITY_HEADER); Resource Manager taking the tokens they got.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/emulator_process.h"
#include "tests/support/run.h"

namespace azure_identity_emulator_test {

using nlohmann::json;

class Emulator : public plinth::test::EmulatorProcess {
 public:
  explicit Emulator(std::vector<std::string> args) : EmulatorProcess(AZURE_EMULATOR_BINARY, std::move(args)) {}
  std::string metadata() const {
    for (const auto& l : lines())
      if (l.rfind("metadata ", 0) == 0) return l.substr(9);
    return "";
  }
};

// One scenario per call: prints {"ok": true, "expires_in": S, "arm": STATUS} or {"error": "..."}.
const char* kScript = R"(
import base64, json, os, sys, time, requests
from azure.identity import ClientAssertionCredential, ManagedIdentityCredential
cfg = json.loads(sys.argv[1])
def b(d): return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
now = int(time.time())
jwt = b({"alg": "RS256", "typ": "JWT", "kid": "k"}) + "." + b({"iss": cfg["issuer"], "sub": cfg["subject"],
      "aud": "api://AzureADTokenExchange", "iat": now, "exp": now + 600}) + ".c2ln"
path = os.path.join(cfg["dir"], "federated-token")
open(path, "w").write(jwt)
env = {"REQUESTS_CA_BUNDLE": cfg["ca"]}
if cfg["how"] in ("federated", "client-assertion"):
    env.update({"AZURE_AUTHORITY_HOST": cfg["base"], "AZURE_TENANT_ID": cfg["tenant"],
                "AZURE_CLIENT_ID": cfg["client"], "AZURE_FEDERATED_TOKEN_FILE": path})
elif cfg["how"] == "imds":
    env["AZURE_POD_IDENTITY_AUTHORITY_HOST"] = cfg["metadata"]
else:
    env.update({"IDENTITY_ENDPOINT": cfg["metadata"] + "/msi/token", "IDENTITY_HEADER": cfg["header"]})
os.environ.update(env)
try:
    if cfg["how"] == "client-assertion":
        # What newer azure-identity's WorkloadIdentityCredential is: a ClientAssertionCredential reading the file.
        cred = ClientAssertionCredential(cfg["tenant"], cfg["client"], lambda: open(path).read())
    elif cfg["how"] == "federated":
        cred = ManagedIdentityCredential(client_id=cfg["client"])
    else:
        cred = ManagedIdentityCredential()
    t = cred.get_token("https://management.azure.com/.default")
except Exception as e:
    print(json.dumps({"error": str(e).splitlines()[0]}))
    sys.exit(0)
r = requests.get(cfg["base"] + "/subscriptions/" + cfg["subscription"] + "/resourcegroups?api-version=2021-04-01",
                 headers={"Authorization": "Bearer " + t.token}, verify=cfg["ca"])
print(json.dumps({"ok": True, "expires_in": t.expires_on - now, "arm": r.status_code}))
)";

json run(const Emulator& em, const std::string& how, const std::string& subject = "repo:example/fleet:ref:refs/heads/main",
         const std::string& header = "hdr-value") {
  plinth::test::TempDir dir;
  auto field = [&](const std::string& key) {
    const std::string& l = em.lines().front();
    auto at = l.find(key + "=");
    return l.substr(at + key.size() + 1, l.find(' ', at) - at - key.size() - 1);
  };
  json cfg = {{"how", how},
              {"base", em.base()},
              {"ca", em.ca()},
              {"tenant", field("tenant")},
              {"client", field("client-id")},
              {"subscription", field("subscription")},
              {"metadata", em.metadata()},
              {"header", header},
              {"issuer", "https://token.actions.githubusercontent.com"},
              {"subject", subject},
              {"dir", dir.path()}};
  auto r = plinth::test::run_program({"/usr/bin/python3", "-c", kScript, cfg.dump()}, "",
                                     {{"HTTPS_PROXY", ""}, {"HTTP_PROXY", ""}, {"NO_PROXY", "127.0.0.1,localhost"}});
  INFO(r.out << r.err << "\nemulator stderr:\n" << em.stderr_text());
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

TEST_CASE("azure-emulator identity: azure-identity gets tokens by workload identity, IMDS and App Service") {
  Emulator em({"--metadata-port", "0", "--identity-header", "hdr-value", "--token-lifetime", "1800",
               "--federated-credential", "https://token.actions.githubusercontent.com,repo:example/fleet:ref:refs/heads/main"});
  REQUIRE_FALSE(em.metadata().empty());
  for (const char* how : {"federated", "client-assertion", "imds", "app-service"}) {
    INFO(how);
    json out = run(em, how);
    INFO(out.dump());
    REQUIRE(out.contains("ok"));
    CHECK(out["arm"] == 200);
    CHECK(out["expires_in"].get<double>() > 1700);
    // expires_on is in whole seconds and the script truncates its own clock reading, so a token
    // issued just after a second boundary that the reading did not cross shows 1801.
    CHECK(out["expires_in"].get<double>() <= 1801);
  }
  // An untrusted subject, a wrong App Service header.
  json refused = run(em, "federated", "repo:attacker/fork:pull_request");
  REQUIRE(refused.contains("error"));
  CHECK(refused["error"].get<std::string>().find("AADSTS70021") != std::string::npos);
  json wrong = run(em, "app-service", "repo:example/fleet:ref:refs/heads/main", "not-the-header");
  CHECK(wrong.contains("error"));
  // IMDS wants the Metadata header.
  auto bare = plinth::test::run_program({"/usr/bin/curl", "-s", "-w", " %{http_code}",
                                         em.metadata() + "/metadata/identity/oauth2/token?api-version=2018-02-01&"
                                                         "resource=https://management.azure.com/"});
  CHECK(bare.out.find("Required metadata header not specified") != std::string::npos);
  CHECK(bare.out.substr(bare.out.size() - 3) == "400");
}

}  // namespace azure_identity_emulator_test
