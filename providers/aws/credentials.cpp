#include "providers/aws/credentials.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <pugixml.hpp>
#include <set>
#include <sstream>

#include "engine/core/duration.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/core/helper_process.h"
#include "engine/core/strings.h"
#include "engine/core/wire.h"
#include "providers/common/json_fields.h"

namespace plinth::aws {

namespace {

using SysClock = std::chrono::system_clock;
using Section = std::map<std::string, std::string>;

/// The key = value pairs of section `section` of an INI file (AWS's shared
/// files); empty when the file or the section is missing.
Section ini_section(const std::string& path, const std::string& section) {
  Section out;
  std::ifstream in(path);
  if (!in) return out;
  std::string line, current;
  bool inside = false;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      current = trim(line.substr(1, line.size() - 2));
      inside = current == section;
      continue;
    }
    if (!inside) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    out[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
  }
  return out;
}

std::string or_default(const std::string& v, const std::string& fallback) { return v.empty() ? fallback : v; }

/// Endpoint option `name` without trailing slashes, else `fallback`.
std::string endpoint_or(const ProviderConfig& c, const char* name, const std::string& fallback) {
  std::string e = c.str(name);
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e.empty() ? fallback : e;
}

std::string credentials_path(const ProviderConfig& c, const std::string& home) {
  return or_default(c.str("shared_credentials_file"), home + "/.aws/credentials");
}
std::string config_path(const ProviderConfig& c, const std::string& home) {
  return or_default(c.str("config_file"), home + "/.aws/config");
}
std::string profile_of(const ProviderConfig& c) { return or_default(c.str("profile"), "default"); }
std::string config_section(const std::string& profile) {
  return profile == "default" ? profile : "profile " + profile;
}

/// A profile of the shared files: the config file's section, and the
/// credentials file's, which holds keys only.
struct Profile {
  std::string name;
  Section config, credentials;
  std::string config_file, credentials_file;
  std::string get(const std::string& key) const {
    if (auto it = credentials.find(key); it != credentials.end()) return it->second;
    if (auto it = config.find(key); it != config.end()) return it->second;
    return "";
  }
  std::string where() const { return "profile '" + name + "' (" + config_file + ", " + credentials_file + ")"; }
};

Profile load_profile(const ProviderConfig& c, const std::string& home, const std::string& name) {
  Profile p;
  p.name = name;
  p.config_file = config_path(c, home);
  p.credentials_file = credentials_path(c, home);
  p.config = ini_section(p.config_file, config_section(name));
  p.credentials = ini_section(p.credentials_file, name);
  return p;
}

Deadline shorter(const Deadline& d, std::chrono::milliseconds most) {
  if (!d.unlimited() && d.remaining() <= most) return d;
  return Deadline::after(most);
}

/// Error kind of an STS error code and status.
Error::Kind sts_kind(const std::string& code, long status) {
  if (code == "Throttling" || code == "ThrottlingException" || status == 429) return Error::Kind::Throttled;
  if (code == "IDPCommunicationError" || status >= 500) return Error::Kind::Retryable;
  return Error::Kind::Fatal;  // InvalidIdentityToken, ExpiredTokenException, AccessDenied, ...
}

/// One STS action: an unsigned one (AssumeRoleWithWebIdentity) or one signed
/// with `signer` (AssumeRole). The answer's Credentials.
Result<Issued> sts_call(net::Client& http, const std::string& endpoint, const std::string& region,
                        const std::string& action, const std::string& body, const Credentials* signer,
                        const Deadline& deadline) {
  std::string url = endpoint;
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += "/";
  const std::string where = "STS " + action + " at " + url;
  net::Request r;
  r.method = "POST";
  r.url = url;
  r.body = body;
  r.deadline = deadline;
  r.headers["Content-Type"] = "application/x-www-form-urlencoded; charset=utf-8";
  if (signer) {
    std::string rest = url.substr(url.find("://") + 3);
    const std::string host = rest.substr(0, rest.find('/'));
    HttpRequest hr;
    hr.method = "POST";
    hr.path = rest.substr(host.size());
    hr.headers = {{"Host", host}, {"Content-Type", r.headers["Content-Type"]}};
    hr.body = body;
    SigningParams sp;
    sp.region = region.empty() ? "us-east-1" : region;
    sp.service = "sts";
    auto s = sign(hr, *signer, sp);
    if (!s) return Error::fatal(where + ": " + s.error().message);
    for (const auto& [k, v] : s->request.headers)
      if (k != "Host") r.headers[k] = v;
  }
  auto resp = http.send(r);
  if (!resp) {
    Error e = resp.error();
    e.message = where + ": " + e.message;
    return e;
  }
  pugi::xml_document doc;
  const bool parsed = doc.load_buffer(resp->body.data(), resp->body.size());
  if (resp->status < 200 || resp->status >= 300) {
    std::string code, message;
    if (parsed) {
      code = doc.select_node("//Error/Code").node().child_value();
      message = doc.select_node("//Error/Message").node().child_value();
    }
    if (code.empty()) code = "HTTP" + std::to_string(resp->status);
    Error e{sts_kind(code, resp->status), where + ": " + code + (message.empty() ? "" : ": " + message), 0};
    if (e.kind == Error::Kind::Throttled) e.retry_after_ms = net::parse_retry_after_ms(resp->header("Retry-After"));
    return e;
  }
  pugi::xml_node creds = parsed ? doc.select_node("//Credentials").node() : pugi::xml_node();
  Issued out;
  out.credentials = {creds.child_value("AccessKeyId"), creds.child_value("SecretAccessKey"),
                     creds.child_value("SessionToken")};
  out.expiration = parse_utc_time(creds.child_value("Expiration"));
  if (out.credentials.access_key_id.empty() || out.credentials.secret_access_key.empty() ||
      out.credentials.session_token.empty() || !out.expiration)
    return Error::fatal(where + ": the answer holds no Credentials with AccessKeyId, SecretAccessKey, SessionToken "
                                "and an ISO 8601 Expiration");
  return out;
}

/// Credentials in the JSON shape of credential_process, the container
/// endpoint and IMDS (token under `token_key`).
Result<Issued> issued_from_json(const std::string& text, const std::string& token_key, const std::string& where) {
  Json j = parse_json_or_discard(text);
  if (!j.is_object()) return Error::fatal(where + ": the answer is not a JSON object");
  Issued out;
  out.credentials = {cloud::str(j, "AccessKeyId"), cloud::str(j, "SecretAccessKey"), cloud::str(j, token_key.c_str())};
  if (out.credentials.access_key_id.empty() || out.credentials.secret_access_key.empty())
    return Error::fatal(where + ": the answer has no AccessKeyId or no SecretAccessKey");
  if (!cloud::str(j, "Expiration").empty()) {
    out.expiration = parse_utc_time(cloud::str(j, "Expiration"));
    if (!out.expiration)
      return Error::fatal(where + ": Expiration '" + cloud::str(j, "Expiration") + "' is not an ISO 8601 time such as "
                                  "2026-12-06T10:00:00Z");
  }
  return out;
}

std::string session_name(const ProviderConfig& c, const std::string& from_profile) {
  if (!from_profile.empty()) return from_profile;
  const std::string set = c.str("role_session_name");
  if (!set.empty()) return set;
  return "plinth-" + std::to_string(SysClock::to_time_t(SysClock::now()));
}

/// A fetch that exchanges the web identity token in `token_file` for `role_arn`.
CredentialSource::Fetch web_identity(const ProviderConfig& c, const ChainContext& ctx, std::string token_file,
                                     std::string role_arn, std::string session) {
  const std::string endpoint = sts_endpoint(c, ctx.region);
  net::Client* http = ctx.http;
  std::string region = ctx.region;
  return [=](const Deadline& d) -> Result<Issued> {
    // Read again at each fetch: the CI system or the kubelet rotates the token in place.
    auto token = read_file(token_file);
    if (!token) return Error::fatal("cannot read the web identity token file " + token_file + ": " + token.error().message);
    const std::string body = net::form_encode({{"Action", "AssumeRoleWithWebIdentity"},
                                   {"Version", "2011-06-15"},
                                   {"RoleArn", role_arn},
                                   {"RoleSessionName", session},
                                   {"WebIdentityToken", trim(*token)}});
    return sts_call(*http, endpoint, region, "AssumeRoleWithWebIdentity", body, nullptr, d);
  };
}

/// A fetch that assumes `role_arn` with the credentials of `source`.
CredentialSource::Fetch assume_role(const ProviderConfig& c, const ChainContext& ctx,
                                    std::shared_ptr<CredentialSource> source, const Profile& p) {
  const std::string endpoint = sts_endpoint(c, ctx.region);
  net::Client* http = ctx.http;
  std::string region = ctx.region;
  std::vector<std::pair<std::string, std::string>> fields = {{"Action", "AssumeRole"},
                                                             {"Version", "2011-06-15"},
                                                             {"RoleArn", p.get("role_arn")},
                                                             {"RoleSessionName", session_name(c, p.get("role_session_name"))}};
  if (!p.get("external_id").empty()) fields.emplace_back("ExternalId", p.get("external_id"));
  if (!p.get("duration_seconds").empty()) fields.emplace_back("DurationSeconds", p.get("duration_seconds"));
  const std::string body = net::form_encode(fields);
  return [=](const Deadline& d) -> Result<Issued> {
    auto base = source->get(d);
    if (!base) return base.error();
    return sts_call(*http, endpoint, region, "AssumeRole", body, &*base, d);
  };
}

CredentialSource::Fetch process(const std::string& command, const std::string& where) {
  return [=](const Deadline& d) -> Result<Issued> {
    auto argv = split_command(command);
    if (!argv) return Error::invalid(where + ": credential_process: " + argv.error().message);
    if (argv->empty()) return Error::invalid(where + ": credential_process is empty");
    auto out = run_helper(*argv, {}, shorter(d, std::chrono::minutes(1)), "credential_process of " + where);
    if (!out) return out.error();
    Json j = parse_json_or_discard(*out);
    if (!j.is_object() || j.value("Version", 0) != 1)
      return Error::fatal("credential_process of " + where + ": '" + (*argv)[0] +
                          "' did not print a JSON object with \"Version\": 1 (the AWS credential_process format)");
    return issued_from_json(*out, "SessionToken", "credential_process of " + where);
  };
}

/// Container credentials (ECS, EKS Pod Identity): GET the URI with the
/// authorization token.
CredentialSource::Fetch container(const std::string& url, const std::string& token, const std::string& token_file,
                                  net::Client* http) {
  return [=](const Deadline& d) -> Result<Issued> {
    net::Request r;
    r.url = url;
    r.deadline = shorter(d, std::chrono::seconds(5));
    r.metadata_service = true;
    std::string auth = token;
    if (!token_file.empty()) {
      auto t = read_file(token_file);
      if (!t) return Error::fatal("cannot read the container authorization token file " + token_file + ": " +
                                  t.error().message);
      auth = trim(*t);
    }
    if (!auth.empty()) r.headers["Authorization"] = auth;
    auto resp = http->send(r);
    if (!resp) return Error{resp.error().kind, "container credentials at " + url + ": " + resp.error().message, 0};
    if (resp->status != 200)
      return Error{resp->status >= 500 ? Error::Kind::Retryable : Error::Kind::Fatal,
                   "container credentials at " + url + ": HTTP " + std::to_string(resp->status), 0};
    return issued_from_json(resp->body, "Token", "container credentials at " + url);
  };
}

/// IMDSv2: a session token (PUT), the role name, the role's credentials.
CredentialSource::Fetch metadata(const std::string& base, net::Client* http) {
  return [=](const Deadline& d) -> Result<Issued> {
    const Deadline short_d = shorter(d, std::chrono::seconds(2));
    auto ask = [&](const std::string& method, const std::string& path,
                   const net::Headers& headers) -> Result<std::string> {
      net::Request r;
      r.method = method;
      r.url = base + path;
      r.headers = headers;
      r.deadline = short_d;
      r.metadata_service = true;
      auto resp = http->send(r);
      if (!resp) return resp.error();
      if (resp->status != 200)
        return Error{resp->status >= 500 || resp->status == 429 ? Error::Kind::Retryable : Error::Kind::Fatal,
                     method + " " + r.url + ": HTTP " + std::to_string(resp->status), 0};
      return resp->body;
    };
    auto token = ask("PUT", "/latest/api/token", {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}});
    if (!token) return token.error();
    const net::Headers with = {{"X-aws-ec2-metadata-token", *token}};
    auto roles = ask("GET", "/latest/meta-data/iam/security-credentials/", with);
    if (!roles) return roles.error();
    const std::string role = trim(roles->substr(0, roles->find('\n')));
    if (role.empty())
      return Error::fatal("the instance metadata service at " + base + " lists no IAM role: attach an instance profile");
    auto creds = ask("GET", "/latest/meta-data/iam/security-credentials/" + role, with);
    if (!creds) return creds.error();
    Json j = parse_json_or_discard(*creds);
    if (j.is_object() && j.contains("Code") && j["Code"] != "Success")
      return Error::fatal("the instance metadata service at " + base + " answers Code " + j["Code"].dump() +
                          " for role '" + role + "'");
    return issued_from_json(*creds, "Token", "the instance metadata service at " + base);
  };
}

