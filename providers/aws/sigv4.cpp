#include "providers/aws/sigv4.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <map>
#include <stdexcept>

#include "engine/core/hash.h"
#include "engine/core/strings.h"

namespace plinth::aws {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
constexpr std::string_view kTerminator = "aws4_request";

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/// Trims and collapses every run of blanks (folded lines included) to one space.
std::string canonical_value(std::string_view v) {
  std::string out;
  bool pending_space = false;
  for (char c : v) {
    if (is_blank(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

/// Splits "a=b&c&d=" into decoded (name, value) pairs; empty pieces are dropped.
std::vector<std::pair<std::string, std::string>> split_query(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start <= query.size()) {
    size_t amp = query.find('&', start);
    if (amp == std::string_view::npos) amp = query.size();
    std::string_view piece = query.substr(start, amp - start);
    if (!piece.empty()) {
      size_t eq = piece.find('=');
      if (eq == std::string_view::npos)
        out.emplace_back(uri_decode(piece), "");
      else
        out.emplace_back(uri_decode(piece.substr(0, eq)), uri_decode(piece.substr(eq + 1)));
    }
    start = amp + 1;
  }
  return out;
}

std::string scope_of(std::string_view date, std::string_view region, std::string_view service) {
  std::string s;
  s.append(date).append("/").append(region).append("/").append(service).append("/").append(kTerminator);
  return s;
}

std::string build_canonical_request(std::string_view method, const std::string& uri, const std::string& query,
                                    const CanonicalHeaders& headers, const std::string& payload_hash) {
  std::string out;
  out.append(method).append("\n");
  out += uri + "\n" + query + "\n" + headers.text + "\n" + headers.signed_headers + "\n" + payload_hash;
  return out;
}

std::string build_string_to_sign(std::string_view date_time, std::string_view scope, std::string_view canonical) {
  std::string out;
  out.append(kAlgorithm).append("\n").append(date_time).append("\n").append(scope).append("\n");
  out += sha256_hex(canonical);
  return out;
}

std::string payload_hash_of(const HttpRequest& r, const SigningParams& p) {
  return p.payload_hash.empty() ? sha256_hex(r.body) : p.payload_hash;
}

std::optional<Error> check_inputs(const Credentials& c, const SigningParams& p) {
  if (c.access_key_id.empty() || c.secret_access_key.empty())
    return Error::invalid("SigV4: the credentials have no access key id or no secret access key");
  if (p.region.empty() || p.service.empty())
    return Error::invalid("SigV4: the region and the service to sign for must be set");
  for (char ch : p.region + p.service)
    if (ch == '/' || is_blank(ch)) return Error::invalid("SigV4: region and service may not contain '/' or blanks");
  return std::nullopt;
}

}  // namespace

std::optional<std::string> HttpRequest::header(std::string_view name) const {
  std::optional<std::string> out;
  for (const auto& [k, v] : headers) {
    if (!iequals(k, name)) continue;
    if (out)
      *out += "," + v;
    else
      out = v;
  }
  return out;
}

void HttpRequest::set_header(const std::string& name, const std::string& value) {
  headers.erase(std::remove_if(headers.begin(), headers.end(), [&](const auto& h) { return iequals(h.first, name); }),
                headers.end());
  headers.emplace_back(name, value);
}

std::string uri_encode(std::string_view s, bool keep_slash) {
  static const char* digits = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || (keep_slash && c == '/')) {
      out += ch;
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 0xf];
    }
  }
  return out;
}

std::string uri_decode(std::string_view s, bool plus_is_space) {
  auto hexval = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += (plus_is_space && s[i] == '+') ? ' ' : s[i];
  }
  return out;
}

std::string canonical_uri(std::string_view path, bool normalize) {
  if (path.empty()) return "/";
  if (!normalize) return uri_encode(path, true);
  // RFC 3986 section 5.2.4 dot-segment removal, with empty segments (repeated
  // slashes) dropped as well; a trailing slash survives.
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view seg = path.substr(start, slash - start);
    if (seg == "..") {
      if (!out.empty()) out.pop_back();
    } else if (!seg.empty() && seg != ".") {
      out.push_back(seg);
    }
    start = slash + 1;
  }
  bool trailing = path.back() == '/' || (path.size() >= 2 && path.substr(path.size() - 2) == "/.") ||
                  (path.size() >= 3 && path.substr(path.size() - 3) == "/..");
  std::string result = "/";
  for (size_t i = 0; i < out.size(); ++i) {
    result += uri_encode(out[i], false);
    if (i + 1 < out.size()) result += '/';
  }
  if (trailing && !out.empty()) result += '/';
  return result;
}

