// aws-ec2-emulator: an Amazon EC2 Query API endpoint (2016-11-15) over HTTPS
// that verifies SigV4, with capacity, spot reclaim, throttling and fault
// injection, a request log and /__emulator/ control endpoints.
// docs/emulators.md describes it.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <thread>

#include "providers/aws/ec2_protocol.h"
#include "providers/aws/sigv4.h"
#include "tests/emulators/aws-ec2/identity.h"
#include "tests/emulators/aws-ec2/options.h"
#include "tests/emulators/aws-ec2/service.h"
#include "tests/emulators/common/connection.h"
#include "tests/emulators/common/listen.h"
#include "tests/emulators/common/tls.h"

namespace ae = plinth::aws_ec2_emulator;
namespace ec2 = plinth::aws::ec2;
namespace sigv4 = plinth::aws;
using ae::Json;

namespace {

std::atomic<bool> g_stop{false};
std::mutex g_stop_mu;
std::condition_variable g_stop_cv;

/// Sleeps `ms` or until shutdown, whichever comes first.
void nap(int ms) {
  std::unique_lock<std::mutex> lock(g_stop_mu);
  g_stop_cv.wait_for(lock, std::chrono::milliseconds(ms), [] { return g_stop.load(); });
}

std::string now_iso_ms() {
  using namespace std::chrono;
  auto ms = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  return ec2::iso8601(static_cast<double>(ms) / 1000.0);
}

/// What happened to one request, for the log and the counters.
struct Record {
  std::string method, path, action;
  std::optional<int> status;  ///< nullopt: no answer was sent
  std::string code;           ///< the EC2 error code, "" on success
  std::string fault;          ///< "", drop, lose-response, throttle, 500, 503
  bool control = false;
  std::string access_key;  ///< the access key id of a verified signature
  std::string issued;      ///< the access key id of credentials this request was given (STS, IMDS, container)
};

class RequestLog {
 public:
  bool open(const std::string& path) {
    out_.open(path, std::ios::app);
    return out_.good();
  }
  void write(const Record& r, std::chrono::steady_clock::duration took) {
    if (!out_.is_open()) return;
    Json line = {{"time", now_iso_ms()},
                 {"method", r.method},
                 {"path", r.path},
                 {"action", r.action.empty() ? Json(nullptr) : Json(r.action)},
                 {"status", r.status ? Json(*r.status) : Json(nullptr)},
                 {"code", r.code.empty() ? Json(nullptr) : Json(r.code)},
                 {"fault", r.fault.empty() ? Json(nullptr) : Json(r.fault)},
                 {"control", r.control},
                 {"access_key", r.access_key.empty() ? Json(nullptr) : Json(r.access_key)},
                 {"issued", r.issued.empty() ? Json(nullptr) : Json(r.issued)},
                 {"ms", std::chrono::duration_cast<std::chrono::milliseconds>(took).count()}};
    std::lock_guard<std::mutex> lock(mu_);
    out_ << line.dump() << '\n';
    out_.flush();
  }

 private:
  std::mutex mu_;
  std::ofstream out_;
};

/// Per-action request counters (GET /__emulator/counters).
class Counters {
 public:
  void add(const Record& r) {
    if (r.control) return;
    std::lock_guard<std::mutex> lock(mu_);
    std::string action = r.action.empty() ? "(none)" : r.action;
    auto bump = [](Json& counter) { counter = counter.is_number() ? counter.get<int>() + 1 : 1; };
    Json& a = data_["actions"][action];
    bump(a["requests"]);
    bump(a["status"][r.status ? std::to_string(*r.status) : "none"]);
    if (!r.code.empty()) bump(a["codes"][r.code]);
    if (!r.fault.empty()) bump(a["faults"][r.fault]);
    bump(data_["total"]);
  }
  Json get() {
    std::lock_guard<std::mutex> lock(mu_);
    Json out = data_;
    if (!out.contains("total")) out["total"] = 0;
    if (!out.contains("actions")) out["actions"] = Json::object();
    return out;
  }
  void reset() {
    std::lock_guard<std::mutex> lock(mu_);
    data_ = Json::object();
  }

