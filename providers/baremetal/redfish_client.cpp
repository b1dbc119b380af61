#include "providers/baremetal/redfish_client.h"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <thread>

#include "engine/core/files.h"
#include "engine/core/json_reader.h"
#include "engine/core/wire.h"

namespace plinth::baremetal {

Result<std::string> resolve_credentials(const std::string& ref) {
  std::string secret;
  if (ref.starts_with("env:")) {
    const std::string name = ref.substr(4);
    const char* v = name.empty() ? nullptr : std::getenv(name.c_str());
    if (!v || !*v)
      return Error::invalid("BMC credentials " + ref + ": environment variable " + name +
                            " is not set; export it as user:password");
    secret = v;
  } else if (ref.starts_with("file:")) {
    const std::string path = ref.substr(5);
    auto text = read_file(path);
    if (!text)
      return Error::invalid("BMC credentials " + ref + ": cannot read " + path +
                            "; create it holding user:password (mode 0600)");
    secret = *text;
    while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  } else if (ref.empty()) {
    return Error::invalid("no BMC credentials: set bmc.credentials of the pool to env:NAME or file:PATH");
  } else {
    return Error::invalid("BMC credentials must be a reference env:NAME or file:PATH (got a value of " +
                          std::to_string(ref.size()) + " characters, not shown); never put secrets in the blueprint");
  }
  auto colon = secret.find(':');
  if (colon == std::string::npos || colon == 0)
    return Error::invalid("BMC credentials " + ref + " do not have the form user:password");
  return secret;
}

std::string text(const Json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string link(const Json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? text(*it, "@odata.id") : "";
}

namespace {

std::string trim_slash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

std::string origin_of(const std::string& endpoint) {
  auto scheme = endpoint.find("://");
  if (scheme == std::string::npos) return endpoint;
  auto path = endpoint.find('/', scheme + 3);
  return path == std::string::npos ? endpoint : endpoint.substr(0, path);
}

Result<Json> parse_json(const std::string& method, const std::string& url, const std::string& body) {
  if (auto problem = json_shape_problem(body))
    return Error::fatal(method + " " + url + ": the BMC answered JSON that " + *problem + " of " +
                        std::to_string(body.size()) + "; refusing it. Check the BMC firmware or its Redfish service");
  try {
    return parse_json_text(body);
  } catch (const Json::parse_error& e) {
    return Error::fatal(method + " " + url + ": the BMC answered malformed JSON (parse error at byte " +
                        std::to_string(e.byte) + " of " + std::to_string(body.size()) +
                        "); check the BMC firmware or its Redfish service");
  } catch (const Json::exception& e) {  // out_of_range.406: a number too large for a double (2e308)
    std::string reason = e.what();
    if (auto p = reason.find("] "); p != std::string::npos) reason = reason.substr(p + 2);
    return Error::fatal(method + " " + url + ": the BMC answered malformed JSON (" + reason +
                        "); check the BMC firmware or its Redfish service");
  }
}

}  // namespace

RedfishClient::RedfishClient(net::Client& http, std::string endpoint, std::string credentials_ref,
                             std::string user_password, std::string ca_bundle, const RedfishSettings& settings,
                             const std::atomic<bool>* cancel)
    : http_(http),
      endpoint_(trim_slash(std::move(endpoint))),
      origin_(origin_of(endpoint_)),
      credentials_ref_(std::move(credentials_ref)),
      user_password_(std::move(user_password)),
      ca_bundle_(std::move(ca_bundle)),
      settings_(settings),
      cancel_(cancel) {}

namespace {

/// scheme://host:port of an absolute URL, lower case, with the scheme's
/// default port spelled out, so https://BMC and https://bmc:443 compare equal.
std::string canonical_origin(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return "";
  std::string scheme = url.substr(0, scheme_end);
  auto rest = url.substr(scheme_end + 3);
  auto slash = rest.find_first_of("/?#");
  std::string authority = rest.substr(0, slash);
  if (auto at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);
  for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto& c : authority) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto colon = authority.rfind(':');
  bool has_port = colon != std::string::npos && authority.find(']', colon) == std::string::npos;
  if (!has_port) authority += scheme == "https" ? ":443" : scheme == "http" ? ":80" : "";
  return scheme + "://" + authority;
}

}  // namespace

Result<std::string> RedfishClient::url(const std::string& uri) const {
  if (uri.starts_with("http://") || uri.starts_with("https://") || uri.find("://") != std::string::npos) {
    if (canonical_origin(uri) != canonical_origin(origin_))
      return Error::fatal("the BMC at " + endpoint_ + " linked to " + uri +
                          ", which is not on the BMC's own scheme, host and port; Plinth sends the BMC's "
                          "credentials nowhere else and stops here (check the BMC's Redfish service)");
    return uri;
  }
  if (uri.starts_with("//"))
    return Error::fatal("the BMC at " + endpoint_ + " linked to " + uri +
                        ", a network-path reference to another host; Plinth follows only links on the BMC itself");
  if (uri.starts_with("/")) return origin_ + uri;
  return endpoint_ + "/" + uri;
}

net::Request RedfishClient::request(std::string method, std::string url, const Call& call) const {
  net::Request req;
  req.method = std::move(method);
  req.url = std::move(url);
  req.ca_bundle = ca_bundle_;
  req.deadline = call.deadline();
  req.cancel = cancel_;
  return req;
}

Result<net::Response> RedfishClient::send(const net::Request& req, Call& call) {
  for (;;) {
    auto r = http_.send(req);
    std::optional<Error> failed;
    if (!r) failed = r.error();
    else if (r->status >= 500 || r->status == 429) failed = net::status_error(req.method, req.url, *r);
    if (!failed) call.progress();
    if (!failed || !failed->retryable() || !call.retry(*failed)) return r;
  }
}

namespace {

/// A 3xx answer: Plinth does not follow redirects (they would take the
/// credentials elsewhere); say so instead of failing to parse the body.
std::optional<Error> redirect_error(const std::string& method, const std::string& url, const net::Response& r) {
  if (r.status < 300 || r.status >= 400) return std::nullopt;
  std::string where = r.header("Location");
  return Error::fatal(method + " " + url + ": the BMC answered HTTP " + std::to_string(r.status) + " (a redirect" +
                      (where.empty() ? "" : " to " + where) +
                      "); Plinth does not follow redirects from a BMC. Point the pool's bmc.endpoints at the address "
                      "the BMC serves Redfish on");
}

}  // namespace

Status RedfishClient::login(Call& call) {
  const std::string root_url = endpoint_ + "/redfish/v1/";
  if (root_.is_null()) {
    net::Request req = request("GET", root_url, call);
    req.headers.emplace("Accept", "application/json");
    auto r = send(req, call);
    if (!r) return r.error();
    if (auto e = redirect_error("GET", root_url, *r)) return *e;
    if (auto e = net::status_error("GET", root_url, *r)) return *e;
    auto j = parse_json("GET", root_url, r->body);
    if (!j) return j.error();
    if (!j->is_object()) return Error::fatal("GET " + root_url + ": the service root is not a JSON object");
    root_ = std::move(*j);
  }
  std::string sessions;
  if (root_.contains("Links") && root_["Links"].is_object()) sessions = link(root_["Links"], "Sessions");
  if (sessions.empty() && !link(root_, "SessionService").empty())
    sessions = trim_slash(link(root_, "SessionService")) + "/Sessions";
  token_.clear();
  session_uri_.clear();
  if (!sessions.empty()) {
    auto sessions_url = url(sessions);
    if (!sessions_url) return sessions_url.error();
    auto colon = user_password_.find(':');
    Json body = {{"UserName", user_password_.substr(0, colon)}, {"Password", user_password_.substr(colon + 1)}};
    net::Request req = request("POST", *sessions_url, call);
    req.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
    req.body = body.dump();
    auto r = send(req, call);
    if (!r) return r.error();
    if (r->status == 401 || r->status == 403) {
      Error e = *net::status_error("POST", req.url, *r);
      e.message += "; the BMC rejected the credentials from " + credentials_ref_ + ": check the user:password there";
      return e;
    }
    if (auto e = redirect_error("POST", req.url, *r)) return *e;
    if (r->status < 300 && !r->header("X-Auth-Token").empty()) {
      token_ = r->header("X-Auth-Token");
      session_uri_ = r->header("Location");
      if (session_uri_.empty()) {
        auto j = parse_json_or_discard(r->body);
        session_uri_ = text(j, "@odata.id");
      }
    } else if (r->status >= 400 && r->status != 404 && r->status != 405 && r->status != 501) {
      return *net::status_error("POST", req.url, *r);
    }
    // 404/405/501 or no token: the service has no usable sessions; basic auth it is.
  }
  logged_in_ = true;
  return {};
}

Result<net::Response> RedfishClient::exchange(const std::string& method, const std::string& uri, const std::string& body,
                                          Call& call, const net::Headers& extra) {
  auto target = url(uri);
  if (!target) return target.error();
  for (int attempt = 0;; ++attempt) {
    std::string token;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (!logged_in_)
        if (auto st = login(call); !st) return st.error();
      token = token_;
    }
    net::Request req = request(method, *target, call);
    req.headers = extra;
    req.body = body;
    req.headers.emplace("Accept", "application/json");
    req.headers.emplace("OData-Version", "4.0");
    if (!body.empty()) req.headers.emplace("Content-Type", "application/json");
    if (!token.empty()) req.headers["X-Auth-Token"] = token;
    else req.basic_auth = user_password_;
    auto r = send(req, call);
    if (!r) return r;
    if (r->status == 401 && !token.empty() && attempt == 0) {
      // The session expired or was deleted: log in again, once.
      std::lock_guard<std::mutex> g(mu_);
      if (token_ == token) logged_in_ = false;
      continue;
    }
    if (r->status == 401 || r->status == 403) {
      Error e = *net::status_error(method, req.url, *r);
      e.message += "; the BMC rejected the credentials from " + credentials_ref_ + ": check the user:password there";
      return e;
    }
    if (auto e = redirect_error(method, req.url, *r)) return *e;
    return r;
  }
}

