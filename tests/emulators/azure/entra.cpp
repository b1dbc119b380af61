#include "tests/emulators/azure/entra.h"

#include "tests/emulators/azure/arm_util.h"

#include <algorithm>
#include <chrono>
#include <set>

namespace plinth::azure_emulator {
namespace {

using SysClock = std::chrono::system_clock;

const char* kAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const std::set<std::string> kMicrosoftHosts = {"login.microsoftonline.com", "login.windows.net", "login.microsoft.com",
                                               "sts.windows.net"};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string form_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::map<std::string, std::string> parse_form(const std::string& body) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  while (i <= body.size()) {
    size_t amp = body.find('&', i);
    if (amp == std::string::npos) amp = body.size();
    std::string pair = body.substr(i, amp - i);
    if (!pair.empty()) {
      auto eq = pair.find('=');
      out[form_decode(pair.substr(0, eq))] = eq == std::string::npos ? "" : form_decode(pair.substr(eq + 1));
    }
    i = amp + 1;
  }
  return out;
}

std::string trim_slashes(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

/// "https://host:port/path" -> {host, port-or-empty, path}
bool split_url(const std::string& url, std::string& host, std::string& port, std::string& path) {
  auto scheme = url.find("://");
  if (scheme == std::string::npos) return false;
  size_t start = scheme + 3;
  size_t slash = url.find('/', start);
  std::string authority = url.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
  path = slash == std::string::npos ? "/" : url.substr(slash);
  auto colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']') == std::string::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  } else {
    host = authority;
    port.clear();
  }
  host = lower(host);
  return !host.empty();
}

long long epoch(SysClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace

Entra::Entra(const Options& options, std::shared_ptr<const KeyPair> signing_key,
             std::shared_ptr<const KeyPair> client_certificate)
    : tenant_(lower(options.tenant)),
      resources_(options.resources),
      lifetime_s_(options.token_lifetime_s),
      signing_(std::move(signing_key)),
      client_cert_(std::move(client_certificate)),
      rng_(options.seed * 7919u + 17u) {
  for (size_t i = 0; i < options.apps.size(); ++i) {
    const AppRegistration& a = options.apps[i];
    App app{a.client_id, a.secret, new_guid(rng_), "", a.reader, a.federated};
    if (i == 0 && a.certificate && client_cert_) app.thumbprint = client_cert_->thumbprint();
    apps_.push_back(app);
  }
}

bool Entra::owns(const std::string& path) {
  auto s = segments(path);
  if (s.empty()) return false;
  static const std::set<std::string> arm = {"subscriptions", "tenants", "providers", "metadata", "__emulator"};
  return arm.count(lower(s[0])) == 0;
}

const Entra::App* Entra::find_app(const std::string& client_id) const {
  for (const auto& a : apps_)
    if (a.client_id == lower(client_id)) return &a;
  return nullptr;
}

bool Entra::known_resource(const std::string& resource) const {
  for (const auto& r : resources_)
    if (iequals(trim_slashes(r), trim_slashes(resource))) return true;
  return false;
}

Response Entra::handle(const Request& r) {
  auto s = segments(r.path);
  Response out;
  if (s.size() == 3 && lower(s[0]) == "common" && lower(s[1]) == "discovery" && lower(s[2]) == "instance" &&
      r.method == "GET") {
    out = instance_discovery(r);
    out.operation = "Entra/common/discovery/instance";
  } else if (s.size() == 4 && lower(s[1]) == "v2.0" && lower(s[2]) == ".well-known" &&
             lower(s[3]) == "openid-configuration" && r.method == "GET") {
    out = openid_configuration(r, lower(s[0]));
    out.operation = "Entra/v2.0/.well-known/openid-configuration";
  } else if (s.size() == 4 && lower(s[1]) == "discovery" && lower(s[2]) == "v2.0" && lower(s[3]) == "keys" &&
             r.method == "GET") {
    out = keys();
    out.operation = "Entra/discovery/v2.0/keys";
  } else if (s.size() == 4 && lower(s[1]) == "oauth2" && lower(s[2]) == "v2.0" && lower(s[3]) == "token") {
    if (r.method != "POST") {
      out = error(r, 400, "invalid_request", 900561,
                  "The endpoint only accepts POST requests. Received a " + r.method + " request.");
    } else {
      out = token(r, lower(s[0]));
      if (out.status != 200) {
        std::lock_guard<std::mutex> lock(mu_);
        ++token_failures_;
      }
    }
    out.operation = "Entra/oauth2/v2.0/token";
  } else {
    out.status = 404;
    out.content_type = "text/html; charset=utf-8";
    out.body =
        "<html><body>The resource you are looking for has been removed, had its name changed, or is "
        "temporarily unavailable.</body></html>";
    out.operation = "Entra/unknown";
  }
  return out;
}

Response Entra::error(const Request& r, int status, const std::string& error, int code, const std::string& text) {
  std::string trace, correlation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    trace = new_guid(rng_);
    correlation = r.header("client-request-id");
    if (correlation.empty()) correlation = new_guid(rng_);
  }
  std::string ts = entra_time(SysClock::now());
  std::string aadsts = "AADSTS" + std::to_string(code);
  json body = {{"error", error},
               {"error_description", aadsts + ": " + text + "\r\nTrace ID: " + trace +
                                         "\r\nCorrelation ID: " + correlation + "\r\nTimestamp: " + ts},
               {"error_codes", json::array({code})},
               {"timestamp", ts},
               {"trace_id", trace},
               {"correlation_id", correlation},
               {"error_uri", r.base + "/error?code=" + std::to_string(code)}};
  Response out = json_response(status, body);
  out.set_header("Cache-Control", "no-store, no-cache");
  out.set_header("Pragma", "no-cache");
  out.set_header("x-ms-request-id", trace);
  out.set_header("client-request-id", correlation);
  return out;
}

