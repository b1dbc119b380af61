#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/source_location.h"

namespace plinth {

using Json = nlohmann::json;

/// One managed object, identified by a stable address such as
/// "baremetal.node.train-a[3]" (TYPE.NAME[INDEX]) or "net.vlan.ml-fabric"
/// (TYPE.NAME). Desired resources come from `expand`; prior resources come
/// from state. A value type: copy, compare, diff.
struct Resource {
  std::string address;
  std::string type;      ///< "baremetal.node", "aws.instance", "net.vlan", ...
  std::string name;      ///< the blueprint entity's name ("train-a")
  int index = -1;        ///< position within a counted pool, -1 for singletons
  std::string provider;  ///< "baremetal" | "aws" | "gcp" | "azure" | "plinth" (logical resources)
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

/// Splits an address back into type, name and index; nullopt if malformed.
struct AddressParts {
  std::string type, name;
  int index = -1;
};
std::optional<AddressParts> parse_address(const std::string& address);

/// How a resource type's attributes behave in a plan, declared as data
/// (osquery's table specs idea) in engine/provider/types.cpp; docs/resources.md
/// is generated from the same table.
struct AttributeSpec {
  std::string name;
  bool force_new = false;  ///< a change replaces the resource instead of updating it
  bool sensitive = false;  ///< shown as (sensitive) in plans, encrypted in state
  std::string description;
};

struct ResourceType {
  std::string type;  ///< "baremetal.node"
  std::string provider;
  std::string description;
  std::vector<AttributeSpec> attributes;
  /// The attribute `plinth import ADDRESS ID` sets to ID before reading the
  /// resource through its provider ("bmc_endpoint"); "" when the type cannot
  /// be imported.
  std::string import_id;

  const AttributeSpec* find(const std::string& attr) const;
};

/// Every resource type Plinth knows, sorted by type.
const std::vector<ResourceType>& resource_types();
/// nullptr for an unknown type.
const ResourceType* find_resource_type(const std::string& type);

}  // namespace plinth
