#include "tests/emulators/gcp/api.h"

namespace plinth::gcp_emulator {

using nlohmann::json;

json api_error(int code, const std::string& reason, const std::string& message, const std::string& domain,
               const std::string& status) {
  json e = {{"code", code},
            {"message", message},
            {"errors", json::array({{{"message", message}, {"domain", domain}, {"reason", reason}}})}};
  if (!status.empty()) e["status"] = status;
  return json{{"error", e}};
}

ApiAnswer error_answer(int code, const std::string& reason, const std::string& message, const std::string& domain,
                       const std::string& status) {
  return {code, api_error(code, reason, message, domain, status), false};
}

ApiAnswer not_found(const std::string& resource) {
  return error_answer(404, "notFound", "The resource '" + resource + "' was not found");
}

ApiAnswer invalid_field(const std::string& field, const std::string& value, const std::string& detail) {
  return error_answer(400, "invalid", "Invalid value for field '" + field + "': '" + value + "'. " + detail);
}
}  // namespace plinth::gcp_emulator
