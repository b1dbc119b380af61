// HTTP over libcurl: pooled easy handles (each keeps its own keep-alive
// connections) plus a share handle for DNS and TLS sessions. Connections are
// deliberately not shared through CURLSH: libcurl documents that as unsafe
// across concurrent threads.
#include "engine/net/http.h"

#include "engine/core/log.h"
#include "engine/core/wire.h"

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <ctime>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace plinth::net {

bool CaseInsensitiveLess::operator()(std::string_view a, std::string_view b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) < std::tolower(static_cast<unsigned char>(y));
  });
}

std::string Response::header(std::string_view name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

bool is_metadata_host(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return host == "169.254.169.254" || host == "169.254.170.2" || host == "169.254.170.23" || host == "fd00:ec2::254" ||
         host == "fd00:ec2::23" || host == "metadata.google.internal";
}

bool is_loopback_host(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::string h(host);
  std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return std::tolower(c); });
  if (h == "localhost" || h == "localhost." || h == "::1" || h == "0:0:0:0:0:0:0:1") return true;
  // 127.0.0.0/8: four decimal octets, the first 127.
  int octets = 0;
  size_t pos = 0;
  int first = -1;
  while (pos <= h.size()) {
    size_t dot = h.find('.', pos);
    std::string_view part = std::string_view(h).substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    int v = -1;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size() || v < 0 || v > 255) return false;
    if (octets == 0) first = v;
    ++octets;
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  return octets == 4 && first == 127;
}

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [k, v] : fields) out += (out.empty() ? "" : "&") + k + "=" + percent_encode(v);
  return out;
}

std::string percent_encode(std::string_view text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

int parse_retry_after_ms(std::string_view value) {
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.remove_prefix(1);
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.remove_suffix(1);
  if (value.empty()) return 0;
  long long secs = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), secs);
  if (ec == std::errc() && p == value.data() + value.size()) {
    if (secs <= 0) return 0;
    return static_cast<int>(std::min<long long>(secs, 24 * 3600) * 1000);
  }
  std::string s(value);
  time_t when = curl_getdate(s.c_str(), nullptr);
  if (when < 0) return 0;
  time_t now = time(nullptr);
  if (when <= now) return 0;
  return static_cast<int>(std::min<long long>(when - now, 24 * 3600) * 1000);
}

