// engine/net against an in-process cpp-httplib server.
#include <httplib.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "engine/net/http.h"

using namespace plinth;
using namespace plinth::net;

namespace {

/// An httplib server on a free loopback port, stopped when the object dies.
class LocalServer {
 public:
  LocalServer() {
    port_ = server.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
  }
  void start() {
    thread_ = std::thread([this] { server.listen_after_bind(); });
    for (int i = 0; i < 200 && !server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~LocalServer() {
    server.stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  httplib::Server server;

 private:
  int port_ = 0;
  std::thread thread_;
};

/// A loopback port nobody listens on.
int closed_port() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

}  // namespace

TEST_CASE("net: requests carry method, headers and body, response headers are case-insensitive") {
  LocalServer srv;
  srv.server.Patch("/thing", [](const httplib::Request& req, httplib::Response& res) {
    res.set_header("ETag", "\"v2\"");
    res.set_content(req.method + " " + req.get_header_value("If-Match") + " " + req.body, "text/plain");
  });
  srv.start();
  Client c;
  auto r = c.request({"PATCH", srv.url("/thing"), {{"If-Match", "\"v1\""}}, "{\"a\":1}"});
  REQUIRE(r.ok());
  CHECK(r->status == 200);
  CHECK(r->body == "PATCH \"v1\" {\"a\":1}");
  CHECK(r->header("etag") == "\"v2\"");
  CHECK(r->header("ETAG") == "\"v2\"");
  CHECK(r->header("x-missing").empty());
}

TEST_CASE("net: statuses map to error kinds with method, URL and the server's message") {
  LocalServer srv;
  srv.server.Get(R"(/status/(\d+))", [](const httplib::Request& req, httplib::Response& res) {
    res.status = std::stoi(req.matches[1]);
    if (res.status == 503 || res.status == 429) res.set_header("Retry-After", "7");
    res.set_content(R"({"error":{"code":"X","message":"boom"}})", "application/json");
  });
  srv.start();
  Client c;
  struct Case {
    int status;
    Error::Kind kind;
    const char* phrase;
  };
  for (auto [status, kind, phrase] : {Case{400, Error::Kind::Invalid, "Bad Request"},
                                      Case{401, Error::Kind::Fatal, "Unauthorized"},
                                      Case{403, Error::Kind::Fatal, "Forbidden"},
                                      Case{404, Error::Kind::NotFound, "Not Found"},
                                      Case{409, Error::Kind::Conflict, "Conflict"},
                                      Case{412, Error::Kind::Conflict, "Precondition Failed"},
                                      Case{422, Error::Kind::Invalid, "Unprocessable Entity"},
                                      Case{429, Error::Kind::Throttled, "Too Many Requests"},
                                      Case{500, Error::Kind::Retryable, "Internal Server Error"},
                                      Case{502, Error::Kind::Retryable, "Bad Gateway"},
                                      Case{503, Error::Kind::Throttled, "Service Unavailable"}}) {
    const std::string url = srv.url("/status/" + std::to_string(status));
    auto r = c.request({"GET", url});
    INFO(status);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == kind);
    CHECK(r.error().message == "GET " + url + ": HTTP " + std::to_string(status) + " " + phrase + ": boom");
    CHECK(r.error().retry_after_ms == (status == 503 || status == 429 ? 7000 : 0));
    // send() hands back any status as a response.
    auto raw = c.send({"GET", url});
    REQUIRE(raw.ok());
    CHECK(raw->status == status);
  }
}

TEST_CASE("net: Retry-After in seconds or as an HTTP date") {
  CHECK(parse_retry_after_ms("1") == 1000);
  CHECK(parse_retry_after_ms(" 120 ") == 120000);
  CHECK(parse_retry_after_ms("0") == 0);
  CHECK(parse_retry_after_ms("") == 0);
  CHECK(parse_retry_after_ms("soon") == 0);
  CHECK(parse_retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT") == 0);  // in the past
  // An HTTP date 30 s from now.
  char buf[64];
  time_t t = time(nullptr) + 30;
  tm g{};
  gmtime_r(&t, &g);
  strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &g);
  int ms = parse_retry_after_ms(buf);
  CHECK(ms >= 28000);
  CHECK(ms <= 30000);
}

TEST_CASE("net: transport failures are retryable errors naming method and URL") {
  Client c;
  const std::string refused = "http://127.0.0.1:" + std::to_string(closed_port()) + "/redfish/v1/";
  auto r = c.send({"GET", refused});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == Error::Kind::Retryable);
  CHECK(r.error().message.starts_with("GET " + refused + ": connection refused or host unreachable"));