/// What an IAM Identity Center profile names: its session (or legacy start
/// URL), the portal's region, the account and the permission set's role.
struct SsoProfile {
  std::string session;    ///< sso_session; "" for a legacy profile
  std::string start_url;  ///< sso_start_url
  std::string region;     ///< sso_region
  std::string account_id, role_name;
  std::string login;  ///< the command that signs in again, for messages
};

/// IAM Identity Center: the access token `aws sso login` cached in
/// ~/.aws/sso/cache/SHA1(session or start URL).json, exchanged at the portal
/// for the role's credentials (GetRoleCredentials). Read again at each fetch:
/// a new login rewrites it.
CredentialSource::Fetch sso(const SsoProfile& p, const std::string& cache_file, const std::string& endpoint,
                            net::Client* http) {
  return [=](const Deadline& d) -> Result<Issued> {
    const std::string where = "the SSO token cache " + cache_file;
    auto text = read_file(cache_file);
    if (!text) return Error::invalid("no cached IAM Identity Center token (" + where + " cannot be read): run " + p.login);
    Json j = parse_json_or_discard(*text);
    const std::string token = j.is_object() ? cloud::str(j, "accessToken") : "";
    std::string expires = j.is_object() ? cloud::str(j, "expiresAt") : "";
    // Older AWS CLI v2 releases wrote "2026-12-06T10:00:00UTC".
    if (expires.ends_with("UTC")) expires.replace(expires.size() - 3, 3, "Z");
    const auto expiry = parse_utc_time(expires);
    if (token.empty() || !expiry)
      return Error::invalid(where + " holds no accessToken with an ISO 8601 expiresAt: run " + p.login);
    if (*expiry <= SysClock::now())
      return Error::invalid("the IAM Identity Center token in " + where + " expired at " + expires + ": run " + p.login);
    net::Request r;
    r.url = endpoint + "/federation/credentials?account_id=" + net::percent_encode(p.account_id) +
            "&role_name=" + net::percent_encode(p.role_name);
    r.headers["x-amz-sso_bearer_token"] = token;
    r.deadline = d;
    const std::string call = "IAM Identity Center GetRoleCredentials at " + endpoint + " (account " + p.account_id +
                             ", role " + p.role_name + ")";
    auto resp = http->send(r);
    if (!resp) return Error{resp.error().kind, call + ": " + resp.error().message, 0};
    Json body = parse_json_or_discard(resp->body);
    if (resp->status != 200) {
      // restJson errors: the type in x-amzn-ErrorType or the body's __type (after '#'), then message.
      std::string type = resp->header("x-amzn-ErrorType");
      if (type.empty() && body.is_object()) type = cloud::str(body, "__type");
      if (auto hash = type.find('#'); hash != std::string::npos) type = type.substr(hash + 1);
      if (auto colon = type.find(':'); colon != std::string::npos) type.resize(colon);
      if (type.empty()) type = "HTTP " + std::to_string(resp->status);
      const std::string message = body.is_object() ? cloud::str(body, "message") : "";
      Error e{resp->status == 429 ? Error::Kind::Throttled
              : resp->status >= 500 ? Error::Kind::Retryable
                                    : Error::Kind::Fatal,
              call + ": " + type + (message.empty() ? "" : ": " + message), 0};
      if (resp->status == 401) e.message += "; sign in again: " + p.login;
      if (e.kind == Error::Kind::Throttled) e.retry_after_ms = net::parse_retry_after_ms(resp->header("Retry-After"));
      return e;
    }
    const Json rc = body.is_object() && body.contains("roleCredentials") ? body["roleCredentials"] : Json();
    Issued out;
    if (rc.is_object())
      out.credentials = {cloud::str(rc, "accessKeyId"), cloud::str(rc, "secretAccessKey"), cloud::str(rc, "sessionToken")};
    if (out.credentials.access_key_id.empty() || out.credentials.secret_access_key.empty() ||
        out.credentials.session_token.empty() || !rc.contains("expiration") || !rc["expiration"].is_number_integer())
      return Error::fatal(call + ": the answer holds no roleCredentials with accessKeyId, secretAccessKey, "
                                 "sessionToken and expiration (milliseconds since 1970)");
    out.expiration = SysClock::time_point(std::chrono::milliseconds(rc["expiration"].get<int64_t>()));
    return out;
  };
}

