#include "tests/emulators/azure/options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <sstream>

#include "tests/emulators/common/flags.h"

namespace plinth::azure_emulator {

using emulator::FlagReader;
using emulator::to_double;
using emulator::to_int;

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

/// "eastus" or "eastus/1" -> Place; "" when malformed.
std::string parse_place(const std::string& s, Place& out) {
  auto slash = s.find('/');
  out.location = lower(s.substr(0, slash));
  out.zone = slash == std::string::npos ? "" : s.substr(slash + 1);
  if (out.location.empty()) return "needs a location, e.g. eastus or eastus/1";
  if (slash != std::string::npos && out.zone != "1" && out.zone != "2" && out.zone != "3")
    return "zone must be 1, 2 or 3, got '" + out.zone + "'";
  return "";
}

/// "N" or "N:PER_SECOND".
std::string parse_bucket(const std::string& s, Bucket& out) {
  auto colon = s.find(':');
  long long size = 0;
  double rate = out.per_second;
  if (!to_int(s.substr(0, colon), size) || size < 1 || size > 1000000) return "size must be a whole number from 1";
  if (colon != std::string::npos && (!to_double(s.substr(colon + 1), rate) || rate < 0))
    return "refill must be a non-negative number of tokens per second";
  out.size = static_cast<int>(size);
  out.per_second = rate;
  return "";
}

}  // namespace

std::string usage() {
  return R"(usage: azure-emulator [flags]

Emulates Microsoft Entra (client-credentials tokens) and an Azure Resource
Manager subset (resource groups, virtual machines, network interfaces, virtual
networks) over HTTPS for tests. See docs/emulators.md for the full description.

Listening
  --host ADDR                  listen address (default 127.0.0.1)
  --port P                     port (default 8443; 0 picks a free one)
  --threads N                  worker threads (default 32)
  --proxy-port P               also run an HTTP CONNECT proxy on P (0: free port) that tunnels
                               login.microsoftonline.com, login.windows.net and management.azure.com
                               to this emulator and refuses every other host
Microsoft Entra
  --tenant ID                  the one tenant (default 72f1c1a4-8a9e-4c0c-9d4b-2f7a1e5b6c3d)
  --client-id ID               the application (default 3c9d7e2a-41f6-4b8a-9c0d-8e7f6a5b4c3d)
  --client-secret S            its secret (default plinth-emulator-secret)
  --client-certificate         generate a certificate for --client-id, register it and write
                               client.pem (certificate + RSA key) to --tls-dir
  --app ID:SECRET[:reader]     another application (repeatable); :reader gives it the Reader role
  --resource URI               another accepted token audience (default management.azure.com and
                               management.core.windows.net)
  --token-lifetime S           access token lifetime in seconds (default 3599)
  --federated-credential ISSUER,SUBJECT  a federated identity credential of --client-id
                               (repeatable): OIDC tokens with that iss and sub, aud
                               api://AzureADTokenExchange, are accepted as its client assertion
  --metadata-port P            serve managed identity tokens over plain HTTP on P (0: a free port,
                               printed as "metadata http://HOST:PORT"): IMDS
                               /metadata/identity/oauth2/token and App Service /msi/token,
                               for --client-id
  --identity-header H          the X-IDENTITY-HEADER the App Service endpoint wants
Resource Manager
  --subscription ID            a subscription of the tenant (repeatable; default 5f3c2a1b-9d8e-4f7a-8b6c-0d1e2f3a4b5c)
  --locations L1,L2,...        regions, each with zones 1-3 (default eastus,westus2,westus3,southcentralus)
  --vm-size NAME:VCPUS:FAMILY[:noaccel]  add a VM size to the built-in catalog (repeatable)
  --capacity LOC[/ZONE]:SIZE=N at most N allocated VMs of SIZE there (repeatable; default unlimited)
  --sku-unavailable LOC[/ZONE]:SIZE  SIZE is restricted there: SkuNotAvailable (repeatable)
  --quota LOC:FAMILY=N         vCPU quota of a family (or cores / lowPriorityCores) in LOC (repeatable)
  --lro-delay-ms N             how long compute operations and resource group deletion take (default 1000)
  --network-delay-ms N         how long network operations take (default 0)
  --retry-after S              Retry-After of long-running operations (default 1)
  --page-size N                list page size before nextLink (default 50)
  --reads-bucket N[:R]         per-subscription read token bucket, R tokens/s (default 250:25)
  --writes-bucket N[:R]        write bucket (default 200:10)
  --deletes-bucket N[:R]       delete bucket (default 200:10)
Faults (Resource Manager requests only, drawn from --seed)
  --latency-ms MIN[:MAX]       added latency per request (MIN-MAX also accepted)
  --rate-429 F                 fraction answered 429 SubscriptionRequestsThrottled
  --rate-500 F                 fraction answered 500 InternalServerError
  --rate-503 F                 fraction answered 503 ServiceUnavailable with Retry-After
  --drop-rate F                fraction closed without an answer, before anything is done
  --lose-response-rate F       fraction of successful PUT/POST/PATCH/DELETE whose answer is lost
                               after the operation was accepted (the connection is closed)
  --seed S                     seed of the fault generator (default 1)
Other
  --request-log FILE           one JSON line per request
  --tls-dir DIR                write ca.pem, server.pem, server-key.pem (and client.pem) there
  --http                       plain HTTP (debugging only)
  --help                       this text
)";
}