  LocalServer srv;
  srv.server.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    res.set_content("late", "text/plain");
  });
  srv.start();
  Client quick({"", false, 1000, 200});
  auto start = std::chrono::steady_clock::now();
  auto t = quick.send({"GET", srv.url("/slow")});
  auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().kind == Error::Kind::Retryable);
  CHECK(t.error().message.starts_with("GET " + srv.url("/slow") + ": timed out (limit 200 ms)"));
  CHECK(took < std::chrono::milliseconds(1200));
}

TEST_CASE("net: plain http is refused where the request is made, except to loopback hosts", "[security]") {
  Client c;
  // An endpoint read back from a tampered state or a server's answer: the
  // request is refused before anything is sent, so no credential leaves.
  auto r = c.send({"POST", "http://bmc-attacker.example/redfish/v1/SessionService/Sessions"});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == Error::Kind::Invalid);
  CHECK(r.error().message ==
        "POST http://bmc-attacker.example/redfish/v1/SessionService/Sessions: refusing plain http to host "
        "'bmc-attacker.example': credentials and data would travel in clear; use https (plain http is allowed only "
        "to loopback hosts: 127.0.0.0/8, ::1, localhost)");
  CHECK(c.send({"GET", "HTTP://10.0.0.1/"}).error().message.find("refusing plain http to host '10.0.0.1'") !=
        std::string::npos);
  CHECK(c.send({"GET", "ftp://10.0.0.1/x"}).error().message ==
        "GET ftp://10.0.0.1/x: refusing the URL scheme 'ftp': only https is used (plain http is allowed only to "
        "loopback hosts: 127.0.0.0/8, ::1, localhost)");
  LocalServer srv;
  srv.server.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  srv.start();
  auto ok = c.send({"GET", srv.url("/")});
  REQUIRE(ok.ok());
  CHECK(ok->body == "ok");
}

TEST_CASE("net: insecure is refused for non-loopback hosts") {
  Client c({"", true, 1000, 1000});
  auto r = c.send({"GET", "https://bmc-3.dc1.example/redfish/v1/"});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == Error::Kind::Invalid);
  CHECK(r.error().message ==
        "GET https://bmc-3.dc1.example/redfish/v1/: refusing to turn TLS verification off for host "
        "'bmc-3.dc1.example': insecure is allowed only for loopback hosts (127.0.0.0/8, ::1, localhost); "
        "give the server's CA with ca_bundle instead");
  CHECK_FALSE(c.send({"GET", "https://10.0.0.1/"}).ok());
  CHECK(c.send({"GET", "https://10.0.0.1/"}).error().kind == Error::Kind::Invalid);

  // Loopback is allowed: the request goes out (and reaches a plain-HTTP server here).
  LocalServer srv;
  srv.server.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  srv.start();
  auto ok = c.send({"GET", srv.url("/")});
  REQUIRE(ok.ok());
  CHECK(ok->body == "ok");

  CHECK(is_loopback_host("127.0.0.1"));
  CHECK(is_loopback_host("127.255.3.4"));
  CHECK(is_loopback_host("localhost"));
  CHECK(is_loopback_host("LOCALHOST"));
  CHECK(is_loopback_host("::1"));
  CHECK(is_loopback_host("[::1]"));
  CHECK_FALSE(is_loopback_host("128.0.0.1"));
  CHECK_FALSE(is_loopback_host("127.0.0.1.example.com"));
  CHECK_FALSE(is_loopback_host("localhost.example.com"));
  CHECK_FALSE(is_loopback_host("127.0.0"));
  CHECK_FALSE(is_loopback_host("127.0.0.256"));
  CHECK_FALSE(is_loopback_host("::2"));
}

