#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/core/source_location.h"
#include "engine/core/wire.h"

namespace plinth {

/// One managed object, identified by a stable address such as
/// "baremetal.node.train-a[3]" (TYPE.NAME[INDEX]) or "net.vlan.ml-fabric"
/// (TYPE.NAME). Desired resources come from `expand`; prior resources come
/// from state. A value type: copy, compare, diff.
struct Resource {
  std::string address;
  std::string type;      ///< PREFIX.KIND, declared by the provider's schema
  std::string name;      ///< the blueprint entity's name ("train-a")
  int index = -1;        ///< position within a counted pool, -1 for singletons
  std::string provider;  ///< the provider that manages it (its schema declares `type`)
  /// What the blueprint asks for: a JSON object, compared attribute by
  /// attribute by the planner. Provider-assigned values go in `computed`.
  Json attributes = Json::object();
  /// Values the provider reported (instance id, BMC serial, IPs); never planned.
  Json computed = Json::object();
  std::vector<std::string> depends_on;  ///< addresses
  SourceLoc source;                     ///< where the blueprint declares it

  bool operator==(const Resource&) const = default;
};

/// Builds "type.name" or "type.name[index]".
std::string make_address(const std::string& type, const std::string& name, int index = -1);

/// A pool member's name outside Plinth (its host name, its Kubernetes Node,
/// its key in outputs): "POOL-INDEX", e.g. "hgx-a-3".
std::string node_name(const std::string& pool, int index);

/// Splits an address back into type, name and index; nullopt if malformed.
struct AddressParts {
  std::string type, name;
  int index = -1;
};
std::optional<AddressParts> parse_address(const std::string& address);

/// The wire format of a resource, shared by state documents, plan files, the
/// JSON plan, the policy view and the plugin protocol:
///   {address, type, name, index, provider, source: "file:line:column",
///    depends_on: [...], attributes: {...}, computed: {...}}
/// from_json throws WireError naming the missing or mistyped field; `source`
/// may also be the {file, line, column} object of 0.1 plan files.
void to_json(Json& j, const Resource& r);
void from_json(const Json& j, Resource& r);
/// from_json, moving `attributes` and `computed` out of `j` instead of
/// copying them (for a document parsed only to be read once, such as a state file).
Resource take_resource(Json& j);

}  // namespace plinth