std::shared_ptr<CredentialSource> fixed(const std::string& origin, Credentials c) {
  return std::make_shared<CredentialSource>(origin, [c](const Deadline&) -> Result<Issued> { return Issued{c, {}}; });
}

struct Chain {
  const ProviderConfig& c;
  const ChainContext& ctx;

  /// The environment's keys, or null.
  Result<std::shared_ptr<CredentialSource>> environment() const {
    const std::string key = c.str("access_key_id"), secret = c.str("secret_access_key");
    if (key.empty() && secret.empty()) return std::shared_ptr<CredentialSource>();
    if (key.empty() || secret.empty())
      return Error::invalid(std::string("AWS credentials are incomplete: ") +
                            (key.empty() ? "a secret access key is set but no access key id"
                                         : "an access key id is set but no secret access key") +
                            "; set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the aws options "
                            "access_key_id and secret_access_key)");
    const std::string origin = c.origins.count("access_key_id") ? c.origins.at("access_key_id") : "options";
    return fixed(origin, {key, secret, c.str("session_token")});
  }

  Result<std::shared_ptr<CredentialSource>> container_source() const {
    const std::string full = c.str("container_credentials_full_uri"),
                      relative = c.str("container_credentials_relative_uri");
    if (full.empty() && relative.empty()) return std::shared_ptr<CredentialSource>();
    const std::string url = !relative.empty() ? "http://169.254.170.2" + relative : full;
    return std::make_shared<CredentialSource>(
        "container credentials at " + url,
        container(url, c.str("container_authorization_token"), c.str("container_authorization_token_file"), ctx.http));
  }

