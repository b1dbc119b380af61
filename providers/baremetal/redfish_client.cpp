#include "providers/baremetal/redfish_client.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "engine/core/files.h"

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

std::string text(const Json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string link(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return "";
  auto id = it->find("@odata.id");
  return id != it->end() && id->is_string() ? id->get<std::string>() : "";
}

Result<Json> parse_json(const std::string& method, const std::string& url, const std::string& body) {
  try {
    return Json::parse(body);
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
                             std::string user_password, std::string ca_bundle, const RedfishSettings& settings)
    : http_(http),
      endpoint_(trim_slash(std::move(endpoint))),
      origin_(origin_of(endpoint_)),
      credentials_ref_(std::move(credentials_ref)),
      user_password_(std::move(user_password)),
      ca_bundle_(std::move(ca_bundle)),
      settings_(settings) {}

std::string RedfishClient::url(const std::string& uri) const {
  if (uri.starts_with("http://") || uri.starts_with("https://")) return uri;
  if (uri.starts_with("/")) return origin_ + uri;
  return endpoint_ + "/" + uri;
}

namespace {

/// Retries transport failures and 429/5xx; returns other statuses as answers.
Result<net::Response> send_retrying(net::Client& http, const net::Request& req, const net::RetryPolicy& policy) {
  return net::with_retries(policy, [&]() -> Result<net::Response> {
    auto r = http.send(req);
    if (r && (r->status >= 500 || r->status == 429)) return *net::status_error(req.method, req.url, *r);
    return r;
  });
}

}  // namespace

Status RedfishClient::login() {
  const std::string root_url = endpoint_ + "/redfish/v1/";
  if (root_.is_null()) {
    net::Request req{"GET", root_url, {{"Accept", "application/json"}}, "", "", ca_bundle_};
    auto r = send_retrying(http_, req, settings_.retry);
    if (!r) return r.error();
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
    auto colon = user_password_.find(':');
    Json body = {{"UserName", user_password_.substr(0, colon)}, {"Password", user_password_.substr(colon + 1)}};
    net::Request req{"POST", url(sessions), {{"Content-Type", "application/json"}, {"Accept", "application/json"}},
                     body.dump(), "", ca_bundle_};
    auto r = send_retrying(http_, req, settings_.retry);
    if (!r) return r.error();
    if (r->status == 401 || r->status == 403) {
      Error e = *net::status_error("POST", req.url, *r);
      e.message += "; the BMC rejected the credentials from " + credentials_ref_ + ": check the user:password there";
      return e;
    }
    if (r->status < 300 && !r->header("X-Auth-Token").empty()) {
      token_ = r->header("X-Auth-Token");
      session_uri_ = r->header("Location");
      if (session_uri_.empty()) {
        auto j = Json::parse(r->body, nullptr, false);
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

Result<net::Response> RedfishClient::call(const std::string& method, const std::string& uri, const std::string& body,
                                          const net::Headers& extra) {
  for (int attempt = 0;; ++attempt) {
    std::string token;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (!logged_in_)
        if (auto st = login(); !st) return st.error();
      token = token_;
    }
    net::Request req{method, url(uri), extra, body, "", ca_bundle_};
    req.headers.emplace("Accept", "application/json");
    req.headers.emplace("OData-Version", "4.0");
    if (!body.empty()) req.headers.emplace("Content-Type", "application/json");
    if (!token.empty()) req.headers["X-Auth-Token"] = token;
    else req.basic_auth = user_password_;
    auto r = send_retrying(http_, req, settings_.retry);
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
    return r;
  }
}

Result<Json> RedfishClient::service_root() {
  std::lock_guard<std::mutex> g(mu_);
  if (root_.is_null())
    if (auto st = login(); !st) return st.error();
  return root_;
}

Result<std::string> RedfishClient::system_uri() {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!system_uri_.empty()) return system_uri_;
  }
  auto root = service_root();
  if (!root) return root.error();
  const std::string systems = link(*root, "Systems");
  if (systems.empty())
    return Error::fatal("GET " + endpoint_ + "/redfish/v1/: the service root has no Systems collection; "
                        "is this a BMC's Redfish service?");
  auto coll = get(systems);
  if (!coll) return coll.error();
  const Json& members = coll->body.is_object() ? coll->body.value("Members", Json::array()) : Json::array();
  if (!members.is_array() || members.empty() || text(members[0], "@odata.id").empty())
    return Error::fatal("GET " + coll->url + ": the Systems collection has no members");
  std::lock_guard<std::mutex> g(mu_);
  system_uri_ = text(members[0], "@odata.id");
  return system_uri_;
}

Result<Doc> RedfishClient::get(const std::string& uri) {
  auto r = call("GET", uri, "");
  if (!r) return r.error();
  const std::string u = url(uri);
  if (auto e = net::status_error("GET", u, *r)) return *e;
  auto j = parse_json("GET", u, r->body);
  if (!j) return j.error();
  if (!j->is_object()) return Error::fatal("GET " + u + ": the BMC answered JSON that is not an object");
  std::string etag = r->header("ETag");
  if (etag.empty() && j->contains("@odata.etag") && (*j)["@odata.etag"].is_string()) etag = (*j)["@odata.etag"];
  return Doc{u, std::move(*j), std::move(etag)};
}

Result<net::Response> RedfishClient::patch(const std::string& uri, const Json& body) {
  for (int attempt = 0;; ++attempt) {
    auto doc = get(uri);
    if (!doc) return doc.error();
    net::Headers h;
    if (!doc->etag.empty()) h["If-Match"] = doc->etag;
    auto r = call("PATCH", uri, body.dump(), h);
    if (!r) return r;
    if (r->status == 412 && attempt == 0) continue;  // changed under us: re-read the ETag once
    if (auto e = net::status_error("PATCH", url(uri), *r)) return *e;
    return r;
  }
}

Status RedfishClient::post_action(const std::string& uri, const Json& body) {
  auto r = call("POST", uri, body.dump());
  if (!r) return r.error();
  if (auto e = net::status_error("POST", url(uri), *r)) return *e;
  if (r->status == 202 && !r->header("Location").empty()) return wait_task(r->header("Location"));
  return {};
}

Status RedfishClient::wait_task(const std::string& monitor) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(settings_.power_timeout_ms);
  for (;;) {
    auto r = call("GET", monitor, "");
    if (!r) return r.error();
    if (auto e = net::status_error("GET", url(monitor), *r)) return *e;
    if (r->status != 202) {
      auto j = Json::parse(r->body, nullptr, false);
      const std::string state = text(j, "TaskState");
      if (state == "Exception" || state == "Killed" || state == "Cancelled") {
        std::string why;
        if (j.is_object() && j.contains("Messages") && j["Messages"].is_array() && !j["Messages"].empty())
          why = text(j["Messages"][0], "Message");
        return Error::fatal("task " + url(monitor) + " ended in state " + state + (why.empty() ? "" : ": " + why));
      }
      return {};
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return Error{Error::Kind::Retryable,
                   "task " + url(monitor) + " did not finish within " + std::to_string(settings_.power_timeout_ms) +
                       " ms (power_timeout_ms)",
                   0};
    net::sleep_ms(settings_.poll_ms);
  }
}

Status RedfishClient::logout() {
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
  net::Request req{"DELETE", url(session), {{"X-Auth-Token", token}, {"OData-Version", "4.0"}}, "", "", ca_bundle_};
  auto r = send_retrying(http_, req, settings_.retry);
  if (!r) return r.error();
  if (r->status == 401 || r->status == 404) return {};  // already expired or gone
  if (auto e = net::status_error("DELETE", req.url, *r)) return *e;
  return {};
}

}  // namespace plinth::baremetal
