#pragma once
// Small pieces the Resource Manager files share: ARM's error shape, path
// segments, URL encoding, the $filter subset, the VM size catalog.
#include <string>
#include <vector>

#include "tests/emulators/azure/http.h"
#include "tests/emulators/azure/options.h"

namespace plinth::azure_emulator {

/// ARM's error answer: {"error": {"code", "message"[, "target"]}}.
Response arm_error(int status, const std::string& code, const std::string& message, const std::string& target = "");

/// 400 InvalidRequestContent for a body that is not a JSON object.
Response invalid_content(const std::string& body);

/// "/a/b//c" -> {"a", "b", "c"} (case kept).
std::vector<std::string> segments(const std::string& path);

std::string url_encode(const std::string& s);

/// The $filter subset of the generic resources list: clauses joined with
/// "and", each `resourceType|resourceGroup|name|location|tagName|tagValue eq 'value'`.
struct Filter {
  std::vector<std::pair<std::string, std::string>> clauses;  ///< lower-case field -> value
  bool by_tag = false;
  bool matches(const json& resource) const;
};
/// "" or the error text (naming the clause that is not understood).
std::string parse_filter(const std::string& text, Filter& out);

/// The VM sizes every emulator knows (docs/emulators.md lists them).
const std::vector<VmSize>& builtin_sizes();

/// eastus -> "East US" (the display names provider metadata lists).
std::string location_display_name(const std::string& location);

}  // namespace plinth::azure_emulator