Response Entra::openid_configuration(const Request& r, const std::string& tenant) {
  if (tenant != tenant_) {
    return error(r, 400, "invalid_tenant", 90002,
                 "Tenant '" + tenant +
                     "' not found. Check to make sure you have the correct tenant ID and are signing into the correct "
                     "cloud. Check with your subscription administrator, this may happen if there are no active "
                     "subscriptions for the tenant.");
  }
  std::string t = r.base + "/" + tenant;
  json config = {
      {"token_endpoint", t + "/oauth2/v2.0/token"},
      {"token_endpoint_auth_methods_supported", {"client_secret_post", "private_key_jwt", "client_secret_basic"}},
      {"jwks_uri", t + "/discovery/v2.0/keys"},
      {"response_modes_supported", {"query", "fragment", "form_post"}},
      {"subject_types_supported", {"pairwise"}},
      {"id_token_signing_alg_values_supported", {"RS256"}},
      {"response_types_supported", {"code", "id_token", "code id_token", "id_token token"}},
      {"scopes_supported", {"openid", "profile", "email", "offline_access"}},
      {"issuer", t + "/v2.0"},
      {"request_uri_parameter_supported", false},
      {"userinfo_endpoint", "https://graph.microsoft.com/oidc/userinfo"},
      {"authorization_endpoint", t + "/oauth2/v2.0/authorize"},
      {"device_authorization_endpoint", t + "/oauth2/v2.0/devicecode"},
      {"http_logout_supported", true},
      {"frontchannel_logout_supported", true},
      {"end_session_endpoint", t + "/oauth2/v2.0/logout"},
      {"claims_supported",
       {"sub", "iss", "cloud_instance_name", "cloud_instance_host_name", "cloud_graph_host_name", "msgraph_host", "aud",
        "exp", "iat", "auth_time", "acr", "nonce", "preferred_username", "name", "tid", "ver", "at_hash", "c_hash",
        "email"}},
      {"kerberos_endpoint", t + "/kerberos"},
      {"tenant_region_scope", "NA"},
      {"cloud_instance_name", "microsoftonline.com"},
      {"cloud_graph_host_name", "graph.windows.net"},
      {"msgraph_host", "graph.microsoft.com"},
      {"rbac_url", "https://pas.windows.net"}};
  Response out = json_response(200, config);
  out.set_header("Cache-Control", "max-age=86400, private");
  return out;
}

