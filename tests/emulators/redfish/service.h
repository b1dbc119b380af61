#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/emulators/redfish/builtin_mockup.h"
#include "tests/emulators/redfish/options.h"

namespace plinth::redfish_emulator {

using json = nlohmann::json;

/// The resources of a DMTF mockup, loaded once and shared read-only by every
/// BMC. Keys are URIs without a trailing slash ("/redfish/v1",
/// "/redfish/v1/Systems/437XR1138R2").
struct Mockup {
  std::map<std::string, json> resources;
  /// Non-JSON-resource files ($metadata, registry files): URI -> {content type, body}.
  std::map<std::string, std::pair<std::string, std::string>> files;
};

/// Loads every index.json (and index.xml, *.json file) under `dir`, or the
/// built-in mockup (builtin_mockup.h) when `dir` is empty, and makes the
/// emulator's documented start-up adjustments (actions added to VirtualMedia,
/// nothing pending in Bios/Settings, honest ProtocolFeaturesSupported, ...).
/// Returns "" or an error message.
std::string load_mockup(const std::string& dir, Mockup& out);

/// The same from files already in memory; `what` names them in errors.
std::string load_mockup(const std::vector<MockupFile>& files, const std::string& what, Mockup& out);

/// A request as the service sees it: the path is already stripped of any
/// /bmc/{index} prefix. Header names are matched case-insensitively.
struct Request {
  std::string method;
  std::string path;
  std::string query;  ///< %XX already decoded
  std::map<std::string, std::string> headers;  ///< names lower-cased
  std::string body;
};

struct Response {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "application/json; charset=utf-8";
  std::string body;
};

struct ServiceSettings {
  int power_delay_ms = 500;
  std::optional<int> session_timeout_s;
  bool async_tasks = false;
  /// "off": the root says $expand is unsupported and queries are ignored;
  /// "on": advertised (ExpandAll, Levels, Links, NoLinks, MaxLevels 6) and done;
  /// "ignored": advertised but ignored, like a BMC with a broken $expand.
  std::string expand = "off";
  /// Called at every PowerState change (the transitional ones included) with
  /// the BMC's index, the system's URI and the new state (--power-log).
  std::function<void(int bmc, const std::string& system, const std::string& state)> on_power_state;
  /// Called by InsertMedia with the BMC's index, the media's URI and the
  /// Image to fetch it as a BMC does (--media-dir); returns "" or the Base
  /// message that fails the action, with its arguments. Unset: nothing fetched.
  std::function<std::vector<std::string>(int bmc, const std::string& media, const std::string& image)> fetch_media;
};

/// One emulated BMC: its own copy-on-write view of the shared mockup, its
/// sessions, power state machine, pending BIOS settings and tasks. Thread-safe.
class Bmc {
 public:
  /// `prefix` is "" or "/bmc/{index}"; every URI the BMC sends carries it.
  Bmc(std::shared_ptr<const Mockup> mockup, const BmcProfile& profile, const ServiceSettings& settings,
      std::string prefix);

  /// Answers one Redfish request.
  Response handle(const Request& request);

  const BmcProfile& profile() const { return profile_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Session {
    std::string id;
    std::string user;
    Clock::time_point last_used;
  };
  struct Event {
    Clock::time_point at;
    std::function<void()> run;
  };

  // Resource tree (copy-on-write over the mockup).
  const json* find(const std::string& uri) const;
  json& edit(const std::string& uri);
  void put(const std::string& uri, json value);
  void erase(const std::string& uri);
  std::vector<std::string> uris_of_type(const std::string& type) const;

  void apply_profile();
  void advance(Clock::time_point now);
  void schedule(int delay_ms, std::function<void()> run);

  Response dispatch(const Request& r);
  Response get(const Request& r, const std::string& uri);
  Response patch(const Request& r, const std::string& uri);
  Response post(const Request& r, const std::string& uri);
  Response del(const Request& r, const std::string& uri);
  Response create_session(const Request& r);
  Response reset(const std::string& system, const json& body);
  Response insert_media(const std::string& media, const json& body);
  Response eject_media(const std::string& media);
  Response task_monitor(const std::string& id);
  Response finish_action(const Request& r, const std::string& target, int delay_ms, std::function<void()> run);
  Response with_resource(int status, const std::string& uri);
  /// The resource at `uri` as served (with @odata.etag), its references
  /// expanded as `$expand` (`query`) asks when --expand on.
  json served(const std::string& uri, const std::string& query) const;
  /// Replaces the references in `node` by the resources they name, `levels` deep.
  void expand_refs(json& node, char which, int levels, bool in_links) const;
  Response json_response(int status, const json& body);

  /// Returns "" when the request carries valid credentials, else why not.
  std::string authenticate(const Request& r);
  void power_transition(const std::string& system, const std::string& through, const std::string& final_state,
                        bool boots);
  void on_boot(const std::string& system);
  std::string etag_of(const json& resource) const;

  std::shared_ptr<const Mockup> mockup_;
  BmcProfile profile_;
  ServiceSettings settings_;
  std::string prefix_;

  std::mutex mu_;
  std::map<std::string, json> overlay_;
  std::set<std::string> erased_;
  std::map<std::string, Session> sessions_;    ///< token -> session
  std::map<std::string, uint64_t> power_gen_;  ///< system -> number of its latest power transition
  std::vector<Event> events_;
  std::map<std::string, std::string> task_monitors_;  ///< task id -> task URI
  uint64_t next_id_ = 1;
  std::mt19937_64 token_rng_;
};

/// A Redfish error answer with one Base registry message, e.g.
/// error_response(503, "ServiceTemporarilyUnavailable", {"1"}).
Response error_response(int status, const std::string& message_id, const std::vector<std::string>& args);

/// ISO 8601 UTC time of now, e.g. 2026-12-02T13:20:00Z.
std::string now_iso();

}  // namespace plinth::redfish_emulator