std::string parse_options(int argc, char** argv, Options& o, bool& help) {
  help = false;
  AppRegistration primary{kDefaultClientId, kDefaultClientSecret, false, false};
  std::vector<AppRegistration> extra_apps;
  FlagReader args(argc, argv);
  while (args.next()) {
    const std::string& flag = args.flag();
    const std::string& value = args.value();
    auto bucket_flag = [&](Bucket& out) -> std::string {
      if (!args.need()) return flag + " needs N or N:TOKENS_PER_SECOND";
      std::string err = parse_bucket(value, out);
      return err.empty() ? "" : flag + " " + value + ": " + err;
    };

    std::string err;
    if (flag == "--help" || flag == "-h") {
      help = true;
      return "";
    } else if (flag == "--host") {
      err = args.str_flag(o.host);
    } else if (flag == "--port") {
      err = args.int_flag(o.port, 0, 65535);
    } else if (flag == "--threads") {
      err = args.int_flag(o.threads, 2, 4096);
    } else if (flag == "--proxy-port") {
      int p = 0;
      err = args.int_flag(p, 0, 65535);
      o.proxy_port = p;
    } else if (flag == "--tenant") {
      err = args.str_flag(o.tenant);
      o.tenant = lower(o.tenant);
    } else if (flag == "--client-id") {
      err = args.str_flag(primary.client_id);
      primary.client_id = lower(primary.client_id);
    } else if (flag == "--client-secret") {
      if (!args.need()) err = "--client-secret needs a value (\"\" for certificate-only)";
      primary.secret = value;
    } else if (flag == "--client-certificate") {
      o.client_certificate = true;
    } else if (flag == "--app") {
      if (!args.need()) {
        err = "--app needs ID:SECRET[:reader]";
      } else {
        auto parts = split(value, ':');
        if (parts.size() < 2 || parts.size() > 3 || parts[0].empty() || parts[1].empty() ||
            (parts.size() == 3 && parts[2] != "reader"))
          err = "--app needs ID:SECRET or ID:SECRET:reader, got '" + value + "'";
        else
          extra_apps.push_back({lower(parts[0]), parts[1], parts.size() == 3, false});
      }
    } else if (flag == "--resource") {
      std::string resource;
      err = args.str_flag(resource);
      o.resources.push_back(resource);
    } else if (flag == "--federated-credential") {
      const bool given = args.need();
      const auto comma = value.find(',');
      if (!given || comma == std::string::npos || comma == 0 || comma + 1 == value.size())
        err = "--federated-credential needs ISSUER,SUBJECT, e.g. "
              "https://token.actions.githubusercontent.com,repo:example/fleet:ref:refs/heads/main";
      else
        primary.federated.emplace_back(value.substr(0, comma), value.substr(comma + 1));
    } else if (flag == "--metadata-port") {
      int p = 0;
      err = args.int_flag(p, 0, 65535);
      o.metadata_port = p;
    } else if (flag == "--identity-header") {
      err = args.str_flag(o.identity_header);
    } else if (flag == "--token-lifetime") {
      err = args.int_flag(o.token_lifetime_s, 1, 86400 * 7);
    } else if (flag == "--subscription") {
      std::string s;
      err = args.str_flag(s);
      o.subscriptions.push_back(lower(s));
    } else if (flag == "--locations") {
      if (!args.need() || value.empty()) {
        err = "--locations needs a comma-separated list, e.g. eastus,westus2";
      } else {
        o.locations.clear();
        for (auto& l : split(value, ','))
          if (!l.empty()) o.locations.push_back(lower(l));
      }
    } else if (flag == "--vm-size") {
      auto parts = args.need() ? split(value, ':') : std::vector<std::string>{};
      long long vcpus = 0;
      if (parts.size() < 3 || parts.size() > 4 || parts[0].empty() || !to_int(parts[1], vcpus) || vcpus < 1 ||
          parts[2].empty() || (parts.size() == 4 && parts[3] != "noaccel"))
        err = "--vm-size needs NAME:VCPUS:FAMILY[:noaccel], e.g. Standard_ND96isr_H200_v5:96:standardNDSH200v5Family";
      else
        o.extra_sizes.push_back({parts[0], static_cast<int>(vcpus), parts[2], parts.size() == 3});
    } else if (flag == "--capacity") {
      // LOC[/ZONE]:SIZE=N
      auto colon = args.need() ? value.find(':') : std::string::npos;
      auto eq = value.rfind('=');
      long long n = -1;
      Place place;
      if (colon == std::string::npos || eq == std::string::npos || eq < colon || !to_int(value.substr(eq + 1), n) ||
          n < 0) {
        err = "--capacity needs LOCATION[/ZONE]:SIZE=COUNT, e.g. eastus/1:Standard_ND96isr_H100_v5=4";
      } else if (std::string e = parse_place(value.substr(0, colon), place); !e.empty()) {
        err = "--capacity " + value + ": " + e;
      } else {
        o.capacity[{place, lower(value.substr(colon + 1, eq - colon - 1))}] = static_cast<int>(n);
      }
    } else if (flag == "--sku-unavailable") {
      auto colon = args.need() ? value.find(':') : std::string::npos;
      Place place;
      if (colon == std::string::npos || colon + 1 >= value.size()) {
        err = "--sku-unavailable needs LOCATION[/ZONE]:SIZE, e.g. westus2:Standard_ND96isr_H100_v5";
      } else if (std::string e = parse_place(value.substr(0, colon), place); !e.empty()) {
        err = "--sku-unavailable " + value + ": " + e;
      } else {
        o.sku_unavailable.push_back({place, lower(value.substr(colon + 1))});
      }
    } else if (flag == "--quota") {
      auto colon = args.need() ? value.find(':') : std::string::npos;
      auto eq = value.rfind('=');
      long long n = -1;
      if (colon == std::string::npos || eq == std::string::npos || eq < colon + 2 || !to_int(value.substr(eq + 1), n) ||
          n < 0 || value.substr(0, colon).find('/') != std::string::npos)
        err =
            "--quota needs LOCATION:FAMILY=VCPUS, e.g. eastus:standardNDSH100v5Family=192 (FAMILY may be cores "
            "or lowPriorityCores)";
      else
        o.quota[{lower(value.substr(0, colon)), lower(value.substr(colon + 1, eq - colon - 1))}] = static_cast<int>(n);
    } else if (flag == "--lro-delay-ms") {
      err = args.int_flag(o.lro_delay_ms, 0, 3600000);
    } else if (flag == "--network-delay-ms") {
      err = args.int_flag(o.network_delay_ms, 0, 3600000);
    } else if (flag == "--retry-after") {
      err = args.int_flag(o.retry_after_s, 0, 3600);
    } else if (flag == "--page-size") {
      err = args.int_flag(o.page_size, 1, 1000);
    } else if (flag == "--reads-bucket") {
      err = bucket_flag(o.reads);
    } else if (flag == "--writes-bucket") {
      err = bucket_flag(o.writes);
    } else if (flag == "--deletes-bucket") {
      err = bucket_flag(o.deletes);
    } else if (flag == "--latency-ms") {
      err = args.latency_flag(o.latency_min_ms, o.latency_max_ms, 3600000, ":-", "MIN or MIN:MAX");
    } else if (flag == "--rate-429") {
      err = args.rate_flag(o.rate_429);
    } else if (flag == "--rate-500") {
      err = args.rate_flag(o.rate_500);
    } else if (flag == "--rate-503") {
      err = args.rate_flag(o.rate_503);
    } else if (flag == "--drop-rate") {
      err = args.rate_flag(o.drop_rate);
    } else if (flag == "--lose-response-rate") {
      err = args.rate_flag(o.lose_rate);
    } else if (flag == "--seed") {
      err = args.seed_flag(o.seed);
    } else if (flag == "--request-log") {
      err = args.str_flag(o.request_log);
    } else if (flag == "--tls-dir") {
      err = args.str_flag(o.tls_dir);
    } else if (flag == "--http") {
      o.http = true;
    } else {
      err = "unknown flag '" + args.arg() + "'; run azure-emulator --help for the list";
    }
    if (!err.empty()) return err;
  }

  if (primary.secret.empty() && !o.client_certificate)
    return "--client-secret \"\" leaves --client-id without a credential; add --client-certificate";
  primary.certificate = o.client_certificate;
  o.apps = {primary};
  for (auto& a : extra_apps) {
    for (const auto& b : o.apps)
      if (b.client_id == a.client_id) return "--app " + a.client_id + " is registered twice";
    o.apps.push_back(a);
  }
  if (o.client_certificate && o.tls_dir.empty())
    return "--client-certificate writes client.pem to --tls-dir; add --tls-dir DIR";
  if (o.subscriptions.empty()) o.subscriptions.push_back(kDefaultSubscription);
  std::set<std::string> locations(o.locations.begin(), o.locations.end());
  auto known = [&](const std::string& loc) { return locations.count(loc) > 0; };
  auto list = [&] {
    std::string s;
    for (const auto& l : o.locations) s += (s.empty() ? "" : ",") + l;
    return s;
  };
  for (const auto& [key, n] : o.capacity)
    if (!known(key.first.location))
      return "--capacity names location '" + key.first.location + "', which is not in --locations (" + list() + ")";
  for (const auto& [place, size] : o.sku_unavailable)
    if (!known(place.location))
      return "--sku-unavailable names location '" + place.location + "', which is not in --locations (" + list() + ")";
  for (const auto& [key, n] : o.quota)
    if (!known(key.first))
      return "--quota names location '" + key.first + "', which is not in --locations (" + list() + ")";
  if (o.rate_429 + o.rate_500 + o.rate_503 + o.drop_rate > 1)
    return "--rate-429, --rate-500, --rate-503 and --drop-rate add up to more than 1";
  return "";
}

}  // namespace plinth::azure_emulator