Response Entra::instance_discovery(const Request& r) {
  std::string endpoint = r.param("authorization_endpoint");
  std::string host, port, path;
  std::string req_host, req_port, req_path;
  split_url(r.base, req_host, req_port, req_path);
  bool ours = split_url(endpoint, host, port, path) &&
              (kMicrosoftHosts.count(host) || host == req_host || host == "127.0.0.1" || host == "localhost" ||
               host == "::1" || host == "[::1]");
  if (!ours) {
    return error(r, 400, "invalid_instance", 50049, "Unknown or invalid instance.");
  }
  auto s = segments(path);
  std::string tenant = s.empty() ? "common" : s[0];
  // MSAL drops the port from the authorization endpoint it asks about; the
  // emulator answers with the address it really listens on.
  std::string authority_host;
  if (kMicrosoftHosts.count(host)) {
    authority_host = host;
  } else {
    std::string self_host, self_port, self_path;
    split_url(self_base_.empty() ? r.base : self_base_, self_host, self_port, self_path);
    authority_host = host + (self_port.empty() ? "" : ":" + self_port);
  }
  json metadata = json::array();
  if (kMicrosoftHosts.count(host))
    metadata.push_back(
        {{"preferred_network", "login.microsoftonline.com"},
         {"preferred_cache", "login.windows.net"},
         {"aliases", {"login.microsoftonline.com", "login.windows.net", "login.microsoft.com", "sts.windows.net"}}});
  else
    metadata.push_back({{"preferred_network", host}, {"preferred_cache", host}, {"aliases", {host}}});
  json body = {{"tenant_discovery_endpoint",
                "https://" + authority_host + "/" + tenant + "/v2.0/.well-known/openid-configuration"},
               {"api-version", "1.1"},
               {"metadata", metadata}};
  return json_response(200, body);
}

Response Entra::keys() { return json_response(200, {{"keys", json::array({rsa_jwk(*signing_)})}}); }

std::string Entra::check_assertion(const Request& r, const App& app, const std::string& tenant,
                                   const std::string& assertion_type, const std::string& assertion, int& code,
                                   int& status) {
  status = 401;
  if (assertion_type != kAssertionType) {
    code = 50027;
    status = 400;
    return "JWT token is invalid or malformed. client_assertion_type must be '" + std::string(kAssertionType) + "'.";
  }
  auto jwt = jwt_decode(assertion);
  if (!jwt || jwt->header.value("alg", "") != "RS256") {
    code = 50027;
    status = 400;
    return "JWT token is invalid or malformed.";
  }
  std::string iss = jwt->claims.value("iss", "");
  std::string sub = jwt->claims.value("sub", "");
  if (lower(iss) != app.client_id || lower(sub) != app.client_id) {
    code = 700021;
    return "Client assertion application identifier doesn't match 'client_id' parameter. Review the documentation at "
           "https://docs.microsoft.com/en-us/azure/active-directory/develop/active-directory-certificate-credentials .";
  }
  auto x5t = base64url_decode(jwt->header.value("x5t", ""));
  std::string shown = x5t ? hex_upper(*x5t) : jwt->header.value("x5t", "");
  if (!x5t || app.thumbprint.empty() || *x5t != app.thumbprint) {
    code = 700027;
    return "The certificate with identifier used to sign the client assertion is not registered on application. "
           "[Reason - The key was not found., Thumbprint of key used by client: '" +
           shown +
           "', Please visit the Azure Portal, Graph Explorer or directly use MS Graph to see configured keys "
           "for app Id '" +
           app.client_id + "'.]";
  }
  if (!rs256_verify(client_cert_->key.get(), jwt->signing_input, jwt->signature)) {
    code = 700027;
    return "Client assertion failed signature validation. [Reason - The provided signature value did not match the "
           "expected signature value., Thumbprint of key used by client: '" +
           shown + "']";
  }
  std::string aud = jwt->claims.value("aud", "");
  std::string expected = r.base + "/" + tenant + "/oauth2/v2.0/token";
  if (!iequals(trim_slashes(aud), expected)) {
    code = 50027;
    status = 400;
    return "JWT token is invalid or malformed. The assertion audience '" + aud + "' is not the token endpoint '" +
           expected + "'.";
  }
  long long now = epoch(SysClock::now());
  long long nbf = jwt->claims.value("nbf", 0LL);
  long long exp = jwt->claims.value("exp", 0LL);
  if (exp == 0 || now > exp + 300 || (nbf != 0 && now + 300 < nbf)) {
    code = 700024;
    auto at = [](long long s) { return entra_time(SysClock::time_point(std::chrono::seconds(s))); };
    return "Client assertion is not within its valid time range. Current time: " + at(now) + ", assertion valid from " +
           at(nbf) + ", expiry time of assertion " + at(exp) +
           ". Review the documentation at "
           "https://docs.microsoft.com/en-us/azure/active-directory/develop/active-directory-certificate-credentials .";
  }
  return "";
}