TEST_CASE("net: a request is sent once, a request still running at the deadline ends with DeadlineExceeded") {
  LocalServer srv;
  std::atomic<int> hits{0};
  srv.server.Get("/slow", [&](const httplib::Request&, httplib::Response& res) {
    ++hits;
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    res.set_content("late", "text/plain");
  });
  srv.server.Get("/down", [&](const httplib::Request&, httplib::Response& res) {
    ++hits;
    res.status = 503;
  });
  srv.start();
  Client c;
  Request slow{"GET", srv.url("/slow")};
  slow.deadline = Deadline::after(std::chrono::milliseconds(200));
  auto start = std::chrono::steady_clock::now();
  auto r = c.send(slow);
  auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == Error::Kind::DeadlineExceeded);
  CHECK(r.error().message == "GET " + srv.url("/slow") + ": no answer before the operation's deadline of 200 ms passed");
  CHECK(took < std::chrono::milliseconds(1200));
  CHECK(hits == 1);

  // One attempt: a 503 comes back as the caller's error to retry, or not.
  auto down = c.request({"GET", srv.url("/down")});
  REQUIRE_FALSE(down.ok());
  CHECK(down.error().kind == Error::Kind::Throttled);
  CHECK(hits == 2);

  // A deadline that has passed: nothing is sent.
  Request late{"GET", srv.url("/down")};
  late.deadline = Deadline::after(std::chrono::milliseconds(0));
  auto never = c.send(late);
  REQUIRE_FALSE(never.ok());
  CHECK(never.error().kind == Error::Kind::DeadlineExceeded);
  CHECK(hits == 2);
}

TEST_CASE("net: a cancel flag aborts a request in flight promptly") {
  LocalServer srv;
  srv.server.Get("/hang", [&](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    res.set_content("late", "text/plain");
  });
  srv.start();
  Client c;
  std::atomic<bool> cancel{false};
  Request req{"GET", srv.url("/hang")};
  req.cancel = &cancel;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel = true;
  });
  auto start = std::chrono::steady_clock::now();
  auto r = c.send(req);
  auto took = std::chrono::steady_clock::now() - start;
  t.join();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == Error::Kind::Cancelled);
  CHECK(took < std::chrono::milliseconds(1000));

  auto again = c.send(req);  // not sent once cancelled
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().message == "GET " + srv.url("/hang") + ": cancelled before it was sent");
}

TEST_CASE("net: an answer larger than max_body_bytes fails the request instead of filling memory") {
  LocalServer srv;
  srv.server.Get("/big", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(1 << 20, 'x'), "text/plain");
  });
  srv.server.Get("/endless", [&](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/plain", [](size_t, httplib::DataSink& sink) {
      std::string chunk(64 << 10, 'y');
      return sink.write(chunk.data(), chunk.size());  // never sink.done()
    });
  });
  srv.start();
  ClientOptions o;
  o.max_body_bytes = 256 << 10;
  Client c(o);
  auto big = c.send({"GET", srv.url("/big")});
  REQUIRE_FALSE(big.ok());
  CHECK(big.error().kind == Error::Kind::Fatal);
  CHECK(big.error().message == "GET " + srv.url("/big") + ": the answer is larger than 262144 bytes; refusing to read more");
  auto endless = c.send({"GET", srv.url("/endless")});
  REQUIRE_FALSE(endless.ok());
  CHECK(endless.error().message.find("the answer is larger than 262144 bytes") != std::string::npos);
}

TEST_CASE("net: pause waits, and ends early on cancel or at the deadline") {
  std::atomic<bool> cancel{false};
  CHECK(pause(10, Deadline::never(), &cancel, "x").ok());
  cancel = true;
  auto c = pause(5000, Deadline::never(), &cancel, "waiting for PowerState On");
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().kind == Error::Kind::Cancelled);
  CHECK(c.error().message == "waiting for PowerState On: cancelled");
  auto d = pause(5000, Deadline::after(std::chrono::milliseconds(30)), nullptr, "waiting for task T");
  REQUIRE_FALSE(d.ok());
  CHECK(d.error().kind == Error::Kind::DeadlineExceeded);
  CHECK(d.error().message == "waiting for task T: the deadline of 30 ms passed");
}

TEST_CASE("net: one client serves many threads at once") {
  LocalServer srv;
  srv.server.new_task_queue = [] { return new httplib::ThreadPool(8); };
  srv.server.Get(R"(/echo/(\d+))", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(req.matches[1].str(), "text/plain");
  });
  srv.start();
  Client c;
  std::atomic<int> good{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const std::string id = std::to_string(t * 100 + i);
        auto r = c.request({"GET", srv.url("/echo/" + id)});
        if (r.ok() && r->body == id) ++good;
      }
    });
  for (auto& t : ts) t.join();
  CHECK(good == 200);
}
