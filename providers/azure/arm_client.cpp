#include "providers/azure/arm_client.h"

#include "providers/common/config.h"
#include "engine/core/strings.h"
#include "providers/common/json_fields.h"
#include "engine/core/wire.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

namespace plinth::azure {

namespace {

using cloud::str;

std::string trim_slash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

std::string base64url(const unsigned char* data, size_t n) {
  std::string out(4 * ((n + 2) / 3) + 1, '\0');
  int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(n));
  out.resize(static_cast<size_t>(len));
  for (auto& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!out.empty() && out.back() == '=') out.pop_back();
  return out;
}
std::string base64url(const std::string& s) {
  return base64url(reinterpret_cast<const unsigned char*>(s.data()), s.size());
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

/// A client assertion for Entra: an RS256 JWT whose header names the
/// certificate by its SHA-1 thumbprint (x5t), as MSAL makes it.
Result<std::string> client_assertion(const std::string& pem, const std::string& client_id, const std::string& aud,
                                     long long now_s) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::unique_ptr<X509, X509Free> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return Error::invalid("client_certificate_path: no PEM certificate in the file");
  std::unique_ptr<BIO, BioFree> bio2(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::unique_ptr<EVP_PKEY, PkeyFree> key(PEM_read_bio_PrivateKey(bio2.get(), nullptr, nullptr, nullptr));
  if (!key)
    return Error::invalid("client_certificate_path: no unencrypted PEM private key in the file (put the certificate "
                          "and its key in one PEM file, as azure-identity expects)");
  unsigned char sha1[EVP_MAX_MD_SIZE];
  unsigned int sha1_len = 0;
  X509_digest(cert.get(), EVP_sha1(), sha1, &sha1_len);
  unsigned char nonce[16];
  RAND_bytes(nonce, sizeof nonce);
  std::string jti;
  for (unsigned char b : nonce) {
    static const char* hex = "0123456789abcdef";
    jti += hex[b >> 4];
    jti += hex[b & 15];
  }
  const Json header = {{"alg", "RS256"}, {"typ", "JWT"}, {"x5t", base64url(sha1, sha1_len)}};
  const Json claims = {{"aud", aud}, {"iss", client_id}, {"sub", client_id}, {"jti", jti},
                       {"nbf", now_s},  {"iat", now_s},    {"exp", now_s + 600}};
  const std::string input = base64url(header.dump()) + "." + base64url(claims.dump());
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  size_t sig_len = 0;
  if (EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &sig_len, reinterpret_cast<const unsigned char*>(input.data()),
                     input.size()) != 1)
    return Error::invalid("client_certificate_path: the private key cannot sign RS256 (an RSA key is needed)");
  std::string sig(sig_len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &sig_len,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
    return Error::invalid("client_certificate_path: signing the client assertion failed");
  sig.resize(sig_len);
  return input + "." + base64url(sig);
}

/// Entra's error_description up to its "Trace ID" lines.
std::string first_line(const std::string& s) {
  auto end = s.find_first_of("\r\n");
  return end == std::string::npos ? s : s.substr(0, end);
}

std::string hdr(const net::Headers& h, const char* name) {
  auto it = h.find(name);
  return it == h.end() ? "" : it->second;
}

std::string bucket_of(const std::string& method) {
  if (method == "GET" || method == "HEAD") return "reads";
  if (method == "DELETE") return "deletes";
  return "writes";
}

}  // namespace

Result<std::map<std::string, Rate>> parse_rates(const Json& option) {
  std::map<std::string, Rate> out;
  if (!option.is_object()) return out;
  for (const auto& [name, v] : option.items()) {
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    if (name != "reads" && name != "writes" && name != "deletes")
      return Error::invalid("option request_rates: unknown bucket '" + name + "'; use reads, writes or deletes");
    Rate r;
    char colon = 0;
    std::istringstream in(text);
    if (!(in >> r.size >> colon >> r.refill_per_second) || colon != ':' || r.size < 1 || r.refill_per_second <= 0)
      return Error::invalid("option request_rates: '" + name + "=" + text +
                            "' is not SIZE:REFILL_PER_SECOND with SIZE >= 1 and REFILL > 0, e.g. writes=200:10");
    out[name] = r;
  }
  return out;
}

Result<std::string> token_request_body(const ArmSettings& s, const std::string& token_url, long long now_s) {
  std::string body = "grant_type=client_credentials&client_id=" + net::percent_encode(s.client_id) +
                     "&scope=" + net::percent_encode(trim_slash(s.audience) + "/.default");
  if (!s.federated_token_file.empty()) {
    // Read for each token: the CI system or the kubelet rewrites it before it expires.
    std::ifstream in(s.federated_token_file);
    if (!in) return Error::invalid("cannot read the federated token file " + s.federated_token_file);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string assertion = ss.str();
    while (!assertion.empty() && std::isspace(static_cast<unsigned char>(assertion.back()))) assertion.pop_back();
    if (assertion.empty()) return Error::invalid("the federated token file " + s.federated_token_file + " is empty");
    body += "&client_assertion_type=" + net::percent_encode("urn:ietf:params:oauth:client-assertion-type:jwt-bearer") +
            "&client_assertion=" + net::percent_encode(assertion);
  } else if (!s.client_certificate_pem.empty()) {
    auto jwt = client_assertion(s.client_certificate_pem, s.client_id, token_url, now_s);
    if (!jwt) return jwt.error();
    body += "&client_assertion_type=" + net::percent_encode("urn:ietf:params:oauth:client-assertion-type:jwt-bearer") +
            "&client_assertion=" + *jwt;
  } else {
    body += "&client_secret=" + net::percent_encode(s.client_secret);
  }
  return body;
}

bool capacity_code(const std::string& code, const std::string& message) {
  if (code == "SkuNotAvailable" || code == "AllocationFailed" || code == "ZonalAllocationFailed" ||
      code == "OverconstrainedAllocationRequest" || code == "OverconstrainedZonalAllocationRequest")
    return true;
  // Quota: another size (another quota family) may still fit.
  return (code == "OperationNotAllowed" || code == "QuotaExceeded") &&
         ascii_lower(message).find("quota") != std::string::npos;
}

Error::Kind kind_of(const std::string& code, long status, const std::string& message) {
  if (capacity_code(code, message)) return Error::Kind::Conflict;
  if (status == 429 || code == "SubscriptionRequestsThrottled" || code == "TooManyRequests")
    return Error::Kind::Throttled;
  if (status == 503) return Error::Kind::Throttled;
  if (status >= 500) return Error::Kind::Retryable;
  if (status == 404 || code == "ResourceNotFound" || code == "NotFound") return Error::Kind::NotFound;
  if (status == 401 || status == 403) return Error::Kind::Fatal;
  return Error::Kind::Invalid;
}

std::string describe_error(const Json& error) {
  std::string out = str(error, "code") + ": " + str(error, "message");
  if (auto t = str(error, "target"); !t.empty()) out += " (target " + t + ")";
  if (error.is_object() && error.contains("details") && error["details"].is_array() && !error["details"].empty()) {
    std::vector<std::string> parts;
    for (const auto& d : error["details"]) parts.push_back(str(d, "code") + ": " + str(d, "message"));
    std::string joined;
    for (size_t i = 0; i < parts.size(); ++i) joined += (i ? "; " : "") + parts[i];
    out += " (details: " + joined + ")";
  }
  return out;
}

ArmClient::ArmClient(net::Client& http, ArmSettings settings, const std::atomic<bool>* cancel)
    : http_(http), settings_(std::move(settings)), cancel_(cancel) {
  settings_.authority_host = trim_slash(settings_.authority_host);
  settings_.endpoint = trim_slash(settings_.endpoint);
}

std::chrono::milliseconds ArmClient::take(const std::string& name) {
  auto rate = settings_.rates.find(name);
  if (rate == settings_.rates.end()) return std::chrono::milliseconds(0);
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  auto [it, fresh] = buckets_.try_emplace(name);
  Bucket& b = it->second;
  if (fresh) {
    b.rate = rate->second;
    b.tokens = b.rate.size;
    b.last = now;
  }
  b.tokens =
      std::min(b.rate.size, b.tokens + std::chrono::duration<double>(now - b.last).count() * b.rate.refill_per_second);
  b.last = now;
  b.tokens -= 1;  // may go negative: later callers queue behind this one
  if (b.tokens >= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(static_cast<long long>(-b.tokens / b.rate.refill_per_second * 1000.0) + 1);
}

void ArmClient::observe_remaining(const std::string& name, const net::Response& r) {
  const std::string v = r.header("x-ms-ratelimit-remaining-subscription-" + name);
  if (v.empty()) return;
  char* end = nullptr;
  const double remaining = std::strtod(v.c_str(), &end);
  if (end == v.c_str()) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = buckets_.find(name);
  if (it == buckets_.end()) return;
  // ARM knows what every client of the subscription used: never assume more,
  // and count the refill from now on (ARM counted it up to its answer).
  Bucket& b = it->second;
  const auto now = std::chrono::steady_clock::now();
  b.tokens =
      std::min(b.rate.size, b.tokens + std::chrono::duration<double>(now - b.last).count() * b.rate.refill_per_second);
  b.tokens = std::min(b.tokens, remaining);
  b.last = now;
}

std::string ArmClient::url_of(const std::string& path, const std::string& api_version) const {
  std::string url = path.rfind("https://", 0) == 0 || path.rfind("http://", 0) == 0 ? path : settings_.endpoint + path;
  if (!api_version.empty()) url += (url.find('?') == std::string::npos ? "?" : "&") + std::string("api-version=") + api_version;
  return url;
}

Status ArmClient::first_token() {
  Call call(Deadline::after(std::chrono::seconds(30)));
  auto t = token(call);
  if (auto* f = std::get_if<ArmFailure>(&t)) return f->error;
  return {};
}

std::variant<std::string, ArmFailure> ArmClient::token(Call& call) {
  std::lock_guard<std::mutex> lock(token_mu_);
  if (token_refused_) return *token_refused_;  // one token request per credential, not one per resource
  if (!token_.empty() && std::chrono::steady_clock::now() < token_refresh_) return token_;
  const bool managed = settings_.managed_identity;
  const bool app_service = managed && !settings_.identity_endpoint.empty();
  const std::string resource = trim_slash(settings_.audience);
  const std::string client = settings_.client_id.empty() ? "" : "&client_id=" + net::percent_encode(settings_.client_id);
  const std::string url =
      !managed      ? settings_.authority_host + "/" + settings_.tenant_id + "/oauth2/v2.0/token"
      : app_service ? settings_.identity_endpoint + "?api-version=2019-08-01&resource=" + net::percent_encode(resource) + client
                    : trim_slash(settings_.imds_endpoint) + "/metadata/identity/oauth2/token?api-version=2018-02-01&resource=" +
                          net::percent_encode(resource) + client;
  const std::string where =
      !managed ? " (Microsoft Entra token for client " + settings_.client_id + " in tenant " + settings_.tenant_id +
                     (settings_.federated_token_file.empty() ? "" : " with the federated token " + settings_.federated_token_file) +
                     " at " + settings_.authority_host + ")"
               : " (managed identity token from " + (app_service ? settings_.identity_endpoint : trim_slash(settings_.imds_endpoint)) +
                     (settings_.client_id.empty() ? "" : " for client " + settings_.client_id) + ")";
  for (;;) {
    net::Request r;
    if (managed) {
      r.method = "GET";
      r.url = url;
      r.metadata_service = true;
      if (app_service) r.headers = {{"X-IDENTITY-HEADER", settings_.identity_header}};
      else r.headers = {{"Metadata", "true"}};
    } else {
      auto body = token_request_body(settings_, url,
                                     std::chrono::duration_cast<std::chrono::seconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count());
      if (!body) return ArmFailure{"", 0, body.error()};
      r.method = "POST";
      r.url = url;
      r.headers = {{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
      r.body = *body;
    }
    r.deadline = call.deadline();
    r.cancel = cancel_;
    const auto sent = std::chrono::steady_clock::now();
    auto resp = http_.send(r);
    Error e;
    std::string code;
    long status = 0;
    if (!resp) {
      e = resp.error();
      e.message += where;
    } else {
      status = resp->status;
      Json j = parse_json_or_discard(resp->body);
      if (status == 200 && j.is_object() && !str(j, "access_token").empty()) {
        token_ = str(j, "access_token");
        auto seconds = [&](const char* k) -> long long {
          if (!j.contains(k)) return -1;
          if (j[k].is_number()) return j[k].get<long long>();
          return j[k].is_string() ? std::atoll(j[k].get<std::string>().c_str()) : -1;
        };
        // Entra and IMDS say expires_in; App Service only expires_on (seconds since the epoch).
        long long life = seconds("expires_in");
        if (life < 0 && seconds("expires_on") > 0)
          life = seconds("expires_on") - std::chrono::duration_cast<std::chrono::seconds>(
                                             std::chrono::system_clock::now().time_since_epoch()).count();
        if (life <= 0) life = 3599;
        // Renew five minutes early (or halfway through a short life).
        long long early = std::min<long long>(300, life / 2);
        token_refresh_ = sent + std::chrono::seconds(life - early);
        call.progress();
        return token_;
      }
      code = str(j, "error");
      std::string text = first_line(str(j, "error_description"));
      if (code.empty() && !str(j, "message").empty()) {  // App Service: {"statusCode", "message"}
        code = "HTTP" + std::to_string(status);
        text = first_line(str(j, "message"));
      }
      if (code.empty()) {
        code = "HTTP" + std::to_string(status);
        text = "HTTP " + std::to_string(status) + " without an Entra error answer";
      }
      e = Error{status >= 500 ? Error::Kind::Retryable : status == 429 ? Error::Kind::Throttled : Error::Kind::Fatal,
                std::string(managed ? "the managed identity endpoint refused the token request: "
                                    : "Microsoft Entra refused the token request: ") +
                    code + ": " + text + where,
                0};
      if (e.kind == Error::Kind::Throttled) e.retry_after_ms = net::parse_retry_after_ms(resp->header("Retry-After"));
      if (e.kind == Error::Kind::Fatal)
        e.message += managed ? "; check that the machine has a managed identity with access to the subscription "
                               "(and AZURE_CLIENT_ID for a user-assigned one)"
                     : !settings_.federated_token_file.empty()
                         ? "; check AZURE_TENANT_ID, AZURE_CLIENT_ID and the federated credential of the app (its "
                           "issuer and subject must match the token's)"
                         : "; check AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET (or the client certificate)";
    }
    if (e.retryable() && call.retry(e)) continue;
    ArmFailure failure{code, status, e};
    if (e.kind == Error::Kind::Fatal && status != 0) token_refused_ = failure;
    return failure;
  }
}

ArmResult ArmClient::once(const std::string& method, const std::string& url, const Json& body, Call& call,
                          const std::string& what) {
  auto tok = token(call);
  if (auto* f = std::get_if<ArmFailure>(&tok)) return *f;
  const net::Request r = cloud::bearer_request(method, url, std::get<std::string>(tok), body, call.deadline(), cancel_);
  auto resp = http_.send(r);
  const std::string where = " (ARM " + what + ")";
  cloud::trace("PLINTH_DEBUG_AZURE", "azure", r, resp);  // docs/providers/azure.md
  if (!resp) {
    Error e = resp.error();
    e.message += where;
    return ArmFailure{"", 0, e};
  }
  observe_remaining(bucket_of(method), *resp);
  if (resp->status >= 200 && resp->status < 300) {
    ArmReply ok;
    ok.status = resp->status;
    ok.headers = resp->headers;
    ok.body = resp->body.empty() ? Json() : parse_json_or_discard(resp->body);
    if (ok.body.is_discarded())
      return ArmFailure{"", resp->status, Error::fatal("ARM answered " + std::to_string(resp->status) +
                                                       " with a body that is not JSON" + where)};
    return ok;
  }
  Json j = parse_json_or_discard(resp->body);
  Json err = j.is_object() && j.contains("error") && j["error"].is_object() ? j["error"] : Json::object();
  std::string code = str(err, "code");
  std::string text = code.empty() ? "HTTP " + std::to_string(resp->status) + " without an ARM error answer"
                                   : describe_error(err);
  if (code.empty()) code = "HTTP" + std::to_string(resp->status);
  Error e{kind_of(code, resp->status, str(err, "message")), text + where, 0};
  if (e.retryable()) e.retry_after_ms = net::parse_retry_after_ms(resp->header("Retry-After"));
  if (auto id = resp->header("x-ms-request-id"); !id.empty()) e.message += " [x-ms-request-id " + id + "]";
  if (resp->status == 401) {
    std::lock_guard<std::mutex> lock(token_mu_);
    token_.clear();  // a revoked or expired token: the next attempt gets a new one
    if (code == "ExpiredAuthenticationToken" || code == "InvalidAuthenticationToken") e.kind = Error::Kind::Retryable;
  }
  return ArmFailure{code, resp->status, e};
}

ArmResult ArmClient::send(const std::string& method, const std::string& path, const std::string& api_version,
                          const Json& body, Call& call, const std::string& what) {
  const std::string url = url_of(path, api_version);
  const std::string bucket = bucket_of(method);
  for (;;) {
    if (auto wait = take(bucket); wait.count() > 0)
      if (auto st = net::pause(static_cast<int>(wait.count()), call.deadline(), cancel_,
                               "waiting for the client-side ARM " + bucket + " rate limit");
          !st)
        return ArmFailure{"", 0, st.error()};
    auto out = once(method, url, body, call, what);
    if (std::holds_alternative<ArmReply>(out)) {
      call.progress();
      return out;
    }
    const ArmFailure& f = std::get<ArmFailure>(out);
    if (f.error.retryable() && call.retry(f.error)) continue;
    return out;
  }
}

std::variant<Json, ArmFailure> ArmClient::wait(const ArmReply& started, Call& call, const std::string& what) {
  std::string url = hdr(started.headers, "Azure-AsyncOperation");
  const bool async = !url.empty();
  if (!async) url = hdr(started.headers, "Location");
  if (url.empty()) return started.body;
  std::string retry_after = hdr(started.headers, "Retry-After");
  for (;;) {
    // Retry-After when ARM gives one (0 or none: the client's own interval).
    int ms = net::parse_retry_after_ms(retry_after);
    if (ms <= 0) ms = settings_.poll_ms;
    ms = std::min(ms, settings_.max_poll_ms);
    if (ms > 0)
      if (auto st = net::pause(ms, call.deadline(), cancel_, "waiting for " + what); !st)
        return ArmFailure{"", 0, st.error()};
    auto polled = send("GET", url, "", Json(), call, what + " (operation status)");
    if (auto* f = std::get_if<ArmFailure>(&polled)) {
      // The Location monitor of a failed operation answers with the error itself.
      return *f;
    }
    const ArmReply& r = std::get<ArmReply>(polled);
    retry_after = hdr(r.headers, "Retry-After");
    if (async) {
      const std::string status = str(r.body, "status");
      if (status == "Succeeded") return r.body;
      if (status == "Failed" || status == "Canceled") {
        Json err = r.body.is_object() && r.body.contains("error") ? r.body["error"] : Json::object();
        std::string code = str(err, "code");
        if (code.empty()) code = "Operation" + status;
        const std::string message = str(err, "message");
        return ArmFailure{code, r.status,
                          Error{kind_of(code, 409, message),
                                (err.empty() ? code + ": the operation ended " + status : describe_error(err)) +
                                    " (ARM " + what + ")",
                                0}};
      }
    } else if (r.status != 202) {
      return r.body;
    }
  }
}

}  // namespace plinth::azure
