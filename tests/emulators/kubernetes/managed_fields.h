#pragma once
// Field ownership as the Kubernetes API server tracks it in
// metadata.managedFields (structured-merge-diff, FieldsV1), and server-side
// apply built on it. Simplifications (docs/emulators.md): every list is
// atomic (one field), and status is never tracked.
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace plinth::kube_emulator {

using json = nlohmann::json;

/// A field: the JSON keys from the object's root, e.g. {"spec","hard","cpu"}.
using FieldPath = std::vector<std::string>;
using FieldSet = std::set<FieldPath>;

/// ".spec.hard.requests.nvidia.com/gpu": the way the API server prints a path.
std::string path_string(const FieldPath& path);

/// FieldsV1 ({"f:spec":{"f:hard":{".":{},"f:cpu":{}}}}) from a set and back.
/// A path that is in the set and has owned children gets a "." entry.
json to_fields_v1(const FieldSet& set);
FieldSet from_fields_v1(const json& fields);

/// One entry of metadata.managedFields.
struct ManagedEntry {
  std::string manager;
  std::string operation;  ///< "Apply" or "Update"
  std::string api_version;
  std::string time;
  FieldSet fields;
  bool operator==(const ManagedEntry&) const = default;
};

std::vector<ManagedEntry> read_managed_fields(const json& managed_fields);
json write_managed_fields(const std::vector<ManagedEntry>& entries);

/// Which fields ownership tracks: everything but apiVersion, kind, status
/// (when `status_is_subresource`) and metadata other than labels,
/// annotations, finalizers and ownerReferences.
struct Tracking {
  bool status_is_subresource = true;
  bool tracked(const FieldPath& path) const;
};

/// The fields an apply configuration sets: its leaves (scalars, lists and
/// empty objects), tracked ones only.
FieldSet applied_fields(const json& config, const Tracking& tracking);

/// Fields that differ between two versions of an object: `changed` holds
/// leaves that were added or modified and objects that were added; `removed`
/// holds leaves and objects that are gone.
struct Change {
  FieldSet changed;
  FieldSet removed;
};
Change compare(const json& before, const json& after, const Tracking& tracking);

/// A field another manager owns with a different value.
struct Conflict {
  std::string manager;  ///< as printed: "\"other\"", or "\"other\" using v1" for an Update manager
  FieldPath path;
};

/// "Apply failed with 1 conflict: conflict with \"other\": .spec.hard.cpu", or
/// the multi-conflict form grouped by manager, exactly as the API server says it.
std::string conflict_message(const std::vector<Conflict>& conflicts);

/// What a server-side apply produced.
struct ApplyOutcome {
  json object;                         ///< the merged object (valid only without conflicts)
  std::vector<ManagedEntry> managers;  ///< the new managedFields
  std::vector<Conflict> conflicts;     ///< non-empty: nothing may be written (409)
};

/// Server-side apply of `config` by `manager` onto `live` (null when the
/// object does not exist yet) whose ownership is `managers`. Fields the
/// configuration sets are merged into the object; a field another manager
/// owns whose value would change is a conflict unless `force`, which moves
/// it to `manager`. Fields `manager` applied before and no longer applies
/// are removed unless another manager owns them. `manager` then owns exactly
/// the configuration's fields.
ApplyOutcome server_side_apply(const json& live, const std::vector<ManagedEntry>& managers, const json& config,
                               const std::string& manager, const std::string& api_version, bool force,
                               const std::string& now, const Tracking& tracking);

/// Records an Update (create, replace, merge patch) by `manager`: it takes
/// every field the write added or changed from whoever owned it, and nobody
/// owns removed fields any more. Entries left with no fields are dropped.
void record_update(std::vector<ManagedEntry>& managers, const json& before, const json& after,
                   const std::string& manager, const std::string& api_version, const std::string& now,
                   const Tracking& tracking);

}  // namespace plinth::kube_emulator
