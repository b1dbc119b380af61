#include "providers/gcp/compute_client.h"
#include "providers/common/config.h"
#include "providers/common/json_fields.h"
#include "engine/core/wire.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace plinth::gcp {

namespace {

using cloud::field;
using cloud::str;

bool rate_limited(const std::string& reason) {
  return reason == "rateLimitExceeded" || reason == "userRateLimitExceeded" || reason == "RATE_LIMIT_EXCEEDED";
}

/// "Quota 'X' exceeded.  Limit: 8.0 in region R." with its metric, or a
/// stockout with the zones GCP says have room.
std::string detail_note(const std::string& code, const Json& details) {
  if (!details.is_array()) return "";
  for (const auto& d : details) {
    if (code == "QUOTA_EXCEEDED" && d.contains("quotaInfo")) {
      const std::string metric = str(d["quotaInfo"], "metricName");
      if (!metric.empty()) return " [metric " + metric + "; request a quota increase or use another region]";
    }
    if (d.contains("errorInfo") && d["errorInfo"].contains("metadatas")) {
      const std::string avail = str(d["errorInfo"]["metadatas"], "zonesAvailable");
      if (!avail.empty()) return " [GCP says these zones have room: " + avail + "]";
    }
  }
  return "";
}

}  // namespace

Error::Kind kind_of_http(long status, const std::string& reason) {
  if (status == 429 || rate_limited(reason)) return Error::Kind::Throttled;
  if (reason == "resourceNotReady") return Error::Kind::Retryable;  // an operation is still running on it
  if (status == 503) return Error::Kind::Retryable;
  if (status >= 500) return Error::Kind::Retryable;
  if (status == 404) return Error::Kind::NotFound;
  if (status == 409 || status == 412) return Error::Kind::Conflict;
  if (status == 401 || status == 403) return Error::Kind::Fatal;
  return Error::Kind::Invalid;
}

ApiFailure operation_failure(const Json& op, const std::string& where) {
  ApiFailure f;
  // Read whatever the shapes: an operation is Google's answer, not a promise.
  const Json& errors = field(field(op, "error"), "errors");
  static const Json none = Json::object();
  const Json& first = errors.is_array() && !errors.empty() ? errors[0] : none;
  const Json& status = field(op, "httpErrorStatusCode");
  const long http = status.is_number_integer() ? status.get<long>() : 0;
  f.code = str(first, "code");
  f.details = field(first, "errorDetails");
  std::string message = str(first, "message");
  if (f.code.empty()) f.code = "HTTP" + std::to_string(http);
  if (message.empty()) message = str(op, "httpErrorMessage");
  const bool capacity = f.code.rfind("ZONE_RESOURCE_POOL_EXHAUSTED", 0) == 0 || f.code == "QUOTA_EXCEEDED";
  Error::Kind kind = capacity ? Error::Kind::Conflict : Error::Kind::Fatal;
  if (!capacity && (f.code == "INTERNAL_ERROR" || (http >= 500 && http != 503))) kind = Error::Kind::Retryable;
  if (!capacity && f.code == "RESOURCE_ALREADY_EXISTS") kind = Error::Kind::Conflict;
  f.error = {kind,
             f.code + ": " + message + detail_note(f.code, f.details) + where + " [operation " + str(op, "name") + "]",
             0};
  return f;
}

std::string normalize_root(const std::string& endpoint) {
  std::string e = endpoint.empty() ? "https://compute.googleapis.com/compute/v1/" : endpoint;
  while (!e.empty() && e.back() == '/') e.pop_back();
  // An endpoint given as a host root gets the API path.
  if (e.size() < 11 || e.compare(e.size() - 11, 11, "/compute/v1") != 0) e += "/compute/v1";
  return e + "/";
}

ComputeClient::ComputeClient(net::Client& http, ClientSettings settings, const std::atomic<bool>* cancel)
    : http_(http),
      settings_(std::move(settings)),
      cancel_(cancel),
      tokens_(settings_.burst),
      last_(std::chrono::steady_clock::now()) {}