Result<const Json*> RedfishClient::service_root(Call& call) {
  std::lock_guard<std::mutex> g(mu_);
  if (root_.is_null())
    if (auto st = login(call); !st) return st.error();
  return &root_;
}

Result<std::string> RedfishClient::expand_query(int levels, Call& call) {
  auto root = service_root(call);
  if (!root) return root.error();
  const Json& features = (*root)->value("ProtocolFeaturesSupported", Json::object());
  const Json& expand = features.is_object() ? features.value("ExpandQuery", Json::object()) : Json::object();
  if (!expand.is_object() || expand.value("NoLinks", Json(false)) != Json(true)) return std::string();
  int allowed = 1;
  if (expand.value("Levels", Json(false)) == Json(true)) {
    const Json& max = expand.value("MaxLevels", Json(1));
    allowed = max.is_number_integer() ? static_cast<int>(std::clamp<long long>(max.get<long long>(), 1, 6)) : 1;
  }
  levels = std::clamp(levels, 1, allowed);
  return levels == 1 ? std::string("$expand=.") : "$expand=.($levels=" + std::to_string(levels) + ")";
}

Result<std::string> RedfishClient::system_uri(Call& call, std::optional<Doc>* first) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!system_uri_.empty()) return system_uri_;
  }
  auto root = service_root(call);
  if (!root) return root.error();
  const std::string systems = link(**root, "Systems");
  if (systems.empty())
    return Error::fatal("GET " + endpoint_ + "/redfish/v1/: the service root has no Systems collection; "
                        "is this a BMC's Redfish service?");
  auto query = expand_query(3, call);
  if (!query) return query.error();
  auto coll = get(systems, call, *query);
  if (!coll) return coll.error();
  Json* members = coll->body.is_object() && coll->body.contains("Members") ? &coll->body["Members"] : nullptr;
  if (!members || !members->is_array() || members->empty() || text((*members)[0], "@odata.id").empty())
    return Error::fatal("GET " + coll->url + ": the Systems collection has no members");
  Json& member = (*members)[0];
  const std::string id = text(member, "@odata.id");
  if (first && expanded(member)) {
    auto u = url(id);
    if (!u) return u.error();
    std::string etag = text(member, "@odata.etag");
    *first = Doc{*u, std::move(member), std::move(etag)};  // the collection is not read again
  }
  std::lock_guard<std::mutex> g(mu_);
  system_uri_ = id;
  return system_uri_;
}

