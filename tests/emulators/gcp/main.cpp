// gcp-emulator: Google's OAuth 2.0 token endpoint and a Compute Engine v1
// subset over HTTPS, with fault injection, a request log and /__emulator/
// control endpoints. docs/emulators.md describes it.
#include <httplib.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>
#include <tuple>

#include "providers/gcp/jwt.h"
#include "providers/gcp/service_account.h"
#include "tests/emulators/common/clock.h"
#include "tests/emulators/common/connection.h"
#include "tests/emulators/common/listen.h"
#include "tests/emulators/common/tls.h"
#include "tests/emulators/gcp/catalog.h"
#include "tests/emulators/gcp/compute.h"
#include "tests/emulators/gcp/oauth.h"
#include "tests/emulators/gcp/options.h"
#include "tests/emulators/gcp/service.h"

namespace ge = plinth::gcp_emulator;
using nlohmann::json;

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
  void write(const httplib::Request& req, const ge::Reply& r, std::chrono::steady_clock::duration took) {
    if (!out_.is_open()) return;
    json query = json::object();
    for (const auto& [k, v] : req.params)
      if (k != "access_token" && req.path != "/token" && req.path != "/v1/token") query[k] = v;
    bool answered = r.action == ge::Reply::Action::Answer;
    json line = {{"time", plinth::emulator::utc_now_ms()},
                 {"method", req.method},
                 {"path", req.path},
                 {"query", query},
                 {"status", answered ? json(r.status) : json(nullptr)},
                 {"api", r.api},
                 {"project", r.project.empty() ? json(nullptr) : json(r.project)},
                 {"zone", r.zone.empty() ? json(nullptr) : json(r.zone)},
                 {"fault", r.fault.empty() ? json(nullptr) : json(r.fault)},
                 {"principal", r.principal.empty() ? json(nullptr) : json(r.principal)},
                 {"ms", std::chrono::duration_cast<std::chrono::milliseconds>(took).count()}};
    std::lock_guard<std::mutex> lock(mu_);
    out_ << line.dump() << '\n';
    out_.flush();
  }

 private:
  std::mutex mu_;
  std::ofstream out_;
};

std::string url_host(const std::string& host) { return host.find(':') != std::string::npos ? "[" + host + "]" : host; }