  /// The metadata service; `last_resort`, when set, is what its errors start with (nothing else was found).
  std::shared_ptr<CredentialSource> metadata_source(const std::string& last_resort = "") const {
    const std::string base = endpoint_or(c, "metadata_endpoint", "http://169.254.169.254");
    const std::string origin = "the instance metadata service (IMDSv2) at " + base;
    auto fetch = metadata(base, ctx.http);
    if (!last_resort.empty())
      fetch = [fetch, origin, last_resort](const Deadline& d) -> Result<Issued> {
        auto got = fetch(d);
        if (!got) {
          Error e = got.error();
          e.message = last_resort + "; " + origin + " gave none either: " + e.message;
          return e;
        }
        return got;
      };
    return std::make_shared<CredentialSource>(origin, fetch);
  }

  /// The source a profile names on its own (no role): IAM Identity Center, keys, a process.
  Result<std::shared_ptr<CredentialSource>> profile_source(const Profile& p, std::set<std::string>& seen) const {
    if (!p.get("role_arn").empty()) return role(p, seen);
    if (!p.get("sso_session").empty() || !p.get("sso_start_url").empty() || !p.get("sso_account_id").empty())
      return sso_source(p);
    if (auto key = p.credentials.find("aws_access_key_id"); key != p.credentials.end() &&
                                                            p.credentials.count("aws_secret_access_key"))
      return fixed(p.credentials_file + " [" + p.name + "]",
                   {key->second, p.credentials.at("aws_secret_access_key"), p.get("aws_session_token")});
    if (const std::string cmd = p.get("credential_process"); !cmd.empty())
      return std::make_shared<CredentialSource>("credential_process of " + p.where(), process(cmd, p.where()));
    if (p.config.count("aws_access_key_id") && p.config.count("aws_secret_access_key"))
      return fixed(p.config_file + " [" + config_section(p.name) + "]",
                   {p.config.at("aws_access_key_id"), p.config.at("aws_secret_access_key"),
                    p.config.count("aws_session_token") ? p.config.at("aws_session_token") : ""});
    return std::shared_ptr<CredentialSource>();
  }

