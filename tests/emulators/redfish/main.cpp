// redfish-emulator: serves DMTF Redfish mockups as one or many BMCs over HTTPS,
// with fault injection and a request log. docs/emulators.md describes it.
#include <arpa/inet.h>
#include <dirent.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <thread>

#include "tests/emulators/redfish/options.h"
#include "tests/emulators/redfish/service.h"
#include "tests/emulators/common/clock.h"
#include "tests/emulators/common/connection.h"
#include "tests/emulators/common/listen.h"
#include "tests/emulators/common/tls.h"

namespace re = plinth::redfish_emulator;

namespace {

std::atomic<bool> g_stop{false};
std::mutex g_stop_mu;
std::condition_variable g_stop_cv;

/// Sleeps `ms` or until shutdown, whichever comes first.
void nap(int ms) {
  std::unique_lock<std::mutex> lock(g_stop_mu);
  g_stop_cv.wait_for(lock, std::chrono::milliseconds(ms), [] { return g_stop.load(); });
}

/// The accepted socket a request arrived on (tests/emulators/common/connection.h).
int socket_of(const httplib::Request& req) { return plinth::emulator::accepted_socket(req.local_port, req.remote_port); }

/// --power-log: every PowerState change of every BMC, in the order they happen.
class PowerLog {
 public:
  bool open(const std::string& path) {
    out_.open(path, std::ios::app);
    return out_.good();
  }
  void write(int bmc, const std::string& system, const std::string& state) {
    std::lock_guard<std::mutex> lock(mu_);
    out_ << re::json{{"time", plinth::emulator::utc_now_ms()}, {"bmc", bmc}, {"system", system}, {"state", state}}.dump() << '\n';
    out_.flush();
  }

 private:
  std::mutex mu_;
  std::ofstream out_;
};

/// --media-dir: fetches a VirtualMedia image as a BMC does (TLS not verified,
/// as BMCs' VerifyCertificate defaults to false) and keeps it as DIR/BMC/MEDIA.
/// Returns {} or the Base message id and arguments that fail the InsertMedia.
std::vector<std::string> fetch_media(const std::string& dir, int bmc, const std::string& media,
                                     const std::string& image) {
  static const std::regex url(R"(^(https?)://([^/]+)(/.*)?$)");
  std::smatch m;
  if (!std::regex_match(image, m, url)) {
    const std::string scheme = image.find("://") == std::string::npos ? image : image.substr(0, image.find("://"));
    return {"SourceDoesNotSupportProtocol", image, scheme};
  }
  httplib::Client client(m[1].str() + "://" + m[2].str());
  client.enable_server_certificate_verification(false);
  client.set_connection_timeout(5);
  client.set_read_timeout(30);
  auto res = client.Get(m[3].matched ? m[3].str() : "/");
  if (!res) return {"CouldNotEstablishConnection", image};
  if (res->status == 401 || res->status == 403) return {"ResourceAtUriUnauthorized", image, std::to_string(res->status)};
  if (res->status != 200) return {"CouldNotEstablishConnection", image};
  const std::string folder = dir + "/" + std::to_string(bmc);
  ::mkdir(dir.c_str(), 0755);
  ::mkdir(folder.c_str(), 0755);
  const std::string path = folder + "/" + media.substr(media.rfind('/') + 1);
  std::ofstream out(path + ".part", std::ios::binary | std::ios::trunc);
  out << res->body;
  out.close();
  if (!out || std::rename((path + ".part").c_str(), path.c_str()) != 0) return {"CouldNotEstablishConnection", image};
  return {};
}

class RequestLog {
 public:
  bool open(const std::string& path) {
    out_.open(path, std::ios::app);
    return out_.good();
  }
  void write(std::optional<int> bmc, const std::string& method, const std::string& path, std::optional<int> status,
             const std::string& fault, std::chrono::steady_clock::duration took, const std::string& query = "") {
    if (!out_.is_open()) return;
    re::json line = {{"time", plinth::emulator::utc_now_ms()},
                     {"bmc", bmc ? re::json(*bmc) : re::json(nullptr)},
                     {"method", method},
                     {"path", path},
                     {"query", query},
                     {"status", status ? re::json(*status) : re::json(nullptr)},
                     {"fault", fault.empty() ? re::json(nullptr) : re::json(fault)},
                     {"ms", std::chrono::duration_cast<std::chrono::milliseconds>(took).count()}};
    std::lock_guard<std::mutex> lock(mu_);
    out_ << line.dump() << '\n';
    out_.flush();
  }

 private:
  std::mutex mu_;
  std::ofstream out_;
};

/// The deterministic fault generator of one BMC.
struct FaultDice {
  std::mutex mu;
  std::mt19937_64 rng;
};

struct Emulator {
  re::Options options;
  std::vector<std::unique_ptr<re::Bmc>> bmcs;
  std::vector<std::unique_ptr<FaultDice>> dice;
  RequestLog log;

