#pragma once
// What the Entra and Resource Manager services of azure-emulator see of a
// request and give back; main.cpp translates to and from cpp-httplib.
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace plinth::azure_emulator {

using json = nlohmann::json;

struct Request {
  std::string method;
  std::string path;                                // percent-decoded, without the query
  std::string query;                               // raw, for the request log
  std::multimap<std::string, std::string> params;  // decoded query parameters
  std::map<std::string, std::string> headers;      // lower-case names
  std::string body;
  /// "https://HOST[:PORT]" as the client addressed the emulator (its Host
  /// header), so links work through the CONNECT proxy too.
  std::string base;

  /// The query parameter `name`, matched case-insensitively as ARM does ("" when absent).
  std::string param(const std::string& name) const;
  bool has_param(const std::string& name) const;
  std::string header(const std::string& lower_name) const;
};

struct Response {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "application/json; charset=utf-8";
  std::string body;
  std::string operation;  ///< service-level operation for the log, e.g. Microsoft.Compute/virtualMachines/write
  std::string fault;      ///< injected fault: drop, lose, 429, 500, 503 ("" for none)
  bool close = false;     ///< close the connection without sending this answer (drop / lose)
  std::string credential;  ///< Entra: how the client proved itself (secret, certificate, federated, managed-identity)
  std::string token_id;    ///< the uti of the token issued (Entra) or presented (Resource Manager)

  void set_header(const std::string& name, const std::string& value);
};

Response json_response(int status, const json& body);

std::string lower(std::string s);
bool iequals(const std::string& a, const std::string& b);

/// 2026-12-02T13:20:00.1234567+00:00, the timestamp form of Compute operations.
std::string arm_time(std::chrono::system_clock::time_point t);
/// 2026-12-02T13:20:00.123Z
std::string iso_millis(std::chrono::system_clock::time_point t);
/// 2026-12-02 13:20:00Z, the form of Entra error timestamps.
std::string entra_time(std::chrono::system_clock::time_point t);
/// 12/2/2026 1:20:00 PM, the form of ARM's token expiry messages.
std::string us_time(std::chrono::system_clock::time_point t);

/// A random (version 4) GUID from `rng`, lower-case.
std::string new_guid(std::mt19937_64& rng);

}  // namespace plinth::azure_emulator
