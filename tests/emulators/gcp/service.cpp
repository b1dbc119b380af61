#include "tests/emulators/gcp/service.h"

#include <algorithm>
#include <cstring>

#include "tests/emulators/gcp/catalog.h"

namespace plinth::gcp_emulator {

using nlohmann::json;

namespace {

const char* kDevconsole = "See https://developers.google.com/identity/sign-in/web/devconsole-project.";

Reply json_reply(int status, const json& body) {
  Reply r;
  r.status = status;
  r.body = body.dump(1);
  return r;
}

/// Google's 401 answers: no credentials at all, or a token it does not accept.
Reply unauthenticated(bool missing) {
  std::string message = missing ? std::string(
                                      "Request is missing required authentication credential. Expected OAuth "
                                      "2 access token, login cookie or other valid authentication "
                                      "credential. ") +
                                      kDevconsole
                                : std::string(
                                      "Request had invalid authentication credentials. Expected OAuth 2 "
                                      "access token, login cookie or other valid authentication "
                                      "credential. ") +
                                      kDevconsole;
  json err = {{"message", missing ? "Login Required." : "Invalid Credentials"},
              {"domain", "global"},
              {"reason", missing ? "required" : "authError"},
              {"location", "Authorization"},
              {"locationType", "header"}};
  Reply r = json_reply(
      401, {{"error",
             {{"code", 401}, {"message", message}, {"errors", json::array({err})}, {"status", "UNAUTHENTICATED"}}}});
  r.headers.push_back({"WWW-Authenticate", missing ? "Bearer realm=\"https://accounts.google.com/\""
                                                   : "Bearer realm=\"https://accounts.google.com/\", "
                                                     "error=\"invalid_token\""});
  return r;
}

bool is_read(const std::string& api) {
  for (const char* s : {".get", ".list", ".aggregatedList", ".wait"})
    if (api.size() > std::strlen(s) && api.compare(api.size() - std::strlen(s), std::strlen(s), s) == 0) return true;
  return false;
}

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

Service::Service(const Options& o, Compute& compute, TokenAuthority& tokens)
    : compute_(compute), tokens_(tokens), project_(o.project), project_number_(o.project_number) {
  faults_.rate_500 = o.rate_500;
  faults_.rate_503 = o.rate_503;
  faults_.drop_rate = o.drop_rate;
  faults_.lose_response_rate = o.lose_response_rate;
  faults_.latency_min_ms = o.latency_min_ms;
  faults_.latency_max_ms = o.latency_max_ms;
  faults_.rate_limit_rps = o.rate_limit_rps;
  faults_.rate_limit_burst = o.rate_limit_burst;
  faults_.rate_limit_reason = o.rate_limit_reason;
  dice_.seed(o.seed);
  lose_dice_.seed(o.seed * 1000003u + 7);
  bucket_ = o.rate_limit_burst;
  bucket_at_ = std::chrono::steady_clock::now();
}

Reply Service::handle(const HttpRequest& req) {
  Reply r;
  if (req.path == "/token" || req.path == "/v1/token" ||
      (req.path.rfind("/v1/projects/-/serviceAccounts/", 0) == 0 && req.path.ends_with(":generateAccessToken"))) {
    r = token(req);
  } else if (req.path.rfind("/__emulator/", 0) == 0 || req.path == "/__emulator") {
    return control(req);  // neither counted nor subject to faults
  } else if (req.path.rfind("/compute/v1/", 0) == 0) {
    r = compute(req);
  } else {
    r = json_reply(404, api_error(404, "notFound", "The requested URL " + req.path + " was not found on this server."));
    r.api = "unknown";
  }
  count(r);
  return r;
}

Reply Service::token(const HttpRequest& req) {
  if (req.method != "POST") {
    Reply r = json_reply(405, {{"error", "invalid_request"}, {"error_description", "The token endpoint takes POST"}});
    r.api = "oauth2.token";
    return r;
  }
  std::pair<int, json> answer;
  std::string api = "oauth2.token";
  if (req.path == "/v1/token") {
    api = "sts.token";
    answer = tokens_.sts_exchange(req.body);
  } else if (req.path != "/token") {
    api = "iamcredentials.generateAccessToken";
    const std::string prefix = "/v1/projects/-/serviceAccounts/";
    const std::string email =
        req.path.substr(prefix.size(), req.path.size() - prefix.size() - std::string(":generateAccessToken").size());
    std::string bearer;
    if (auto h = req.headers.find("authorization"); h != req.headers.end() && h->second.rfind("Bearer ", 0) == 0)
      bearer = h->second.substr(7);
    answer = tokens_.generate_access_token(bearer, email);
  } else {
    answer = tokens_.exchange(req.body);
  }
  auto& [status, body] = answer;
  const std::string principal = TokenAuthority::principal_of(body);
  if (body.is_object()) body.erase("_principal");
  Reply r = json_reply(status, body);
  r.api = api;
  r.principal = principal;
  r.headers.push_back({"Cache-Control", "no-cache, no-store, max-age=0, must-revalidate"});
  std::lock_guard<std::mutex> lock(mu_);
  if (faults_.latency_max_ms > 0)
    r.latency_ms = std::uniform_int_distribution<int>(faults_.latency_min_ms, faults_.latency_max_ms)(dice_);
  return r;
}

Reply Service::compute(const HttpRequest& req) {
  std::vector<std::string> seg = segments(req.path.substr(std::string("/compute/v1/").size()));
  std::string api = compute_method(req.method, seg);
  Reply r;
  if (api.empty()) {
    r = json_reply(404, api_error(404, "notFound", "The requested URL " + req.path + " was not found on this server."));
    r.api = "unknown";
    return r;
  }
  std::string project = seg.size() > 1 ? seg[1] : "";
  std::string zone = seg.size() > 3 && seg[2] == "zones" ? seg[3] : "";
  Caller caller;  // once the bearer token checks out
  auto tag = [&](Reply x) {
    x.principal = caller.email;
    x.api = api;
    x.project = project;
    x.zone = zone;
    return x;
  };

  // Faults drawn before anything else, in request order, from the seeded generator.
  int latency = 0;
  double roll = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (faults_.latency_max_ms > 0)
      latency = std::uniform_int_distribution<int>(faults_.latency_min_ms, faults_.latency_max_ms)(dice_);
    roll = std::uniform_real_distribution<double>(0, 1)(dice_);
  }
  Faults f;
  {
    std::lock_guard<std::mutex> lock(mu_);
    f = faults_;
  }
  if (roll < f.drop_rate) {
    Reply d = tag(Reply{});
    d.action = Reply::Action::Drop;
    d.fault = "drop";
    d.latency_ms = latency;
    return d;
  }
  if (roll < f.drop_rate + f.rate_500) {
    Reply e = tag(json_reply(500, api_error(500, "backendError",
                                            "Internal error. Please try again or contact Google Support. (Code: "
                                            "'5A1C3B7E9D2F4A60')")));
    e.fault = "500";
    e.latency_ms = latency;
    return e;
  }
  if (roll < f.drop_rate + f.rate_500 + f.rate_503) {
    Reply e = tag(json_reply(
        503, api_error(503, "backendError", "The service is currently unavailable.", "global", "UNAVAILABLE")));
    e.fault = "503";
    e.latency_ms = latency;
    return e;
  }