  void serve(const httplib::Request& req, httplib::Response& res, int fixed_bmc) {
    auto start = std::chrono::steady_clock::now();
    int index = fixed_bmc;
    std::string path = req.path;
    if (index < 0) {
      static const std::regex prefix(R"(^/bmc/(\d{1,6})(/.*)?$)");
      std::smatch m;
      if (std::regex_match(req.path, m, prefix) && std::stoi(m[1]) < static_cast<int>(bmcs.size())) {
        index = std::stoi(m[1]);
        path = m[2].matched ? m[2].str() : "/";
      } else {
        reply(res, re::error_response(404, "ResourceMissingAtURI", {req.path}));
        log.write(std::nullopt, req.method, req.path, 404, "", std::chrono::steady_clock::now() - start);
        return;
      }
    }
    re::Bmc& bmc = *bmcs[static_cast<size_t>(index)];
    if (bmc.profile().hang) {
      hang(req);
      log.write(index, req.method, req.path, std::nullopt, "hang", std::chrono::steady_clock::now() - start);
      return;
    }
    int latency = 0;
    double roll = 0;
    {
      FaultDice& d = *dice[static_cast<size_t>(index)];
      std::lock_guard<std::mutex> lock(d.mu);
      if (options.latency_max_ms > 0)
        latency = std::uniform_int_distribution<int>(options.latency_min_ms, options.latency_max_ms)(d.rng);
      roll = std::uniform_real_distribution<double>(0, 1)(d.rng);
    }
    if (latency > 0) nap(latency);
    auto took = [&] { return std::chrono::steady_clock::now() - start; };
    if (roll < options.drop_rate) {
      if (int fd = socket_of(req); fd >= 0) shutdown(fd, SHUT_RDWR);
      log.write(index, req.method, req.path, std::nullopt, "drop", took());
      return;
    }
    if (roll < options.drop_rate + options.rate_503) {
      re::Response r = re::error_response(503, "ServiceTemporarilyUnavailable", {"1"});
      r.headers.emplace_back("Retry-After", "1");
      reply(res, r);
      log.write(index, req.method, req.path, 503, "503", took());
      return;
    }
    if (roll < options.drop_rate + options.rate_503 + options.rate_500) {
      reply(res, re::error_response(500, "InternalError", {}));
      log.write(index, req.method, req.path, 500, "500", took());
      return;
    }
    re::Request r;
    r.method = req.method;
    r.path = path;
    if (auto q = req.target.find('?'); q != std::string::npos)  // %XX decoded, as a service reads it
      r.query = httplib::detail::decode_url(req.target.substr(q + 1), false);
    r.body = req.body;
    for (const auto& [k, v] : req.headers) {
      std::string lower = k;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.headers[lower] = v;
    }
    re::Response out;
    try {
      out = bmc.handle(r);
    } catch (const std::exception& e) {
      std::cerr << "redfish-emulator: internal error on " << req.method << " " << req.path << ": " << e.what() << "\n";
      out = re::error_response(500, "InternalError", {});
    }
    reply(res, out);
    log.write(index, req.method, req.path, out.status, "", took(), r.query);
  }

  static void reply(httplib::Response& res, const re::Response& r) {
    res.status = r.status;
    for (const auto& [k, v] : r.headers) res.set_header(k, v);
    if (!r.body.empty()) res.set_content(r.body, r.content_type.c_str());
  }

  /// Holds the request until the client gives up or the emulator stops, then
  /// closes the connection without an answer.
  static void hang(const httplib::Request& req) {
    int fd = socket_of(req);
    while (!g_stop) {
      if (fd >= 0) {
        pollfd p{fd, POLLRDHUP, 0};
        if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) break;
      }
      nap(50);
    }
    if (fd >= 0) shutdown(fd, SHUT_RDWR);
  }
};

std::string url_host(const std::string& host) { return host.find(':') != std::string::npos ? "[" + host + "]" : host; }

}  // namespace