namespace {

std::string reason_phrase(long status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 412: return "Precondition Failed";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

/// The server's own explanation: an OData/Redfish `error.message` (plus the
/// first extended message), else the start of the body on one line.
std::string server_message(const std::string& body) {
  if (body.empty()) return "";
  auto j = parse_json_or_discard(body);
  if (!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_object()) {
    const auto& e = j["error"];
    auto text = [](const nlohmann::json& o, const char* key) {
      auto it = o.find(key);
      return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    std::string msg = text(e, "message");
    auto ext = e.find("@Message.ExtendedInfo");
    if (ext != e.end() && ext->is_array() && !ext->empty() && (*ext)[0].is_object()) {
      std::string first = text((*ext)[0], "Message");
      if (!first.empty() && first != msg) msg = msg.empty() ? first : msg + " (" + first + ")";
    }
    if (!msg.empty()) return msg;
  }
  std::string s = body.substr(0, 200);
  std::replace_if(s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  if (body.size() > 200) s += "...";
  return s;
}

}  // namespace

std::optional<Error> status_error(const std::string& method, const std::string& url, const Response& r) {
  if (r.status < 400) return std::nullopt;
  std::string msg = method + " " + url + ": HTTP " + std::to_string(r.status);
  if (auto phrase = reason_phrase(r.status); !phrase.empty()) msg += " " + phrase;
  if (auto server = server_message(r.body); !server.empty()) msg += ": " + server;
  Error e;
  e.message = std::move(msg);
  if (r.status == 429 || r.status == 503) {
    e.kind = Error::Kind::Throttled;
    e.retry_after_ms = parse_retry_after_ms(r.header("Retry-After"));
  } else if (r.status >= 500) {
    e.kind = Error::Kind::Retryable;
    e.retry_after_ms = parse_retry_after_ms(r.header("Retry-After"));
  } else if (r.status == 404 || r.status == 410) {
    e.kind = Error::Kind::NotFound;
  } else if (r.status == 409 || r.status == 412) {
    e.kind = Error::Kind::Conflict;
  } else if (r.status == 400 || r.status == 422) {
    e.kind = Error::Kind::Invalid;
  } else {
    e.kind = Error::Kind::Fatal;
  }
  return e;
}

namespace {

struct EasyDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
using EasyPtr = std::unique_ptr<CURL, EasyDeleter>;
struct ShareDeleter {
  void operator()(CURLSH* s) const { curl_share_cleanup(s); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;
struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};

/// libcurl's global init, once per process.
void global_init() {
  static const bool done = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)done;
}

struct BodySink {
  std::string* body;
  size_t limit;
  bool overflow = false;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  if (sink->body->size() + size * n > sink->limit) {
    sink->overflow = true;
    return 0;  // makes libcurl stop with CURLE_WRITE_ERROR
  }
  sink->body->append(data, size * n);
  return size * n;
}

struct Progress {
  const Deadline* deadline;
  const std::atomic<bool>* cancel;
  bool cancelled = false, expired = false;
};

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* p = static_cast<Progress*>(user);
  if (p->cancel && p->cancel->load()) {
    p->cancelled = true;
    return 1;
  }
  if (p->deadline->passed()) {
    p->expired = true;
    return 1;
  }
  return 0;
}

std::string format_ms(long long ms) {
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + " ms";
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* headers = static_cast<Headers*>(user);
  std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {
    headers->clear();  // a new response (after 100 Continue): start over
    return size * n;
  }
  auto colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  std::string_view name = line.substr(0, colon), value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) value.remove_suffix(1);
  (*headers)[std::string(name)] = std::string(value);
  return size * n;
}

/// The host part of `url`, or nullopt when the URL cannot be parsed.
std::optional<std::string> url_host(const std::string& url) {
  std::unique_ptr<CURLU, UrlDeleter> u(curl_url());
  if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return std::nullopt;
  char* host = nullptr;
  if (curl_url_get(u.get(), CURLUPART_HOST, &host, 0) != CURLUE_OK || !host) return std::nullopt;
  std::string h(host);
  curl_free(host);
  return h;
}

Error transport_error(CURLcode code, const std::string& method, const std::string& url, const char* detail,
                      long timeout_ms) {
  std::string what;
  Error::Kind kind = Error::Kind::Retryable;
  switch (code) {
    case CURLE_COULDNT_CONNECT: what = "connection refused or host unreachable"; break;
    case CURLE_OPERATION_TIMEDOUT: what = "timed out (limit " + std::to_string(timeout_ms) + " ms)"; break;
    case CURLE_COULDNT_RESOLVE_HOST: what = "cannot resolve the host name"; break;
    case CURLE_GOT_NOTHING: what = "the server closed the connection without answering"; break;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR: what = "the connection was reset"; break;
    case CURLE_SSL_CONNECT_ERROR: what = "the TLS handshake failed"; break;
    case CURLE_PEER_FAILED_VERIFICATION:
      what = "the server's TLS certificate could not be verified; give the CA that signed it (ca_bundle)";
      kind = Error::Kind::Fatal;
      break;
    case CURLE_SSL_CACERT_BADFILE:
      what = "the CA bundle cannot be read";
      kind = Error::Kind::Fatal;
      break;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      what = "not a valid http(s) URL";
      kind = Error::Kind::Invalid;
      break;
    default: what = curl_easy_strerror(code); kind = Error::Kind::Fatal; break;
  }
  std::string msg = method + " " + url + ": " + what;
  if (detail && *detail) msg += " (curl: " + std::string(detail) + ")";
  return Error{kind, std::move(msg), 0};
}

}  // namespace

struct Client::Impl {
  std::unique_ptr<CURLSH, ShareDeleter> share;
  std::array<std::mutex, CURL_LOCK_DATA_LAST> locks;
  std::mutex pool_mu;
  std::vector<EasyPtr> idle;

  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<Impl*>(user)->locks[static_cast<size_t>(data)].lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<Impl*>(user)->locks[static_cast<size_t>(data)].unlock();
  }