  /// An IAM Identity Center profile: sso_session (its [sso-session NAME]
  /// section holds sso_start_url and sso_region) or the legacy keys in the
  /// profile, with sso_account_id and sso_role_name.
  Result<std::shared_ptr<CredentialSource>> sso_source(const Profile& p) const {
    SsoProfile s;
    s.session = p.get("sso_session");
    s.account_id = p.get("sso_account_id");
    s.role_name = p.get("sso_role_name");
    if (!s.session.empty()) {
      Section sec = ini_section(p.config_file, "sso-session " + s.session);
      if (sec.empty())
        return Error::invalid(p.where() + " names sso_session '" + s.session + "', but " + p.config_file +
                              " has no [sso-session " + s.session + "] section; run aws configure sso-session");
      s.start_url = sec["sso_start_url"];
      s.region = sec["sso_region"];
      // As botocore: a profile that repeats them must agree with its session.
      for (const char* key : {"sso_start_url", "sso_region"})
        if (!p.get(key).empty() && p.get(key) != sec[key])
          return Error::invalid(p.where() + ": " + key + " '" + p.get(key) + "' differs from [sso-session " +
                                s.session + "]'s '" + sec[key] + "'; keep it in the session only");
      s.login = "aws sso login --sso-session " + s.session;
    } else {
      s.start_url = p.get("sso_start_url");
      s.region = p.get("sso_region");
      s.login = "aws sso login --profile " + p.name;
    }
    std::vector<std::string> missing;
    if (s.start_url.empty()) missing.push_back("sso_start_url");
    if (s.region.empty()) missing.push_back("sso_region");
    if (s.account_id.empty()) missing.push_back("sso_account_id");
    if (s.role_name.empty()) missing.push_back("sso_role_name");
    if (!missing.empty())
      return Error::invalid(p.where() + " signs in with IAM Identity Center but lacks " + join(missing, ", ") +
                            " (aws configure sso writes them)");
    const std::string cache = ctx.home + "/.aws/sso/cache/" + sha1_hex(s.session.empty() ? s.start_url : s.session) + ".json";
    const std::string endpoint = endpoint_or(c, "sso_endpoint", "https://portal.sso." + s.region + ".amazonaws.com");
    return std::make_shared<CredentialSource>(
        "IAM Identity Center (" + p.where() + ": account " + s.account_id + ", role " + s.role_name + ")",
        sso(s, cache, endpoint, ctx.http));
  }