  // Authentication: a bearer token in Authorization (or ?access_token=).
  std::string token;
  if (auto h = req.headers.find("authorization"); h != req.headers.end()) {
    const std::string& v = h->second;
    if (v.size() > 7 && (v.compare(0, 7, "Bearer ") == 0 || v.compare(0, 7, "bearer ") == 0)) token = v.substr(7);
  } else if (auto q = req.query.find("access_token"); q != req.query.end()) {
    token = q->second;
  }
  auto check = tokens_.check(token, caller);
  if (check != TokenAuthority::Check::Ok) {
    Reply u = tag(unauthenticated(check == TokenAuthority::Check::Missing));
    u.latency_ms = latency;
    return u;
  }
  bool read = is_read(api);
  bool scoped = caller.scopes.count("https://www.googleapis.com/auth/cloud-platform") ||
                caller.scopes.count("https://www.googleapis.com/auth/compute") ||
                (read && (caller.scopes.count("https://www.googleapis.com/auth/compute.readonly") ||
                          caller.scopes.count("https://www.googleapis.com/auth/cloud-platform.read-only")));
  if (!scoped) {
    Reply s = tag(json_reply(403, {{"error",
                                    {{"code", 403},
                                     {"message", "Request had insufficient authentication scopes."},
                                     {"errors", json::array({{{"message", "Insufficient Permission"},
                                                              {"domain", "global"},
                                                              {"reason", "insufficientPermissions"}}})},
                                     {"status", "PERMISSION_DENIED"}}}}));
    s.latency_ms = latency;
    return s;
  }
  if (project != project_ || !caller.project_access) {
    std::string resource = "projects/" + project;
    if (seg.size() >= 6 && seg[2] == "zones") resource += "/zones/" + seg[3] + "/" + seg[4] + "/" + seg[5];
    std::string message = "Required '" + compute_permission(api) + "' permission for '" + resource + "'";
    Reply p = tag(json_reply(403, api_error(403, "forbidden", message)));
    p.latency_ms = latency;
    return p;
  }

