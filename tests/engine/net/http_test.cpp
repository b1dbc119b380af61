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
#include "engine/net/retry.h"

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

TEST_CASE("net: with_retries retries throttling, honours Retry-After and stops at max_attempts") {
  LocalServer srv;
  std::atomic<int> hits{0};
  srv.server.Get("/flaky", [&](const httplib::Request&, httplib::Response& res) {
    if (++hits <= 2) {
      res.status = 503;
      res.set_header("Retry-After", "1");
      return;
    }
    res.set_content("fine", "text/plain");
  });
  srv.server.Get("/down", [&](const httplib::Request&, httplib::Response& res) { res.status = 500; });
  srv.server.Get("/gone", [&](const httplib::Request&, httplib::Response& res) { res.status = 404; });
  srv.start();
  Client c;
  std::vector<int> slept;
  SleepFn record = [&](int ms) { slept.push_back(ms); };

  RetryPolicy policy{5, 100, 1000, 60000};
  auto r = with_retries(policy, [&] { return c.request({"GET", srv.url("/flaky")}); }, record);
  REQUIRE(r.ok());
  CHECK(r->body == "fine");
  CHECK(hits == 3);
  CHECK(slept == std::vector<int>{1000, 1000});  // the server's Retry-After

  slept.clear();
  auto down = with_retries(RetryPolicy{3, 100, 1000, 60000}, [&] { return c.request({"GET", srv.url("/down")}); }, record);
  REQUIRE_FALSE(down.ok());
  CHECK(down.error().kind == Error::Kind::Retryable);
  CHECK(down.error().message == "GET " + srv.url("/down") + ": HTTP 500 Internal Server Error (gave up after 3 attempts)");
  REQUIRE(slept.size() == 2);
  CHECK(slept[0] <= 100);  // full jitter: [0, base], then [0, 2*base]
  CHECK(slept[1] <= 200);

  slept.clear();
  auto gone = with_retries(policy, [&] { return c.request({"GET", srv.url("/gone")}); }, record);
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.error().kind == Error::Kind::NotFound);
  CHECK(slept.empty());  // never retried

  // Retry-After is capped by the policy.
  Error throttled{Error::Kind::Throttled, "x", 120000};
  CHECK(backoff_delay_ms(RetryPolicy{5, 100, 1000, 5000}, 1, throttled) == 5000);
}

TEST_CASE("net: backoff is exponential with full jitter and capped") {
  RetryPolicy p{10, 100, 1000, 60000};
  Error e{Error::Kind::Retryable, "x", 0};
  for (int attempt = 1; attempt <= 8; ++attempt) {
    const int window = std::min(1000, 100 << (attempt - 1));
    int max_seen = 0;
    for (int i = 0; i < 200; ++i) {
      int d = backoff_delay_ms(p, attempt, e);
      REQUIRE(d >= 0);
      REQUIRE(d <= window);
      max_seen = std::max(max_seen, d);
    }
    CHECK(max_seen > window / 2);  // the whole window is used, not just its start
  }
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