std::string random_hex(int bytes) {
  std::vector<unsigned char> b(static_cast<size_t>(bytes));
  RAND_bytes(b.data(), bytes);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : b) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  ge::Options o;
  bool help = false;
  if (std::string err = ge::parse_options(argc, argv, o, help); !err.empty()) {
    std::cerr << "gcp-emulator: " << err << "\n";
    return 2;
  }
  if (help) {
    std::cout << ge::usage();
    return 0;
  }
  for (const auto& [key, n] : o.capacity) {
    std::string type = key.substr(key.find('/') == std::string::npos ? 0 : key.find('/') + 1);
    if (!ge::find_machine_type(type)) {
      std::cerr << "gcp-emulator: --capacity names machine type '" << type << "', which the emulator does not know "
                << "(see docs/emulators.md for the list)\n";
      return 2;
    }
  }

  ge::ComputeSettings cs;
  cs.project = o.project;
  cs.project_number = o.project_number;
  cs.zones = o.zones;
  cs.operation_ms = o.operation_ms;
  cs.wait_timeout_ms = o.wait_timeout_ms;
  cs.capacity = o.capacity;
  cs.quotas = o.quotas;
  cs.stockout_details = o.stockout_details;
  ge::Compute compute(cs);
  ge::TokenAuthority tokens(o.token_lifetime_s);
  ge::Service service(o, compute, tokens);
  RequestLog log;
  if (!o.request_log.empty() && !log.open(o.request_log)) {
    std::cerr << "gcp-emulator: cannot open --request-log " << o.request_log << "\n";
    return 1;
  }

  plinth::emulator::TestPki pki;
  if (!o.http && o.tls_cert.empty()) {
    if (std::string err = plinth::emulator::make_test_pki({o.host}, pki); !err.empty()) {
      std::cerr << "gcp-emulator: " << err << "\n";
      return 1;
    }
    if (!o.tls_dir.empty())
      if (std::string err = plinth::emulator::write_pki(pki, o.tls_dir); !err.empty()) {
        std::cerr << "gcp-emulator: " << err << "\n";
        return 1;
      }
  }

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  std::unique_ptr<httplib::Server> svr;
  if (o.http)
    svr = std::make_unique<httplib::Server>();
  else if (!o.tls_cert.empty())
    svr = std::make_unique<httplib::SSLServer>(o.tls_cert.c_str(), o.tls_key.c_str());
  else
    svr = std::make_unique<httplib::SSLServer>(pki.server_cert.get(), pki.server_key.get());
  if (!svr->is_valid()) {
    std::cerr << "gcp-emulator: cannot set up TLS (check --tls-cert and --tls-key)\n";
    return 1;
  }
  auto handler = [&](const httplib::Request& req, httplib::Response& res) {
    auto start = std::chrono::steady_clock::now();
    ge::HttpRequest r;
    r.method = req.method;
    r.path = req.path;
    r.body = req.body;
    for (const auto& [k, v] : req.params) r.query.emplace(k, v);
    for (const auto& [k, v] : req.headers) {
      std::string lower = k;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.headers[lower] = v;
    }
    ge::Reply out;
    try {
      out = service.handle(r);
    } catch (const std::exception& e) {
      std::cerr << "gcp-emulator: internal error on " << req.method << " " << req.path << ": " << e.what() << "\n";
      out.status = 500;
      out.body = ge::api_error(500, "backendError", "gcp-emulator internal error").dump();
      out.api = "internal";
    }
    if (out.latency_ms > 0) nap(out.latency_ms);
    if (out.action != ge::Reply::Action::Answer) {
      plinth::emulator::drop_connection(req.local_port, req.remote_port);
      res.set_header("Connection", "close");
    } else {
      res.status = out.status;
      for (const auto& [k, v] : out.headers) res.set_header(k, v);
      res.set_content(out.body, out.content_type.c_str());
    }
    log.write(req, out, std::chrono::steady_clock::now() - start);
  };
  svr->Get(".*", handler);
  svr->Post(".*", handler);
  svr->Delete(".*", handler);
  svr->Put(".*", handler);
  svr->Patch(".*", handler);
  svr->new_task_queue = [&o] { return new httplib::ThreadPool(static_cast<size_t>(o.threads)); };
  svr->set_keep_alive_max_count(1000);
  svr->set_keep_alive_timeout(2);
  svr->set_tcp_nodelay(true);
  svr->set_payload_max_length(8 * 1024 * 1024);
  int port = plinth::emulator::bind_server(*svr, o.host, o.port);
  if (port <= 0) {
    std::cerr << "gcp-emulator: cannot listen on " << o.host << ":" << o.port
              << " (in use? pick another --port, or 0 for a free one)\n";
    return 1;
  }
  std::string base = std::string(o.http ? "http://" : "https://") + url_host(o.host) + ":" + std::to_string(port);
  std::string token_uri = base + "/token";
  compute.set_base_url(base + "/compute/v1/");
  tokens.set_token_uri(token_uri);

  // The service accounts: one authorised; with --extra-keys also one whose key
  // was "deleted" (signed by a key the emulator does not know) and one without
  // IAM on the project. RSA key generation is the slow part of starting, so
  // the keys are made in parallel.
  std::string email = "plinth-emulator@" + o.project + ".iam.gserviceaccount.com";
  std::string noperm_email = "plinth-noperm@" + o.project + ".iam.gserviceaccount.com";
  int key_count = o.extra_keys ? 3 : 1;
  std::vector<std::optional<plinth::gcp::RsaSigner>> keys(static_cast<size_t>(key_count));
  {
    std::vector<std::thread> makers;
    for (size_t i = 0; i < keys.size(); ++i)
      makers.emplace_back([&keys, i] {
        auto k = plinth::gcp::RsaSigner::generate(2048);
        if (k) keys[i].emplace(std::move(k).value());
      });
    for (auto& t : makers) t.join();
  }
  for (const auto& k : keys)
    if (!k) {
      std::cerr << "gcp-emulator: cannot generate service-account keys\n";
      return 1;
    }
  std::string kid = random_hex(20), revoked_kid = random_hex(20), noperm_kid = random_hex(20);
  tokens.trust(email, kid, plinth::gcp::RsaVerifier::of(*keys[0]), true);
  if (o.extra_keys) tokens.trust(noperm_email, noperm_kid, plinth::gcp::RsaVerifier::of(*keys[2]), false);
  for (const auto& file : o.authorize_keys) {
    auto key = plinth::gcp::load_service_account_key(file);
    if (!key) {
      std::cerr << "gcp-emulator: --authorize-key: " << key.error().message << "\n";
      return 2;
    }
    auto signer = plinth::gcp::RsaSigner::from_pem(key->private_key_pem, "field 'private_key' of " + file);
    if (!signer) {
      std::cerr << "gcp-emulator: --authorize-key: " << signer.error().message << "\n";
      return 2;
    }
    tokens.trust(key->client_email, key->private_key_id, plinth::gcp::RsaVerifier::of(*signer), true);
  }
  std::string key_file;
  if (!o.key_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.key_dir, ec);
    key_file = o.key_dir + "/service-account.json";
    std::vector<std::tuple<std::string, const plinth::gcp::RsaSigner*, std::string, std::string>> files = {
        {key_file, &*keys[0], email, kid}};
    if (o.extra_keys) {
      files.emplace_back(o.key_dir + "/service-account-revoked.json", &*keys[1], email, revoked_kid);
      files.emplace_back(o.key_dir + "/service-account-noperm.json", &*keys[2], noperm_email, noperm_kid);
    }
    for (const auto& [path, signer, who, id] : files)
      if (std::string err = ge::write_key_file(path, *signer, o.project, who, id, token_uri); !err.empty()) {
        std::cerr << "gcp-emulator: " << err << "\n";
        return 1;
      }
  } else {
    std::cerr << "gcp-emulator: no --key-dir or --tls-dir: the service-account key file is not written\n";
  }

  for (const auto& t : o.subject_tokens) tokens.trust_subject_token(t);
  if (!o.refresh_token.empty())
    tokens.trust_refresh_token("764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com",
                               "d-FL95Q19q7MQmFpd7hHD0Ty", o.refresh_token);

  std::thread worker([&] { svr->listen_after_bind(); });
  // The GCE metadata server: plain HTTP, Metadata-Flavor: Google both ways.
  httplib::Server meta;
  std::thread meta_worker;
  int meta_port = 0;
  if (o.metadata_port) {
    meta.Get(".*", [&](const httplib::Request& req, httplib::Response& res) {
      auto start = std::chrono::steady_clock::now();
      ge::Reply r;
      r.api = "metadata";
      res.set_header("Metadata-Flavor", "Google");
      if (req.get_header_value("Metadata-Flavor") != "Google" && req.path != "/") {
        r.status = 403;
        r.body = "Missing required header \"Metadata-Flavor\": \"Google\"";
      } else if (req.path == "/computeMetadata/v1/instance/service-accounts/default/token") {
        json t = tokens.metadata_token(email);
        r.principal = ge::TokenAuthority::principal_of(t);
        t.erase("_principal");
        r.body = t.dump();
        r.api = "metadata.token";
      } else if (req.path == "/computeMetadata/v1/instance/service-accounts/default/email") {
        r.body = email;
      } else if (req.path == "/computeMetadata/v1/project/project-id") {
        r.body = o.project;
      } else if (req.path == "/") {
        r.body = "computeMetadata/\n";
      } else {
        r.status = 404;
        r.body = "Not Found";
      }
      res.status = r.status;
      res.set_content(r.body, r.body.rfind("{", 0) == 0 ? "application/json" : "application/text");
      log.write(req, r, std::chrono::steady_clock::now() - start);
    });
    meta_port = plinth::emulator::bind_server(meta, o.host, *o.metadata_port);
    if (meta_port <= 0) {
      std::cerr << "gcp-emulator: cannot listen on " << o.host << ":" << *o.metadata_port << " for --metadata-port\n";
      svr->stop();
      worker.join();
      return 1;
    }
    meta_worker = std::thread([&meta] { meta.listen_after_bind(); });
    while (!meta.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Say "ready" only once the server runs: a stop() before that would be lost
  // and leave the listener running after SIGTERM.
  while (!svr->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::cout << "listening " << base << " token_uri=" << token_uri << " compute=" << base << "/compute/v1/"
            << " project=" << o.project << " key=" << (key_file.empty() ? "-" : key_file) << "\n";
  if (o.metadata_port) std::cout << "metadata http://" << url_host(o.host) << ":" << meta_port << "\n";
  std::cout << "ready" << std::endl;

  int sig = 0;
  sigwait(&sigs, &sig);
  {
    std::lock_guard<std::mutex> lock(g_stop_mu);
    g_stop = true;
  }
  g_stop_cv.notify_all();
  compute.shutdown();
  svr->stop();
  worker.join();
  if (meta_worker.joinable()) {
    meta.stop();
    meta_worker.join();
  }
  std::cerr << "gcp-emulator: stopped by signal " << sig << "\n";
  return 0;
}