std::string canonical_query(std::string_view query, const std::vector<std::string>& skip) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (auto& [k, v] : split_query(query)) {
    if (std::find(skip.begin(), skip.end(), k) != skip.end()) continue;
    pairs.emplace_back(uri_encode(k, false), uri_encode(v, false));
  }
  std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (const auto& [k, v] : pairs) {
    if (!out.empty()) out += '&';
    out += k + "=" + v;
  }
  return out;
}

CanonicalHeaders canonical_headers(const std::vector<std::pair<std::string, std::string>>& headers,
                                   const std::vector<std::string>& only) {
  // name -> values in the order they appeared
  std::vector<std::pair<std::string, std::string>> merged;
  for (const auto& [k, v] : headers) {
    std::string name = ascii_lower(canonical_value(k));
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    auto it = std::find_if(merged.begin(), merged.end(), [&](const auto& m) { return m.first == name; });
    if (it == merged.end())
      merged.emplace_back(name, canonical_value(v));
    else
      it->second += "," + canonical_value(v);
  }
  std::stable_sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  CanonicalHeaders out;
  for (const auto& [k, v] : merged) {
    out.text += k + ":" + v + "\n";
    if (!out.signed_headers.empty()) out.signed_headers += ';';
    out.signed_headers += k;
  }
  return out;
}

std::string amz_date(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::optional<std::chrono::system_clock::time_point> parse_amz_date(std::string_view s) {
  if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z') return std::nullopt;
  for (size_t i = 0; i < 15; ++i)
    if (i != 8 && !std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
  auto num = [&](size_t pos, size_t len) { return std::stoi(std::string(s.substr(pos, len))); };
  std::tm tm{};
  tm.tm_year = num(0, 4) - 1900;
  tm.tm_mon = num(4, 2) - 1;
  tm.tm_mday = num(6, 2);
  tm.tm_hour = num(9, 2);
  tm.tm_min = num(11, 2);
  tm.tm_sec = num(13, 2);
  if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
    return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  size_t len = 0;
  // OpenSSL 3: EVP_Q_mac is the one-shot MAC; "HMAC" with digest SHA256.
  if (!EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.data(), key.size(),
                 reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, sizeof md, &len))
    throw std::runtime_error("OpenSSL HMAC-SHA256 failed");
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char ch : bytes) {
    auto c = static_cast<unsigned char>(ch);
    out += digits[c >> 4];
    out += digits[c & 0xf];
  }
  return out;
}

std::string signing_key(std::string_view secret, std::string_view date, std::string_view region,
                        std::string_view service) {
  std::string k = hmac_sha256("AWS4" + std::string(secret), date);
  k = hmac_sha256(k, region);
  k = hmac_sha256(k, service);
  return hmac_sha256(k, kTerminator);
}

Result<Signed> sign(const HttpRequest& request, const Credentials& credentials, const SigningParams& params) {
  if (auto e = check_inputs(credentials, params)) return *e;
  Signed out;
  out.request = request;
  HttpRequest& r = out.request;
  std::string date_time = amz_date(params.time);
  std::string date = date_time.substr(0, 8);
  std::string payload_hash = payload_hash_of(r, params);

  r.set_header("X-Amz-Date", date_time);
  bool token = !credentials.session_token.empty();
  if (token && params.sign_session_token) r.set_header("X-Amz-Security-Token", credentials.session_token);
  if (params.payload_hash_header) r.set_header("x-amz-content-sha256", payload_hash);

  CanonicalHeaders headers = canonical_headers(r.headers);
  std::string scope = scope_of(date, params.region, params.service);
  try {
    out.canonical_request = build_canonical_request(r.method, canonical_uri(r.path, params.normalize_path),
                                                    canonical_query(r.query), headers, payload_hash);
    out.string_to_sign = build_string_to_sign(date_time, scope, out.canonical_request);
    out.signature = hex(hmac_sha256(signing_key(credentials.secret_access_key, date, params.region, params.service),
                                    out.string_to_sign));
  } catch (const std::exception& e) {
    return Error::fatal(std::string("SigV4: ") + e.what());
  }
  out.authorization = std::string(kAlgorithm) + " Credential=" + credentials.access_key_id + "/" + scope +
                      ", SignedHeaders=" + headers.signed_headers + ", Signature=" + out.signature;
  if (token && !params.sign_session_token) r.set_header("X-Amz-Security-Token", credentials.session_token);
  r.set_header("Authorization", out.authorization);
  return out;
}

