#include "tests/emulators/gcp/options.h"

#include <charconv>
#include <regex>

#include "tests/emulators/common/flags.h"

namespace plinth::gcp_emulator {

using emulator::FlagReader;
using emulator::to_double;
using emulator::to_int;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    auto end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

const std::regex kZone(R"([a-z]+-[a-z]+[0-9]+-[a-z])");

}  // namespace

std::string usage() {
  return R"(usage: gcp-emulator [flags]

Emulates Google's OAuth 2.0 token endpoint and a Compute Engine v1 subset over
HTTPS for tests. See docs/emulators.md for the full description.

  --host ADDR                listen address (default 127.0.0.1)
  --port P                   listen port (default 8443; 0 picks a free port)
  --threads N                worker threads (default 64)
  --project ID               the one project (default plinth-test)
  --project-number N         its number, used in messages (default 123456789012)
  --zones Z1,Z2,...          zones that exist (default us-central1-a,b,c us-east4-a,b us-east5-a europe-west4-a,b)
  --key-dir DIR              write service-account.json here (default: --tls-dir)
  --extra-keys               also write service-account-revoked.json (a key the emulator does not trust)
                             and service-account-noperm.json (an account without access to the project)
  --authorize-key FILE       also trust this service-account key file's key (repeatable)
  --token-lifetime-s N       access token lifetime, the token answer's expires_in (default 3600)
  --subject-token T          an OIDC token Security Token Service (POST /v1/token) exchanges
                             (repeatable): workload identity federation
  --refresh-token R          a user refresh token POST /token's refresh_token grant accepts
                             (client 764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com)
  --metadata-port N          serve the GCE metadata server over plain HTTP on N (0: a free port,
                             printed as "metadata http://HOST:PORT"): the default service
                             account's token and the project id
  --operation-ms N           how long insert/delete/stop/start operations take (default 1000; 0 = done at once)
  --wait-timeout-ms N        zoneOperations.wait gives up after N ms (default 120000, as GCP)
  --capacity [ZONE/]TYPE=N   instances of machine type TYPE that fit in ZONE (all zones without ZONE/);
                             past it inserts fail with ZONE_RESOURCE_POOL_EXHAUSTED[_WITH_DETAILS] (repeatable)
  --quota METRIC[@REGION]=N  a quota limit, e.g. CPUS@us-central1=96, NVIDIA_H100_GPUS@us-central1=16,
                             PREEMPTIBLE_NVIDIA_H100_GPUS@us-central1=8, GPUS_ALL_REGIONS=64 (repeatable)
  --stockout-code CODE       ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS (default) or ZONE_RESOURCE_POOL_EXHAUSTED
  --rate-limit RPS[:BURST]   token bucket per project over Compute calls; past it 429 (default off)
  --rate-limit-reason R      rateLimitExceeded (default) or userRateLimitExceeded
  --latency-ms N|MIN-MAX     added latency per request
  --rate-500 F               fraction of Compute calls answered 500 backendError
  --rate-503 F               fraction of Compute calls answered 503 backendError
  --drop-rate F              fraction of Compute calls whose connection is closed before they are processed
  --lose-response-rate F     fraction of insert/delete/start/stop calls that succeed but whose answer is lost
  --seed S                   seed of the fault generator (default 1)
  --request-log FILE         one JSON line per request
  --tls-dir DIR              write the generated ca.pem, server.pem and server-key.pem to DIR
  --tls-cert F --tls-key F   serve this certificate instead of a generated one
  --http                     plain HTTP (debugging only)
  --help                     this text
)";
}