 private:
  std::mutex mu_;
  Json data_ = Json::object();
};

/// A token bucket per action (--throttle, POST /__emulator/throttle).
class Throttle {
 public:
  explicit Throttle(std::map<std::string, ae::BucketSpec> specs) : specs_(std::move(specs)) {}
  /// Takes a token for `action`; false when its bucket is empty.
  bool take(const std::string& action) {
    std::lock_guard<std::mutex> lock(mu_);
    auto spec = specs_.find(action);
    if (spec == specs_.end()) spec = specs_.find("*");
    if (spec == specs_.end()) return true;
    auto t = std::chrono::steady_clock::now();
    auto [it, fresh] = buckets_.try_emplace(action, Bucket{spec->second.capacity, t});
    Bucket& b = it->second;
    double elapsed = std::chrono::duration<double>(t - b.last).count();
    b.tokens = std::min(spec->second.capacity, b.tokens + elapsed * spec->second.refill_per_second);
    b.last = t;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
  /// Replaces one action's bucket (full again), or removes it.
  void set(const std::string& action, std::optional<ae::BucketSpec> spec) {
    std::lock_guard<std::mutex> lock(mu_);
    if (spec)
      specs_[action] = *spec;
    else
      specs_.erase(action);
    if (action == "*")
      buckets_.clear();
    else
      buckets_.erase(action);
  }

 private:
  struct Bucket {
    double tokens;
    std::chrono::steady_clock::time_point last;
  };
  std::mutex mu_;
  std::map<std::string, ae::BucketSpec> specs_;
  std::map<std::string, Bucket> buckets_;
};

/// The seeded dice of the fault injection, and the lose-response counts.
struct Faults {
  std::mutex mu;
  std::mt19937_64 rng;
  int latency_min_ms = 0, latency_max_ms = 0;
  double rate_500 = 0, rate_503 = 0, drop_rate = 0, lose_rate = 0;
  std::map<std::string, int> lose;

  struct Roll {
    int latency_ms = 0;
    std::string fault;  ///< "", drop, 500, 503
  };
  Roll roll() {
    std::lock_guard<std::mutex> lock(mu);
    Roll r;
    if (latency_max_ms > 0) r.latency_ms = std::uniform_int_distribution<int>(latency_min_ms, latency_max_ms)(rng);
    double x = std::uniform_real_distribution<double>(0, 1)(rng);
    if (x < drop_rate)
      r.fault = "drop";
    else if (x < drop_rate + rate_500)
      r.fault = "500";
    else if (x < drop_rate + rate_500 + rate_503)
      r.fault = "503";
    return r;
  }
  /// Whether the answer of a successful `action` is to be lost.
  bool lose_now(const std::string& action) {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = lose.find(action); it != lose.end() && it->second > 0) {
      --it->second;
      return true;
    }
    return lose_rate > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < lose_rate;
  }
};

struct Emulator {
  ae::Options options;
  ec2::Model model;
  std::unique_ptr<ae::Region> region;
  std::unique_ptr<Throttle> throttle;
  std::unique_ptr<ae::Identity> identity;
  Faults faults;
  RequestLog log;
  Counters counters;
  std::mutex id_mu;
  std::mt19937_64 id_rng;

  std::string request_id() {
    std::lock_guard<std::mutex> lock(id_mu);
    static const char* hex = "0123456789abcdef";
    std::string id;
    for (int i = 0; i < 32; ++i) {
      if (i == 8 || i == 12 || i == 16 || i == 20) id += '-';
      id += i == 12 ? '4' : hex[id_rng() & 0xf];
    }
    return id;
  }

  void reply_xml(httplib::Response& res, int status, const std::string& body) {
    res.status = status;
    res.set_header("Server", "AmazonEC2");
    res.set_content(body, "text/xml;charset=UTF-8");
  }