Result<Doc> RedfishClient::get(const std::string& uri, Call& call, const std::string& query) {
  auto r = exchange("GET", query.empty() ? uri : uri + (uri.find('?') == std::string::npos ? "?" : "&") + query, "",
                    call);
  if (!r) return r.error();
  const std::string u = *url(uri);
  if (auto e = net::status_error("GET", u, *r)) return *e;
  auto j = parse_json("GET", u, r->body);
  if (!j) return j.error();
  if (!j->is_object()) return Error::fatal("GET " + u + ": the BMC answered JSON that is not an object");
  std::string etag = r->header("ETag");
  if (etag.empty() && j->contains("@odata.etag") && (*j)["@odata.etag"].is_string()) etag = (*j)["@odata.etag"];
  return Doc{u, std::move(*j), std::move(etag)};
}

Result<net::Response> RedfishClient::patch(const std::string& uri, const Json& body, Call& call,
                                           const std::optional<std::string>& etag, bool reread) {
  std::optional<std::string> known = etag;
  for (int attempt = 0;; ++attempt) {
    std::string tag, where;
    if (known) {
      tag = *known;
      auto u = url(uri);
      if (!u) return u.error();
      where = *u;
    } else {
      auto doc = get(uri, call);
      if (!doc) return doc.error();
      tag = doc->etag;
      where = doc->url;
    }
    known.reset();  // a second attempt reads the ETag afresh
    net::Headers h;
    if (!tag.empty()) h["If-Match"] = tag;
    auto r = exchange("PATCH", uri, body.dump(), call, h);
    if (!r) return r;
    // 412: changed under us; 428: the service wants If-Match. Re-read the ETag once.
    if ((r->status == 412 || r->status == 428) && attempt == 0 && reread) continue;
    if (auto e = net::status_error("PATCH", where, *r)) return *e;
    return r;
  }
}