  // Throttling: one token bucket per project over every Compute call.
  if (f.rate_limit_rps > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    auto now = std::chrono::steady_clock::now();
    double elapsed = std::chrono::duration<double>(now - bucket_at_).count();
    bucket_ = std::min<double>(faults_.rate_limit_burst, bucket_ + elapsed * faults_.rate_limit_rps);
    bucket_at_ = now;
    if (bucket_ < 1) {
      bool user = faults_.rate_limit_reason == "userRateLimitExceeded";
      std::string message = "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute" +
                            std::string(user ? " per user" : "") +
                            "' of service 'compute.googleapis.com' for consumer 'project_number:" + project_number_ +
                            "'.";
      Reply t =
          tag(json_reply(429, api_error(429, faults_.rate_limit_reason, message, "usageLimits", "RESOURCE_EXHAUSTED")));
      t.fault = "429";
      t.latency_ms = latency;
      return t;
    }
    bucket_ -= 1;
  }

  ApiCall call;
  call.http_method = req.method;
  call.path = seg;
  call.query = req.query;
  call.body = req.body;
  call.caller = caller;
  ApiAnswer a = compute_.handle(api, call);
  Reply out = tag(json_reply(a.status, a.body));
  out.latency_ms = latency;
  if (a.write && a.status == 200) {
    std::lock_guard<std::mutex> lock(mu_);
    bool armed = faults_.lose_next > 0 &&
                 (faults_.lose_methods.empty() || std::find(faults_.lose_methods.begin(), faults_.lose_methods.end(),
                                                            api) != faults_.lose_methods.end());
    bool rolled = faults_.lose_response_rate > 0 &&
                  std::uniform_real_distribution<double>(0, 1)(lose_dice_) < faults_.lose_response_rate;
    if (armed) --faults_.lose_next;
    if (armed || rolled) {
      out.action = Reply::Action::Lose;
      out.fault = "lose";
    }
  }
  return out;
}

void Service::count(const Reply& r) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string outcome = r.action == Reply::Action::Drop   ? "dropped"
                        : r.action == Reply::Action::Lose ? "lost"
                                                          : std::to_string(r.status);
  ++counters_[r.api][outcome];
  ++counters_[r.api]["total"];
  ++total_;
}

