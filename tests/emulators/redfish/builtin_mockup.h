#pragma once
// The DMTF mockup compiled into redfish-emulator (public-rackmount1, from
// tests/data/third_party/redfish), served when no --mockup is given.
#include <string_view>
#include <vector>

namespace plinth::redfish_emulator {

/// One file of a mockup tree: its path relative to the tree's root
/// ("Systems/437XR1138R2/index.json") and its bytes.
struct MockupFile {
  std::string_view path;
  std::string_view content;
};

/// The name of the built-in mockup, as its folder is named in tests/data/third_party/redfish.
extern const char* const kBuiltinMockupName;

/// Every .json and .xml file of the built-in mockup, sorted by path.
const std::vector<MockupFile>& builtin_mockup();

}  // namespace plinth::redfish_emulator
