#pragma once
// What a Compute API handler answers, and Google's error shape for it:
// {"error": {"code", "message", "errors": [{"message", "domain", "reason"}], "status"?}}.
#include <nlohmann/json.hpp>
#include <string>

namespace plinth::gcp_emulator {

struct ApiAnswer {
  int status = 200;
  nlohmann::json body;
  bool write = false;  ///< an insert/delete/start/stop/setLabels answered with an operation (its answer may be "lost")
};

/// A Compute API error body in Google's JSON shape.
nlohmann::json api_error(int code, const std::string& reason, const std::string& message,
                         const std::string& domain = "global", const std::string& status = "");

/// The same as an answer.
ApiAnswer error_answer(int code, const std::string& reason, const std::string& message,
                       const std::string& domain = "global", const std::string& status = "");

/// 404 notFound: "The resource 'RESOURCE' was not found".
ApiAnswer not_found(const std::string& resource);

/// 400 invalid: "Invalid value for field 'FIELD': 'VALUE'. DETAIL".
ApiAnswer invalid_field(const std::string& field, const std::string& value, const std::string& detail);

}  // namespace plinth::gcp_emulator