  Impl() : share(curl_share_init()) {
    if (share) {
      curl_share_setopt(share.get(), CURLSHOPT_LOCKFUNC, &Impl::lock);
      curl_share_setopt(share.get(), CURLSHOPT_UNLOCKFUNC, &Impl::unlock);
      curl_share_setopt(share.get(), CURLSHOPT_USERDATA, this);
      curl_share_setopt(share.get(), CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
      curl_share_setopt(share.get(), CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    }
  }
  ~Impl() { idle.clear(); }  // easy handles go before the share handle

  EasyPtr acquire() {
    {
      std::lock_guard<std::mutex> g(pool_mu);
      if (!idle.empty()) {
        EasyPtr h = std::move(idle.back());
        idle.pop_back();
        return h;
      }
    }
    return EasyPtr(curl_easy_init());
  }
  void release(EasyPtr h) {
    curl_easy_reset(h.get());  // keeps live connections and caches
    std::lock_guard<std::mutex> g(pool_mu);
    idle.push_back(std::move(h));
  }
};

Client::Client(ClientOptions options) : options_(std::move(options)) {
  global_init();
  impl_ = std::make_unique<Impl>();
}

Client::~Client() = default;

Status pause(int ms, const Deadline& deadline, const std::atomic<bool>* cancel, const std::string& what) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(ms, 0));
  for (;;) {
    if (cancel && cancel->load()) return Error{Error::Kind::Cancelled, what + ": cancelled", 0};
    auto now = std::chrono::steady_clock::now();
    if (deadline.passed(now))
      return Error{Error::Kind::DeadlineExceeded,
                   what + ": the deadline of " + format_ms(deadline.budget().count()) + " passed", 0};
    if (now >= until) return {};
    auto step = std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(20));
    std::this_thread::sleep_for(step);
  }
}

namespace {
/// What kind of failure a request had, for the trace (its message repeats the
/// URL unredacted, so it is not printed there).
const char* failure_kind(const Error& e) {
  switch (e.kind) {
    case Error::Kind::Retryable: return "transport error (retryable)";
    case Error::Kind::Throttled: return "throttled";
    case Error::Kind::Cancelled: return "cancelled";
    case Error::Kind::DeadlineExceeded: return "deadline exceeded";
    case Error::Kind::Invalid: return "refused (invalid)";
    default: return "transport error";
  }
}
}  // namespace

Result<Response> Client::send(const Request& req) {
  if (!log::enabled(log::Level::Trace)) return perform(req);
  // --log-level trace: one line per request (docs/logging.md): method, URL
  // with secrets redacted, status or error, time. Never headers or bodies.
  const auto start = std::chrono::steady_clock::now();
  auto r = perform(req);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  std::string line = req.method + " " + log::redact_url(req.url) + " -> ";
  line += r ? std::to_string(r->status) : std::string("failed: ") + failure_kind(r.error());
  log::write(log::Level::Trace, "http", line + " (" + std::to_string(ms) + " ms)");
  return r;
}