  void reply_error(httplib::Response& res, Record& rec, const ae::ApiError& e) {
    rec.status = e.status;
    rec.code = e.code;
    reply_xml(res, e.status, ec2::error_xml(e.code, e.message, request_id()));
  }

  void serve(const httplib::Request& req, httplib::Response& res) {
    auto start = std::chrono::steady_clock::now();
    Record rec;
    rec.method = req.method;
    rec.path = req.path;
    if (req.path == "/__emulator" || req.path.rfind("/__emulator/", 0) == 0) {
      rec.control = true;
      rec.action = req.path;
      control(req, res);
      rec.status = res.status;
      log.write(rec, std::chrono::steady_clock::now() - start);
      return;
    }
    handle(req, res, rec);
    counters.add(rec);
    log.write(rec, std::chrono::steady_clock::now() - start);
  }

  void handle(const httplib::Request& req, httplib::Response& res, Record& rec) {
    std::string target = req.target.empty() ? req.path : req.target;
    auto q = target.find('?');
    std::string raw_path = target.substr(0, q);
    std::string raw_query = q == std::string::npos ? "" : target.substr(q + 1);

    std::map<std::string, std::string> params = ec2::parse_form(raw_query);
    if (req.method == "POST") {
      for (auto& [k, v] : ec2::parse_form(req.body)) params[k] = v;
    } else if (req.method != "GET") {
      return reply_error(res, rec,
                         {400, "UnsupportedOperation",
                          "The HTTP method " + req.method + " is not supported; the EC2 Query API takes GET or POST."});
    }
    rec.action = params.count("Action") ? params["Action"] : "";

    Faults::Roll roll = faults.roll();
    if (roll.latency_ms > 0) nap(roll.latency_ms);
    if (roll.fault == "drop") {
      rec.fault = "drop";
      plinth::emulator::drop_connection(req.local_port, req.remote_port);
      return;
    }
    if (roll.fault == "500") {
      rec.fault = "500";
      return reply_error(res, rec, {500, "InternalError", "An internal error has occurred"});
    }
    if (roll.fault == "503") {
      rec.fault = "503";
      return reply_error(res, rec, {503, "Unavailable", "The server is overloaded and can't handle the request."});
    }

    if (ae::Identity::is_sts_action(rec.action)) return handle_sts(req, res, rec, raw_path, raw_query, params);
    if (raw_path == "/federation/credentials") {
      // IAM Identity Center's portal: unsigned, the SSO access token in a header.
      rec.action = "GetRoleCredentials";
      if (req.method != "GET") return reply_error(res, rec, {405, "MethodNotAllowed", "GetRoleCredentials is a GET"});
      ae::IdentityAnswer a = identity->sso(params["account_id"], params["role_name"],
                                           req.get_header_value("x-amz-sso_bearer_token"));
      rec.status = a.status;
      rec.code = a.code;
      rec.issued = a.issued;
      res.status = a.status;
      res.set_content(a.body, a.content_type);
      return;
    }

    // SigV4, on every request.
    bool expired = false;
    sigv4::VerifyResult v = verify(req, raw_path, raw_query, "ec2", expired);
    rec.access_key = v.access_key_id;
    if (!v.ok()) {
      using F = sigv4::VerifyFailure;
      switch (v.failure) {
        case F::MissingAuthentication:
          return reply_error(
              res, rec,
              {401, "MissingAuthenticationToken",
               "The request must contain either a valid (registered) AWS access key ID or X.509 certificate."});
        case F::IncompleteSignature:
          return reply_error(res, rec, {400, "IncompleteSignature", v.message});
        case F::UnknownAccessKey:
        case F::InvalidToken:
          std::cerr << "aws-ec2-emulator: " << rec.action << ": " << v.message << "\n";
          return reply_error(res, rec,
                             {401, "AuthFailure", "AWS was not able to validate the provided access credentials"});
        case F::WrongScope:
          return reply_error(res, rec, {403, "SignatureDoesNotMatch", v.message});
        case F::Expired:
          return reply_error(res, rec, {400, "RequestExpired", v.message});
        case F::SignatureMismatch:
        case F::None:
          std::cerr << "aws-ec2-emulator: " << rec.action
                    << ": signature mismatch; the canonical request we computed:\n"
                    << v.canonical_request << "\n";
          return reply_error(res, rec, {403, "SignatureDoesNotMatch", v.message});
      }
    }

    if (expired)
      return reply_error(res, rec, {400, "ExpiredToken", "The security token included in the request is expired"});
    if (rec.action.empty())
      return reply_error(res, rec, {400, "MissingAction", "The request must contain the parameter Action"});
    if (!throttle->take(rec.action)) {
      rec.fault = "throttle";
      return reply_error(res, rec, {503, "RequestLimitExceeded", "Request limit exceeded."});
    }
    const auto& implemented = ae::Region::actions();
    if (!model.operation(rec.action))
      return reply_error(res, rec,
                         {400, "InvalidAction", "The action " + rec.action + " is not valid for this web service."});
    if (std::find(implemented.begin(), implemented.end(), rec.action) == implemented.end())
      return reply_error(
          res, rec,
          {400, "UnsupportedOperation",
           "aws-ec2-emulator does not implement " + rec.action + " (docs/emulators.md lists what it does)"});
    if (!params.count("Version"))
      return reply_error(res, rec, {400, "MissingParameter", "The request must contain the parameter Version"});
    if (params["Version"] != model.api_version())
      return reply_error(res, rec,
                         {400, "NoSuchVersion",
                          "The requested version (" + params["Version"] + ") of service AmazonEC2 does not exist"});
    params.erase("Action");
    params.erase("Version");
    for (auto it = params.begin(); it != params.end();)
      it = it->first.rfind("X-Amz-", 0) == 0 ? params.erase(it) : std::next(it);

    auto parsed = ec2::parse_query(model, model.input_shape(rec.action), params);
    if (auto* pe = std::get_if<ec2::ParameterError>(&parsed))
      return reply_error(res, rec, {400, pe->code, pe->message});
    const Json& input = std::get<Json>(parsed);
    if (input.value("DryRun", false))
      return reply_error(res, rec, {412, "DryRunOperation", "Request would have succeeded, but DryRun flag is set."});

    ae::Outcome outcome = region->call(rec.action, input);
    if (auto* e = std::get_if<ae::ApiError>(&outcome)) return reply_error(res, rec, *e);
    auto body = ec2::serialize_response(model, rec.action, std::get<Json>(outcome), request_id());
    if (!body) {
      std::cerr << "aws-ec2-emulator: internal error answering " << rec.action << ": " << body.error().message << "\n";
      return reply_error(res, rec, {500, "InternalError", "An internal error has occurred"});
    }
    if (faults.lose_now(rec.action)) {
      // The action took effect; the client never sees the answer.
      rec.fault = "lose-response";
      plinth::emulator::drop_connection(req.local_port, req.remote_port);
      return;
    }
    rec.status = 200;
    reply_xml(res, 200, *body);
  }