std::string parse_options(int argc, char** argv, Options& o, bool& help) {
  help = false;
  FlagReader args(argc, argv);
  while (args.next()) {
    const std::string& flag = args.flag();
    const std::string& value = args.value();

    std::string err;
    if (flag == "--help" || flag == "-h") {
      help = true;
      return "";
    } else if (flag == "--host") {
      err = args.str_flag(o.host);
    } else if (flag == "--port") {
      err = args.int_flag(o.port, 0, 65535);
    } else if (flag == "--threads") {
      err = args.int_flag(o.threads, 1, 4096);
    } else if (flag == "--project") {
      err = args.str_flag(o.project);
      if (err.empty() && !std::regex_match(o.project, std::regex(R"([a-z][-a-z0-9]{4,28}[a-z0-9])")))
        err =
            "--project needs a project ID (6 to 30 lowercase letters, digits and hyphens, starting with a letter), "
            "got '" +
            o.project + "'";
    } else if (flag == "--project-number") {
      err = args.str_flag(o.project_number);
      long long n = 0;
      if (err.empty() && (!to_int(o.project_number, n) || n <= 0))
        err = "--project-number needs a positive number, got '" + o.project_number + "'";
    } else if (flag == "--zones") {
      if (!args.need()) {
        err = "--zones needs a comma-separated list";
      } else {
        o.zones = split(value, ',');
        if (o.zones.empty()) err = "--zones needs at least one zone";
        for (const auto& z : o.zones)
          if (err.empty() && !std::regex_match(z, kZone))
            err = "--zones: '" + z + "' is not a zone name like us-central1-a";
      }
    } else if (flag == "--key-dir") {
      err = args.str_flag(o.key_dir);
    } else if (flag == "--extra-keys") {
      o.extra_keys = true;
    } else if (flag == "--authorize-key") {
      std::string f;
      err = args.str_flag(f);
      o.authorize_keys.push_back(f);
    } else if (flag == "--subject-token") {
      std::string t;
      err = args.str_flag(t);
      o.subject_tokens.push_back(t);
    } else if (flag == "--refresh-token") {
      err = args.str_flag(o.refresh_token);
    } else if (flag == "--metadata-port") {
      int p = 0;
      err = args.int_flag(p, 0, 65535);
      o.metadata_port = p;
    } else if (flag == "--token-lifetime-s") {
      err = args.int_flag(o.token_lifetime_s, 1, 86400);
    } else if (flag == "--operation-ms") {
      err = args.int_flag(o.operation_ms, 0, 3600000);
    } else if (flag == "--wait-timeout-ms") {
      err = args.int_flag(o.wait_timeout_ms, 0, 3600000);
    } else if (flag == "--capacity" || flag == "--quota") {
      if (!args.need()) {
        err = flag + " needs KEY=N";
      } else {
        auto eq = value.rfind('=');
        double n = -1;
        if (eq == std::string::npos || eq == 0 || !to_double(value.substr(eq + 1), n) || n < 0) {
          err = flag == "--capacity"
                    ? "--capacity needs [ZONE/]MACHINE_TYPE=N, e.g. us-central1-a/a3-highgpu-8g=4; got '" + value + "'"
                    : "--quota needs METRIC[@REGION]=N, e.g. NVIDIA_H100_GPUS@us-central1=16; got '" + value + "'";
        } else if (flag == "--capacity") {
          o.capacity[value.substr(0, eq)] = static_cast<int>(n);
        } else {
          o.quotas[value.substr(0, eq)] = n;
        }
      }
    } else if (flag == "--stockout-code") {
      if (!args.need()) err = flag + " needs a value";
      if (err.empty()) {
        if (value == "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS")
          o.stockout_details = true;
        else if (value == "ZONE_RESOURCE_POOL_EXHAUSTED")
          o.stockout_details = false;
        else
          err = "--stockout-code is ZONE_RESOURCE_POOL_EXHAUSTED or ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS, got '" +
                value + "'";
      }
    } else if (flag == "--rate-limit") {
      if (!args.need()) {
        err = "--rate-limit needs RPS[:BURST]";
      } else {
        auto colon = value.find(':');
        double rps = 0;
        long long burst = 0;
        bool ok = to_double(value.substr(0, colon), rps) && rps > 0;
        if (colon != std::string::npos) ok = ok && to_int(value.substr(colon + 1), burst) && burst >= 1;
        if (!ok) err = "--rate-limit needs RPS[:BURST] with RPS > 0 and BURST >= 1, e.g. 20:40; got '" + value + "'";
        o.rate_limit_rps = rps;
        o.rate_limit_burst = colon == std::string::npos ? std::max(1, static_cast<int>(rps)) : static_cast<int>(burst);
      }
    } else if (flag == "--rate-limit-reason") {
      err = args.str_flag(o.rate_limit_reason);
      if (err.empty() && o.rate_limit_reason != "rateLimitExceeded" && o.rate_limit_reason != "userRateLimitExceeded")
        err = "--rate-limit-reason is rateLimitExceeded or userRateLimitExceeded, got '" + o.rate_limit_reason + "'";
    } else if (flag == "--latency-ms") {
      err = args.latency_flag(o.latency_min_ms, o.latency_max_ms);
    } else if (flag == "--rate-500") {
      err = args.rate_flag(o.rate_500);
    } else if (flag == "--rate-503") {
      err = args.rate_flag(o.rate_503);
    } else if (flag == "--drop-rate") {
      err = args.rate_flag(o.drop_rate);
    } else if (flag == "--lose-response-rate") {
      err = args.rate_flag(o.lose_response_rate);
    } else if (flag == "--seed") {
      err = args.seed_flag(o.seed);
    } else if (flag == "--request-log") {
      err = args.str_flag(o.request_log);
    } else if (flag == "--tls-dir") {
      err = args.str_flag(o.tls_dir);
    } else if (flag == "--tls-cert") {
      err = args.str_flag(o.tls_cert);
    } else if (flag == "--tls-key") {
      err = args.str_flag(o.tls_key);
    } else if (flag == "--http") {
      o.http = true;
    } else {
      err = "unknown flag '" + args.arg() + "'; run gcp-emulator --help for the list";
    }
    if (!err.empty()) return err;
  }
  if (o.rate_500 + o.rate_503 + o.drop_rate > 1) return "--rate-500, --rate-503 and --drop-rate add up to more than 1";
  if (o.tls_cert.empty() != o.tls_key.empty()) return "--tls-cert and --tls-key go together";
  if (o.key_dir.empty()) o.key_dir = o.tls_dir;
  for (const auto& [key, n] : o.capacity) {
    auto slash = key.find('/');
    if (slash != std::string::npos) {
      std::string zone = key.substr(0, slash);
      if (std::find(o.zones.begin(), o.zones.end(), zone) == o.zones.end())
        return "--capacity names zone '" + zone + "', which is not in --zones";
    }
  }
  return "";
}

}  // namespace plinth::gcp_emulator