Status RedfishClient::post_action(const std::string& uri, const Json& body, Call& call) {
  auto r = exchange("POST", uri, body.dump(), call);
  if (!r) return r.error();
  if (auto e = net::status_error("POST", *url(uri), *r)) return *e;
  if (r->status == 202 && !r->header("Location").empty()) return wait_task(r->header("Location"), call);
  return {};
}

Status RedfishClient::wait_task(const std::string& monitor, Call& call) {
  auto monitor_url = url(monitor);
  if (!monitor_url) return monitor_url.error();
  const Deadline limit = Deadline::after(std::chrono::milliseconds(settings_.power_timeout_ms));
  for (;;) {
    auto r = exchange("GET", monitor, "", call);
    if (!r) return r.error();
    if (auto e = net::status_error("GET", *monitor_url, *r)) return *e;
    if (r->status != 202) {
      auto j = parse_json_or_discard(r->body);
      const std::string state = text(j, "TaskState");
      if (state == "Exception" || state == "Killed" || state == "Cancelled") {
        std::string why;
        if (j.is_object() && j.contains("Messages") && j["Messages"].is_array() && !j["Messages"].empty())
          why = text(j["Messages"][0], "Message");
        return Error::fatal("task " + *monitor_url + " ended in state " + state + (why.empty() ? "" : ": " + why));
      }
      return {};
    }
    if (limit.passed())
      return Error{Error::Kind::Retryable,
                   "task " + *monitor_url + " did not finish within " + std::to_string(settings_.power_timeout_ms) +
                       " ms (power_timeout_ms)",
                   0};
    if (auto st = net::pause(settings_.poll_ms, call.deadline(), cancel_, "waiting for task " + *monitor_url); !st) return st;
  }
}

Status RedfishClient::logout(Call& call) {
  std::string token, session;
  {
    std::lock_guard<std::mutex> g(mu_);
    token = token_;
    session = session_uri_;
    token_.clear();
    session_uri_.clear();
    logged_in_ = false;
  }
  if (session.empty()) return {};
  auto session_url = url(session);
  if (!session_url) return session_url.error();
  net::Request req = request("DELETE", *session_url, call);
  req.headers = {{"X-Auth-Token", token}, {"OData-Version", "4.0"}};
  auto r = send(req, call);
  if (!r) return r.error();
  if (r->status == 401 || r->status == 404) return {};  // already expired or gone
  if (auto e = net::status_error("DELETE", req.url, *r)) return *e;
  return {};
}

}  // namespace plinth::baremetal