  /// The request's SigV4 signature for `service`, with the long-term key or credentials it issued;
  /// `expired` says whether those have expired.
  sigv4::VerifyResult verify(const httplib::Request& req, const std::string& raw_path, const std::string& raw_query,
                             const std::string& service, bool& expired) {
    sigv4::HttpRequest hr;
    hr.method = req.method;
    hr.path = raw_path;
    hr.query = raw_query;
    hr.body = req.body;
    for (const auto& [k, v] : req.headers) hr.headers.emplace_back(k, v);
    sigv4::VerifyParams vp;
    vp.region = options.region;
    vp.service = service;
    vp.now = std::chrono::system_clock::now();
    vp.max_skew = std::chrono::seconds(options.max_skew_s);
    auto lookup = [this, &expired](const std::string& id) { return credentials_of(id, expired); };
    return sigv4::verify(hr, lookup, vp);
  }

  /// The credentials of an access key id: the long-term key, or temporary ones it issued.
  std::optional<sigv4::Credentials> credentials_of(const std::string& id, bool& expired) {
    if (id == options.access_key) return sigv4::Credentials{options.access_key, options.secret_key, options.session_token};
    return identity->lookup(id, expired);
  }

  /// STS on the same endpoint: AssumeRoleWithWebIdentity unsigned, the others SigV4 for service sts.
  void handle_sts(const httplib::Request& req, httplib::Response& res, Record& rec, const std::string& raw_path,
                  const std::string& raw_query, const std::map<std::string, std::string>& params) {
    std::string caller;
    if (req.has_header("Authorization") || params.count("X-Amz-Signature")) {
      bool expired = false;
      sigv4::VerifyResult v = verify(req, raw_path, raw_query, "sts", expired);
      rec.access_key = v.access_key_id;
      if (!v.ok() || expired) {
        rec.status = expired ? 400 : 403;
        rec.code = expired ? "ExpiredTokenException" : "SignatureDoesNotMatch";
        res.status = *rec.status;
        res.set_content("<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error><Type>Sender</Type>"
                        "<Code>" + rec.code + "</Code><Message>" + (expired ? "The security token included in the request is expired" : v.message) +
                        "</Message></Error><RequestId>" + request_id() + "</RequestId></ErrorResponse>",
                        "text/xml");
        return;
      }
      caller = v.access_key_id;
    }
    ae::IdentityAnswer a = identity->sts(rec.action, params, caller, options.access_key);
    rec.status = a.status;
    rec.code = a.code;
    rec.issued = a.issued;
    res.status = a.status;
    res.set_content(a.body, a.content_type);
  }

