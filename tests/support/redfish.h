#pragma once
// What the tests that drive bare metal share about the redfish-emulator
// (tests/emulators/redfish): its flags for the usual H100 servers, what its
// request log says plinth did, and Python run against its BMCs. The emulator
// process itself is tests/providers/baremetal/emulator.h.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "tests/support/emulator_process.h"
#include "tests/support/run.h"

namespace plinth::test {

/// The environment in which plinth logs in to the emulated BMCs (credentials: env:BMC_CREDENTIALS).
inline const std::map<std::string, std::string> kBmcEnv = {{"BMC_CREDENTIALS", "admin:admin"}};

/// redfish-emulator flags for `bmcs` servers with 8 GPUs and 2 TiB each, Off, taking 20 ms per power
/// change; then `extra` (a flag given again there wins).
std::vector<std::string> h100_emulator_args(int bmcs, const std::vector<std::string>& extra = {});

/// Successful ComputerSystem.Reset requests per BMC in the emulator's request log at `log_path`, from
/// line `from` on.
std::map<int, int> resets(const std::string& log_path, size_t from = 0);

/// Requests in the emulator's request log at `log_path` that change a server: a PATCH, or a POST other
/// than logging in (to the SessionService).
size_t changing_requests(const std::string& log_path);

/// Runs `body` with Debian's Python after lines that open `c`, one kept-alive HTTPS connection to the
/// emulator at `base` trusting `ca`, and set `auth` to admin:admin's Basic header; `args` follow
/// `ca` and `base` in sys.argv (from sys.argv[3] on).
RunResult redfish_python(const std::string& body, const std::string& ca, const std::string& base,
                         const std::vector<std::string>& args);

/// A plain HTTP web server (Python's http.server, tests/support/http_server.py) serving `dir`: the
/// server a site points its BMCs' virtual media at (the baremetal provider's seed_url).
class FileServer : public EmulatorProcess {
 public:
  explicit FileServer(const std::string& dir)
      : EmulatorProcess(source_dir() + "/tests/support/http_server.py", {"--directory", dir}) {}
};

/// What an ISO 9660 image holds, read back with xorriso: its volume id ("" when xorriso cannot read
/// it) and each file's contents by name (Rock Ridge names, the root directory only).
struct IsoContents {
  std::string volume_id;
  std::map<std::string, std::string> files;
};
IsoContents read_iso(const std::string& path);

}  // namespace plinth::test
