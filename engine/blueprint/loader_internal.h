// What the files of the strict plinth/v1 loader share (private to
// engine/blueprint; the interface is loader.h): the typed reading of YAML maps
// (Obj, fields.cpp), the name tables, and the Loader whose members the
// section readers (read_*.cpp), references.cpp and loader.cpp define.
//
// Every document is walked once. Each map is checked against the keys its
// section allows (unknown keys get "did you mean"), each value against its
// type, and every field's position is recorded in the entity's Origin so
// later stages (domain rules, policies, plan) can point at it. Names are
// claimed in hash maps as they are read, so duplicates (also across files)
// cost O(1) each; references are resolved once all files are read.
// yaml-cpp marks are 0-based: Ctx::loc() adds 1 to line and column, and is
// the only place that does.
#pragma once
#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/blueprint/blueprint.h"
#include "engine/blueprint/loader.h"
#include "engine/blueprint/yaml_tree.h"
#include "engine/core/diagnostic.h"
#include "engine/provider/schema.h"

namespace plinth::bp::detail {

using Keys = std::vector<std::string>;

// Allowed keys and values that more than one section reads.
inline const Keys kTransferKeys{"basis", "reference"};
inline const Keys kTransferBases{"adequacy", "scc", "bcr", "derogation"};
inline const Keys kPrecisions{"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"};

constexpr int kNoMin = INT_MIN;
constexpr int kMaxInteger = INT_MAX;

bool starts_with(std::string_view s, std::string_view p);

// How a wrongly typed value is described in messages.
std::string describe(const Node& n);

// Names become parts of resource addresses ("baremetal.node.NAME[3]").
bool valid_name(std::string_view s);

// Quoted scalars are strings: `count: "2"` is not an integer.
bool plain_scalar(const Node& n);

/// A whole number; `*too_large` is set when it is one but does not fit.
std::optional<long long> parse_int(const std::string& s, bool* too_large = nullptr);
std::optional<double> parse_number(const std::string& s);
std::optional<bool> parse_bool(const std::string& s);

/// "did you mean 'x'?" or the list of valid words.
std::string suggest(std::string_view word, const Keys& words);

/// How to write a value of `type` ("an integer", "a map", ...).
const char* type_hint(std::string_view type);

/// One YAML map being read as a section or an entity: checks its keys once,
/// reads typed fields, records each field's position in `origin` under
/// `prefix + key`.
class Obj {
 public:
  struct Entry {
    std::string key;
    Node value;
    SourceLoc key_loc;
    SourceLoc value_loc;
    bool merge = false;  ///< a plain `<<` left unmerged (its value is not a map)
  };

  /// `where` is the map's position (a fallback when the node has none).
  Obj(const Ctx& c, const Node& node, SourceLoc where, std::string label, std::string prefix, Origin* origin,
      const Keys& keys);

  bool ok() const { return ok_; }
  const SourceLoc& loc() const { return loc_; }
  const std::string& label() const { return label_; }
  void set_label(std::string l) { label_ = std::move(l); }
  /// The keys the map may hold.
  const Keys& keys() const { return *keys_; }

  /// Unknown keys go to `out` instead of being reported: they may be
  /// settings of the entity's provider, checked once providers are known.
  void collect_unknown(std::vector<Entry>* out) { extras_ = out; }

  /// Reports unknown and repeated keys. Call once the label names the entity.
  void check_keys() const;

  /// The entry for `key` (the first if repeated), or nullptr; reports a
  /// missing required field at the map's position, unless an unknown key
  /// already reported was meant to be it.
  const Entry* get(std::string_view key, bool required = false) const;

  std::string path(std::string_view key) const { return prefix_ + std::string(key); }

  bool misspelled(std::string_view key) const;

  void record(std::string_view key, const SourceLoc& at) const;

  void wrong_type(const Entry& e, const char* type) const;

  void invalid(const Entry& e, std::string message, std::string hint) const;

  bool str(std::string_view key, std::string& out, bool required = false) const;

  /// A string that must be one of `allowed`; `hint` replaces "did you mean".
  bool enumeration(std::string_view key, std::string& out, const Keys& allowed, bool required = false,
                   const std::string& hint = "") const;

  /// An integer from `min` to `max` (kMaxInteger: anything an int holds).
  bool integer(std::string_view key, int& out, bool required = false, int min = 0, int max = kMaxInteger) const;

  bool number(std::string_view key, double& out, bool required = false) const;

  bool boolean(std::string_view key, bool& out) const;

  void opt_bool(std::string_view key, std::optional<bool>& out) const;

  /// A list of strings; element positions are recorded as "key.0", "key.1", ...
  bool str_list(std::string_view key, std::vector<std::string>& out, bool required = false) const;

  /// A map of strings to strings; entry positions are recorded as "key.NAME".
  bool str_map(std::string_view key, std::map<std::string, std::string>& out) const;

  /// A nested map (`hardware:`), read with the same label and a longer prefix.
  std::optional<Obj> sub(std::string_view key, const Keys& keys, bool required = false) const;

  /// A list section (`node_pools:`); nullopt (and an error) when not a list.
  std::optional<Node> list(std::string_view key) const;

  const Ctx& ctx() const { return *c_; }

 private:
  const Ctx* c_;
  SourceLoc loc_;
  std::string label_;
  std::string prefix_;
  Origin* origin_;
  const Keys* keys_;
  std::vector<Entry> entries_;
  std::vector<Entry>* extras_ = nullptr;
  bool ok_ = false;
};

/// Where each name was first defined, per kind; shared by every file.
struct NameTable {
  const char* kind;     ///< "stack", "node pool", ...
  const char* section;  ///< "stacks", "node_pools", ...
  std::unordered_map<std::string, std::pair<SourceLoc, const char*>> first;