Response Entra::token(const Request& r, const std::string& tenant) {
  if (tenant != tenant_)
    return error(r, 400, "invalid_request", 90002,
                 "Tenant '" + tenant +
                     "' not found. Check to make sure you have the correct tenant ID and are signing into the correct "
                     "cloud. Check with your subscription administrator, this may happen if there are no active "
                     "subscriptions for the tenant.");
  auto form = parse_form(r.body);
  auto field = [&](const std::string& k) {
    auto it = form.find(k);
    return it == form.end() ? std::string() : it->second;
  };
  auto missing = [&](const std::string& k) {
    return error(r, 400, "invalid_request", 900144,
                 "The request body must contain the following parameter: '" + k + "'.");
  };
  if (field("grant_type").empty()) return missing("grant_type");
  if (field("grant_type") != "client_credentials")
    return error(r, 400, "unsupported_grant_type", 70003,
                 "The app requested an unsupported grant type '" + field("grant_type") +
                     "'. The emulator implements only client_credentials.");
  if (field("client_id").empty()) return missing("client_id");
  const App* app = find_app(field("client_id"));
  if (!app)
    return error(r, 400, "unauthorized_client", 700016,
                 "Application with identifier '" + field("client_id") + "' was not found in the directory '" + tenant_ +
                     "'. This can happen if the application has not been installed by the administrator of the tenant "
                     "or consented to by any user in the tenant. You may have sent your authentication request to the "
                     "wrong tenant.");
  std::string secret = field("client_secret");
  std::string assertion = field("client_assertion");
  bool certificate = false;
  std::string proof = "secret";
  if (!secret.empty()) {
    if (app->secret.empty() || secret != app->secret)
      return error(r, 401, "invalid_client", 7000215,
                   "Invalid client secret provided. Ensure the secret being sent in the request is the client secret "
                   "value, not the client secret ID, for a secret added to app '" +
                       app->client_id + "'.");
  } else if (!assertion.empty()) {
    auto jwt = jwt_decode(assertion);
    const bool federated = jwt && !jwt->header.contains("x5t") &&
                           jwt->claims.value("aud", json()).dump().find("api://AzureADTokenExchange") != std::string::npos;
    int code = 0, status = 401;
    std::string err = federated && field("client_assertion_type") == kAssertionType
                          ? check_federated(*app, assertion, code)
                          : check_assertion(r, *app, tenant, field("client_assertion_type"), assertion, code, status);
    if (!err.empty()) return error(r, status, status == 401 ? "invalid_client" : "invalid_request", code, err);
    certificate = !federated;
    proof = federated ? "federated" : "certificate";
  } else {
    return error(r, 401, "invalid_client", 7000216,
                 "'client_assertion', 'client_secret' or 'request' is required for the 'client_credentials' grant "
                 "type.");
  }
  std::string scope = field("scope");
  if (scope.empty()) return missing("scope");
  const std::string suffix = "/.default";
  if (scope.find(' ') != std::string::npos || scope.size() <= suffix.size() ||
      scope.compare(scope.size() - suffix.size(), suffix.size(), suffix) != 0)
    return error(r, 400, "invalid_scope", 1002012,
                 "The provided value for scope " + scope +
                     " is not valid. Client credential flows must have a scope value with /.default suffixed to the "
                     "resource identifier (application ID URI).");
  std::string resource = scope.substr(0, scope.size() - suffix.size());
  if (!known_resource(resource))
    return error(r, 400, "invalid_resource", 500011,
                 "The resource principal named " + resource + " was not found in the tenant named " + tenant_ +
                     ". This can happen if the application has not been installed by the administrator of the tenant "
                     "or consented to by any user in the tenant. You might have sent your authentication request to "
                     "the wrong tenant.");
  if (resource.back() != '/' && resource.find("://") != std::string::npos &&
      resource.find('/', resource.find("://") + 3) == std::string::npos)
    resource += '/';
  std::string uti;
  std::string access_token = mint(*app, resource, lifetime_s_, certificate, &uti);
  json body = {{"token_type", "Bearer"},
               {"expires_in", lifetime_s_},
               {"ext_expires_in", lifetime_s_},
               {"access_token", access_token}};
  Response out = json_response(200, body);
  out.set_header("Cache-Control", "no-store, no-cache");
  out.set_header("Pragma", "no-cache");
  if (!r.header("client-request-id").empty()) out.set_header("client-request-id", r.header("client-request-id"));
  out.credential = proof;
  out.token_id = uti;
  return out;
}

