#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace plinth::redfish_emulator {

/// What one emulated BMC looks like beyond the mockup: GPUs, memory,
/// credentials and deliberate defects. Filled from the global flags, then
/// from `--override I:key=value` for BMC I.
struct BmcProfile {
  std::optional<int> gpus;  ///< replace the mockup's GPU processors with this many
  std::string gpu_model = "NVIDIA H100 80GB HBM3";
  std::string gpu_manufacturer;  ///< empty: the first word of gpu_model
  std::optional<int> gpu_memory_mib;
  std::optional<int> memory_gib;  ///< MemorySummary.TotalSystemMemoryGiB of every system
  std::string user = "admin";
  std::string password = "admin";
  std::optional<std::string> power_state;  ///< initial PowerState of every system
  bool processors_absent = false;          ///< remove every system's Processors collection
  bool malformed_json = false;             ///< every JSON answer is cut in half
  int deep_json = 0;  ///< > 0: every JSON answer is wrapped in this many nested objects (a hostile BMC)
  bool hang = false;                       ///< never answers
  /// Which BMC this is: BMC 0 keeps the mockup's SerialNumber and UUID, BMC I > 0
  /// reports "SERIAL-I" and the UUID with I as its last 12 hex digits (a fleet's
  /// servers differ), unless `serial` / `uuid` say otherwise (a moved server).
  int index = 0;
  std::optional<std::string> serial;
  std::optional<std::string> uuid;
};

/// Every command-line flag of redfish-emulator (docs/emulators.md lists them).
struct Options {
  std::string mockup;
  int bmcs = 1;
  std::string host = "127.0.0.1";
  int port = 8443;
  std::optional<int> port_base;  ///< one listener per BMC instead of /bmc/{index} on one port
  int threads = 0;               ///< 0: 64 with one listener, 4 per listener with --port-base
  int power_delay_ms = 500;
  std::optional<int> session_timeout_s;  ///< default: the mockup's SessionService.SessionTimeout
  bool async_tasks = false;
  std::string expand = "off";  ///< $expand: off (not advertised, ignored), on (DSP0266 7.3), ignored (advertised, not done)
  int latency_min_ms = 0;
  int latency_max_ms = 0;
  double rate_503 = 0;
  double rate_500 = 0;
  double drop_rate = 0;
  uint64_t seed = 1;
  std::string request_log;
  std::string power_log;  ///< one JSON line per PowerState change
  std::string media_dir;  ///< InsertMedia fetches the image and keeps it here as BMC/MEDIA
  std::string tls_dir;
  std::string tls_cert;
  std::string tls_key;
  bool http = false;
  BmcProfile profile;                                                         ///< the defaults every BMC starts from
  std::map<int, std::vector<std::pair<std::string, std::string>>> overrides;  ///< BMC -> key=value
};

/// Parses argv. Returns an error message (naming the flag and what to do) or
/// "" on success; `help` is set when --help was given.
std::string parse_options(int argc, char** argv, Options& out, bool& help);

/// The profile of BMC `index`: the global profile with its overrides applied.
/// Unknown keys were rejected by parse_options.
BmcProfile profile_for(const Options& options, int index);

/// The --help text.
std::string usage();

}  // namespace plinth::redfish_emulator
