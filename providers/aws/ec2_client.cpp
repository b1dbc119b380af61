#include "providers/aws/ec2_client.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace plinth::aws {

namespace {

bool non_mutating(const std::string& action) {
  return action.rfind("Describe", 0) == 0 || action.rfind("Get", 0) == 0 || action.rfind("List", 0) == 0;
}

/// Error kind of an EC2 error code and HTTP status.
Error::Kind kind_of(const std::string& code, long status) {
  static const std::vector<std::string> throttled = {"RequestLimitExceeded", "Throttling", "ThrottlingException",
                                                     "RequestThrottled", "SlowDown"};
  if (std::find(throttled.begin(), throttled.end(), code) != throttled.end()) return Error::Kind::Throttled;
  // Capacity is not a blip: the provider falls back or fails fast on it.
  if (code == "InsufficientInstanceCapacity" || code == "InsufficientCapacity" ||
      code == "ReservationCapacityExceeded")
    return Error::Kind::Conflict;
  if (code.find(".NotFound") != std::string::npos) return Error::Kind::NotFound;
  if (status == 503) return Error::Kind::Throttled;
  if (status >= 500 || code == "InternalError" || code == "Unavailable" || code == "ServiceUnavailable")
    return Error::Kind::Retryable;
  if (code == "AuthFailure" || code == "UnauthorizedOperation" || code == "SignatureDoesNotMatch" ||
      code == "MissingAuthenticationToken" || code == "RequestExpired" || code == "InvalidClientTokenId")
    return Error::Kind::Fatal;
  // Temporary credentials that ran out: fetched again (Ec2Client::once) and sent again.
  if (code == "ExpiredToken") return Error::Kind::Retryable;
  return Error::Kind::Invalid;
}

}  // namespace

std::string endpoint_for(const std::string& endpoint_option, const std::string& region) {
  if (!endpoint_option.empty()) {
    std::string e = endpoint_option;
    while (!e.empty() && e.back() == '/') e.pop_back();
    return e;
  }
  return "https://ec2." + region + ".amazonaws.com";
}

Result<std::map<std::string, Rate>> parse_rates(const Json& option) {
  std::map<std::string, Rate> out;
  if (!option.is_object()) return out;
  for (const auto& [name, v] : option.items()) {
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    Rate r;
    char colon = 0;
    std::istringstream in(text);
    if (!(in >> r.size >> colon >> r.refill_per_second) || colon != ':' || r.size < 1 || r.refill_per_second <= 0)
      return Error::invalid("option request_rates: '" + name + "=" + text +
                            "' is not SIZE:REFILL_PER_SECOND with SIZE >= 1 and REFILL > 0, e.g. mutating=200:5");
    out[name] = r;
  }
  return out;
}

Ec2Client::Ec2Client(net::Client& http, const ec2::Model& model, ClientSettings settings,
                     const std::atomic<bool>* cancel)
    : http_(http), model_(model), settings_(std::move(settings)), cancel_(cancel) {}