std::string Entra::check_federated(const App& app, const std::string& assertion, int& code) {
  auto jwt = jwt_decode(assertion);
  const std::string iss = jwt->claims.value("iss", ""), sub = jwt->claims.value("sub", "");
  bool known = false;
  for (const auto& [issuer, subject] : app.federated) known = known || (issuer == iss && subject == sub);
  if (!known) {
    code = 70021;
    return "No matching federated identity record found for presented assertion. Assertion Issuer: '" + iss +
           "'. Assertion Subject: '" + sub + "'. Assertion Audience: 'api://AzureADTokenExchange'. "
           "https://docs.microsoft.com/en-us/azure/active-directory/develop/workload-identity-federation";
  }
  const long long now = epoch(SysClock::now()), exp = jwt->claims.value("exp", 0LL);
  if (exp == 0 || now > exp) {
    code = 700024;
    return "Client assertion is not within its valid time range. Current time: " +
           entra_time(SysClock::time_point(std::chrono::seconds(now))) + ", expiry time of assertion " +
           entra_time(SysClock::time_point(std::chrono::seconds(exp))) + ".";
  }
  return "";
}

Response Entra::managed_identity(const std::string& client_id, const std::string& resource, bool app_service) {
  const App* app = find_app(client_id.empty() ? apps_.front().client_id : client_id);
  if (!app)
    return json_response(400, {{"error", "invalid_request"},
                               {"error_description", "Identity not found"}});
  if (resource.empty() || !known_resource(resource))
    return json_response(400, {{"error", "invalid_resource"},
                               {"error_description", "AADSTS500011: The resource principal named " + resource +
                                                         " was not found in the tenant."}});
  std::string uti;
  const std::string token = mint(*app, resource, lifetime_s_, false, &uti);
  const long long expires_on = epoch(SysClock::now()) + lifetime_s_;
  // IMDS answers numbers as strings; App Service's 2019-08-01 API has expires_on as a number... also a string.
  json body = {{"access_token", token},
               {"expires_on", std::to_string(expires_on)},
               {"resource", resource},
               {"token_type", "Bearer"},
               {"client_id", app->client_id}};
  if (!app_service) {
    body["expires_in"] = std::to_string(lifetime_s_);
    body["ext_expires_in"] = std::to_string(lifetime_s_);
    body["not_before"] = std::to_string(epoch(SysClock::now()) - 300);
  }
  Response out = json_response(200, body);
  out.credential = "managed-identity";
  out.token_id = uti;
  return out;
}