Result<Signed> presign(const HttpRequest& request, const Credentials& credentials, const SigningParams& params,
                       int expires_seconds) {
  if (auto e = check_inputs(credentials, params)) return *e;
  if (expires_seconds < 1 || expires_seconds > 604800)
    return Error::invalid("SigV4: a presigned request expires after 1 to 604800 seconds (7 days), not " +
                          std::to_string(expires_seconds));
  Signed out;
  out.request = request;
  HttpRequest& r = out.request;
  std::string date_time = amz_date(params.time);
  std::string date = date_time.substr(0, 8);
  std::string scope = scope_of(date, params.region, params.service);
  CanonicalHeaders headers = canonical_headers(r.headers);

  auto add = [&](std::string& q, std::string_view name, const std::string& value) {
    if (!q.empty()) q += '&';
    q.append(name).append("=").append(uri_encode(value, false));
  };
  std::string q = r.query;
  add(q, "X-Amz-Algorithm", std::string(kAlgorithm));
  add(q, "X-Amz-Credential", credentials.access_key_id + "/" + scope);
  add(q, "X-Amz-Date", date_time);
  add(q, "X-Amz-SignedHeaders", headers.signed_headers);
  add(q, "X-Amz-Expires", std::to_string(expires_seconds));
  bool token = !credentials.session_token.empty();
  if (token && params.sign_session_token) add(q, "X-Amz-Security-Token", credentials.session_token);

  try {
    out.canonical_request = build_canonical_request(r.method, canonical_uri(r.path, params.normalize_path),
                                                    canonical_query(q), headers, payload_hash_of(r, params));
    out.string_to_sign = build_string_to_sign(date_time, scope, out.canonical_request);
    out.signature = hex(hmac_sha256(signing_key(credentials.secret_access_key, date, params.region, params.service),
                                    out.string_to_sign));
  } catch (const std::exception& e) {
    return Error::fatal(std::string("SigV4: ") + e.what());
  }
  if (token && !params.sign_session_token) add(q, "X-Amz-Security-Token", credentials.session_token);
  add(q, "X-Amz-Signature", out.signature);
  r.query = q;
  return out;
}

Result<Authorization> parse_authorization(std::string_view value) {
  Authorization a;
  size_t sp = value.find(' ');
  a.algorithm = std::string(value.substr(0, sp));
  if (a.algorithm != kAlgorithm)
    return Error::invalid("Unsupported AWS 'algorithm': '" + a.algorithm + "' (only " + std::string(kAlgorithm) +
                          " is supported)");
  std::string_view rest = sp == std::string_view::npos ? std::string_view{} : value.substr(sp + 1);
  std::optional<std::string> credential, signed_headers, signature;
  size_t start = 0;
  while (start < rest.size()) {
    size_t comma = rest.find(',', start);
    if (comma == std::string_view::npos) comma = rest.size();
    std::string part = canonical_value(rest.substr(start, comma - start));
    start = comma + 1;
    if (part.empty()) continue;
    size_t eq = part.find('=');
    if (eq == std::string::npos)
      return Error::invalid("Authorization header requires each component to be of the form key=value; got '" + part +
                            "'");
    std::string k = part.substr(0, eq), v = part.substr(eq + 1);
    if (k == "Credential")
      credential = v;
    else if (k == "SignedHeaders")
      signed_headers = v;
    else if (k == "Signature")
      signature = v;
    else
      return Error::invalid("Authorization header has an unknown component '" + k + "'");
  }
  std::string missing;
  if (!credential) missing += "Authorization header requires 'Credential' parameter. ";
  if (!signature) missing += "Authorization header requires 'Signature' parameter. ";
  if (!signed_headers) missing += "Authorization header requires 'SignedHeaders' parameter. ";
  if (!missing.empty()) return Error::invalid(missing.substr(0, missing.size() - 1));

  std::vector<std::string> parts;
  for (size_t s = 0;;) {
    size_t slash = credential->find('/', s);
    parts.push_back(credential->substr(s, slash == std::string::npos ? std::string::npos : slash - s));
    if (slash == std::string::npos) break;
    s = slash + 1;
  }
  if (parts.size() != 5)
    return Error::invalid(
        "Credential should be of the form <access key>/<date>/<region>/<service>/aws4_request; got '" + *credential +
        "'");
  a.access_key_id = parts[0];
  a.date = parts[1];
  a.region = parts[2];
  a.service = parts[3];
  a.terminator = parts[4];
  for (size_t s = 0; s <= signed_headers->size();) {
    size_t semi = signed_headers->find(';', s);
    if (semi == std::string::npos) semi = signed_headers->size();
    if (semi > s) a.signed_headers.push_back(signed_headers->substr(s, semi - s));
    s = semi + 1;
  }
  a.signature = *signature;
  return a;
}

