#include "tests/emulators/aws-ec2/identity.h"

#include <nlohmann/json.hpp>
#include <regex>

#include "engine/core/strings.h"

namespace plinth::aws_ec2_emulator {

namespace {

const char* kStsNamespace = "https://sts.amazonaws.com/doc/2011-06-15/";

IdentityAnswer sts_error(int status, const std::string& code, const std::string& message) {
  IdentityAnswer a;
  a.status = status;
  a.code = code;
  a.body = std::string("<ErrorResponse xmlns=\"") + kStsNamespace + "\">\n  <Error>\n    <Type>Sender</Type>\n    <Code>" +
           code + "</Code>\n    <Message>" + xml_escape(message) +
           "</Message>\n  </Error>\n  <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>\n</ErrorResponse>\n";
  return a;
}

IdentityAnswer sts_ok(const std::string& action, const std::string& result) {
  IdentityAnswer a;
  a.body = "<" + action + "Response xmlns=\"" + kStsNamespace + "\">\n  <" + action + "Result>\n" + result + "  </" +
           action + "Result>\n  <ResponseMetadata>\n    <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>\n"
           "  </ResponseMetadata>\n</" + action + "Response>\n";
  return a;
}

IdentityAnswer json_answer(int status, const nlohmann::json& j) {
  IdentityAnswer a;
  a.status = status;
  a.content_type = "application/json";
  a.body = j.dump(2);
  return a;
}

IdentityAnswer text_answer(int status, const std::string& text, const std::string& code = "") {
  IdentityAnswer a;
  a.status = status;
  a.content_type = "text/plain";
  a.body = text;
  a.code = code;
  return a;
}

}  // namespace

Identity::Identity(IdentityOptions options) : options_(std::move(options)), rng_(options_.seed * 31337u + 11) {}

bool Identity::is_sts_action(const std::string& action) {
  return action == "AssumeRoleWithWebIdentity" || action == "AssumeRole" || action == "GetCallerIdentity";
}

std::string Identity::random_text(size_t n, const char* alphabet) {
  const std::string a = alphabet;
  std::string out;
  for (size_t i = 0; i < n; ++i) out += a[rng_() % a.size()];
  return out;
}

std::string Identity::iso8601(std::chrono::system_clock::time_point t) {
  const time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Identity::Issued Identity::issue(const std::string& how, const std::string& arn) {
  // Called with mu_ held.
  Issued i;
  i.credentials.access_key_id = "ASIA" + random_text(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567");
  i.credentials.secret_access_key =
      random_text(40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
  i.credentials.session_token =
      "IQoJb3JpZ2luX2VjE" + random_text(120, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
  i.expiration = std::chrono::system_clock::now() + std::chrono::seconds(options_.credential_ttl_s);
  i.arn = arn;
  issued_[i.credentials.access_key_id] = i;
  ++counts_[how];
  return i;
}

IdentityAnswer Identity::sts(const std::string& action, const std::map<std::string, std::string>& params,
                             const std::string& caller, const std::string& static_key) {
  auto param = [&](const char* k) {
    auto it = params.find(k);
    return it == params.end() ? std::string() : it->second;
  };
  if (param("Version") != "2011-06-15")
    return sts_error(400, param("Version").empty() ? "MissingParameter" : "InvalidAction",
                     param("Version").empty() ? "The request must contain the parameter Version"
                                              : "Could not find operation " + action + " for version " + param("Version"));
  std::lock_guard<std::mutex> lock(mu_);
  const std::regex role_arn(R"(arn:aws:iam::(\d{12}):role/([\w+=,.@/-]{1,64}))");
  const std::regex session_name(R"([\w+=,.@-]{2,64})");
  auto credentials_xml = [&](const Issued& i, const std::string& role_id) {
    return "    <AssumedRoleUser>\n      <Arn>" + xml_escape(i.arn) + "</Arn>\n      <AssumedRoleId>" + role_id +
           "</AssumedRoleId>\n    </AssumedRoleUser>\n    <Credentials>\n      <AccessKeyId>" +
           i.credentials.access_key_id + "</AccessKeyId>\n      <SecretAccessKey>" + i.credentials.secret_access_key +
           "</SecretAccessKey>\n      <SessionToken>" + i.credentials.session_token +
           "</SessionToken>\n      <Expiration>" + iso8601(i.expiration) + "</Expiration>\n    </Credentials>\n";
  };
  if (action == "GetCallerIdentity") {
    if (caller.empty()) return sts_error(403, "MissingAuthenticationToken", "Request is missing Authentication Token");
    std::string arn = "arn:aws:iam::" + options_.account_id + ":user/plinth";
    if (auto it = issued_.find(caller); it != issued_.end()) arn = it->second.arn;
    return sts_ok(action, "    <Arn>" + xml_escape(arn) + "</Arn>\n    <UserId>" + caller + "</UserId>\n    <Account>" +
                              options_.account_id + "</Account>\n");
  }
  const std::string arn = param("RoleArn"), session = param("RoleSessionName");
  std::smatch m;
  if (arn.empty() || session.empty())
    return sts_error(400, "MissingParameter", "The request must contain the parameters RoleArn and RoleSessionName");
  if (!std::regex_match(arn, m, role_arn))
    return sts_error(400, "ValidationError", "1 validation error detected: Value '" + arn +
                                                 "' at 'roleArn' failed to satisfy constraint: not a role ARN");
  if (!std::regex_match(session, session_name))
    return sts_error(400, "ValidationError", "1 validation error detected: Value '" + session +
                                                 "' at 'roleSessionName' failed to satisfy constraint: Member must "
                                                 "satisfy regular expression pattern: [\\w+=,.@-]*");
  const std::string role = m[2].str();
  const std::string session_arn = "arn:aws:sts::" + m[1].str() + ":assumed-role/" + role + "/" + session;
  const std::string role_id = "AROA" + std::string(17, 'X') + ":" + session;
  if (action == "AssumeRoleWithWebIdentity") {
    const std::string token = param("WebIdentityToken");
    if (token.empty()) return sts_error(400, "MissingParameter", "The request must contain the parameter WebIdentityToken");
    if (!options_.web_identity_tokens.count(token))
      return sts_error(400, "InvalidIdentityToken",
                       "The web identity token that was passed could not be validated by AWS. Get a new identity "
                       "token from the identity provider and then retry the request.");
    Issued i = issue(action, session_arn);
    IdentityAnswer a = sts_ok(action, "    <SubjectFromWebIdentityToken>repo:example/fleet:ref:refs/heads/main"
                                      "</SubjectFromWebIdentityToken>\n    <Audience>sts.amazonaws.com</Audience>\n" +
                                          credentials_xml(i, role_id) +
                                          "    <Provider>token.actions.githubusercontent.com</Provider>\n");
    a.issued = i.credentials.access_key_id;
    return a;
  }
  // AssumeRole: signed by a key it knows.
  if (caller.empty()) return sts_error(403, "MissingAuthenticationToken", "Request is missing Authentication Token");
  if (caller != static_key && !issued_.count(caller))
    return sts_error(403, "InvalidClientTokenId", "The security token included in the request is invalid.");
  Issued i = issue(action, session_arn);
  IdentityAnswer a = sts_ok(action, credentials_xml(i, role_id));
  a.issued = i.credentials.access_key_id;
  return a;
}

IdentityAnswer Identity::metadata(const std::string& method, const std::string& path,
                                  const std::map<std::string, std::string>& headers) {
  auto header = [&](const char* k) {
    auto it = headers.find(k);
    return it == headers.end() ? std::string() : it->second;
  };
  const auto now = std::chrono::system_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  auto credentials_json = [&](const Issued& i, bool imds) {
    nlohmann::json j = {{"AccessKeyId", i.credentials.access_key_id},
                        {"SecretAccessKey", i.credentials.secret_access_key},
                        {"Token", i.credentials.session_token},
                        {"Expiration", iso8601(i.expiration)}};
    if (imds) {
      j["Code"] = "Success";
      j["LastUpdated"] = iso8601(now);
      j["Type"] = "AWS-HMAC";
    } else {
      j["RoleArn"] = "arn:aws:iam::" + options_.account_id + ":role/" + options_.instance_role;
    }
    return j;
  };
  if (path == "/latest/api/token") {
    if (method != "PUT") return text_answer(405, "", "MethodNotAllowed");  // IMDSv2 tokens are PUT only
    const std::string ttl = header("x-aws-ec2-metadata-token-ttl-seconds");
    int seconds = 0;
    try {
      seconds = ttl.empty() ? 0 : std::stoi(ttl);
    } catch (...) {
    }
    if (seconds < 1 || seconds > 21600) return text_answer(400, "", "BadTokenTTL");
    const std::string token = random_text(56, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-");
    imds_tokens_[token] = now + std::chrono::seconds(seconds);
    return text_answer(200, token);
  }
  const std::string prefix = "/latest/meta-data/iam/security-credentials/";
  if (path.rfind(prefix, 0) == 0) {
    if (method != "GET") return text_answer(405, "", "MethodNotAllowed");
    auto t = imds_tokens_.find(header("x-aws-ec2-metadata-token"));
    if (t == imds_tokens_.end() || t->second < now) return text_answer(401, "", "Unauthorized");  // IMDSv1 is off
    const std::string role = path.substr(prefix.size());
    if (role.empty()) return text_answer(200, options_.instance_role);
    if (role != options_.instance_role) return text_answer(404, "", "NotFound");
    Issued i = issue("imds", "arn:aws:sts::" + options_.account_id + ":assumed-role/" + options_.instance_role +
                                 "/i-0123456789abcdef0");
    IdentityAnswer a = json_answer(200, credentials_json(i, true));
    a.issued = i.credentials.access_key_id;
    return a;
  }
  if (path.rfind("/v2/credentials/", 0) == 0 || path.rfind("/v1/credentials", 0) == 0) {
    if (method != "GET") return text_answer(405, "", "MethodNotAllowed");
    if (!options_.container_token.empty() && header("authorization") != options_.container_token)
      return json_answer(401, {{"code", "AccessDeniedException"}, {"message", "the Authorization header is wrong"}});
    Issued i = issue("container", "arn:aws:sts::" + options_.account_id + ":assumed-role/" + options_.instance_role +
                                      "/container");
    IdentityAnswer a = json_answer(200, credentials_json(i, false));
    a.issued = i.credentials.access_key_id;
    return a;
  }
  return text_answer(404, "", "NotFound");
}

IdentityAnswer Identity::sso(const std::string& account_id, const std::string& role_name,
                             const std::string& bearer) {
  // The portal's restJson errors: a body with __type and message (botocore reads the code from __type).
  auto error = [](int status, const std::string& type, const std::string& message) {
    IdentityAnswer a = json_answer(status, {{"__type", "com.amazonaws.switchboard.portal#" + type}, {"message", message}});
    a.code = type;
    return a;
  };
  if (bearer.empty() || !options_.sso_tokens.count(bearer))
    return error(401, "UnauthorizedException", "Session token not found or invalid");
  if (account_id.empty() || role_name.empty())
    return error(400, "InvalidRequestException", "account_id and role_name are required");
  if (account_id != options_.account_id) return error(403, "ForbiddenException", "No access");
  std::lock_guard<std::mutex> lock(mu_);
  Issued i = issue("sso", "arn:aws:sts::" + account_id + ":assumed-role/AWSReservedSSO_" + role_name + "_0123456789abcdef/plinth");
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(i.expiration.time_since_epoch()).count();
  IdentityAnswer a = json_answer(200, {{"roleCredentials",
                                        {{"accessKeyId", i.credentials.access_key_id},
                                         {"secretAccessKey", i.credentials.secret_access_key},
                                         {"sessionToken", i.credentials.session_token},
                                         {"expiration", ms}}}});
  a.issued = i.credentials.access_key_id;
  return a;
}

std::optional<aws::Credentials> Identity::lookup(const std::string& access_key_id, bool& expired) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = issued_.find(access_key_id);
  if (it == issued_.end()) return std::nullopt;
  expired = it->second.expiration <= std::chrono::system_clock::now();
  return it->second.credentials;
}

std::map<std::string, int> Identity::issued_counts() {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

std::vector<aws::Credentials> Identity::issued_credentials() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<aws::Credentials> out;
  for (const auto& [id, i] : issued_) out.push_back(i.credentials);
  return out;
}

}  // namespace plinth::aws_ec2_emulator