std::string Entra::mint(const App& app, const std::string& resource, int lifetime_s, bool certificate,
                        std::string* uti_out) {
  auto now = SysClock::now();
  std::string uti, aio;
  {
    std::lock_guard<std::mutex> lock(mu_);
    uti = base64url_encode(new_guid(rng_).substr(0, 16));
    aio = base64url_encode(new_guid(rng_));
    ++tokens_issued_;
  }
  if (uti_out) *uti_out = uti;
  std::string kid = base64url_encode(signing_->thumbprint());
  std::string iss = "https://sts.windows.net/" + tenant_ + "/";
  json header = {{"typ", "JWT"}, {"alg", "RS256"}, {"x5t", kid}, {"kid", kid}};
  json claims = {{"aud", resource},
                 {"iss", iss},
                 {"iat", epoch(now) - 300},
                 {"nbf", epoch(now) - 300},
                 {"exp", epoch(now) + lifetime_s},
                 {"aio", aio},
                 {"appid", app.client_id},
                 {"appidacr", certificate ? "2" : "1"},
                 {"idp", iss},
                 {"idtyp", "app"},
                 {"oid", app.object_id},
                 {"sub", app.object_id},
                 {"tid", tenant_},
                 {"uti", uti},
                 {"ver", "1.0"}};
  return jwt_sign(signing_->key.get(), header, claims);
}

std::optional<std::string> Entra::issue(const std::string& client_id, const std::string& resource, int lifetime_s) {
  const App* app = find_app(client_id);
  if (!app) return std::nullopt;
  return mint(*app, resource, lifetime_s, false);
}

TokenCheck Entra::check(const std::string& authorization) const {
  TokenCheck c;
  auto invalid = [&](const std::string& code, const std::string& message, const std::string& description) {
    c.ok = false;
    c.code = code;
    c.message = message;
    c.description = description;
    return c;
  };
  if (authorization.empty())
    return invalid("AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.",
                   "The authentication failed because of missing 'Authorization' header.");
  auto space = authorization.find(' ');
  if (space == std::string::npos || !iequals(authorization.substr(0, space), "Bearer"))
    return invalid("AuthenticationFailed",
                   "Authentication failed. The 'Authorization' header is provided in an invalid format.",
                   "The authentication failed because of invalid 'Authorization' header format.");
  std::string token = authorization.substr(space + 1);
  while (!token.empty() && token.front() == ' ') token.erase(0, 1);
  auto jwt = jwt_decode(token);
  if (!jwt || jwt->header.value("alg", "") != "RS256" ||
      !rs256_verify(signing_->key.get(), jwt->signing_input, jwt->signature))
    return invalid("InvalidAuthenticationToken", "The access token is invalid.", "The access token is invalid.");
  long long exp = jwt->claims.value("exp", 0LL);
  auto now = SysClock::now();
  if (exp <= epoch(now)) {
    std::string text = "The access token expiry UTC time '" + us_time(SysClock::time_point(std::chrono::seconds(exp))) +
                       "' is earlier than current UTC time '" + us_time(now) + "'.";
    return invalid("ExpiredAuthenticationToken", text, text);
  }
  std::string aud = jwt->claims.value("aud", "");
  if (!known_resource(aud)) {
    std::string allowed;
    for (const auto& r : resources_) {
      std::string t = trim_slashes(r);
      allowed += (allowed.empty() ? "'" : ",'") + t + "/','" + t + "'";
    }
    std::string text = "The access token has been obtained for wrong audience or resource '" + aud +
                       "'. It should exactly match with one of the allowed audiences " + allowed + ".";
    return invalid("InvalidAuthenticationTokenAudience", text, text);
  }
  c.ok = true;
  c.tenant = jwt->claims.value("tid", "");
  c.app_id = jwt->claims.value("appid", "");
  c.object_id = jwt->claims.value("oid", "");
  c.token_id = jwt->claims.value("uti", "");
  const App* app = find_app(c.app_id);
  c.reader = app && app->reader;
  return c;
}

json Entra::describe() const {
  json apps = json::array();
  for (const auto& a : apps_)
    apps.push_back({{"clientId", a.client_id},
                    {"objectId", a.object_id},
                    {"secret", !a.secret.empty()},
                    {"certificateThumbprint", a.thumbprint.empty() ? json(nullptr) : json(hex_upper(a.thumbprint))},
                    {"role", a.reader ? "Reader" : "Contributor"}});
  std::lock_guard<std::mutex> lock(mu_);
  return {{"tenant", tenant_}, {"apps", apps}, {"tokensIssued", tokens_issued_}, {"tokenFailures", token_failures_}};
}

}  // namespace plinth::azure_emulator
