// azure-emulator: Microsoft Entra (client-credentials tokens) and an Azure
// Resource Manager subset over HTTPS for tests, with fault injection, a request
// log and control endpoints. docs/emulators.md describes it.
#include <httplib.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <fstream>
#include <iostream>
#include <thread>

#include "tests/emulators/azure/arm.h"
#include "tests/emulators/azure/crypto.h"
#include "tests/emulators/azure/entra.h"
#include "tests/emulators/azure/options.h"
#include "tests/emulators/azure/proxy.h"
#include "tests/emulators/common/listen.h"
#include "tests/emulators/common/tls.h"

namespace az = plinth::azure_emulator;

namespace {

std::atomic<bool> g_stop{false};
std::mutex g_stop_mu;
std::condition_variable g_stop_cv;

/// Sleeps `ms` or until shutdown, whichever comes first.
void nap(int ms) {
  std::unique_lock<std::mutex> lock(g_stop_mu);
  g_stop_cv.wait_for(lock, std::chrono::milliseconds(ms), [] { return g_stop.load(); });
}

class RequestLog {
 public:
  bool open(const std::string& path) {
    out_.open(path, std::ios::app);
    return out_.good();
  }
  void write(const az::json& line) {
    if (!out_.is_open()) return;
    std::lock_guard<std::mutex> lock(mu_);
    out_ << line.dump() << '\n';
    out_.flush();
  }

 private:
  std::mutex mu_;
  std::ofstream out_;
};

struct Emulator {
  az::Options options;
  std::string self_base;
  std::unique_ptr<az::Entra> entra;
  std::unique_ptr<az::Arm> arm;
  az::Counters counters;
  RequestLog log;
  std::mutex latency_mu;
  std::mt19937_64 latency_rng;

  void serve(const httplib::Request& req, httplib::Response& res) {
    auto start = std::chrono::steady_clock::now();
    az::Request r;
    r.method = req.method;
    r.path = req.path;
    r.body = req.body;
    auto q = req.target.find('?');
    r.query = q == std::string::npos ? "" : req.target.substr(q + 1);
    for (const auto& [k, v] : req.params) r.params.emplace(k, v);
    for (const auto& [k, v] : req.headers) r.headers[az::lower(k)] = v;
    std::string host = req.get_header_value("Host");
    r.base = host.empty() ? self_base : (options.http ? "http://" : "https://") + host;

    bool control = az::Arm::is_control(r.path);
    std::string service = control ? "control" : az::Entra::owns(r.path) ? "entra" : "arm";
    if (!control && options.latency_max_ms > 0) {
      int ms;
      {
        std::lock_guard<std::mutex> lock(latency_mu);
        ms = std::uniform_int_distribution<int>(options.latency_min_ms, options.latency_max_ms)(latency_rng);
      }
      nap(ms);
    }
    az::Response out;
    try {
      out = control ? arm->control(r) : service == "entra" ? entra->handle(r) : arm->handle(r);
    } catch (const std::exception& e) {
      std::cerr << "azure-emulator: internal error on " << req.method << " " << req.path << ": " << e.what() << "\n";
      out = az::json_response(500, {{"error", {{"code", "InternalServerError"}, {"message", e.what()}}}});
      out.operation = "internal-error";
    }
    if (out.close) {
      // Drop the connection: the client gets no answer at all.
      int fd = req.ssl ? SSL_get_fd(const_cast<SSL*>(req.ssl)) : -1;
      if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
      res.status = 500;
    } else {
      res.status = out.status;
      for (const auto& [k, v] : out.headers) res.set_header(k, v);
      if (!out.body.empty()) res.set_content(out.body, out.content_type.c_str());
    }
    if (!control) counters.count(out.operation, out.close ? 0 : out.status, out.fault);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    az::json line = {{"time", az::iso_millis(std::chrono::system_clock::now())},
                     {"service", service},
                     {"method", req.method},
                     {"path", req.path},
                     {"query", r.query},
                     {"apiVersion", r.has_param("api-version") ? az::json(r.param("api-version")) : az::json(nullptr)},
                     {"operation", out.operation.empty() ? az::json(nullptr) : az::json(out.operation)},
                     {"status", out.close ? az::json(nullptr) : az::json(out.status)},
                     {"fault", out.fault.empty() ? az::json(nullptr) : az::json(out.fault)},
                     {"credential", out.credential.empty() ? az::json(nullptr) : az::json(out.credential)},
                     {"token_id", out.token_id.empty() ? az::json(nullptr) : az::json(out.token_id)},
                     {"ms", ms}};
    log.write(line);
  }