  /// The plain-HTTP metadata listener: IMDSv2 and container credentials.
  void serve_metadata(const httplib::Request& req, httplib::Response& res) {
    auto start = std::chrono::steady_clock::now();
    Record rec;
    rec.method = req.method;
    rec.path = req.path;
    std::map<std::string, std::string> headers;
    for (const auto& [k, v] : req.headers) {
      std::string lower = k;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      headers[lower] = v;
    }
    ae::IdentityAnswer a = identity->metadata(req.method, req.path, headers);
    rec.action = req.path == "/latest/api/token" ? "IMDS token"
                 : req.path.rfind("/latest/", 0) == 0 ? "IMDS credentials"
                                                      : "container credentials";
    rec.status = a.status;
    rec.code = a.code;
    rec.issued = a.issued;
    res.status = a.status;
    res.set_content(a.body, a.content_type);
    log.write(rec, std::chrono::steady_clock::now() - start);
  }

  // ---- /__emulator/ ----------------------------------------------------------------

  static void reply_json(httplib::Response& res, int status, const Json& body) {
    res.status = status;
    res.set_content(body.dump(2) + "\n", "application/json");
  }

  void control(const httplib::Request& req, httplib::Response& res) {
    const std::string& p = req.path;
    Json body = Json::object();
    if (req.method == "POST" && !req.body.empty()) {
      body = Json::parse(req.body, nullptr, false);
      if (body.is_discarded() || !body.is_object())
        return reply_json(res, 400, {{"error", "the body must be a JSON object"}});
    }
    auto bad = [&](const std::string& msg) { reply_json(res, 400, {{"error", msg}}); };
    try {
      if (req.method == "GET" && p == "/__emulator/state") return reply_json(res, 200, region->dump());
      if (req.method == "GET" && p == "/__emulator/instances") {
        Json all = region->dump()["instances"];
        if (req.has_param("state")) {
          Json some = Json::array();
          for (const auto& i : all)
            if (i["state"] == req.get_param_value("state")) some.push_back(i);
          all = some;
        }
        return reply_json(res, 200, {{"instances", all}});
      }
      if (req.method == "GET" && p == "/__emulator/counters") return reply_json(res, 200, counters.get());
      if (req.method == "GET" && p == "/__emulator/identity") {
        Json credentials = Json::array();
        for (const auto& c : identity->issued_credentials())
          credentials.push_back({{"access_key_id", c.access_key_id},
                                 {"secret_access_key", c.secret_access_key},
                                 {"session_token", c.session_token}});
        return reply_json(res, 200, {{"issued", identity->issued_counts()}, {"credentials", credentials}});
      }
      if (req.method == "POST" && p == "/__emulator/counters/reset") {
        counters.reset();
        return reply_json(res, 200, counters.get());
      }
      if (req.method == "POST" && p == "/__emulator/capacity") {
        if (!body.contains("instance_type") || !body.contains("availability_zone"))
          return bad(
              "give instance_type, availability_zone (either may be \"*\") and limit (a count, or null for unlimited)");
        std::optional<int> limit;
        if (body.contains("limit") && !body["limit"].is_null()) {
          if (!body["limit"].is_number_integer() || body["limit"].get<int>() < 0)
            return bad("limit must be a count >= 0 or null");
          limit = body["limit"].get<int>();
        }
        region->set_capacity(body["instance_type"], body["availability_zone"], limit);
        return reply_json(res, 200, region->dump()["capacity"]);
      }
      if (req.method == "POST" && p == "/__emulator/reclaim") {
        if (!body.contains("instance_ids") || !body["instance_ids"].is_array() || body["instance_ids"].empty())
          return bad("give instance_ids: [\"i-...\"] (spot instances to reclaim)");
        auto out = region->reclaim(body["instance_ids"].get<std::vector<std::string>>());
        if (auto* e = std::get_if<ae::ApiError>(&out))
          return reply_json(res, e->status, {{"error", e->message}, {"code", e->code}});
        return reply_json(res, 200, std::get<Json>(out));
      }
      if (req.method == "POST" && p == "/__emulator/clock") {
        if (!body.contains("advance_ms") || !body["advance_ms"].is_number_integer() ||
            body["advance_ms"].get<long long>() < 0)
          return bad("give advance_ms: a whole number of milliseconds >= 0");
        region->advance(std::chrono::milliseconds(body["advance_ms"].get<long long>()));
        return reply_json(res, 200, {{"advanced_ms", body["advance_ms"]}});
      }
      if (req.method == "POST" && p == "/__emulator/throttle") {
        if (!body.contains("action")) return bad("give action (or \"*\"), size and refill_per_second, or off: true");
        if (body.value("off", false)) {
          throttle->set(body["action"], std::nullopt);
        } else {
          ae::BucketSpec b{body.value("size", 0.0), body.value("refill_per_second", 0.0)};
          if (b.capacity < 1 || b.refill_per_second < 0) return bad("size must be >= 1 and refill_per_second >= 0");
          throttle->set(body["action"], b);
        }
        return reply_json(res, 200, {{"ok", true}});
      }
      if (req.method == "POST" && p == "/__emulator/faults") {
        std::lock_guard<std::mutex> lock(faults.mu);
        for (const auto& [k, v] : body.items()) {
          if (k == "lose_response") {
            for (const auto& [action, n] : v.items()) faults.lose[action] = n.get<int>();
          } else if (k == "lose_response_rate") {
            faults.lose_rate = v;
          } else if (k == "rate_500") {
            faults.rate_500 = v;
          } else if (k == "rate_503") {
            faults.rate_503 = v;
          } else if (k == "drop_rate") {
            faults.drop_rate = v;
          } else if (k == "latency_ms") {
            faults.latency_min_ms = v.at(0);
            faults.latency_max_ms = v.at(1);
          } else {
            return bad("unknown fault '" + k +
                       "' (use lose_response, lose_response_rate, rate_500, rate_503, drop_rate, latency_ms)");
          }
        }
        return reply_json(res, 200,
                          {{"lose_response", faults.lose},
                           {"lose_response_rate", faults.lose_rate},
                           {"rate_500", faults.rate_500},
                           {"rate_503", faults.rate_503},
                           {"drop_rate", faults.drop_rate}});
      }
    } catch (const Json::exception& e) {
      return bad(std::string("malformed body: ") + e.what());
    }
    reply_json(res, 404,
               {{"error", "no control endpoint " + req.method + " " + p +
                              "; see docs/emulators.md (state, instances, counters, identity, capacity, reclaim, clock, "
                              "throttle, faults)"}});
  }
};

std::string url_host(const std::string& host) { return host.find(':') != std::string::npos ? "[" + host + "]" : host; }

}  // namespace