std::chrono::milliseconds ComputeClient::take() {
  if (settings_.requests_per_second <= 0) return std::chrono::milliseconds(0);
  std::lock_guard<std::mutex> lock(bucket_mu_);
  const auto now = std::chrono::steady_clock::now();
  tokens_ = std::min(settings_.burst,
                     tokens_ + std::chrono::duration<double>(now - last_).count() * settings_.requests_per_second);
  last_ = now;
  tokens_ -= 1;  // may go negative: later callers queue behind this one
  if (tokens_ >= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(static_cast<long long>(-tokens_ / settings_.requests_per_second * 1000.0) + 1);
}

Result<std::string> ComputeClient::token(Call& call, const std::string& stale) {
  const CredentialSource& cs = settings_.credentials;
  if (!cs.refreshable()) return cs.access_token;  // a fixed token: nothing to refresh
  std::lock_guard<std::mutex> lock(token_mu_);
  if (token_refused_) return *token_refused_;
  const auto now = std::chrono::system_clock::now();
  // After a 401 only the token that was refused is replaced: threads that
  // met the same 401 get the one the first of them fetched.
  const bool refused = token_ && !stale.empty() && token_->access_token == stale;
  if (token_ && !refused) {
    const auto margin = std::min(std::chrono::seconds(300), token_->expires_in / 4);
    if (!token_->expires_within(margin, now)) return token_->access_token;
  }
  for (;;) {
    Result<AccessToken> t = fetch_token(cs, http_, call.deadline(), cancel_);
    if (t) {
      token_ = *t;
      call.progress();
      return token_->access_token;
    }
    if (t.error().retryable() && call.retry(t.error())) continue;
    if (t.error().kind == Error::Kind::Fatal) token_refused_ = t.error();
    return t.error();
  }
}

Status ComputeClient::first_token() {
  Call call(Deadline::after(std::chrono::seconds(30)));
  auto t = token(call, "");
  if (!t) return t.error();
  return {};
}

std::variant<Json, ApiFailure> ComputeClient::send(const std::string& method, const std::string& path,
                                                   const std::map<std::string, std::string>& query, const Json& body,
                                                   const std::string& api, Call& call) {
  std::string url = settings_.root + "projects/" + settings_.project + "/" + path;
  char sep = '?';
  for (const auto& [k, v] : query) {
    url += sep + k + "=" + net::percent_encode(v);
    sep = '&';
  }
  const std::string where = " (" + api + ")";
  bool refreshed = false;
  for (;;) {
    if (auto wait = take(); wait.count() > 0)
      if (auto st = net::pause(static_cast<int>(wait.count()), call.deadline(), cancel_,
                               "waiting for the client-side Compute API rate limit");
          !st)
        return ApiFailure{"", "", st.error(), nullptr};
    auto tok = token(call, "");
    if (!tok) return ApiFailure{"", "", tok.error(), nullptr};
    const net::Request r = cloud::bearer_request(method, url, *tok, body, call.deadline(), cancel_);
    auto resp = http_.send(r);
    cloud::trace("PLINTH_DEBUG_GCP", "gcp", r, resp);  // docs/providers/gcp.md
    if (!resp) {
      Error e = resp.error();
      e.message += where;
      if (e.retryable() && call.retry(e)) continue;
      return ApiFailure{"", "", e, nullptr};
    }
    if (resp->status >= 200 && resp->status < 300) {
      Json j = parse_json_or_discard(resp->body);
      if (j.is_discarded() || !j.is_object())
        return ApiFailure{"", "", Error::fatal("the answer to " + api + " is not a JSON object"), nullptr};
      call.progress();
      return j;
    }
    Json err = parse_json_or_discard(resp->body);
    const Json e = err.is_object() && err.contains("error") && err["error"].is_object() ? err["error"] : Json::object();
    std::string reason, message = str(e, "message");
    if (e.contains("errors") && e["errors"].is_array() && !e["errors"].empty()) reason = str(e["errors"][0], "reason");
    if (message.empty()) message = "HTTP " + std::to_string(resp->status) + " without a Google error answer";
    if (resp->status == 401 && !refreshed && settings_.credentials.refreshable()) {
      // The token expired or was revoked: one fresh token, then the call again.
      refreshed = true;
      auto fresh = token(call, *tok);
      if (!fresh) return ApiFailure{"HTTP401", reason, fresh.error(), nullptr};
      continue;
    }
    if (resp->status == 401)
      message += where + "; " + settings_.credentials.who +
                 (settings_.credentials.refreshable()
                      ? " got a fresh token and it was refused too: check the account and its access"
                      : " was refused (expired or revoked?): set GOOGLE_OAUTH_ACCESS_TOKEN to a fresh token (`gcloud "
                        "auth print-access-token`), or use GOOGLE_APPLICATION_CREDENTIALS");
    ApiFailure f;
    f.code = "HTTP" + std::to_string(resp->status);
    f.reason = reason;
    f.error = {kind_of_http(resp->status, reason),
               "HTTP " + std::to_string(resp->status) + " " + (reason.empty() ? "" : reason + ": ") + message +
                   (resp->status == 401 ? "" : where),
               0};
    if (f.error.kind == Error::Kind::Throttled)
      f.error.retry_after_ms = net::parse_retry_after_ms(resp->header("Retry-After"));
    if (f.error.retryable() && call.retry(f.error)) continue;
    return f;
  }
}

std::variant<Json, ApiFailure> ComputeClient::wait(const Json& operation, const std::string& zone, Call& call) {
  Json op = operation;
  int interval = settings_.poll_ms;
  const std::string name = str(op, "name");
  while (str(op, "status") != "DONE") {
    if (auto st = net::pause(interval, call.deadline(), cancel_, "waiting for operation " + name + " in " + zone); !st)
      return ApiFailure{"", "", st.error(), nullptr};
    interval = std::min(settings_.max_poll_ms, interval * 2);
    auto got = send("GET", "zones/" + zone + "/operations/" + name, {}, nullptr,
                    "compute.zoneOperations.get " + name + " in " + zone, call);
    if (auto* f = std::get_if<ApiFailure>(&got)) return *f;
    op = std::get<Json>(got);
  }
  return op;
}

}  // namespace plinth::gcp
