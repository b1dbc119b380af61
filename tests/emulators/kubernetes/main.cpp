// kube-apiserver-emulator: a Kubernetes API server for tests, over HTTPS with
// client certificates and bearer tokens, fault injection and a request log.
// docs/emulators.md describes it.
#include <httplib.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

#include "tests/emulators/common/clock.h"
#include "tests/emulators/common/connection.h"
#include "tests/emulators/common/listen.h"
#include "tests/emulators/common/tls.h"
#include "tests/emulators/kubernetes/options.h"
#include "tests/emulators/kubernetes/server.h"

namespace ke = plinth::kube_emulator;
using nlohmann::json;

namespace {

std::atomic<bool> g_stop{false};
std::mutex g_stop_mu;
std::condition_variable g_stop_cv;

void nap(int ms) {
  std::unique_lock<std::mutex> lock(g_stop_mu);
  g_stop_cv.wait_for(lock, std::chrono::milliseconds(ms), [] { return g_stop.load(); });
}


std::string base64(const std::string& in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

/// The user and groups of a verified client certificate (CN and O entries).
std::optional<ke::Identity> cert_identity(const httplib::Request& req) {
  if (!req.ssl) return std::nullopt;
  std::unique_ptr<X509, plinth::emulator::X509Free> cert(SSL_get1_peer_certificate(req.ssl));
  if (!cert || SSL_get_verify_result(req.ssl) != X509_V_OK) return std::nullopt;
  ke::Identity id;
  X509_NAME* subject = X509_get_subject_name(cert.get());
  for (int i = 0; i < X509_NAME_entry_count(subject); ++i) {
    X509_NAME_ENTRY* e = X509_NAME_get_entry(subject, i);
    int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
    unsigned char* utf8 = nullptr;
    int len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(e));
    if (len < 0) continue;
    std::string value(reinterpret_cast<char*>(utf8), static_cast<size_t>(len));
    OPENSSL_free(utf8);
    if (nid == NID_commonName) id.user = value;
    if (nid == NID_organizationName) id.groups.push_back(value);
  }
  if (id.user.empty()) return std::nullopt;
  return id;
}

struct Counters {
  std::mutex mu;
  long total = 0;
  std::map<std::string, long> by_verb, by_status, by_resource, by_user, by_fault;
  json to_json() {
    std::lock_guard<std::mutex> lock(mu);
    return {{"total", total},    {"byVerb", by_verb},  {"byStatus", by_status}, {"byResource", by_resource},
            {"byUser", by_user}, {"byFault", by_fault}};
  }
  void reset() {
    std::lock_guard<std::mutex> lock(mu);
    total = 0;
    by_verb.clear();
    by_status.clear();
    by_resource.clear();
    by_user.clear();
    by_fault.clear();
  }
};

struct Emulator {
  ke::Options options;
  std::unique_ptr<ke::ApiServer> api;
  std::mutex log_mu;
  std::ofstream log;
  Counters counters;
  std::mutex dice_mu;
  std::mt19937_64 dice;
  double tokens = 0;
  std::chrono::steady_clock::time_point refilled = std::chrono::steady_clock::now();

  void record(const httplib::Request& req, const ke::Response& r, std::optional<int> status, const std::string& fault,
              std::chrono::steady_clock::time_point start) {
    std::string query = req.target.find('?') == std::string::npos ? "" : req.target.substr(req.target.find('?') + 1);
    {
      std::lock_guard<std::mutex> lock(counters.mu);
      ++counters.total;
      ++counters.by_verb[r.verb.empty() ? "none" : r.verb];
      ++counters.by_status[status ? std::to_string(*status) : "none"];
      if (!r.resource.empty()) ++counters.by_resource[r.resource];
      ++counters.by_user[r.user.empty() ? "unauthenticated" : r.user];
      if (!fault.empty()) ++counters.by_fault[fault];
    }
    if (!log.is_open()) return;
    json line = {
        {"time", plinth::emulator::utc_now_ms()},
        {"user", r.user.empty() ? json(nullptr) : json(r.user)},
        {"verb", r.verb.empty() ? json(nullptr) : json(r.verb)},
        {"method", req.method},
        {"path", req.path},
        {"query", query},
        {"resource", r.resource.empty() ? json(nullptr) : json(r.resource)},
        {"subresource", r.subresource.empty() ? json(nullptr) : json(r.subresource)},
        {"namespace", r.ns.empty() ? json(nullptr) : json(r.ns)},
        {"name", r.name.empty() ? json(nullptr) : json(r.name)},
        {"status", status ? json(*status) : json(nullptr)},
        {"fault", fault.empty() ? json(nullptr) : json(fault)},
        {"ms",
         std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count()}};
    std::lock_guard<std::mutex> lock(log_mu);
    log << line.dump() << '\n';
    log.flush();
  }