  /// Registers `name`; reports BP006 and returns false if it is taken.
  bool claim(const Ctx& c, const std::string& name, const SourceLoc& at, const char* as_kind) {
    auto [it, inserted] = first.try_emplace(name, at, as_kind);
    if (inserted) return true;
    std::string msg = "duplicate " + std::string(as_kind) + " '" + name + "': the first is at " + it->second.first.str();
    if (std::string_view(as_kind) != it->second.second) msg += " (a " + std::string(it->second.second) + ")";
    c.error("BP006", at, msg, std::string("names must be unique within ") + section + "; rename one of them");
    return false;
  }
  bool has(const std::string& name) const { return first.count(name) > 0; }
  Keys names() const {
    Keys out;
    out.reserve(first.size());
    for (const auto& [n, _] : first) out.push_back(n);
    std::sort(out.begin(), out.end());
    return out;
  }
};

/// Reads blueprint files into one Blueprint, reporting into `diags`.
class Loader {
 public:
  Loader(Blueprint& bp, Diagnostics& diags) : bp_(bp), diags_(diags) {}

  void load_text(const std::string& file, const std::string& text);
  /// Resolves references between entities of every file read so far.
  void check_references();
  /// Resolves every provider the blueprint declares or a pool names
  /// (LoadOptions::resolve_provider for those the registry does not know),
  /// then checks each pool's provider and its settings against the
  /// provider's schema.
  void check_providers(const LoadOptions& options);

 private:
  // read_document.cpp
  void load_document(const Ctx& c, const Node& root);
  void load_metadata(const Obj& top);
  void load_stacks(const Obj& top);
  // read_infra.cpp
  void load_networks(const Obj& top);
  void load_storage(const Obj& top);
  // read_compute.cpp
  void load_node_pools(const Obj& top);
  void load_burst_pools(const Obj& top);
  // read_cluster.cpp
  void load_access(const Obj& top);
  void load_monitoring(const Obj& top);
  void load_clusters(const Obj& top);
  // read_providers.cpp
  void load_providers(const Obj& top);
  // read_document.cpp
  void load_outputs(const Obj& top);
  /// Checks one setting value against its spec; reports at its position.
  bool check_setting(const SettingSpec& spec, Json& value, const std::string& path,
                     const std::map<std::string, SourceLoc>& locs, const std::string& label);

  /// Keys of a pool that its section does not define, kept until the pool's
  /// provider is known.
  struct PendingPool {
    const char* section;  // "node_pools" | "burst_pools" | "monitoring"
    size_t index;         // into bp_.node_pools / bp_.burst_pools (0 for monitoring)
    std::string label;
    const Keys* own;         // the keys its section defines
    SourceLoc at;            // the pool
    SourceLoc provider_at;   // its provider value, or the pool
    std::vector<std::pair<std::string, SourceLoc>> keys;  // extra keys and where they are written
    Json values = Json::object();
    std::map<std::string, SourceLoc> locs;  // positions of every element of `values`
  };
  void keep_extras(const char* section, size_t index, const Obj& o, const std::vector<Obj::Entry>& extras);
  std::vector<PendingPool> pending_;

  /// The entries of map section `key` of `top` (`stacks:`, `outputs:`, `providers:`):
  /// each name, where it is written and its value. Reports a section that is
  /// no map (BP003) and a malformed name (BP005: "invalid KIND name", with
  /// `name_hint`), whose entry is left out.
  struct NamedEntry {
    std::string name;
    SourceLoc at;
    Node value;
  };
  std::vector<NamedEntry> named_entries(const Obj& top, const char* key, const char* kind,
                                        const char* name_hint = kNameHint);
  static constexpr const char* kNameHint =
      "use letters, digits, '-', '_' and '.', starting with a letter or digit (at most 63 characters)";

  /// Reads the required `name` of a list item, checks its form, names the
  /// entity in `o`'s label and claims it in `table`; false if unusable.
  bool read_name(Obj& o, std::string& name, NameTable& table, const char* kind);
  /// Reports a single-valued section (metadata, monitoring, ...) set twice.
  bool claim_single(const Ctx& c, std::optional<SourceLoc>& first, const char* what, const SourceLoc& at);

  void check_ref(const NameTable& table, const std::string& name, const SourceLoc& at, const std::string& who,
                 const char* define_hint);

  Blueprint& bp_;
  Diagnostics& diags_;
  NameTable stacks_{"stack", "stacks", {}};
  NameTable vlans_{"VLAN", "networks.vlans", {}};
  NameTable fabrics_{"fabric", "networks.fabrics", {}};
  NameTable tiers_{"storage tier", "storage.tiers", {}};
  NameTable backups_{"backup", "storage.backups", {}};
  NameTable pools_{"pool", "node_pools and burst_pools together", {}};
  NameTable namespaces_{"namespace", "access.namespaces", {}};
  NameTable roles_{"role", "access.roles", {}};
  NameTable providers_{"provider", "providers", {}};
  NameTable clusters_{"cluster", "clusters", {}};
  NameTable outputs_{"output", "outputs", {}};
  std::optional<SourceLoc> metadata_at_, audit_logging_at_, transport_at_, monitoring_at_;
};

}  // namespace plinth::bp::detail
