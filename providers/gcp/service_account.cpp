#include "providers/gcp/service_account.h"

#include <nlohmann/json.hpp>

#include "engine/core/files.h"
#include "engine/core/strings.h"
#include "providers/gcp/jwt.h"

namespace plinth::gcp {
namespace {

using nlohmann::json;

const char* kFix =
    "a service-account key file is what `gcloud iam service-accounts keys create KEY.json "
    "--iam-account=NAME@PROJECT.iam.gserviceaccount.com` writes";

std::string type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "a string";
  }
}

/// 1-based line and column of byte `offset` in `text`.
std::pair<size_t, size_t> line_col(std::string_view text, size_t offset) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

bool loopback_url(std::string_view url) {
  auto rest = url.substr(url.find("://") + 3);
  for (std::string_view host : {"127.", "localhost", "[::1]"})
    if (rest.substr(0, host.size()) == host) return true;
  return false;
}

}  // namespace

Result<ServiceAccountKey> parse_service_account_key(std::string_view json_text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::parse_error& e) {
    // e.what() quotes the text it last read, which may be the private key: give the position only.
    auto [line, col] = line_col(json_text, e.byte > 0 ? e.byte - 1 : 0);
    return Error::invalid(source + ":" + std::to_string(line) + ":" + std::to_string(col) + ": not valid JSON; " +
                          kFix);
  }
  if (!doc.is_object())
    return Error::invalid(source + ": a key file is a JSON object, this is " + type_name(doc) + "; " + kFix);

  auto field = [&](const char* name, std::string& into, bool required) -> std::optional<Error> {
    auto it = doc.find(name);
    if (it == doc.end() || (it->is_string() && it->get<std::string>().empty())) {
      if (!required) return std::nullopt;
      return Error::invalid(source + ": field '" + name + "' is " + (it == doc.end() ? "missing" : "empty") +
                            "; a service-account key file has type, project_id, private_key_id, private_key, "
                            "client_email and token_uri (" +
                            kFix + ")");
    }
    if (!it->is_string())
      return Error::invalid(source + ": field '" + name + "' must be a string, it is " + type_name(*it));
    into = it->get<std::string>();
    return std::nullopt;
  };

  std::string type;
  if (auto e = field("type", type, true)) return *e;
  if (type != "service_account") {
    std::string why;
    if (type == "authorized_user")
      why = ": that is a user's credential from `gcloud auth application-default login`";
    else if (type == "external_account")
      why =
          ": that is a workload identity federation configuration, which this key loader does not exchange; "
          "give the provider an access token from the environment instead";
    else if (type == "impersonated_service_account")
      why = ": that is an impersonation configuration";
    return Error::invalid(source + ": field 'type' is '" + type + "', not 'service_account'" + why + "; " + kFix);
  }

  ServiceAccountKey key;
  key.source = source;
  if (auto e = field("project_id", key.project_id, true)) return *e;
  if (auto e = field("private_key_id", key.private_key_id, true)) return *e;
  if (auto e = field("private_key", key.private_key_pem, true)) return *e;
  if (auto e = field("client_email", key.client_email, true)) return *e;
  if (auto e = field("client_id", key.client_id, false)) return *e;
  if (auto e = field("token_uri", key.token_uri, true)) return *e;

  auto at = key.client_email.find('@');
  if (at == std::string::npos || at == 0 || key.client_email.find('.', at) == std::string::npos)
    return Error::invalid(source + ": field 'client_email' is '" + key.client_email +
                          "', not an address like NAME@PROJECT.iam.gserviceaccount.com");
  bool https = key.token_uri.rfind("https://", 0) == 0;
  bool http = key.token_uri.rfind("http://", 0) == 0;
  if (!https && !(http && loopback_url(key.token_uri)))
    return Error::invalid(source + ": field 'token_uri' is '" + key.token_uri + "', not an https:// URL (Google's is " +
                          kGoogleTokenUri + ")");
  auto signer = RsaSigner::from_pem(key.private_key_pem, "field 'private_key' of " + source);
  if (!signer) return signer.error();
  return key;
}

Result<ServiceAccountKey> load_service_account_key(const std::string& path) {
  auto text = read_file(path);
  if (!text)
    return Error::invalid("cannot read the service-account key file: " + text.error().message +
                          " (check GOOGLE_APPLICATION_CREDENTIALS or the provider's credentials option)");
  return parse_service_account_key(*text, path);
}

Result<std::string> make_assertion(const ServiceAccountKey& key, const std::vector<std::string>& scopes,
                                   std::chrono::system_clock::time_point now, std::chrono::seconds lifetime) {
  if (lifetime.count() <= 0 || lifetime.count() > 3600)
    return Error::invalid("an assertion lives between 1 and 3600 seconds, not " + std::to_string(lifetime.count()));
  if (scopes.empty())
    return Error::invalid("an assertion needs at least one OAuth scope, e.g. " + std::string(kCloudPlatformScope));
  auto signer = RsaSigner::from_pem(key.private_key_pem, "field 'private_key' of " + key.source);
  if (!signer) return signer.error();
  AssertionClaims claims;
  claims.iss = key.client_email;
  claims.scope = join(scopes, " ");
  claims.aud = key.token_uri;
  claims.iat = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  claims.exp = claims.iat + lifetime.count();
  return sign_jwt(claims, key.private_key_id, *signer);
}

}  // namespace plinth::gcp