  static void reply(httplib::Response& res, const ke::Response& r) {
    res.status = r.status;
    for (const auto& [k, v] : r.headers) res.set_header(k, v);
    res.set_content(r.body, r.content_type.c_str());
  }

  static ke::Response status_response(int code, const std::string& reason, const std::string& message,
                                      const json& details) {
    ke::Response r;
    r.status = code;
    json s = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
              {"status", "Failure"}, {"message", message}, {"reason", reason}};
    if (!details.is_null()) s["details"] = details;
    s["code"] = code;
    r.body = s.dump();
    return r;
  }

  void control(const httplib::Request& req, httplib::Response& res) {
    ke::Response r;
    if (req.method == "GET" && req.path == "/__emulator/objects") {
      r.body = api->dump().dump();
    } else if (req.method == "GET" && req.path == "/__emulator/counters") {
      r.body = counters.to_json().dump();
    } else if (req.method == "POST" && req.path == "/__emulator/counters/reset") {
      counters.reset();
      r.body = counters.to_json().dump();
    } else {
      r = status_response(404, "NotFound",
                          "no such control endpoint: " + req.method + " " + req.path +
                              " (GET /__emulator/objects, GET /__emulator/counters, POST /__emulator/counters/reset)",
                          nullptr);
    }
    reply(res, r);
  }

  void serve(const httplib::Request& req, httplib::Response& res) {
    auto start = std::chrono::steady_clock::now();
    if (req.path.rfind("/__emulator/", 0) == 0) return control(req, res);
    int latency = 0;
    double roll = 0, lose_roll = 0;
    bool throttled = false;
    {
      std::lock_guard<std::mutex> lock(dice_mu);
      if (options.latency_max_ms > 0)
        latency = std::uniform_int_distribution<int>(options.latency_min_ms, options.latency_max_ms)(dice);
      roll = std::uniform_real_distribution<double>(0, 1)(dice);
      lose_roll = std::uniform_real_distribution<double>(0, 1)(dice);
      if (options.rate_limit_burst > 0) {
        auto now = std::chrono::steady_clock::now();
        tokens =
            std::min<double>(options.rate_limit_burst,
                             tokens + options.rate_limit_qps * std::chrono::duration<double>(now - refilled).count());
        refilled = now;
        if (tokens >= 1)
          tokens -= 1;
        else
          throttled = true;
      }
    }
    if (latency > 0) nap(latency);
    ke::Response meta;
    meta.resource = api->resource_of(req.path);
    std::string retry = std::to_string(options.retry_after_s);
    if (throttled) {
      ke::Response r = status_response(429, "TooManyRequests", "Too many requests, please try again later.",
                                       {{"retryAfterSeconds", options.retry_after_s}});
      r.headers.emplace_back("Retry-After", retry);
      reply(res, r);
      return record(req, meta, 429, "429", start);
    }
    if (roll < options.rate_500) {
      reply(res, status_response(500, "InternalError",
                                 "Internal error occurred: injected by kube-apiserver-emulator --rate-500",
                                 {{"causes", {{{"message", "injected by --rate-500"}}}}}));
      return record(req, meta, 500, "500", start);
    }
    if (roll < options.rate_500 + options.rate_503) {
      ke::Response r =
          status_response(503, "ServiceUnavailable", "the server is currently unable to handle the request",
                          {{"retryAfterSeconds", options.retry_after_s}});
      r.headers.emplace_back("Retry-After", retry);
      reply(res, r);
      return record(req, meta, 503, "503", start);
    }
    ke::Request in;
    in.method = req.method;
    in.path = req.path;
    for (const auto& [k, v] : req.params) in.params.emplace(k, v);
    for (const auto& [k, v] : req.headers) {
      std::string lower = k;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      in.headers[lower] = v;
    }
    in.body = req.body;
    in.client_cert = cert_identity(req);
    ke::Response out;
    try {
      out = api->handle(in);
    } catch (const std::exception& e) {
      std::cerr << "kube-apiserver-emulator: internal error on " << req.method << " " << req.path << ": " << e.what()
                << "\n";
      out = status_response(500, "InternalError", std::string("Internal error occurred: ") + e.what(), nullptr);
    }
    if (out.wrote && lose_roll < options.lose_response_rate) {
      // The write happened; the client never hears about it.
      plinth::emulator::drop_connection(req.local_port, req.remote_port);
      return record(req, out, std::nullopt, "lost", start);
    }
    reply(res, out);
    record(req, out, out.status, "", start);
  }
};

