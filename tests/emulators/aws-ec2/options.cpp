#include "tests/emulators/aws-ec2/options.h"

#include <algorithm>
#include <charconv>

#include "tests/emulators/common/flags.h"

namespace plinth::aws_ec2_emulator {

using emulator::FlagReader;
using emulator::to_double;
using emulator::to_int;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return out;
}

}  // namespace

std::string usage() {
  return R"(usage: aws-ec2-emulator [flags]

An Amazon EC2 Query API endpoint (API 2016-11-15) over HTTPS that checks
SigV4 on every request. See docs/emulators.md for the full description.

Endpoint and identity
  --host ADDR                 listen address (default 127.0.0.1)
  --port P                    port (default 8443; 0 picks a free one)
  --threads N                 worker threads (default 32)
  --region R                  the region served; a credential scoped elsewhere is refused (default us-east-1)
  --zones A,B,...             availability zones (default REGIONa,REGIONb,REGIONc)
  --account-id ID             owner of everything (default 123456789012)
  --access-key ID             the accepted access key id (default AKIDEXAMPLE)
  --secret-key S              its secret (default the AWS SigV4 suite's example secret)
  --session-token T           require this X-Amz-Security-Token (temporary credentials)
  --web-identity-token T      an OIDC token STS AssumeRoleWithWebIdentity accepts (repeatable)
  --sso-token T               an IAM Identity Center access token the portal's GetRoleCredentials
                              (GET /federation/credentials) accepts (repeatable)
  --credential-ttl S          seconds the credentials STS, IMDS, the container endpoint and SSO issue
                              live (1-43200, default 3600); EC2 answers ExpiredToken after
  --metadata-port N           serve IMDSv2 and container credentials over plain HTTP on N
                              (0: a free port, printed as "metadata http://HOST:PORT")
  --instance-role NAME        the role IMDS lists (default plinth-node)
  --container-token T         the Authorization the container credentials endpoint wants
  --max-clock-skew S          seconds a request's X-Amz-Date may be off (default 300, AWS's 5 minutes)
  --model FILE                botocore EC2 model (default tests/data/third_party/aws-ec2/botocore-model/service-2.json)

The world
  --subnet ID=ZONE            a subnet (repeatable; default one per zone, see docs)
  --security-group ID=NAME    a security group (repeatable; default the VPC's "default" group)
  --key-pair NAME             a key pair (repeatable; default "default")
  --capacity TYPE:ZONE=N      at most N instances of TYPE at once in ZONE (repeatable; TYPE or ZONE may be *)
  --default-capacity N        the limit of every pool without a --capacity (default unlimited)
  --capacity-reservation ID=TYPE:ZONE:COUNT[:capacity-block]
                              a targeted capacity reservation or Capacity Block (repeatable)
  --efa-limit TYPE=N          EFA interfaces TYPE allows (repeatable; overrides the built-in table)

Time
  --pending-ms N              pending -> running after N ms (default 1000)
  --shutdown-ms N             shutting-down -> terminated after N ms (default 1000)
  --terminated-visible-ms N   terminated instances stay listed this long (default 3600000, about AWS's hour)

Faults
  --throttle ACTION=SIZE:REFILL
                              token bucket of SIZE requests refilled at REFILL per second for ACTION
                              (or * for every action); past it RequestLimitExceeded (repeatable; default off)
  --latency-ms N|MIN-MAX      added latency per request
  --rate-500 F                fraction of requests answered 500 InternalError
  --rate-503 F                fraction of requests answered 503 Unavailable
  --drop-rate F               fraction of connections closed before the request is handled
  --lose-response ACTION=N    the next N successful answers of ACTION are lost (the action took effect,
                              the connection is closed without an answer) (repeatable)
  --lose-response-rate F      fraction of successful answers lost that way
  --seed S                    seed of ids and of the fault dice (default 1)

Plumbing
  --request-log FILE          one JSON line per request
  --tls-dir DIR               write the generated ca.pem, server.pem and server-key.pem to DIR
  --tls-cert F --tls-key F    serve this certificate instead of a generated one
  --http                      plain HTTP (debugging only)
  --help                      this text
)";
}

std::string parse_options(int argc, char** argv, Options& o, bool& help) {
  help = false;
  FlagReader args(argc, argv);
  while (args.next()) {
    const std::string& flag = args.flag();
    const std::string& value = args.value();
    /// "KEY=VALUE" with both sides non-empty.
    auto pair_flag = [&](std::string& k, std::string& v, const char* form) -> std::string {
      if (!args.need()) return flag + " needs " + form;
      auto eq = value.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == value.size())
        return flag + " needs " + form + ", got '" + value + "'";
      k = value.substr(0, eq);
      v = value.substr(eq + 1);
      return "";
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
      err = args.int_flag(o.threads, 1, 4096);
    } else if (flag == "--region") {
      err = args.str_flag(o.region);
    } else if (flag == "--zones") {
      std::string z;
      err = args.str_flag(z);
      o.zones = split(z, ',');
      for (const auto& zone : o.zones)
        if (zone.empty()) err = "--zones needs a comma-separated list such as us-east-1a,us-east-1b";
    } else if (flag == "--account-id") {
      err = args.str_flag(o.account_id);
      if (err.empty() &&
          (o.account_id.size() != 12 || o.account_id.find_first_not_of("0123456789") != std::string::npos))
        err = "--account-id needs 12 digits, got '" + o.account_id + "'";
    } else if (flag == "--access-key") {
      err = args.str_flag(o.access_key);
    } else if (flag == "--secret-key") {
      err = args.str_flag(o.secret_key);
    } else if (flag == "--session-token") {
      err = args.str_flag(o.session_token);
    } else if (flag == "--web-identity-token") {
      std::string t;
      err = args.str_flag(t);
      if (err.empty()) o.web_identity_tokens.push_back(t);
    } else if (flag == "--sso-token") {
      std::string t;
      err = args.str_flag(t);
      if (err.empty()) o.sso_tokens.push_back(t);
    } else if (flag == "--credential-ttl") {
      err = args.int_flag(o.credential_ttl_s, 1, 43200);
    } else if (flag == "--instance-role") {
      err = args.str_flag(o.instance_role);
    } else if (flag == "--container-token") {
      err = args.str_flag(o.container_token);
    } else if (flag == "--metadata-port") {
      int port = 0;
      err = args.int_flag(port, 0, 65535);
      if (err.empty()) o.metadata_port = port;
    } else if (flag == "--max-clock-skew") {
      err = args.int_flag(o.max_skew_s, 0, 86400 * 7);
    } else if (flag == "--model") {
      err = args.str_flag(o.model);
    } else if (flag == "--subnet") {
      std::string id, zone;
      err = pair_flag(id, zone, "ID=ZONE, e.g. subnet-0123456789abcdef0=us-east-1a");
      if (err.empty()) o.subnets[id] = zone;
    } else if (flag == "--security-group") {
      std::string id, name;
      err = pair_flag(id, name, "ID=NAME, e.g. sg-0123456789abcdef0=gpu-nodes");
      if (err.empty()) o.security_groups[id] = name;
    } else if (flag == "--key-pair") {
      std::string k;
      err = args.str_flag(k);
      o.key_pairs.push_back(k);
    } else if (flag == "--capacity") {
      std::string where, count;
      err = pair_flag(where, count, "TYPE:ZONE=N, e.g. p5.48xlarge:us-east-1a=25");
      long long n = 0;
      auto colon = where.find(':');
      if (err.empty() &&
          (colon == std::string::npos || colon == 0 || colon + 1 == where.size() || !to_int(count, n) || n < 0))
        err = "--capacity needs TYPE:ZONE=N with N >= 0, e.g. p5.48xlarge:us-east-1a=25; got '" + value + "'";
      if (err.empty()) o.capacity[{where.substr(0, colon), where.substr(colon + 1)}] = static_cast<int>(n);
    } else if (flag == "--default-capacity") {
      int n = 0;
      err = args.int_flag(n, 0, 100000000);
      o.default_capacity = n;
    } else if (flag == "--capacity-reservation") {
      std::string id, spec;
      err = pair_flag(id, spec, "ID=TYPE:ZONE:COUNT[:capacity-block]");
      if (err.empty()) {
        auto parts = split(spec, ':');
        long long n = 0;
        if (id.rfind("cr-", 0) != 0 || parts.size() < 3 || parts.size() > 4 || parts[0].empty() || parts[1].empty() ||
            !to_int(parts[2], n) || n < 0 ||
            (parts.size() == 4 && parts[3] != "capacity-block" && parts[3] != "default"))
          err =
              "--capacity-reservation needs cr-ID=TYPE:ZONE:COUNT[:capacity-block], e.g. "
              "cr-0123456789abcdef0=p5.48xlarge:us-east-1a:16:capacity-block; got '" +
              value + "'";
        else
          o.reservations.push_back(
              {id, parts[0], parts[1], static_cast<int>(n), parts.size() == 4 ? parts[3] : "default"});
      }
    } else if (flag == "--efa-limit") {
      std::string type, count;
      err = pair_flag(type, count, "TYPE=N");
      long long n = 0;
      if (err.empty() && (!to_int(count, n) || n < 0 || n > 64)) err = "--efa-limit needs TYPE=N with N from 0 to 64";
      if (err.empty()) o.efa_limits[type] = static_cast<int>(n);
    } else if (flag == "--pending-ms") {
      err = args.int_flag(o.pending_ms, 0, 86400000);
    } else if (flag == "--shutdown-ms") {
      err = args.int_flag(o.shutdown_ms, 0, 86400000);
    } else if (flag == "--terminated-visible-ms") {
      err = args.int_flag(o.terminated_visible_ms, 0, 86400000 * 7);
    } else if (flag == "--throttle") {
      std::string action, spec;
      err = pair_flag(action, spec, "ACTION=SIZE:REFILL");
      auto colon = spec.find(':');
      BucketSpec b;
      if (err.empty() &&
          (colon == std::string::npos || !to_double(spec.substr(0, colon), b.capacity) ||
           !to_double(spec.substr(colon + 1), b.refill_per_second) || b.capacity < 1 || b.refill_per_second < 0))
        err =
            "--throttle needs ACTION=SIZE:REFILL with SIZE >= 1 and REFILL >= 0 per second, e.g. RunInstances=5:2 or "
            "'*=100:20'; got '" +
            value + "'";
      if (err.empty()) o.throttle[action] = b;
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
    } else if (flag == "--lose-response") {
      std::string action, count;
      err = pair_flag(action, count, "ACTION=N, e.g. RunInstances=1");
      long long n = 0;
      if (err.empty() && (!to_int(count, n) || n < 0)) err = "--lose-response needs ACTION=N with N >= 0";
      if (err.empty()) o.lose_response[action] = static_cast<int>(n);
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
      err = "unknown flag '" + args.arg() + "'; run aws-ec2-emulator --help for the list";
    }
    if (!err.empty()) return err;
  }
  if (o.zones.empty())
    for (const char* suffix : {"a", "b", "c"}) o.zones.push_back(o.region + suffix);
  for (const auto& z : o.zones)
    if (z.rfind(o.region, 0) != 0)
      return "zone '" + z + "' is not in region '" + o.region + "' (zones are REGION + a letter)";
  auto known_zone = [&](const std::string& z) {
    return z == "*" || std::find(o.zones.begin(), o.zones.end(), z) != o.zones.end();
  };
  for (const auto& [where, n] : o.capacity)
    if (!known_zone(where.second)) return "--capacity names zone '" + where.second + "', which is not one of --zones";
  for (const auto& r : o.reservations)
    if (!known_zone(r.zone) || r.zone == "*")
      return "--capacity-reservation " + r.id + " names zone '" + r.zone + "', which is not one of --zones";
  for (const auto& [id, zone] : o.subnets)
    if (!known_zone(zone) || zone == "*")
      return "--subnet " + id + " names zone '" + zone + "', which is not one of --zones";
  if (o.rate_500 + o.rate_503 + o.drop_rate > 1) return "--rate-500, --rate-503 and --drop-rate add up to more than 1";
  if (o.tls_cert.empty() != o.tls_key.empty()) return "--tls-cert and --tls-key go together";
  if (o.access_key.empty() || o.secret_key.empty()) return "--access-key and --secret-key may not be empty";
  return "";
}

}  // namespace plinth::aws_ec2_emulator