json Service::faults_json() const {
  json rl = nullptr;
  if (faults_.rate_limit_rps > 0)
    rl = {{"rps", faults_.rate_limit_rps}, {"burst", faults_.rate_limit_burst}, {"reason", faults_.rate_limit_reason}};
  return {{"rate500", faults_.rate_500},
          {"rate503", faults_.rate_503},
          {"dropRate", faults_.drop_rate},
          {"loseResponseRate", faults_.lose_response_rate},
          {"latencyMs", json::array({faults_.latency_min_ms, faults_.latency_max_ms})},
          {"rateLimit", rl},
          {"loseNext", faults_.lose_next},
          {"loseMethods", faults_.lose_methods}};
}

Reply Service::control(const HttpRequest& req) {
  try {
    return control_endpoint(req);
  } catch (const json::exception& e) {
    Reply r = json_reply(400, json{{"error", std::string("a field has the wrong JSON type: ") + e.what()}});
    r.api = "emulator.error";
    return r;
  }
}

Reply Service::control_endpoint(const HttpRequest& req) {
  std::string what = req.path.size() > 12 ? req.path.substr(12) : "";
  auto reply = [&](int status, const json& body) {
    Reply r = json_reply(status, body);
    r.api = "emulator." + (what.empty() ? std::string("index") : what);
    return r;
  };
  auto bad = [&](const std::string& message) { return reply(400, json{{"error", message}}); };
  json body = json::object();
  if (req.method == "POST" && !req.body.empty()) {
    body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) return bad("the body must be a JSON object");
  }
  auto optional_number = [&](const char* key, bool& present, double& value) -> bool {
    present = body.contains(key) && !body[key].is_null();
    if (!present) return body.contains(key);  // explicit null: remove
    if (!body[key].is_number() || body[key].get<double>() < 0) return false;
    value = body[key].get<double>();
    return true;
  };

  if (what.empty() && req.method == "GET") {
    return reply(200, {{"endpoints",
                        {"GET /__emulator/state", "GET /__emulator/counters", "GET|POST /__emulator/faults",
                         "POST /__emulator/capacity", "POST /__emulator/quota", "POST /__emulator/preempt",
                         "POST /__emulator/tokens/expire", "POST /__emulator/clock"}}});
  }
  if (what == "state" && req.method == "GET") {
    json state = compute_.dump();
    state["liveTokens"] = tokens_.live_tokens();
    std::lock_guard<std::mutex> lock(mu_);
    state["faults"] = faults_json();
    return reply(200, state);
  }
  if (what == "counters" && req.method == "GET") {
    std::lock_guard<std::mutex> lock(mu_);
    json methods = json::object();
    for (const auto& [api, outcomes] : counters_)
      for (const auto& [o, n] : outcomes) methods[api][o] = n;
    return reply(200, {{"total", total_}, {"methods", methods}});
  }
  if (what == "capacity" && req.method == "POST") {
    std::string type = body.value("machineType", "");
    bool present = false;
    double n = 0;
    if (!body.contains("available") || !optional_number("available", present, n))
      return bad("capacity needs {\"machineType\": TYPE, \"zone\": ZONE (optional), \"available\": N or null}");
    std::string err = compute_.set_capacity(body.value("zone", ""), type,
                                            present ? std::optional<int>(static_cast<int>(n)) : std::nullopt);
    if (!err.empty()) return bad(err);
    return reply(200, compute_.dump()["capacity"]);
  }
  if (what == "quota" && req.method == "POST") {
    bool present = false;
    double n = 0;
    if (!body.contains("limit") || !optional_number("limit", present, n))
      return bad(
          "quota needs {\"metric\": METRIC, \"region\": REGION (omit for a global metric), \"limit\": N or null}");
    std::string err = compute_.set_quota(body.value("metric", ""), body.value("region", ""),
                                         present ? std::optional<double>(n) : std::nullopt);
    if (!err.empty()) return bad(err);
    return reply(200, compute_.dump()["quotas"]);
  }
  if (what == "preempt" && req.method == "POST") {
    if (!body.contains("zone") || !body.contains("instance"))
      return bad("preempt needs {\"zone\": Z, \"instance\": NAME}");
    auto [status, out] = compute_.preempt(body.value("zone", ""), body.value("instance", ""));
    return reply(status, out);
  }
  if (what == "tokens/expire" && req.method == "POST") return reply(200, {{"expired", tokens_.expire_all()}});
  if (what == "clock" && req.method == "POST") {
    if (!body.contains("advanceMs") || !body["advanceMs"].is_number_integer() || body["advanceMs"].get<long>() < 0)
      return bad("clock needs {\"advanceMs\": N} with N >= 0");
    auto offset = compute_.advance_clock(std::chrono::milliseconds(body["advanceMs"].get<long>()));
    return reply(200, {{"offsetMs", std::chrono::duration_cast<std::chrono::milliseconds>(offset).count()}});
  }
  if (what == "faults") {
    std::lock_guard<std::mutex> lock(mu_);
    if (req.method == "POST") {
      Faults f = faults_;
      for (auto [key, field] : {std::pair{"rate500", &f.rate_500},
                                {"rate503", &f.rate_503},
                                {"dropRate", &f.drop_rate},
                                {"loseResponseRate", &f.lose_response_rate}}) {
        if (!body.contains(key)) continue;
        if (!body[key].is_number() || body[key].get<double>() < 0 || body[key].get<double>() > 1)
          return bad(std::string(key) + " must be a fraction from 0 to 1");
        *field = body[key].get<double>();
      }
      if (f.rate_500 + f.rate_503 + f.drop_rate > 1) return bad("rate500, rate503 and dropRate add up to more than 1");
      if (body.contains("latencyMs")) {
        const json& l = body["latencyMs"];
        if (!l.is_array() || l.size() != 2 || !l[0].is_number_integer() || !l[1].is_number_integer() ||
            l[0].get<int>() < 0 || l[1].get<int>() < l[0].get<int>())
          return bad("latencyMs must be [MIN, MAX] milliseconds");
        f.latency_min_ms = l[0];
        f.latency_max_ms = l[1];
      }
      if (body.contains("rateLimit")) {
        const json& rl = body["rateLimit"];
        if (rl.is_null()) {
          f.rate_limit_rps = 0;
        } else if (rl.is_object() && rl.contains("rps") && rl["rps"].is_number() && rl["rps"].get<double>() > 0) {
          f.rate_limit_rps = rl["rps"];
          f.rate_limit_burst = rl.value("burst", std::max(1, static_cast<int>(f.rate_limit_rps)));
          std::string reason = rl.value("reason", f.rate_limit_reason);
          if (reason != "rateLimitExceeded" && reason != "userRateLimitExceeded")
            return bad("rateLimit.reason is rateLimitExceeded or userRateLimitExceeded");
          f.rate_limit_reason = reason;
          bucket_ = f.rate_limit_burst;
          bucket_at_ = std::chrono::steady_clock::now();
        } else {
          return bad("rateLimit must be null or {\"rps\": R, \"burst\": N, \"reason\": ...}");
        }
      }
      if (body.contains("loseNext")) {
        if (!body["loseNext"].is_number_integer() || body["loseNext"].get<int>() < 0)
          return bad("loseNext must be a whole number");
        f.lose_next = body["loseNext"];
      }
      if (body.contains("loseMethods")) {
        if (!body["loseMethods"].is_array()) return bad("loseMethods must be a list of method ids");
        f.lose_methods = body["loseMethods"].get<std::vector<std::string>>();
      }
      if (body.contains("tokenLifetimeSeconds")) {
        if (!body["tokenLifetimeSeconds"].is_number_integer() || body["tokenLifetimeSeconds"].get<int>() < 1)
          return bad("tokenLifetimeSeconds must be a positive whole number");
        tokens_.set_lifetime(body["tokenLifetimeSeconds"]);
      }
      faults_ = f;
    } else if (req.method != "GET") {
      return reply(405, json{{"error", "faults takes GET or POST"}});
    }
    return reply(200, faults_json());
  }
  return reply(404,
               json{{"error", "no control endpoint " + req.method + " " + req.path + "; GET /__emulator/ lists them"}});
}

}  // namespace plinth::gcp_emulator