std::string url_host(const std::string& host) { return host.find(':') != std::string::npos ? "[" + host + "]" : host; }

/// A kubeconfig with one cluster, one user per client certificate and per
/// token, and one context per user (named like it); the first certificate
/// user's context is current.
std::string kubeconfig_text(const ke::Options& o, const std::string& server, const std::string& ca_pem,
                            const std::vector<std::pair<std::string, plinth::emulator::ClientCert*>>& certs) {
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "apiVersion" << YAML::Value << "v1" << YAML::Key << "kind" << YAML::Value
    << "Config";
  e << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "name" << YAML::Value
    << "kube-emulator" << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap << YAML::Key << "server"
    << YAML::Value << server;
  if (!ca_pem.empty()) e << YAML::Key << "certificate-authority-data" << YAML::Value << base64(ca_pem);
  e << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  std::vector<std::string> names;
  e << YAML::Key << "users" << YAML::Value << YAML::BeginSeq;
  for (const auto& [name, cert] : certs) {
    names.push_back(name);
    e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name << YAML::Key << "user" << YAML::Value
      << YAML::BeginMap << YAML::Key << "client-certificate-data" << YAML::Value
      << base64(plinth::emulator::to_pem(cert->cert.get())) << YAML::Key << "client-key-data" << YAML::Value
      << base64(plinth::emulator::to_pem(cert->key.get())) << YAML::EndMap << YAML::EndMap;
  }
  for (const auto& t : o.tokens) {
    names.push_back(t.identity.user + "-token");
    e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << names.back() << YAML::Key << "user" << YAML::Value
      << YAML::BeginMap << YAML::Key << "token" << YAML::Value << YAML::DoubleQuoted << t.token << YAML::EndMap
      << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq;
  for (const auto& n : names)
    e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << n << YAML::Key << "context" << YAML::Value
      << YAML::BeginMap << YAML::Key << "cluster" << YAML::Value << "kube-emulator" << YAML::Key << "user"
      << YAML::Value << n << YAML::EndMap << YAML::EndMap;
  e << YAML::EndSeq << YAML::Key << "current-context" << YAML::Value << (names.empty() ? "" : names[0]);
  e << YAML::Key << "preferences" << YAML::Value << YAML::BeginMap << YAML::EndMap << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

bool write_file(const std::string& path, const std::string& text, std::filesystem::perms perms) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  std::error_code ec;
  std::filesystem::permissions(path, perms, ec);
  return out.good();
}

}  // namespace

