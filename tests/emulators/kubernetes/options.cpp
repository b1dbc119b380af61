#include "tests/emulators/kubernetes/options.h"

#include <charconv>
#include <fstream>

#include "tests/emulators/common/flags.h"

namespace plinth::kube_emulator {

using emulator::FlagReader;
using emulator::to_double;
using emulator::to_int;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

/// "NAME[,GROUP...]" -> Identity; "" name is an error.
bool to_identity(const std::string& s, Identity& out) {
  auto parts = split(s, ',');
  if (parts.empty() || parts[0].empty()) return false;
  out.user = parts[0];
  out.groups.assign(parts.begin() + 1, parts.end());
  for (const auto& g : out.groups)
    if (g.empty()) return false;
  return true;
}

}  // namespace

std::string usage() {
  return R"(usage: kube-apiserver-emulator [flags]

Serves a Kubernetes API server (namespaces, quotas, RBAC, service accounts,
nodes and the NVIDIA GPU Operator's ClusterPolicy) over HTTPS for tests.
See docs/emulators.md for the full description.

  --host ADDR                 listen address (default 127.0.0.1)
  --port P                    listen port (default 6443; 0 picks a free port)
  --threads N                 worker threads (default 16)
  --server-version V          gitVersion that /version reports (default v1.32.0)
  --cert-user NAME[,GROUP...] issue a client certificate (CN=NAME, O=GROUP) and put it in the
                              kubeconfig (repeatable; default: admin,system:masters)
  --token TOKEN=NAME[,GROUP...]  accept this bearer token (repeatable; also in the kubeconfig)
  --token-auth-file FILE      kube-apiserver token file: token,user,uid,"group1,group2"
  --read-only-user NAME       NAME may only get, list and watch (repeatable)
  --no-access-user NAME       every resource request of NAME is forbidden (repeatable)
  --node NAME[:KEY=VALUE,...] a node with extra labels (repeatable)
  --nodes N                   N nodes named node-0 ... node-N-1
  --node-gpus N               nvidia.com/gpu capacity of every node (default 8)
  --node-gpu-product S        nvidia.com/gpu.product label (default NVIDIA-H100-80GB-HBM3)
  --latency-ms N|MIN-MAX      added latency per request
  --rate-500 F                fraction of API requests answered 500 InternalError
  --rate-503 F                fraction of API requests answered 503 ServiceUnavailable with Retry-After
  --lose-response-rate F      fraction of writes that succeed but whose answer is lost (connection closed)
  --rate-limit-burst N        token bucket of N requests; an empty bucket answers 429 (default off)
  --rate-limit-qps R          tokens added per second (default 0: the bucket never refills)
  --retry-after S             Retry-After seconds on 429 and 503 (default 1)
  --seed S                    seed of the fault generator and of uids (default 1)
  --request-log FILE          one JSON line per request
  --tls-dir DIR               write ca.pem, server.pem, server-key.pem, client certificates and kubeconfig
  --kubeconfig FILE           where to write the kubeconfig (default TLS_DIR/kubeconfig)
  --http                      plain HTTP, bearer tokens only (debugging)
  --help                      this text
)";
}

std::string read_token_file(const std::string& path, std::vector<TokenUser>& out) {
  std::ifstream in(path);
  if (!in) return "cannot read --token-auth-file " + path;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    // CSV with an optional quoted last column.
    std::vector<std::string> cols;
    std::string cur;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        cols.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    cols.push_back(cur);
    if (cols.size() < 3 || cols[0].empty() || cols[1].empty())
      return path + ":" + std::to_string(n) + ": expected token,user,uid[,\"group1,group2\"]";
    TokenUser t{cols[0], {cols[1], {}}};
    if (cols.size() > 3)
      for (auto& g : split(cols[3], ','))
        if (!g.empty()) t.identity.groups.push_back(g);
    out.push_back(std::move(t));
  }
  return "";
}