  /// The plain-HTTP managed identity listener: IMDS (Metadata: true) and App Service (X-IDENTITY-HEADER).
  void serve_metadata(const httplib::Request& req, httplib::Response& res) {
    auto start = std::chrono::steady_clock::now();
    const std::string resource = req.get_param_value("resource"), client_id = az::lower(req.get_param_value("client_id"));
    az::Response out;
    std::string service;
    if (req.path == "/metadata/identity/oauth2/token") {
      service = "imds";
      if (req.get_header_value("Metadata") != "true")
        out = az::json_response(400, {{"error", "invalid_request"},
                                      {"error_description", "Required metadata header not specified"}});
      else if (req.get_param_value("api-version").empty())
        out = az::json_response(400, {{"error", "invalid_request"},
                                      {"error_description", "Required query variable 'api-version' is missing"}});
      else
        out = entra->managed_identity(client_id, resource, false);
      out.operation = "IMDS/identity/oauth2/token";
    } else if (req.path == "/msi/token") {
      service = "app-service";
      if (options.identity_header.empty() || req.get_header_value("X-IDENTITY-HEADER") != options.identity_header)
        out = az::json_response(401, {{"statusCode", 401}, {"message", "Unauthorized: the X-IDENTITY-HEADER is wrong"}});
      else
        out = entra->managed_identity(client_id, resource, true);
      out.operation = "AppService/msi/token";
    } else {
      service = "metadata";
      out = az::json_response(404, {{"error", "not_found"}, {"error_description", "no such path " + req.path}});
      out.operation = "Metadata/unknown";
    }
    res.status = out.status;
    res.set_content(out.body, out.content_type.c_str());
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    log.write({{"time", az::iso_millis(std::chrono::system_clock::now())},
               {"service", service},
               {"method", req.method},
               {"path", req.path},
               {"query", ""},
               {"apiVersion", req.has_param("api-version") ? az::json(req.get_param_value("api-version")) : az::json(nullptr)},
               {"operation", out.operation},
               {"status", out.status},
               {"fault", nullptr},
               {"credential", out.credential.empty() ? az::json(nullptr) : az::json(out.credential)},
               {"token_id", out.token_id.empty() ? az::json(nullptr) : az::json(out.token_id)},
               {"ms", ms}});
  }
};

std::string url_host(const std::string& host) { return host.find(':') != std::string::npos ? "[" + host + "]" : host; }

int fail(const std::string& message, int code = 1) {
  std::cerr << "azure-emulator: " << message << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  Emulator em;
  bool help = false;
  if (std::string err = az::parse_options(argc, argv, em.options, help); !err.empty()) return fail(err, 2);
  if (help) {
    std::cout << az::usage();
    return 0;
  }
  const az::Options& o = em.options;
  em.latency_rng.seed(o.seed * 31u + 3u);
  if (!o.request_log.empty() && !em.log.open(o.request_log)) return fail("cannot open --request-log " + o.request_log);

  // TLS: the server certificate also names Microsoft's hosts, for --proxy-port.
  plinth::emulator::TestPki pki;
  if (!o.http) {
    if (std::string err = plinth::emulator::make_test_pki(
            {o.host, "login.microsoftonline.com", "login.windows.net", "management.azure.com"}, pki);
        !err.empty())
      return fail(err);
    if (!o.tls_dir.empty())
      if (std::string err = plinth::emulator::write_pki(pki, o.tls_dir); !err.empty()) return fail(err);
  }
  auto signing = std::make_shared<az::KeyPair>();
  if (std::string err = az::make_key_pair("Plinth emulator token signing", *signing); !err.empty()) return fail(err);
  std::shared_ptr<az::KeyPair> client_cert;
  if (o.client_certificate) {
    client_cert = std::make_shared<az::KeyPair>();
    if (std::string err = az::make_key_pair("Plinth emulator client " + o.apps.front().client_id, *client_cert);
        !err.empty())
      return fail(err);
    if (std::string err = az::write_key_pair(*client_cert, o.tls_dir + "/client.pem"); !err.empty()) return fail(err);
  }
  em.entra = std::make_unique<az::Entra>(o, signing, client_cert);
  em.arm = std::make_unique<az::Arm>(o, *em.entra, em.counters);

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  std::unique_ptr<httplib::Server> svr;
  if (o.http)
    svr = std::make_unique<httplib::Server>();
  else
    svr = std::make_unique<httplib::SSLServer>(pki.server_cert.get(), pki.server_key.get());
  if (!svr->is_valid()) return fail("cannot set up TLS");
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
  if (port <= 0)
    return fail("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                " (in use? pick another --port, or 0 for a free one)");
  std::string scheme = o.http ? "http://" : "https://";
  em.self_base = scheme + url_host(o.host) + ":" + std::to_string(port);
  em.entra->set_self_base(em.self_base);

  std::unique_ptr<az::ConnectProxy> proxy;
  int proxy_port = 0;
  if (o.proxy_port) {
    std::string target = o.host == "::1" || o.host == "0.0.0.0" || o.host == "::" ? "127.0.0.1" : o.host;
    proxy = std::make_unique<az::ConnectProxy>(
        std::set<std::string>{"login.microsoftonline.com", "login.windows.net", "management.azure.com"}, target, port,
        [&em](const std::string& method, const std::string& where, int status) {
          em.log.write({{"time", az::iso_millis(std::chrono::system_clock::now())},
                        {"service", "proxy"},
                        {"method", method},
                        {"path", where},
                        {"query", ""},
                        {"apiVersion", nullptr},
                        {"operation", "Proxy/" + method},
                        {"status", status},
                        {"fault", nullptr},
                        {"ms", 0}});
        });
    std::string err;
    proxy_port = proxy->listen(o.host, *o.proxy_port, err);
    if (proxy_port < 0) return fail(err + " (--proxy-port)");
    proxy->start();
  }

  std::thread worker([&] { svr->listen_after_bind(); });
  httplib::Server meta;
  std::thread meta_worker;
  int meta_port = 0;
  if (o.metadata_port) {
    meta.Get(".*", [&em](const httplib::Request& req, httplib::Response& res) { em.serve_metadata(req, res); });
    meta_port = plinth::emulator::bind_server(meta, o.host, *o.metadata_port);
    if (meta_port <= 0) {
      svr->stop();
      worker.join();
      return fail("cannot listen on " + o.host + ":" + std::to_string(*o.metadata_port) + " (--metadata-port)");
    }
    meta_worker = std::thread([&meta] { meta.listen_after_bind(); });
    while (!meta.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Say "ready" only once the server runs: a stop() before that would be lost
  // and leave the listener running after SIGTERM (as in gcp-emulator).
  while (!svr->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::cout << "listening " << em.self_base << " tenant=" << o.tenant << " subscription=" << o.subscriptions.front()
            << " client-id=" << o.apps.front().client_id;
  if (proxy) std::cout << " proxy=http://" << url_host(o.host) << ":" << proxy_port;
  if (o.metadata_port) std::cout << "\nmetadata http://" << url_host(o.host) << ":" << meta_port;
  std::cout << "\nready" << std::endl;

  int sig = 0;
  sigwait(&sigs, &sig);
  {
    std::lock_guard<std::mutex> lock(g_stop_mu);
    g_stop = true;
  }
  g_stop_cv.notify_all();
  if (proxy) proxy->stop();
  svr->stop();
  worker.join();
  if (meta_worker.joinable()) {
    meta.stop();
    meta_worker.join();
  }
  std::cerr << "azure-emulator: stopped by signal " << sig << "\n";
  return 0;
}