  /// role_arn with web_identity_token_file, source_profile or credential_source.
  Result<std::shared_ptr<CredentialSource>> role(const Profile& p, std::set<std::string>& seen) const {
    const std::string arn = p.get("role_arn");
    if (const std::string file = p.get("web_identity_token_file"); !file.empty())
      return std::make_shared<CredentialSource>(
          "web identity (" + p.where() + ": role " + arn + ", token file " + file + ")",
          web_identity(c, ctx, file, arn, session_name(c, p.get("role_session_name"))));
    std::shared_ptr<CredentialSource> base;
    const std::string source_profile = p.get("source_profile"), credential_source = p.get("credential_source");
    if (!source_profile.empty() && !credential_source.empty())
      return Error::invalid(p.where() + " sets both source_profile and credential_source; keep one");
    if (!source_profile.empty() && source_profile == p.name) {
      // A profile that is its own source: its keys sign the AssumeRole.
      if (!p.credentials.count("aws_access_key_id") || !p.credentials.count("aws_secret_access_key"))
        return Error::invalid(p.where() + " is its own source_profile but holds no keys");
      base = fixed(p.credentials_file + " [" + p.name + "]",
                   {p.credentials.at("aws_access_key_id"), p.credentials.at("aws_secret_access_key"), ""});
    } else if (!source_profile.empty()) {
      if (!seen.insert(source_profile).second)
        return Error::invalid(p.where() + ": source_profile '" + source_profile +
                              "' leads back to a profile already on the way (a loop of source_profile)");
      auto s = profile_source(load_profile(c, ctx.home, source_profile), seen);
      if (!s) return s.error();
      if (!*s) return Error::invalid(p.where() + ": source_profile '" + source_profile + "' holds no credentials");
      base = *s;
    } else if (credential_source == "Environment") {
      auto e = environment();
      if (!e) return e.error();
      if (!*e)
        return Error::invalid(p.where() + ": credential_source Environment, but AWS_ACCESS_KEY_ID and "
                              "AWS_SECRET_ACCESS_KEY are not set");
      base = *e;
    } else if (credential_source == "EcsContainer") {
      auto s = container_source();
      if (!s) return s.error();
      if (!*s)
        return Error::invalid(p.where() + ": credential_source EcsContainer, but neither "
                              "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI nor AWS_CONTAINER_CREDENTIALS_FULL_URI is set");
      base = *s;
    } else if (credential_source == "Ec2InstanceMetadata") {
      base = metadata_source();
    } else if (!credential_source.empty()) {
      return Error::invalid(p.where() + ": credential_source '" + credential_source +
                            "' is not Environment, Ec2InstanceMetadata or EcsContainer");
    } else {
      return Error::invalid(p.where() + " sets role_arn without source_profile, credential_source or "
                            "web_identity_token_file; add one of them");
    }
    return std::make_shared<CredentialSource>("role " + arn + " assumed with " + base->origin(),
                                              assume_role(c, ctx, base, p));
  }
};

}  // namespace