Result<Response> Client::perform(const Request& req) {
  if (req.cancel && req.cancel->load())
    return Error{Error::Kind::Cancelled, req.method + " " + req.url + ": cancelled before it was sent", 0};
  if (req.deadline.passed())
    return Error{Error::Kind::DeadlineExceeded,
                 req.method + " " + req.url + ": not sent, the operation's deadline of " +
                     format_ms(req.deadline.budget().count()) + " has passed",
                 0};
  auto host = url_host(req.url);
  if (!host) return Error::invalid(req.method + " " + req.url + ": not a valid URL");
  // https is enforced here, where every request is made, not only where a
  // blueprint is validated: an endpoint read back from state, a plan file or
  // a server's answer (a next link, an operation URL) is held to it too.
  std::string scheme = req.url.substr(0, req.url.find("://"));
  for (char& ch : scheme) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (scheme != "https" && !(scheme == "http" && (is_loopback_host(*host) ||
                                                  (req.metadata_service && is_metadata_host(*host)))))
    return Error::invalid(req.method + " " + req.url + ": refusing " +
                          (scheme == "http" ? "plain http to host '" + *host +
                                                  "': credentials and data would travel in clear; use https"
                                            : "the URL scheme '" + scheme + "': only https is used") +
                          " (plain http is allowed only to loopback hosts: 127.0.0.0/8, ::1, localhost)");
  if (options_.insecure && !is_loopback_host(*host))
    return Error::invalid(req.method + " " + req.url + ": refusing to turn TLS verification off for host '" + *host +
                          "': insecure is allowed only for loopback hosts (127.0.0.0/8, ::1, localhost); "
                          "give the server's CA with ca_bundle instead");

  EasyPtr h = impl_->acquire();
  if (!h) return Error::fatal(req.method + " " + req.url + ": cannot create a libcurl handle");
  CURL* c = h.get();
  Response resp;
  char errbuf[CURL_ERROR_SIZE] = {0};
  SlistPtr headers;
  for (const auto& [k, v] : req.headers) {
    std::string line = v.empty() ? k + ";" : k + ": " + v;
    curl_slist* next = curl_slist_append(headers.get(), line.c_str());
    if (!next) return Error::fatal(req.method + " " + req.url + ": out of memory building headers");
    (void)headers.release();
    headers.reset(next);
  }

  curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(c, CURLOPT_SHARE, impl_->share.get());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  const long timeout_ms =
      static_cast<long>(std::max<long long>(1, req.deadline.clamp(std::chrono::milliseconds(options_.timeout_ms)).count()));
  const bool cut_by_deadline = timeout_ms < options_.timeout_ms;
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, std::min(options_.connect_timeout_ms, timeout_ms));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  BodySink sink{&resp.body, options_.max_body_bytes};
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  Progress progress{&req.deadline, req.cancel};
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &progress);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &resp.headers);
  if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  const std::string& ca = req.ca_bundle.empty() ? options_.ca_bundle : req.ca_bundle;
  if (!req.ca_bundle.empty() || options_.ca_pem.empty()) {
    if (!ca.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, ca.c_str());
  } else {
    curl_blob blob{const_cast<char*>(options_.ca_pem.data()), options_.ca_pem.size(), CURL_BLOB_NOCOPY};
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
  }
  if (!options_.client_cert_pem.empty() && !options_.client_key_pem.empty()) {
    curl_blob cert{const_cast<char*>(options_.client_cert_pem.data()), options_.client_cert_pem.size(),
                   CURL_BLOB_NOCOPY};
    curl_blob key{const_cast<char*>(options_.client_key_pem.data()), options_.client_key_pem.size(),
                  CURL_BLOB_NOCOPY};
    curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
  }
  if (options_.insecure) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!req.basic_auth.empty()) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(c, CURLOPT_USERPWD, req.basic_auth.c_str());
  }
  if (req.method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else {
    const bool has_body = !req.body.empty() || req.method == "POST" || req.method == "PATCH" || req.method == "PUT";
    if (has_body) {
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.c_str());
    }
    if (req.method != "POST" && (req.method != "GET" || has_body))
      curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }

  CURLcode code = curl_easy_perform(c);
  if (code == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp.status);
  impl_->release(std::move(h));
  if (code == CURLE_OK) return resp;
  if (progress.cancelled) return Error{Error::Kind::Cancelled, req.method + " " + req.url + ": cancelled", 0};
  if (progress.expired || (code == CURLE_OPERATION_TIMEDOUT && cut_by_deadline))
    return Error{Error::Kind::DeadlineExceeded,
                 req.method + " " + req.url + ": no answer before the operation's deadline of " +
                     format_ms(req.deadline.budget().count()) + " passed",
                 0};
  if (sink.overflow)
    return Error::fatal(req.method + " " + req.url + ": the answer is larger than " +
                        std::to_string(options_.max_body_bytes) + " bytes; refusing to read more");
  return transport_error(code, req.method, req.url, errbuf, timeout_ms);
}

Result<Response> Client::request(const Request& req) {
  auto r = send(req);
  if (!r) return r;
  if (auto e = status_error(req.method, req.url, *r)) return *e;
  return r;
}

}  // namespace plinth::net
