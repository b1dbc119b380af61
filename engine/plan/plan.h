#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/shared.h"
#include "engine/provider/resource.h"

namespace plinth::plan {

enum class Action { NoOp, Create, Update, Replace, Delete };
const char* to_string(Action a);

struct AttributeChange {
  std::string path;            ///< attribute name, dotted for nested objects ("bios.SriovEnable")
  Shared<Json> before;  ///< empty: absent before (a create shares its values with the resource)
  Shared<Json> after;   ///< empty: absent after
  bool forces_replacement = false;
  bool sensitive = false;
  bool operator==(const AttributeChange&) const = default;
};

struct ResourceChange {
  std::string address;
  std::string type;
  Action action = Action::NoOp;
  std::vector<AttributeChange> changes;  ///< empty for no-op
  Shared<Resource> before;  ///< prior (state) resource
  Shared<Resource> after;   ///< desired resource (diff shares it with the expanded graph)
  /// A Delete of an object a create-before-destroy replace superseded and
  /// that is still recorded as deposed in state (docs/apply.md); `address`
  /// is then "ADDRESS (deposed)" and `before` the old object.
  bool deposed = false;
  /// A replace asked for with -replace ADDRESS (Terraform's "replace_by_request"),
  /// whether or not an attribute forces one.
  bool replace_requested = false;
  /// Why a hash of rendered content changed (`user_data_hash`: what a node
  /// receives), in words: each change of a resource it depends on that the
  /// plan also holds, "plinth.stack.train: driver \"550.54.15\" -> \"550.90.07\"".
  std::vector<std::string> reasons;
  /// Paths of the changed attributes that force the replacement, in path order.
  std::vector<std::string> forced_by() const;
  bool operator==(const ResourceChange&) const = default;
};

/// One resource in state whose observed attributes differ from what state
/// records (found by a refresh, engine/apply/refresh.h).
struct Drift {
  std::string address;
  bool gone = false;  ///< the provider says it no longer exists
  std::vector<AttributeChange> changes;  ///< before = state value, after = observed value
  std::string reason;  ///< gone without anyone deleting it: the provider's why ("reclaimed by AWS ...")
};

struct Summary {
  int create = 0, update = 0, replace = 0, remove = 0, no_op = 0;
  int changes() const { return create + update + replace + remove; }
  bool operator==(const Summary&) const = default;
};

struct Plan {
  std::vector<ResourceChange> changes;  ///< sorted by address
  Summary summary() const;
  bool has_changes() const { return summary().changes() > 0; }
  bool operator==(const Plan&) const = default;
};

/// Pure diff: desired (from expand) against prior (refreshed state). Each
/// address gets exactly one action; attributes marked force_new in the
/// resource type (as the resource's provider declares it) turn an update into
/// a replace, and so does a resource whose provider changed (reported as a
/// change of path "provider", listed first). Only `attributes` are
/// compared (never `computed` or `depends_on`). Nested objects are compared
/// key by key and reported as dotted paths ("bios.SriovEnable"); arrays and
/// scalars are compared whole. A nested path takes its force_new / sensitive
/// marks from the most specific entry in the type table ("encryption.at_rest",
/// else "encryption"); attributes of unknown types are neither. Creates list
/// every desired attribute (before absent), deletes every prior one (after
/// absent). Resources are sorted by graph::address_less; a resource's
/// changes by key, depth first. Each of `deposed` (objects a
/// create-before-destroy replace left behind, StateDocument::deposed) gets a
/// delete after them, at "ADDRESS (deposed)" (docs/apply.md). A change of
/// an attribute named *_hash (a digest of rendered content) gets `reasons`
/// from the changes of what the resource depends on.
Plan diff(const std::vector<Resource>& desired, const std::vector<Resource>& prior,
          const std::vector<Resource>& deposed = {});
/// The same, the plan's `after` values sharing the resources of `desired`
/// (which must not change afterwards) instead of copying them.
Plan diff_sharing(const std::shared_ptr<const std::vector<Resource>>& desired, const std::vector<Resource>& prior,
                  const std::vector<Resource>& deposed = {});
/// The same, `before` values also sharing the resources of `prior` (which
/// must not change afterwards either).
Plan diff_sharing_all(const std::shared_ptr<const std::vector<Resource>>& desired,
                      const std::shared_ptr<const std::vector<Resource>>& prior, const std::vector<Resource>& deposed = {});

/// The action named `text` ("no-op", "create", ...), or nullopt.
std::optional<Action> parse_action(std::string_view text);

// The wire format (lossless: sensitive values included; views that users see
// redact them). from_json throws WireError naming the field.
//   AttributeChange {path, before?, after?, forces_replacement, sensitive}
//   ResourceChange  {address, type, action, changes, before?: Resource, after?: Resource}
//   Summary         {create, update, replace, delete, no_op}
//   Plan            {summary, resource_changes}
void to_json(Json& j, const AttributeChange& c);
void from_json(const Json& j, AttributeChange& c);
void to_json(Json& j, const ResourceChange& rc);
void from_json(const Json& j, ResourceChange& rc);
void to_json(Json& j, const Summary& s);
void from_json(const Json& j, Summary& s);
void to_json(Json& j, const Plan& p);
void from_json(const Json& j, Plan& p);
/// from_json, moving resources and attribute values out of `j` instead of
/// copying them (a plan file's document, read once); `j` is left emptied.
Plan take_plan(Json& j);

}  // namespace plinth::plan