CredentialSource::CredentialSource(std::string origin, Fetch fetch) : origin_(std::move(origin)), fetch_(std::move(fetch)) {}

Result<Credentials> CredentialSource::get(const Deadline& deadline) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return *failed_;
  const auto now = SysClock::now();
  if (held_ && (!held_->expiration || now < refresh_at_)) return held_->credentials;
  auto got = fetch_(deadline);
  if (!got) {
    Error e = got.error();
    if (e.message.find(origin_) == std::string::npos) e.message = "AWS credentials from " + origin_ + ": " + e.message;
    // A refusal or a bad file stays one for the run: one request per credential, not one per resource.
    if (e.kind == Error::Kind::Fatal || e.kind == Error::Kind::Invalid) failed_ = e;
    // Credentials still valid are better than none while the source has a blip.
    if (held_ && held_->expiration && now < *held_->expiration && e.retryable()) return held_->credentials;
    return e;
  }
  held_ = std::move(*got);
  ++fetches_;
  if (held_->expiration) {
    const auto lifetime = *held_->expiration - now;
    const auto window = std::min<SysClock::duration>(std::chrono::minutes(5), lifetime / 4);
    refresh_at_ = *held_->expiration - window;
  }
  return held_->credentials;
}

void CredentialSource::expired() {
  std::lock_guard<std::mutex> lock(mu_);
  refresh_at_ = SysClock::time_point::min();
}