VerifyResult verify(const HttpRequest& request, const CredentialLookup& lookup, const VerifyParams& params) {
  VerifyResult out;
  auto fail = [&](VerifyFailure f, std::string message) {
    out.failure = f;
    out.message = std::move(message);
    return out;
  };

  // Header or query (presigned) authentication.
  std::map<std::string, std::string> qp;
  for (auto& [k, v] : split_query(request.query)) qp[k] = v;
  std::optional<std::string> header = request.header("Authorization");
  bool presigned = !header && qp.count("X-Amz-Signature");
  if (!header && !presigned)
    return fail(VerifyFailure::MissingAuthentication,
                "Request is missing Authentication Token: sign it with SigV4 (an Authorization header or "
                "X-Amz-Signature in the query)");

  Authorization auth;
  std::string date_time;
  std::optional<int> expires;
  if (presigned) {
    for (const char* name : {"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-SignedHeaders"})
      if (!qp.count(name))
        return fail(VerifyFailure::IncompleteSignature, std::string("AWS query-string parameters must include '") +
                                                            name + "'. Re-examine the query-string parameters.");
    auto parsed =
        parse_authorization(qp["X-Amz-Algorithm"] + " Credential=" + qp["X-Amz-Credential"] +
                            ", SignedHeaders=" + qp["X-Amz-SignedHeaders"] + ", Signature=" + qp["X-Amz-Signature"]);
    if (!parsed) return fail(VerifyFailure::IncompleteSignature, parsed.error().message);
    auth = *parsed;
    date_time = qp["X-Amz-Date"];
    if (qp.count("X-Amz-Expires")) {
      try {
        expires = std::stoi(qp["X-Amz-Expires"]);
      } catch (...) {
        return fail(VerifyFailure::IncompleteSignature, "X-Amz-Expires must be a whole number of seconds");
      }
    }
  } else {
    auto parsed = parse_authorization(*header);
    if (!parsed) return fail(VerifyFailure::IncompleteSignature, parsed.error().message);
    auth = *parsed;
    date_time = request.header("X-Amz-Date").value_or("");
    if (date_time.empty())
      return fail(VerifyFailure::IncompleteSignature,
                  "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
  }
  out.access_key_id = auth.access_key_id;

  std::optional<Credentials> creds = lookup(auth.access_key_id);
  if (!creds)
    return fail(VerifyFailure::UnknownAccessKey, "The access key id '" + auth.access_key_id + "' is not known");

  auto when = parse_amz_date(date_time);
  if (!when)
    return fail(VerifyFailure::IncompleteSignature,
                "X-Amz-Date must be in ISO 8601 basic format (20150830T123600Z), got '" + date_time + "'");
  if (auth.date != date_time.substr(0, 8))
    return fail(VerifyFailure::WrongScope,
                "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '" +
                    auth.date + "' != '" + date_time.substr(0, 8) + "', from '" + date_time + "'.");
  if (auth.region != params.region)
    return fail(VerifyFailure::WrongScope, "Credential should be scoped to a valid region, not '" + auth.region +
                                               "'. This endpoint serves '" + params.region + "'.");
  if (auth.service != params.service)
    return fail(VerifyFailure::WrongScope, "Credential should be scoped to correct service: '" + params.service +
                                               "', not '" + auth.service + "'.");
  if (auth.terminator != kTerminator)
    return fail(VerifyFailure::WrongScope,
                "Credential should be scoped with a valid terminator: 'aws4_request', not '" + auth.terminator + "'.");

  if (presigned) {
    if (!expires)
      return fail(VerifyFailure::IncompleteSignature, "AWS query-string parameters must include 'X-Amz-Expires'.");
    if (params.now > *when + std::chrono::seconds(*expires))
      return fail(VerifyFailure::Expired, "Request has expired. Signed at " + date_time + ", valid for " +
                                              std::to_string(*expires) + " s, now " + amz_date(params.now) + ".");
    if (*when > params.now + params.max_skew)
      return fail(VerifyFailure::Expired,
                  "Request is not yet valid: " + date_time + " is in the future (now " + amz_date(params.now) + ").");
  } else {
    auto skew = params.now > *when ? params.now - *when : *when - params.now;
    if (skew > params.max_skew)
      return fail(VerifyFailure::Expired,
                  "Request has expired. Timestamp date is " + date_time + ", the server's time is " +
                      amz_date(params.now) + " (more than " +
                      std::to_string(std::chrono::duration_cast<std::chrono::seconds>(params.max_skew).count()) +
                      " s apart); check the client's clock.");
  }

  auto is_signed = [&](std::string_view name) {
    return std::find(auth.signed_headers.begin(), auth.signed_headers.end(), name) != auth.signed_headers.end();
  };
  if (!is_signed("host"))
    return fail(VerifyFailure::IncompleteSignature, "'Host' must be a 'SignedHeader' in the AWS Authorization.");
  if (!presigned && !is_signed("x-amz-date"))
    return fail(VerifyFailure::IncompleteSignature, "'X-Amz-Date' must be a 'SignedHeader' in the AWS Authorization.");
  for (const auto& name : auth.signed_headers)
    if (!request.header(name))
      return fail(VerifyFailure::SignatureMismatch,
                  "The request signature we calculated does not match the signature "
                  "you provided: signed header '" +
                      name + "' is not in the request.");

  std::string token = presigned ? (qp.count("X-Amz-Security-Token") ? qp["X-Amz-Security-Token"] : "")
                                : request.header("X-Amz-Security-Token").value_or("");
  if (token != creds->session_token)
    return fail(VerifyFailure::InvalidToken,
                creds->session_token.empty()
                    ? "The security token included in the request is invalid (this key takes none)."
                : token.empty() ? "The request has no security token; this key needs one."
                                : "The security token included in the request is invalid.");

  std::string payload_hash = request.header("x-amz-content-sha256").value_or("");
  if (payload_hash.empty())
    payload_hash = sha256_hex(request.body);
  else if (payload_hash != "UNSIGNED-PAYLOAD" && payload_hash != sha256_hex(request.body))
    return fail(VerifyFailure::SignatureMismatch,
                "The provided 'x-amz-content-sha256' header does not match what was computed.");

  CanonicalHeaders headers = canonical_headers(request.headers, auth.signed_headers);
  std::vector<std::string> skip;
  if (presigned) skip.push_back("X-Amz-Signature");
  if (presigned && !params.query_token_signed) skip.push_back("X-Amz-Security-Token");
  std::string uri = canonical_uri(request.path, params.normalize_path);
  out.canonical_request =
      build_canonical_request(request.method, uri, canonical_query(request.query, skip), headers, payload_hash);
  out.string_to_sign =
      build_string_to_sign(date_time, scope_of(auth.date, auth.region, auth.service), out.canonical_request);
  std::string expected;
  try {
    expected = hex(
        hmac_sha256(signing_key(creds->secret_access_key, auth.date, auth.region, auth.service), out.string_to_sign));
  } catch (const std::exception& e) {
    return fail(VerifyFailure::SignatureMismatch, e.what());
  }
  if (expected.size() != auth.signature.size() ||
      CRYPTO_memcmp(expected.data(), auth.signature.data(), expected.size()) != 0)
    return fail(VerifyFailure::SignatureMismatch,
                "The request signature we calculated does not match the signature you provided. Check your AWS "
                "Secret Access Key and signing method. Consult the service documentation for details.");
  return out;
}

}  // namespace plinth::aws