int main(int argc, char** argv) {
  Emulator em;
  bool help = false;
  if (std::string err = re::parse_options(argc, argv, em.options, help); !err.empty()) {
    std::cerr << "redfish-emulator: " << err << "\n";
    return 2;
  }
  if (help) {
    std::cout << re::usage();
    return 0;
  }
  const re::Options& o = em.options;
  auto mockup = std::make_shared<re::Mockup>();
  if (std::string err = re::load_mockup(o.mockup, *mockup); !err.empty()) {
    std::cerr << "redfish-emulator: " << err << "\n";
    return 1;
  }
  if (!o.request_log.empty() && !em.log.open(o.request_log)) {
    std::cerr << "redfish-emulator: cannot open --request-log " << o.request_log << "\n";
    return 1;
  }
  re::ServiceSettings settings{o.power_delay_ms, o.session_timeout_s, o.async_tasks, o.expand, nullptr};
  static PowerLog power_log;  // outlives every BMC and its timers
  if (!o.power_log.empty()) {
    if (!power_log.open(o.power_log)) {
      std::cerr << "redfish-emulator: cannot open --power-log " << o.power_log << "\n";
      return 1;
    }
    settings.on_power_state = [](int bmc, const std::string& system, const std::string& state) {
      power_log.write(bmc, system, state);
    };
  }
  if (!o.media_dir.empty())
    settings.fetch_media = [dir = o.media_dir](int bmc, const std::string& media, const std::string& image) {
      return fetch_media(dir, bmc, media, image);
    };
  std::shared_ptr<const re::Mockup> shared = mockup;
  for (int i = 0; i < o.bmcs; ++i) {
    std::string prefix = o.port_base ? "" : "/bmc/" + std::to_string(i);
    em.bmcs.push_back(std::make_unique<re::Bmc>(shared, re::profile_for(o, i), settings, prefix));
    auto d = std::make_unique<FaultDice>();
    d->rng.seed(o.seed * 1000003u + static_cast<uint64_t>(i));
    em.dice.push_back(std::move(d));
  }

  plinth::emulator::TestPki pki;
  if (!o.http && o.tls_cert.empty()) {
    if (std::string err = plinth::emulator::make_test_pki({o.host}, pki); !err.empty()) {
      std::cerr << "redfish-emulator: " << err << "\n";
      return 1;
    }
    if (!o.tls_dir.empty())
      if (std::string err = plinth::emulator::write_pki(pki, o.tls_dir); !err.empty()) {
        std::cerr << "redfish-emulator: " << err << "\n";
        return 1;
      }
  }

  // Signals go to the main thread only, which waits for them below.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  int listeners = o.port_base ? o.bmcs : 1;
  int threads = o.threads > 0 ? o.threads : (listeners == 1 ? 64 : 4);
  std::vector<std::unique_ptr<httplib::Server>> servers;
  std::vector<int> ports;
  for (int l = 0; l < listeners; ++l) {
    std::unique_ptr<httplib::Server> svr;
    if (o.http)
      svr = std::make_unique<httplib::Server>();
    else if (!o.tls_cert.empty())
      svr = std::make_unique<httplib::SSLServer>(o.tls_cert.c_str(), o.tls_key.c_str());
    else
      svr = std::make_unique<httplib::SSLServer>(pki.server_cert.get(), pki.server_key.get());
    if (!svr->is_valid()) {
      std::cerr << "redfish-emulator: cannot set up TLS (check --tls-cert and --tls-key)\n";
      return 1;
    }
    int fixed = o.port_base ? l : -1;
    auto handler = [&em, fixed](const httplib::Request& req, httplib::Response& res) { em.serve(req, res, fixed); };
    svr->Get(".*", handler);
    svr->Post(".*", handler);
    svr->Patch(".*", handler);
    svr->Put(".*", handler);
    svr->Delete(".*", handler);
    svr->Options(".*", handler);
    svr->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
    svr->set_keep_alive_max_count(1000);
    svr->set_keep_alive_timeout(2);
    svr->set_tcp_nodelay(true);
    int want = o.port_base ? (*o.port_base == 0 ? 0 : *o.port_base + l) : o.port;
    int port = plinth::emulator::bind_server(*svr, o.host, want);
    if (port <= 0) {
      std::cerr << "redfish-emulator: cannot listen on " << o.host << ":" << want
                << " (in use? pick another --port/--port-base, or 0 for a free one)\n";
      return 1;
    }
    ports.push_back(port);
    servers.push_back(std::move(svr));
  }

  std::vector<std::thread> workers;
  for (auto& svr : servers) workers.emplace_back([s = svr.get()] { s->listen_after_bind(); });
  // Say "ready" only once every server runs: a stop() before that would be lost
  // and leave the listener running after SIGTERM (as in gcp-emulator).
  for (auto& svr : servers)
    while (!svr->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  std::string scheme = o.http ? "http://" : "https://";
  std::string base = scheme + url_host(o.host) + ":";
  if (o.port_base) {
    for (int l = 0; l < listeners; ++l)
      std::cout << "listening " << base << ports[static_cast<size_t>(l)] << " bmc=" << l << "\n";
  } else {
    std::cout << "listening " << base << ports[0] << " endpoint=" << base << ports[0] << "/bmc/{index} bmcs=" << o.bmcs
              << "\n";
  }
  std::cout << "ready" << std::endl;

  int sig = 0;
  sigwait(&sigs, &sig);
  {
    std::lock_guard<std::mutex> lock(g_stop_mu);
    g_stop = true;
  }
  g_stop_cv.notify_all();
  for (auto& svr : servers) svr->stop();
  for (auto& w : workers) w.join();
  std::cerr << "redfish-emulator: stopped by signal " << sig << "\n";
  return 0;
}