int main(int argc, char** argv) {
  Emulator em;
  bool help = false;
  if (std::string err = ke::parse_options(argc, argv, em.options, help); !err.empty()) {
    std::cerr << "kube-apiserver-emulator: " << err << "\n";
    return 2;
  }
  if (help) {
    std::cout << ke::usage();
    return 0;
  }
  const ke::Options& o = em.options;
  em.dice.seed(o.seed * 1000003u + 7u);
  em.tokens = o.rate_limit_burst;
  em.api = std::make_unique<ke::ApiServer>(o);
  if (!o.request_log.empty()) {
    em.log.open(o.request_log, std::ios::app);
    if (!em.log) {
      std::cerr << "kube-apiserver-emulator: cannot open --request-log " << o.request_log << "\n";
      return 1;
    }
  }

  plinth::emulator::TestPki pki;
  std::vector<std::unique_ptr<plinth::emulator::ClientCert>> client_certs;
  if (!o.http) {
    if (std::string err = plinth::emulator::make_test_pki({o.host}, pki); !err.empty()) {
      std::cerr << "kube-apiserver-emulator: " << err << "\n";
      return 1;
    }
    for (const auto& u : o.cert_users) {
      auto c = std::make_unique<plinth::emulator::ClientCert>();
      if (std::string err = plinth::emulator::make_client_cert(pki, u.user, u.groups, *c); !err.empty()) {
        std::cerr << "kube-apiserver-emulator: " << err << "\n";
        return 1;
      }
      client_certs.push_back(std::move(c));
    }
    if (!o.tls_dir.empty()) {
      if (std::string err = plinth::emulator::write_pki(pki, o.tls_dir); !err.empty()) {
        std::cerr << "kube-apiserver-emulator: " << err << "\n";
        return 1;
      }
      for (size_t i = 0; i < o.cert_users.size(); ++i) {
        std::string base = o.tls_dir + "/client-" + o.cert_users[i].user;
        if (!write_file(base + ".pem", plinth::emulator::to_pem(client_certs[i]->cert.get()),
                        std::filesystem::perms::owner_read | std::filesystem::perms::owner_write) ||
            !write_file(base + "-key.pem", plinth::emulator::to_pem(client_certs[i]->key.get()),
                        std::filesystem::perms::owner_read | std::filesystem::perms::owner_write)) {
          std::cerr << "kube-apiserver-emulator: cannot write " << base << ".pem\n";
          return 1;
        }
      }
    }
  }

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  std::unique_ptr<httplib::Server> svr;
  if (o.http) {
    svr = std::make_unique<httplib::Server>();
  } else {
    auto ssl = std::make_unique<httplib::SSLServer>(pki.server_cert.get(), pki.server_key.get());
    if (ssl->is_valid()) {
      // Client certificates are optional (bearer tokens need none) but verified when sent.
      SSL_CTX* ctx = ssl->ssl_context();
      X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), pki.ca_cert.get());
      SSL_CTX_add_client_CA(ctx, pki.ca_cert.get());
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    }
    svr = std::move(ssl);
  }
  if (!svr->is_valid()) {
    std::cerr << "kube-apiserver-emulator: cannot set up TLS\n";
    return 1;
  }
  auto handler = [&em](const httplib::Request& req, httplib::Response& res) { em.serve(req, res); };
  svr->Get(".*", handler);
  svr->Post(".*", handler);
  svr->Patch(".*", handler);
  svr->Put(".*", handler);
  svr->Delete(".*", handler);
  svr->Options(".*", handler);
  int threads = o.threads;
  svr->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  svr->set_keep_alive_max_count(1000);
  svr->set_keep_alive_timeout(5);
  svr->set_tcp_nodelay(true);
  int port = plinth::emulator::bind_server(*svr, o.host, o.port);
  if (port <= 0) {
    std::cerr << "kube-apiserver-emulator: cannot listen on " << o.host << ":" << o.port
              << " (in use? pick another --port, or 0 for a free one)\n";
    return 1;
  }
  std::string server = (o.http ? "http://" : "https://") + url_host(o.host) + ":" + std::to_string(port);
  em.api->set_address(url_host(o.host) + ":" + std::to_string(port));
  if (!o.kubeconfig.empty()) {
    std::vector<std::pair<std::string, plinth::emulator::ClientCert*>> certs;
    for (size_t i = 0; i < client_certs.size(); ++i) certs.emplace_back(o.cert_users[i].user, client_certs[i].get());
    std::string ca = o.http ? "" : plinth::emulator::to_pem(pki.ca_cert.get());
    std::error_code ec;
    if (auto parent = std::filesystem::path(o.kubeconfig).parent_path(); !parent.empty())
      std::filesystem::create_directories(parent, ec);
    if (!write_file(o.kubeconfig, kubeconfig_text(o, server, ca, certs),
                    std::filesystem::perms::owner_read | std::filesystem::perms::owner_write)) {
      std::cerr << "kube-apiserver-emulator: cannot write --kubeconfig " << o.kubeconfig << "\n";
      return 1;
    }
  }
  std::thread worker([&svr] { svr->listen_after_bind(); });
  // Say "ready" only once the server runs: a stop() before that would be lost
  // and leave the listener running after SIGTERM (as in gcp-emulator).
  while (!svr->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::cout << "listening " << server << " kubeconfig=" << (o.kubeconfig.empty() ? "-" : o.kubeconfig) << "\n";
  std::cout << "ready" << std::endl;

  int sig = 0;
  sigwait(&sigs, &sig);
  {
    std::lock_guard<std::mutex> lock(g_stop_mu);
    g_stop = true;
  }
  g_stop_cv.notify_all();
  svr->stop();
  worker.join();
  std::cerr << "kube-apiserver-emulator: stopped by signal " << sig << "\n";
  return 0;
}