int main(int argc, char** argv) {
  Emulator em;
  bool help = false;
  em.options.model = PLINTH_AWS_EC2_MODEL;
  if (std::string err = ae::parse_options(argc, argv, em.options, help); !err.empty()) {
    std::cerr << "aws-ec2-emulator: " << err << "\n";
    return 2;
  }
  if (help) {
    std::cout << ae::usage();
    return 0;
  }
  const ae::Options& o = em.options;
  auto model = ec2::Model::load(o.model);
  if (!model) {
    std::cerr << "aws-ec2-emulator: " << model.error().message << " (pass --model FILE)\n";
    return 1;
  }
  em.model = std::move(model).value();
  if (em.model.api_version() != "2016-11-15") {
    std::cerr << "aws-ec2-emulator: " << o.model << " is not the EC2 2016-11-15 model\n";
    return 1;
  }
  for (const auto& [action, n] : o.lose_response)
    if (!em.model.operation(action)) {
      std::cerr << "aws-ec2-emulator: --lose-response names '" << action << "', which is not an EC2 action\n";
      return 2;
    }
  for (const auto& [action, b] : o.throttle)
    if (action != "*" && !em.model.operation(action)) {
      std::cerr << "aws-ec2-emulator: --throttle names '" << action << "', which is not an EC2 action\n";
      return 2;
    }
  em.region = std::make_unique<ae::Region>(o);
  em.throttle = std::make_unique<Throttle>(o.throttle);
  {
    ae::IdentityOptions io;
    io.account_id = o.account_id;
    io.web_identity_tokens = {o.web_identity_tokens.begin(), o.web_identity_tokens.end()};
    io.credential_ttl_s = o.credential_ttl_s;
    io.instance_role = o.instance_role;
    io.container_token = o.container_token;
    io.sso_tokens = {o.sso_tokens.begin(), o.sso_tokens.end()};
    io.seed = o.seed;
    em.identity = std::make_unique<ae::Identity>(io);
  }
  em.faults.rng.seed(o.seed * 7919u + 1);
  em.faults.latency_min_ms = o.latency_min_ms;
  em.faults.latency_max_ms = o.latency_max_ms;
  em.faults.rate_500 = o.rate_500;
  em.faults.rate_503 = o.rate_503;
  em.faults.drop_rate = o.drop_rate;
  em.faults.lose_rate = o.lose_response_rate;
  em.faults.lose = o.lose_response;
  em.id_rng.seed(o.seed * 104729u + 7);
  if (!o.request_log.empty() && !em.log.open(o.request_log)) {
    std::cerr << "aws-ec2-emulator: cannot open --request-log " << o.request_log << "\n";
    return 1;
  }

  plinth::emulator::TestPki pki;
  if (!o.http && o.tls_cert.empty()) {
    if (std::string err = plinth::emulator::make_test_pki({o.host}, pki); !err.empty()) {
      std::cerr << "aws-ec2-emulator: " << err << "\n";
      return 1;
    }
    if (!o.tls_dir.empty())
      if (std::string err = plinth::emulator::write_pki(pki, o.tls_dir); !err.empty()) {
        std::cerr << "aws-ec2-emulator: " << err << "\n";
        return 1;
      }
  }

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  std::unique_ptr<httplib::Server> svr;
  if (o.http)
    svr = std::make_unique<httplib::Server>();
  else if (!o.tls_cert.empty())
    svr = std::make_unique<httplib::SSLServer>(o.tls_cert.c_str(), o.tls_key.c_str());
  else
    svr = std::make_unique<httplib::SSLServer>(pki.server_cert.get(), pki.server_key.get());
  if (!svr->is_valid()) {
    std::cerr << "aws-ec2-emulator: cannot set up TLS (check --tls-cert and --tls-key)\n";
    return 1;
  }
  auto handler = [&em](const httplib::Request& req, httplib::Response& res) { em.serve(req, res); };
  svr->Get(".*", handler);
  // POST bodies are read here: cpp-httplib would refuse a form body over 8 KiB with 413 (its
  // limit is compiled into Debian's library), and EC2 takes RunInstances requests far larger
  // (16 KiB of user data, 32 EFA interfaces).
  svr->Post(".*", [&em](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
    httplib::Request full = req;
    read([&full](const char* data, size_t n) {
      full.body.append(data, n);
      return full.body.size() <= (1u << 20);
    });
    em.serve(full, res);
  });
  svr->Put(".*", handler);
  svr->Delete(".*", handler);
  svr->Patch(".*", handler);
  int threads = o.threads;
  svr->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  svr->set_keep_alive_max_count(1000);
  svr->set_keep_alive_timeout(5);
  svr->set_tcp_nodelay(true);
  int port = plinth::emulator::bind_server(*svr, o.host, o.port);
  if (port <= 0) {
    std::cerr << "aws-ec2-emulator: cannot listen on " << o.host << ":" << o.port
              << " (in use? pick another --port, or 0 for a free one)\n";
    return 1;
  }
  std::thread worker([&svr] { svr->listen_after_bind(); });
  // IMDS and container credentials are plain HTTP, as the real ones are: a listener of their own.
  httplib::Server meta;
  std::thread meta_worker;
  int meta_port = 0;
  if (o.metadata_port) {
    auto mh = [&em](const httplib::Request& req, httplib::Response& res) { em.serve_metadata(req, res); };
    meta.Get(".*", mh);
    meta.Put(".*", mh);
    meta.Post(".*", mh);
    meta_port = plinth::emulator::bind_server(meta, o.host, *o.metadata_port);
    if (meta_port <= 0) {
      std::cerr << "aws-ec2-emulator: cannot listen on " << o.host << ":" << *o.metadata_port
                << " for --metadata-port (in use? pick another, or 0 for a free one)\n";
      svr->stop();
      worker.join();
      return 1;
    }
    meta_worker = std::thread([&meta] { meta.listen_after_bind(); });
    while (!meta.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Say "ready" only once the server runs: a stop() before that would be lost
  // and leave the listener running after SIGTERM (as in gcp-emulator).
  while (!svr->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::string base = (o.http ? "http://" : "https://") + url_host(o.host) + ":" + std::to_string(port);
  std::cout << "listening " << base << " region=" << o.region << " zones=";
  for (size_t i = 0; i < o.zones.size(); ++i) std::cout << (i ? "," : "") << o.zones[i];
  if (o.metadata_port) std::cout << "\nmetadata http://" << url_host(o.host) << ":" << meta_port;
  std::cout << "\nready" << std::endl;

  int sig = 0;
  sigwait(&sigs, &sig);
  {
    std::lock_guard<std::mutex> lock(g_stop_mu);
    g_stop = true;
  }
  g_stop_cv.notify_all();
  svr->stop();
  worker.join();
  if (meta_worker.joinable()) {
    meta.stop();
    meta_worker.join();
  }
  std::cerr << "aws-ec2-emulator: stopped by signal " << sig << "\n";
  return 0;
}
