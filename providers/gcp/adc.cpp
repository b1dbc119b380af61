#include "providers/gcp/adc.h"

#include <filesystem>

#include "engine/core/duration.h"
#include "engine/core/files.h"
#include "engine/core/strings.h"
#include "engine/core/wire.h"
#include "providers/common/json_fields.h"

namespace plinth::gcp {

namespace {

/// A credentials file of any ADC type.
Result<CredentialSource> from_file(const ProviderConfig& c, const std::string& path, const std::string& how) {
  auto text = read_file(path);
  if (!text) return Error::invalid(how + " " + path + ": " + text.error().message);
  Json j = parse_json_or_discard(*text);
  if (!j.is_object()) return Error::invalid(how + " " + path + " is not a JSON object");
  const std::string type = cloud::str(j, "type");
  CredentialSource s;
  if (type == "authorized_user") {
    AuthorizedUser u{cloud::str(j, "client_id"), cloud::str(j, "client_secret"), cloud::str(j, "refresh_token")};
    if (!cloud::str(j, "token_uri").empty()) u.token_uri = cloud::str(j, "token_uri");
    if (u.client_id.empty() || u.client_secret.empty() || u.refresh_token.empty())
      return Error::invalid(how + " " + path + ": an authorized_user file needs client_id, client_secret and "
                                               "refresh_token; run gcloud auth application-default login again");
    s.kind = CredentialSource::Kind::AuthorizedUser;
    s.who = "the user credentials of " + path + " (client " + u.client_id + ")";
    s.user = u;
    return s;
  }
  if (type == "external_account") {
    ExternalAccount e;
    e.audience = cloud::str(j, "audience");
    e.subject_token_type = cloud::str(j, "subject_token_type");
    if (!cloud::str(j, "token_url").empty()) e.token_url = cloud::str(j, "token_url");
    e.impersonation_url = cloud::str(j, "service_account_impersonation_url");
    const Json src = j.value("credential_source", Json::object());
    if (!src.is_object()) return Error::invalid(how + " " + path + ": credential_source is not an object");
    e.file = cloud::str(src, "file");
    e.url = cloud::str(src, "url");
    if (src.contains("headers") && src["headers"].is_object())
      for (const auto& [k, v] : src["headers"].items())
        if (v.is_string()) e.headers.emplace_back(k, v.get<std::string>());
    const Json format = src.value("format", Json::object());
    if (format.is_object() && cloud::str(format, "type") == "json") {
      e.json_field = cloud::str(format, "subject_token_field_name");
      if (e.json_field.empty())
        return Error::invalid(how + " " + path + ": credential_source.format of type json needs "
                                                 "subject_token_field_name");
    }
    if (src.contains("environment_id") || src.contains("executable"))
      return Error::invalid(how + " " + path + ": its credential_source is AWS- or executable-sourced, which Plinth "
                                               "does not read; use a file- or URL-sourced configuration "
                                               "(gcloud iam workload-identity-pools create-cred-config --credential-source-file "
                                               "or --credential-source-url)");
    if (e.audience.empty() || e.subject_token_type.empty() || (e.file.empty() == e.url.empty()))
      return Error::invalid(how + " " + path + ": an external_account file needs audience, subject_token_type and "
                                               "credential_source with file or url");
    s.kind = CredentialSource::Kind::ExternalAccount;
    s.who = "workload identity federation " + e.audience + " (" + path + ")";
    s.external = e;
    return s;
  }
  auto key = parse_service_account_key(*text, path);
  if (!key) return key.error();
  s.kind = CredentialSource::Kind::ServiceAccountKey;
  s.token_uri = c.str("token_uri").empty() ? key->token_uri : c.str("token_uri");
  s.who = "service account " + key->client_email + " (key " + path + ")";
  s.key = std::move(*key);
  return s;
}

Result<std::string> subject_token(const ExternalAccount& e, net::Client& http, const Deadline& deadline) {
  std::string raw;
  if (!e.file.empty()) {
    // Read again for each token: the CI system or the kubelet rewrites it before it expires.
    auto text = read_file(e.file);
    if (!text) return Error::fatal("cannot read the subject token file " + e.file + ": " + text.error().message);
    raw = *text;
  } else {
    net::Request r;
    r.url = e.url;
    r.deadline = deadline;
    r.metadata_service = true;  // a runner's token service may be link-local, as the URL the operator gave says
    for (const auto& [k, v] : e.headers) r.headers[k] = v;
    auto resp = http.send(r);
    if (!resp) return Error{resp.error().kind, "subject token at " + e.url + ": " + resp.error().message, 0};
    if (resp->status != 200)
      return Error{resp->status >= 500 ? Error::Kind::Retryable : Error::Kind::Fatal,
                   "subject token at " + e.url + ": HTTP " + std::to_string(resp->status), 0};
    raw = resp->body;
  }
  if (!e.json_field.empty()) {
    Json j = parse_json_or_discard(raw);
    if (cloud::str(j, e.json_field.c_str()).empty())
      return Error::fatal("the subject token source " + (e.file.empty() ? e.url : e.file) + " has no string field '" +
                          e.json_field + "'");
    return cloud::str(j, e.json_field.c_str());
  }
  raw = trim(raw);
  if (raw.empty()) return Error::fatal("the subject token source " + (e.file.empty() ? e.url : e.file) + " is empty");
  return raw;
}

Result<AccessToken> post_form(net::Client& http, const std::string& url, const std::string& body,
                              const std::string& who, const Deadline& deadline, const std::atomic<bool>* cancel) {
  net::Request r;
  r.method = "POST";
  r.url = url;
  r.headers["Content-Type"] = "application/x-www-form-urlencoded";
  r.body = body;
  r.deadline = deadline;
  r.cancel = cancel;
  auto resp = http.send(r);
  if (!resp) return resp.error();
  return parse_token_response(resp->status, resp->body, url, who, std::chrono::system_clock::now());
}

}  // namespace

Result<CredentialSource> find_credentials(const ProviderConfig& c, const std::string& home) {
  if (const std::string token = c.str("access_token"); !token.empty()) {
    CredentialSource s;
    s.access_token = token;
    s.who = "the access token of " +
            (c.origins.count("access_token") ? c.origins.at("access_token") : std::string("option access_token"));
    return s;
  }
  if (const std::string path = c.str("credentials"); !path.empty())
    return from_file(c, path, "GOOGLE_APPLICATION_CREDENTIALS");
  const char* sdk = std::getenv("CLOUDSDK_CONFIG");
  const std::string well_known =
      (sdk && *sdk ? std::string(sdk) : home + "/.config/gcloud") + "/application_default_credentials.json";
  if (std::filesystem::exists(well_known)) return from_file(c, well_known, "gcloud's application default credentials");
  const std::string none =
      "no GCP credentials: set GOOGLE_APPLICATION_CREDENTIALS to a service-account key, an external_account "
      "(workload identity federation) or an authorized_user file, run gcloud auth application-default login (" +
      well_known + "), or set GOOGLE_OAUTH_ACCESS_TOKEN";
  if (!c.flag("metadata")) return Error::invalid(none + "; the metadata server is off (option metadata)");
  CredentialSource s;
  s.kind = CredentialSource::Kind::Metadata;
  s.metadata_host = c.str("metadata_host").empty() ? "metadata.google.internal" : c.str("metadata_host");
  s.who = "the metadata server at " + s.metadata_host;
  s.none_found = none;
  return s;
}

Result<AccessToken> fetch_token(const CredentialSource& s, net::Client& http, const Deadline& deadline,
                                const std::atomic<bool>* cancel) {
  using Kind = CredentialSource::Kind;
  const auto now = std::chrono::system_clock::now();
  switch (s.kind) {
    case Kind::Fixed:
      return Error::fatal("a fixed access token cannot be refreshed");
    case Kind::ServiceAccountKey: {
      auto assertion = make_assertion(*s.key, s.scopes, now);
      if (!assertion) return assertion.error();
      return post_form(http, s.token_uri, token_request_body(*assertion), s.who, deadline, cancel);
    }
    case Kind::AuthorizedUser:
      return post_form(http, s.user->token_uri,
                       net::form_encode({{"grant_type", "refresh_token"},
                             {"client_id", s.user->client_id},
                             {"client_secret", s.user->client_secret},
                             {"refresh_token", s.user->refresh_token}}),
                       s.who, deadline, cancel);
    case Kind::ExternalAccount: {
      const ExternalAccount& e = *s.external;
      auto subject = subject_token(e, http, deadline);
      if (!subject) return Error{subject.error().kind, s.who + ": " + subject.error().message, 0};
      std::string scope;
      for (const auto& sc : s.scopes) scope += (scope.empty() ? "" : " ") + sc;
      auto federated = post_form(http, e.token_url,
                                 net::form_encode({{"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
                                       {"audience", e.audience},
                                       {"scope", scope},
                                       {"requested_token_type", "urn:ietf:params:oauth:token-type:access_token"},
                                       {"subject_token", *subject},
                                       {"subject_token_type", e.subject_token_type}}),
                                 s.who, deadline, cancel);
      if (!federated || e.impersonation_url.empty()) return federated;
      // IAM Credentials generateAccessToken, with the federated token.
      net::Request r;
      r.method = "POST";
      r.url = e.impersonation_url;
      r.headers["Content-Type"] = "application/json";
      r.headers["Authorization"] = "Bearer " + federated->access_token;
      r.body = Json{{"scope", s.scopes}, {"lifetime", "3600s"}}.dump();
      r.deadline = deadline;
      r.cancel = cancel;
      auto resp = http.send(r);
      if (!resp) return resp.error();
      Json j = parse_json_or_discard(resp->body);
      if (resp->status != 200) {
        std::string message = cloud::str(cloud::field(j, "error"), "message");
      if (message.empty()) message = "HTTP " + std::to_string(resp->status);
        return Error{resp->status >= 500 ? Error::Kind::Retryable
                     : resp->status == 429 ? Error::Kind::Throttled
                                           : Error::Kind::Fatal,
                     "IAM Credentials generateAccessToken at " + e.impersonation_url + " refused " + s.who + ": HTTP " +
                         std::to_string(resp->status) + " " + message,
                     0};
      }
      AccessToken t;
      t.access_token = cloud::str(j, "accessToken");
      auto expiry = parse_utc_time(cloud::str(j, "expireTime"));
      if (t.access_token.empty() || !expiry)
        return Error::fatal("IAM Credentials generateAccessToken at " + e.impersonation_url +
                            ": the answer has no accessToken and expireTime");
      t.token_type = "Bearer";
      t.expiry = *expiry;
      t.expires_in = std::chrono::duration_cast<std::chrono::seconds>(*expiry - now);
      return t;
    }
    case Kind::Metadata: {
      net::Request r;
      r.url = "http://" + s.metadata_host + "/computeMetadata/v1/instance/service-accounts/default/token";
      r.headers["Metadata-Flavor"] = "Google";
      r.deadline = !deadline.unlimited() && deadline.remaining() < std::chrono::seconds(3)
                       ? deadline
                       : Deadline::after(std::chrono::seconds(3));
      r.cancel = cancel;
      r.metadata_service = true;
      auto resp = http.send(r);
      Result<AccessToken> t = resp ? parse_token_response(resp->status, resp->body, r.url, s.who, now)
                                   : Result<AccessToken>(resp.error());
      if (!t && !s.none_found.empty()) {
        Error e = t.error();
        e.message = s.none_found + "; " + s.who + " gave none either: " + e.message;
        return e;
      }
      return t;
    }
  }
  return Error::fatal("unknown credential kind");
}

}  // namespace plinth::gcp
