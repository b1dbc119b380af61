#pragma once
// gcp-emulator's front door: routes a request to the token endpoint, the
// Compute API or the /__emulator/ control endpoints; checks bearer tokens,
// scopes and project access; injects faults (5xx, throttling, dropped
// connections, lost answers); counts requests. Knows nothing about sockets:
// main.cpp carries out what a Reply asks for.
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/emulators/gcp/compute.h"
#include "tests/emulators/gcp/oauth.h"
#include "tests/emulators/gcp/options.h"

namespace plinth::gcp_emulator {

struct HttpRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> query;    ///< decoded
  std::map<std::string, std::string> headers;  ///< lower-case names
  std::string body;
};

struct Reply {
  enum class Action { Answer, Drop, Lose };
  Action action = Action::Answer;  ///< Drop: close unanswered, unprocessed; Lose: processed, then close unanswered
  int status = 200;
  std::string body;
  std::string content_type = "application/json; charset=UTF-8";
  std::vector<std::pair<std::string, std::string>> headers;
  int latency_ms = 0;  ///< wait this long before answering
  // For the request log.
  std::string api;  ///< compute.instances.insert, oauth2.token, emulator.state, ...
  std::string project, zone;
  std::string fault;  ///< "", 500, 503, 429, drop, lose
  std::string principal;  ///< who a token was issued to (token endpoints) or who called (Compute)
};

/// The fault knobs that can change at run time (POST /__emulator/faults).
struct Faults {
  double rate_500 = 0, rate_503 = 0, drop_rate = 0, lose_response_rate = 0;
  int latency_min_ms = 0, latency_max_ms = 0;
  double rate_limit_rps = 0;
  int rate_limit_burst = 0;
  std::string rate_limit_reason = "rateLimitExceeded";
  int lose_next = 0;                      ///< the next N successful writes lose their answer
  std::vector<std::string> lose_methods;  ///< ...of these methods only (empty: any write)
};

class Service {
 public:
  Service(const Options& options, Compute& compute, TokenAuthority& tokens);
  Reply handle(const HttpRequest& req);

 private:
  Reply token(const HttpRequest& req);
  Reply compute(const HttpRequest& req);
  Reply control(const HttpRequest& req);
  Reply control_endpoint(const HttpRequest& req);
  void count(const Reply& r);
  nlohmann::json faults_json() const;

  Compute& compute_;
  TokenAuthority& tokens_;
  std::string project_, project_number_;
  std::mutex mu_;  ///< guards everything below
  Faults faults_;
  std::mt19937_64 dice_;       ///< latency and 500/503/drop, one draw per call
  std::mt19937_64 lose_dice_;  ///< lost answers, one draw per successful write
  double bucket_ = 0;
  std::chrono::steady_clock::time_point bucket_at_{};
  std::map<std::string, std::map<std::string, long>> counters_;  ///< api -> outcome -> count
  long total_ = 0;
};

}  // namespace plinth::gcp_emulator