std::chrono::milliseconds Ec2Client::take(const std::string& region, const std::string& action) {
  std::string name = action;
  if (!settings_.rates.count(name)) name = non_mutating(action) ? "non-mutating" : "mutating";
  auto rate = settings_.rates.find(name);
  if (rate == settings_.rates.end()) return std::chrono::milliseconds(0);
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  auto [it, fresh] = buckets_.try_emplace(region + "/" + name);
  Bucket& b = it->second;
  if (fresh) {
    b.rate = rate->second;
    b.tokens = b.rate.size;
    b.last = now;
  }
  b.tokens = std::min(b.rate.size, b.tokens + std::chrono::duration<double>(now - b.last).count() * b.rate.refill_per_second);
  b.last = now;
  b.tokens -= 1;  // may go negative: later callers queue behind this one
  if (b.tokens >= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(static_cast<long long>(-b.tokens / b.rate.refill_per_second * 1000.0) + 1);
}

std::variant<ec2::Json, ApiFailure> Ec2Client::once(const std::string& action, const std::string& body,
                                                    const std::string& region, Call& call) {
  const std::string url = endpoint_for(settings_.endpoint, region) + "/";
  // host[:port] and path of the URL, as signed.
  std::string rest = url.substr(url.find("://") + 3);
  const std::string host = rest.substr(0, rest.find('/'));
  const std::string path = rest.substr(host.size());
  HttpRequest req;
  req.method = "POST";
  req.path = path.empty() ? "/" : path;
  req.headers = {{"Host", host}, {"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"}};
  req.body = body;
  SigningParams sp;
  sp.region = region;
  sp.service = "ec2";
  auto creds = settings_.credentials->get(call.deadline());
  if (!creds) return ApiFailure{"", creds.error()};
  auto signed_req = sign(req, *creds, sp);
  if (!signed_req) return ApiFailure{"", signed_req.error()};

  net::Request r;
  r.method = "POST";
  r.url = url;
  for (const auto& [k, v] : signed_req->request.headers)
    if (k != "Host") r.headers[k] = v;
  r.body = body;
  r.deadline = call.deadline();
  r.cancel = cancel_;
  auto resp = http_.send(r);
  const std::string where = " (EC2 " + action + " in " + region + ")";
  if (std::getenv("PLINTH_DEBUG_AWS"))  // requests and answers, never the signature (docs/providers/aws.md)
    std::fprintf(stderr, "aws trace: POST %s %s\n  -> %s\n", url.c_str(), body.c_str(),
                 resp ? (std::to_string(resp->status) + " " + resp->body).c_str() : resp.error().message.c_str());
  if (!resp) {
    Error e = resp.error();
    e.message += where;
    return ApiFailure{"", e};
  }
  if (resp->status >= 200 && resp->status < 300) {
    if (model_.output_shape(action).empty()) return ec2::Json::object();  // <return>true</return>
    auto parsed = ec2::parse_response(model_, model_.output_shape(action), resp->body, ec2::Timestamps::AsSent);
    if (!parsed) return ApiFailure{"", Error::fatal("cannot read the answer to " + action + where + ": " + parsed.error().message)};
    return *parsed;
  }
  auto err = ec2::parse_error(model_, resp->body);
  std::string code = err ? err->code : "";
  std::string message = err ? err->message : "";
  if (code.empty()) {
    code = "HTTP" + std::to_string(resp->status);
    message = "HTTP " + std::to_string(resp->status) + " without an EC2 error answer";
  }
  Error e{kind_of(code, resp->status), code + ": " + message + where, 0};
  if (code == "ExpiredToken") settings_.credentials->expired();
  if (e.kind == Error::Kind::Throttled) e.retry_after_ms = net::parse_retry_after_ms(resp->header("Retry-After"));
  if (err && !err->request_id.empty()) e.message += " [request id " + err->request_id + "]";
  return ApiFailure{code, e};
}

std::variant<ec2::Json, ApiFailure> Ec2Client::send(const std::string& action, const ec2::Json& params,
                                                    const std::string& region, Call& call) {
  auto query = ec2::serialize_query(model_, model_.input_shape(action), params);
  if (!query) return ApiFailure{"", Error::fatal("EC2 " + action + ": " + query.error().message)};
  const std::string body = ec2::form_body(action, model_.api_version(), *query);
  for (;;) {
    if (auto wait = take(region, action); wait.count() > 0)
      if (auto st = net::pause(static_cast<int>(wait.count()), call.deadline(), cancel_,
                               "waiting for the client-side EC2 " + action + " rate limit");
          !st)
        return ApiFailure{"", st.error()};
    auto out = once(action, body, region, call);
    if (auto* ok = std::get_if<ec2::Json>(&out)) {
      call.progress();
      return std::move(*ok);
    }
    const ApiFailure& f = std::get<ApiFailure>(out);
    if (f.error.retryable() && call.retry(f.error)) continue;
    return out;
  }
}

}  // namespace plinth::aws
