#pragma once
// A redfish-emulator child process for provider tests.
#include <string>
#include <vector>

#include "tests/support/emulator_process.h"

namespace plinth::test {

/// redfish-emulator with --mockup tests/data/third_party/redfish/MOCKUP plus `args`.
class Emulator : public EmulatorProcess {
 public:
  explicit Emulator(std::vector<std::string> args, const std::string& mockup = "public-rackmount1")
      : EmulatorProcess(REDFISH_EMULATOR_BINARY, with_mockup(std::move(args), mockup)) {}
  /// https://127.0.0.1:PORT/bmc/I
  std::string bmc(int i) const { return base() + "/bmc/" + std::to_string(i); }

 private:
  static std::vector<std::string> with_mockup(std::vector<std::string> args, const std::string& mockup) {
    args.insert(args.begin(), {"--mockup", testdata_dir() + "/redfish/" + mockup});
    return args;
  }
};

}  // namespace plinth::test
