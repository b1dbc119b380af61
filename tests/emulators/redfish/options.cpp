#include "tests/emulators/redfish/options.h"

#include <charconv>
#include <functional>

#include "tests/emulators/common/flags.h"

namespace plinth::redfish_emulator {

using emulator::FlagReader;
using emulator::to_double;
using emulator::to_int;

namespace {

bool to_bool(const std::string& s, bool& out) {
  if (s == "true" || s == "1" || s == "yes") return out = true, true;
  if (s == "false" || s == "0" || s == "no") return out = false, true;
  return false;
}

/// Applies one `key=value` to a profile; returns an error or "".
std::string apply_key(BmcProfile& p, const std::string& key, const std::string& value) {
  long long n = 0;
  if (key == "gpus") {
    if (!to_int(value, n) || n < 0 || n > 1024) return "gpus needs a count from 0 to 1024, got '" + value + "'";
    p.gpus = static_cast<int>(n);
  } else if (key == "gpu-model") {
    p.gpu_model = value;
  } else if (key == "gpu-manufacturer") {
    p.gpu_manufacturer = value;
  } else if (key == "gpu-memory-mib") {
    if (!to_int(value, n) || n < 0) return "gpu-memory-mib needs a whole number of MiB, got '" + value + "'";
    p.gpu_memory_mib = static_cast<int>(n);
  } else if (key == "memory-gib") {
    if (!to_int(value, n) || n < 0) return "memory-gib needs a whole number of GiB, got '" + value + "'";
    p.memory_gib = static_cast<int>(n);
  } else if (key == "user") {
    p.user = value;
  } else if (key == "password") {
    p.password = value;
  } else if (key == "power-state") {
    if (value != "On" && value != "Off") return "power-state must be On or Off, got '" + value + "'";
    p.power_state = value;
  } else if (key == "processors") {
    if (value != "absent") return "processors accepts only 'absent', got '" + value + "'";
    p.processors_absent = true;
  } else if (key == "malformed-json") {
    if (!to_bool(value, p.malformed_json)) return "malformed-json must be true or false, got '" + value + "'";
  } else if (key == "deep-json") {
    if (!to_int(value, n) || n < 1 || n > 10000000)
      return "deep-json must be a nesting depth from 1 to 10000000, got '" + value + "'";
    p.deep_json = static_cast<int>(n);
  } else if (key == "hang") {
    if (!to_bool(value, p.hang)) return "hang must be true or false, got '" + value + "'";
  } else if (key == "serial") {
    p.serial = value;
  } else if (key == "uuid") {
    if (value.size() != 36) return "uuid needs the 36-character form 8-4-4-4-12, got '" + value + "'";
    p.uuid = value;
  } else {
    return "unknown key '" + key +
           "' (use gpus, gpu-model, gpu-manufacturer, gpu-memory-mib, memory-gib, user, password, "
           "power-state, processors, malformed-json, deep-json, hang, serial or uuid)";
  }
  return "";
}

}  // namespace

std::string usage() {
  return R"(usage: redfish-emulator [--mockup DIR] [flags]

Serves DMTF Redfish mockups over HTTPS as one or many emulated BMCs.
See docs/emulators.md for the full description.

  --mockup DIR             mockup tree (index.json files), e.g. tests/data/third_party/redfish/public-tower
                           (default: DMTF's public-rackmount1, built in)
  --bmcs N                 number of BMCs (default 1)
  --host ADDR              listen address (default 127.0.0.1)
  --port P                 one listener, BMC i at /bmc/{i}/redfish/v1 (default 8443; 0 picks a free port)
  --port-base P            one listener per BMC on P, P+1, ... at /redfish/v1 (0 picks free ports)
  --threads N              worker threads per listener (default 64, or 4 with --port-base)
  --user U --password P    credentials of every BMC (default admin / admin)
  --gpus N                 replace each system's GPU processors with N synthesized GPUs
  --gpu-model S            Model of synthesized GPUs (default "NVIDIA H100 80GB HBM3")
  --gpu-manufacturer S     Manufacturer of synthesized GPUs (default: first word of the model)
  --gpu-memory-mib N       MemorySummary.TotalMemorySizeMiB of synthesized GPUs
  --memory-gib N           MemorySummary.TotalSystemMemoryGiB of every system
  --power-state On|Off     initial PowerState of every system (default: the mockup's)
  --override I:KEY=VALUE   per-BMC setting (repeatable); KEY is gpus, gpu-model, gpu-manufacturer,
                           gpu-memory-mib, memory-gib, user, password, power-state (On|Off),
                           processors (absent), malformed-json (true), deep-json (N: every JSON
                           answer nested N objects deep, a hostile BMC), hang (true), serial or
                           uuid (what the system reports; default: the mockup's on BMC 0,
                           made distinct from it on BMC I > 0)
  --power-delay-ms N       time a power transition takes (default 500)
  --session-timeout S      idle seconds before a session expires (default: the mockup's, 0 = never)
  --async-tasks            Reset and VirtualMedia actions answer 202 with a task monitor
  --expand off|on|ignored  $expand: off (default; the service root says it is not supported),
                           on (advertised and done as DSP0266 says), ignored (advertised, not done)
  --latency-ms N|MIN-MAX   added latency per request
  --rate-503 F             fraction of requests answered 503 with Retry-After: 1
  --rate-500 F             fraction of requests answered 500
  --drop-rate F            fraction of connections closed without an answer
  --hang-bmc I             BMC I never answers (repeatable)
  --seed S                 seed of the fault generator (default 1)
  --request-log FILE       one JSON line per request
  --power-log FILE         one JSON line per PowerState change: the fleet's power timeline
  --media-dir DIR          VirtualMedia.InsertMedia fetches the Image over HTTP(S), as a BMC
                           does, and keeps it as DIR/BMC/MEDIA (e.g. DIR/0/CD2); an image it
                           cannot fetch fails the action (400, CouldNotEstablishConnection,
                           ResourceAtUriUnauthorized or SourceDoesNotSupportProtocol)
  --tls-dir DIR            write the generated ca.pem, server.pem and server-key.pem to DIR
  --tls-cert F --tls-key F serve this certificate instead of a generated one
  --http                   plain HTTP (debugging only)
  --help                   this text
)";
}

std::string parse_options(int argc, char** argv, Options& o, bool& help) {
  help = false;
  FlagReader args(argc, argv);
  while (args.next()) {
    const std::string& flag = args.flag();
    const std::string& value = args.value();
    auto profile_flag = [&](const std::string& key) -> std::string {
      if (!args.need()) return flag + " needs a value";
      std::string err = apply_key(o.profile, key, value);
      return err.empty() ? "" : flag + ": " + err;
    };

    std::string err;
    if (flag == "--help" || flag == "-h") {
      help = true;
      return "";
    } else if (flag == "--mockup") {
      err = args.str_flag(o.mockup);
    } else if (flag == "--bmcs") {
      err = args.int_flag(o.bmcs, 1, 100000);
    } else if (flag == "--host") {
      err = args.str_flag(o.host);
    } else if (flag == "--port") {
      err = args.int_flag(o.port, 0, 65535);
    } else if (flag == "--port-base") {
      int p = 0;
      err = args.int_flag(p, 0, 65535);
      o.port_base = p;
    } else if (flag == "--threads") {
      err = args.int_flag(o.threads, 1, 4096);
    } else if (flag == "--user") {
      err = profile_flag("user");
    } else if (flag == "--password") {
      err = profile_flag("password");
    } else if (flag == "--gpus") {
      err = profile_flag("gpus");
    } else if (flag == "--gpu-model") {
      err = profile_flag("gpu-model");
    } else if (flag == "--gpu-manufacturer") {
      err = profile_flag("gpu-manufacturer");
    } else if (flag == "--gpu-memory-mib") {
      err = profile_flag("gpu-memory-mib");
    } else if (flag == "--power-state") {
      err = profile_flag("power-state");
    } else if (flag == "--memory-gib") {
      err = profile_flag("memory-gib");
    } else if (flag == "--override") {
      if (!args.need()) {
        err = "--override needs I:KEY=VALUE";
      } else {
        auto colon = value.find(':');
        auto eq = value.find('=', colon == std::string::npos ? 0 : colon);
        long long idx = -1;
        if (colon == std::string::npos || eq == std::string::npos || !to_int(value.substr(0, colon), idx) || idx < 0) {
          err = "--override needs I:KEY=VALUE with a BMC index I, e.g. 3:gpus=7; got '" + value + "'";
        } else {
          std::string key = value.substr(colon + 1, eq - colon - 1);
          std::string val = value.substr(eq + 1);
          BmcProfile scratch;
          err = apply_key(scratch, key, val);
          if (!err.empty()) err = "--override " + value + ": " + err;
          o.overrides[static_cast<int>(idx)].emplace_back(key, val);
        }
      }
    } else if (flag == "--power-delay-ms") {
      err = args.int_flag(o.power_delay_ms, 0, 3600000);
    } else if (flag == "--session-timeout") {
      int s = 0;
      err = args.int_flag(s, 0, 86400 * 365);
      o.session_timeout_s = s;
    } else if (flag == "--async-tasks") {
      o.async_tasks = true;
    } else if (flag == "--expand") {
      err = args.str_flag(o.expand);
      if (err.empty() && o.expand != "off" && o.expand != "on" && o.expand != "ignored")
        err = "--expand needs off, on or ignored, got '" + o.expand + "'";
    } else if (flag == "--latency-ms") {
      err = args.latency_flag(o.latency_min_ms, o.latency_max_ms);
    } else if (flag == "--rate-503") {
      err = args.rate_flag(o.rate_503);
    } else if (flag == "--rate-500") {
      err = args.rate_flag(o.rate_500);
    } else if (flag == "--drop-rate") {
      err = args.rate_flag(o.drop_rate);
    } else if (flag == "--hang-bmc") {
      int idx = 0;
      err = args.int_flag(idx, 0, 100000);
      o.overrides[idx].emplace_back("hang", "true");
    } else if (flag == "--seed") {
      err = args.seed_flag(o.seed);
    } else if (flag == "--request-log") {
      err = args.str_flag(o.request_log);
    } else if (flag == "--power-log") {
      err = args.str_flag(o.power_log);
    } else if (flag == "--media-dir") {
      err = args.str_flag(o.media_dir);
    } else if (flag == "--tls-dir") {
      err = args.str_flag(o.tls_dir);
    } else if (flag == "--tls-cert") {
      err = args.str_flag(o.tls_cert);
    } else if (flag == "--tls-key") {
      err = args.str_flag(o.tls_key);
    } else if (flag == "--http") {
      o.http = true;
    } else {
      err = "unknown flag '" + args.arg() + "'; run redfish-emulator --help for the list";
    }
    if (!err.empty()) return err;
  }
  if (o.rate_503 + o.rate_500 + o.drop_rate > 1) return "--rate-503, --rate-500 and --drop-rate add up to more than 1";
  if (o.tls_cert.empty() != o.tls_key.empty()) return "--tls-cert and --tls-key go together";
  for (const auto& [idx, kvs] : o.overrides)
    if (idx >= o.bmcs)
      return "--override/--hang-bmc names BMC " + std::to_string(idx) + " but --bmcs is " + std::to_string(o.bmcs) +
             " (indexes run from 0 to " + std::to_string(o.bmcs - 1) + ")";
  if (o.port_base && *o.port_base != 0 && *o.port_base + o.bmcs - 1 > 65535)
    return "--port-base " + std::to_string(*o.port_base) + " with --bmcs " + std::to_string(o.bmcs) +
           " runs past port 65535";
  return "";
}

BmcProfile profile_for(const Options& options, int index) {
  BmcProfile p = options.profile;
  p.index = index;
  if (auto it = options.overrides.find(index); it != options.overrides.end())
    for (const auto& [k, v] : it->second) (void)apply_key(p, k, v);
  return p;
}

}  // namespace plinth::redfish_emulator