int CredentialSource::fetches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fetches_;
}

Result<std::shared_ptr<CredentialSource>> find_credentials(const ProviderConfig& c, const ChainContext& ctx) {
  Chain chain{c, ctx};
  // 1. The environment's keys.
  auto env = chain.environment();
  if (!env || *env) return env;
  const std::string name = profile_of(c);
  Profile p = load_profile(c, ctx.home, name);
  std::set<std::string> seen{name};
  // 2. The profile's role.
  if (!p.get("role_arn").empty()) return chain.role(p, seen);
  // 3. Web identity from the environment.
  if (const std::string file = c.str("web_identity_token_file"); !file.empty()) {
    const std::string arn = c.str("role_arn");
    if (arn.empty())
      return Error::invalid("AWS_WEB_IDENTITY_TOKEN_FILE is set (" + file + ") but AWS_ROLE_ARN is not: set the ARN "
                            "of the role the token may assume");
    return std::make_shared<CredentialSource>("web identity (AWS_WEB_IDENTITY_TOKEN_FILE " + file + ", role " + arn + ")",
                                              web_identity(c, ctx, file, arn, session_name(c, "")));
  }
  // 4-7. The profile's IAM Identity Center sign-in, keys or process.
  auto own = chain.profile_source(p, seen);
  if (!own || *own) return own;
  // 8. Container credentials.
  auto cont = chain.container_source();
  if (!cont || *cont) return cont;
  const std::string none = "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
                           "AWS_SESSION_TOKEN for temporary ones), AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, or add "
                           "keys, role_arn or credential_process to profile '" + name + "' of " + p.credentials_file +
                           " or " + p.config_file + " (AWS_PROFILE chooses the profile)";
  if (c.flag("metadata_disabled"))
    return Error::invalid(none + "; the instance metadata service is off (AWS_EC2_METADATA_DISABLED)");
  // 9. The instance metadata service: the last resort, so its failure says what else was looked at.
  return chain.metadata_source(none);
}

std::string config_file_region(const ProviderConfig& c, const std::string& home) {
  auto s = ini_section(config_path(c, home), config_section(profile_of(c)));
  return s.count("region") ? s["region"] : "";
}

std::string sts_endpoint(const ProviderConfig& c, const std::string& region) {
  return endpoint_or(c, "sts_endpoint",
                     region.empty() ? "https://sts.amazonaws.com" : "https://sts." + region + ".amazonaws.com");
}

Result<std::vector<std::string>> split_command(const std::string& command) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < command.size(); ++i) {
    const char ch = command[i];
    if (ch == '\'') {
      const size_t end = command.find('\'', i + 1);
      if (end == std::string::npos) return Error::invalid("unterminated ' in: " + command);
      word += command.substr(i + 1, end - i - 1);
      in_word = true;
      i = end;
    } else if (ch == '"') {
      in_word = true;
      for (++i;; ++i) {
        if (i >= command.size()) return Error::invalid("unterminated \" in: " + command);
        if (command[i] == '"') break;
        if (command[i] == '\\' && i + 1 < command.size() &&
            std::strchr("\"\\$`", command[i + 1]) != nullptr)
          ++i;
        word += command[i];
      }
    } else if (ch == '\\' && i + 1 < command.size()) {
      word += command[++i];
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(ch))) {
      if (in_word) out.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += ch;
      in_word = true;
    }
  }
  if (in_word) out.push_back(word);
  return out;
}

}  // namespace plinth::aws
