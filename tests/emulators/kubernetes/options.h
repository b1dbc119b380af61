#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace plinth::kube_emulator {

/// Who a request comes from: a client certificate's CN and O entries, or the
/// user a bearer token was issued to.
struct Identity {
  std::string user;
  std::vector<std::string> groups;
  bool operator==(const Identity&) const = default;
};

/// A bearer token and the identity it authenticates (`--token`, `--token-auth-file`).
struct TokenUser {
  std::string token;
  Identity identity;
};

/// A node the emulator starts with (`--node`, `--nodes`).
struct NodeSpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  ///< extra labels, in flag order
};

/// Every command-line flag of kube-apiserver-emulator (docs/emulators.md lists them).
struct Options {
  std::string host = "127.0.0.1";
  int port = 6443;
  int threads = 16;
  std::string server_version = "v1.32.0";
  std::vector<Identity> cert_users;  ///< default: admin in system:masters
  std::vector<TokenUser> tokens;
  std::set<std::string> read_only_users;
  std::set<std::string> no_access_users;
  std::vector<NodeSpec> nodes;
  int node_gpus = 8;
  std::string node_gpu_product = "NVIDIA-H100-80GB-HBM3";
  int latency_min_ms = 0;
  int latency_max_ms = 0;
  double rate_500 = 0;
  double rate_503 = 0;
  double lose_response_rate = 0;
  int rate_limit_burst = 0;  ///< 0: no rate limit
  double rate_limit_qps = 0;
  int retry_after_s = 1;
  uint64_t seed = 1;
  std::string request_log;
  std::string tls_dir;
  std::string kubeconfig;  ///< default: TLS_DIR/kubeconfig
  bool http = false;
};

/// Parses argv. Returns an error message (naming the flag and what to do) or
/// "" on success; `help` is set when --help was given.
std::string parse_options(int argc, char** argv, Options& out, bool& help);

/// Reads a kube-apiserver --token-auth-file (CSV: token,user,uid,"group1,group2")
/// into `out`. Returns "" or an error naming the file and line.
std::string read_token_file(const std::string& path, std::vector<TokenUser>& out);

/// The --help text.
std::string usage();

}  // namespace plinth::kube_emulator