std::string parse_options(int argc, char** argv, Options& o, bool& help) {
  help = false;
  int nodes = -1;
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
    } else if (flag == "--server-version") {
      err = args.str_flag(o.server_version);
      if (err.empty() && (value.size() < 4 || value[0] != 'v' || value.find('.') == std::string::npos))
        err = "--server-version needs vMAJOR.MINOR.PATCH, e.g. v1.32.0; got '" + value + "'";
    } else if (flag == "--cert-user") {
      Identity id;
      if (!args.need() || !to_identity(value, id))
        err = "--cert-user needs NAME[,GROUP...], e.g. admin,system:masters; got '" + value + "'";
      o.cert_users.push_back(id);
    } else if (flag == "--token") {
      auto eq = args.need() ? value.find('=') : std::string::npos;
      Identity id;
      if (eq == std::string::npos || eq == 0 || !to_identity(value.substr(eq + 1), id))
        err = "--token needs TOKEN=NAME[,GROUP...], e.g. s3cret=alice,dev; got '" + value + "'";
      else
        o.tokens.push_back({value.substr(0, eq), id});
    } else if (flag == "--token-auth-file") {
      std::string path;
      err = args.str_flag(path);
      if (err.empty()) err = read_token_file(path, o.tokens);
    } else if (flag == "--read-only-user") {
      std::string u;
      err = args.str_flag(u);
      o.read_only_users.insert(u);
    } else if (flag == "--no-access-user") {
      std::string u;
      err = args.str_flag(u);
      o.no_access_users.insert(u);
    } else if (flag == "--node") {
      if (!args.need() || value.empty() || value[0] == ':') {
        err = "--node needs NAME[:KEY=VALUE,...]";
      } else {
        NodeSpec n;
        auto colon = value.find(':');
        n.name = value.substr(0, colon);
        if (colon != std::string::npos)
          for (const auto& kv : split(value.substr(colon + 1), ',')) {
            auto eq = kv.find('=');
            if (eq == std::string::npos || eq == 0) {
              err = "--node " + value + ": label '" + kv + "' needs KEY=VALUE";
              break;
            }
            n.labels.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
          }
        o.nodes.push_back(std::move(n));
      }
    } else if (flag == "--nodes") {
      err = args.int_flag(nodes, 0, 100000);
    } else if (flag == "--node-gpus") {
      err = args.int_flag(o.node_gpus, 0, 1024);
    } else if (flag == "--node-gpu-product") {
      err = args.str_flag(o.node_gpu_product);
    } else if (flag == "--latency-ms") {
      err = args.latency_flag(o.latency_min_ms, o.latency_max_ms, 600000);
    } else if (flag == "--rate-500") {
      err = args.rate_flag(o.rate_500);
    } else if (flag == "--rate-503") {
      err = args.rate_flag(o.rate_503);
    } else if (flag == "--lose-response-rate") {
      err = args.rate_flag(o.lose_response_rate);
    } else if (flag == "--rate-limit-burst") {
      err = args.int_flag(o.rate_limit_burst, 0, 1000000);
    } else if (flag == "--rate-limit-qps") {
      if (!args.need() || !to_double(value, o.rate_limit_qps) || o.rate_limit_qps < 0)
        err = "--rate-limit-qps needs a non-negative number of requests per second, got '" + value + "'";
    } else if (flag == "--retry-after") {
      err = args.int_flag(o.retry_after_s, 0, 3600);
    } else if (flag == "--seed") {
      err = args.seed_flag(o.seed);
    } else if (flag == "--request-log") {
      err = args.str_flag(o.request_log);
    } else if (flag == "--tls-dir") {
      err = args.str_flag(o.tls_dir);
    } else if (flag == "--kubeconfig") {
      err = args.str_flag(o.kubeconfig);
    } else if (flag == "--http") {
      o.http = true;
    } else {
      err = "unknown flag '" + args.arg() + "'; run kube-apiserver-emulator --help for the list";
    }
    if (!err.empty()) return err;
  }
  for (int n = 0; n < nodes; ++n) o.nodes.push_back({"node-" + std::to_string(n), {}});
  std::set<std::string> names;
  for (const auto& n : o.nodes)
    if (!names.insert(n.name).second) return "--node " + n.name + " is given twice";
  if (o.rate_500 + o.rate_503 > 1) return "--rate-500 and --rate-503 add up to more than 1";
  if (o.cert_users.empty()) o.cert_users.push_back({"admin", {"system:masters"}});
  if (o.http && o.tokens.empty()) return "--http has no client certificates: give at least one --token";
  if (o.kubeconfig.empty() && !o.tls_dir.empty()) o.kubeconfig = o.tls_dir + "/kubeconfig";
  return "";
}

}  // namespace plinth::kube_emulator
