// Strict plinth/v1 loader: yaml-cpp nodes -> bp::Blueprint + diagnostics.
//
// Every document is walked once. Each map is checked against the keys its
// section allows (unknown keys get "did you mean"), each value against its
// type, and every field's position is recorded in the entity's Origin so
// later stages (domain rules, policies, plan) can point at it. Names are
// claimed in hash maps as they are read, so duplicates (also across files)
// cost O(1) each; references are resolved once all files are read.
// yaml-cpp marks are 0-based: Ctx::loc() adds 1 to line and column, and is
// the only place that does.
#include "engine/blueprint/loader.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <deque>
#include <optional>
#include <regex>
#include <set>
#include <filesystem>
#include <sstream>
#include <unordered_map>

#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/core/strings.h"
#include "engine/provider/registry.h"

namespace plinth::bp {
namespace {

using Keys = std::vector<std::string>;

// A read-only YAML tree built from yaml-cpp's parser events. yaml-cpp's own
// YAML::Node tree costs about three times the parse itself (reference-counted
// nodes, map lookups); this one is plain vectors in an arena that lives as
// long as one file is being read.
struct Raw;

/// A handle to one node; a default-constructed Node is null.
class Node {
 public:
  Node() = default;
  explicit Node(const Raw* r) : r_(r) {}
  bool IsNull() const;
  bool IsScalar() const;
  bool IsSequence() const;
  bool IsMap() const;
  /// The scalar's text ("" for other kinds).
  const std::string& Scalar() const;
  /// True for a quoted scalar ('x' or "x"), which is always a string.
  bool quoted() const;
  /// 0-based position; line < 0 when unknown.
  int line() const;
  int column() const;
  size_t size() const;
  /// Sequence items, in order.
  const Node* begin() const;
  const Node* end() const;
  /// Map entries, in order (repeated keys are kept).
  const std::vector<std::pair<Node, Node>>& pairs() const;

 private:
  const Raw* r_ = nullptr;
};

struct Raw {
  enum Kind : unsigned char { Null, Scalar, Sequence, Map } kind = Null;
  bool quoted = false;
  bool awaiting_value = false;  // building: the map's last key has no value yet
  int line = -1, column = -1;
  std::string text;
  std::vector<Node> items;
  std::vector<std::pair<Node, Node>> entries;
};

const std::string kEmpty;
const std::vector<std::pair<Node, Node>> kNoPairs;

bool Node::IsNull() const { return !r_ || r_->kind == Raw::Null; }
bool Node::IsScalar() const { return r_ && r_->kind == Raw::Scalar; }
bool Node::IsSequence() const { return r_ && r_->kind == Raw::Sequence; }
bool Node::IsMap() const { return r_ && r_->kind == Raw::Map; }
const std::string& Node::Scalar() const { return IsScalar() ? r_->text : kEmpty; }
bool Node::quoted() const { return r_ && r_->quoted; }
int Node::line() const { return r_ ? r_->line : -1; }
int Node::column() const { return r_ ? r_->column : -1; }
size_t Node::size() const { return !r_ ? 0 : IsMap() ? r_->entries.size() : r_->items.size(); }
const Node* Node::begin() const { return IsSequence() ? r_->items.data() : nullptr; }
const Node* Node::end() const { return IsSequence() ? r_->items.data() + r_->items.size() : nullptr; }
const std::vector<std::pair<Node, Node>>& Node::pairs() const { return IsMap() ? r_->entries : kNoPairs; }

/// Builds the documents of one stream into `arena`.
class TreeBuilder : public YAML::EventHandler {
 public:
  explicit TreeBuilder(std::deque<Raw>& arena) : arena_(arena) {}
  std::vector<Node> docs;
  std::vector<YAML::Mark> bad_utf8;  ///< scalars (keys and values) that are not valid UTF-8
  std::optional<YAML::Mark> stalled;  ///< where the parser stopped making progress
  /// Where maps and lists first nest deeper than kMaxYamlDepth: what plinth
  /// reads back from its own state and plan files is limited to
  /// kMaxJsonDepth, so a blueprint may not nest deeper than a real one does.
  std::optional<YAML::Mark> too_deep;
  static constexpr size_t kMaxYamlDepth = 64;

  void OnDocumentStart(const YAML::Mark& m) override {
    // yaml-cpp 0.7 can start document after empty document at the same
    // position forever (", x" at the top level): stop at the second.
    if (!docs.empty() && m.pos == last_start_) stalled = m;
    last_start_ = m.pos;
    open_.clear();
    root_ = Node();
    root_map_ = nullptr;
  }
  void OnDocumentEnd() override {
    // Top-level keys starting with "x-" are extension fields, ignored: a
    // place for anchors that pools merge in (docs/blueprint.md).
    if (root_map_)
      std::erase_if(root_map_->entries, [](const std::pair<Node, Node>& e) {
        return e.first.IsScalar() && !e.first.quoted() && e.first.Scalar().rfind("x-", 0) == 0;
      });
    docs.push_back(root_);
  }
  void OnNull(const YAML::Mark& m, YAML::anchor_t a) override { attach(make(Raw::Null, m), a); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t a) override {
    auto it = anchors_.find(a);
    attach(it == anchors_.end() ? Node() : it->second, 0);
  }
  void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t a, const std::string& value) override {
    if (!valid_utf8(value)) bad_utf8.push_back(m);
    Raw& r = make(Raw::Scalar, m);
    r.text = value;
    r.quoted = tag == "!";
    attach(r, a);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
    if (open_.size() >= kMaxYamlDepth && !too_deep) too_deep = m;
    Raw& r = make(Raw::Sequence, m);
    attach(r, a);
    open_.push_back(&r);
  }
  void OnSequenceEnd() override { open_.pop_back(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
    if (open_.size() >= kMaxYamlDepth && !too_deep) too_deep = m;
    Raw& r = make(Raw::Map, m);
    if (open_.empty()) root_map_ = &r;
    attach(r, a);
    open_.push_back(&r);
  }
  void OnMapEnd() override {
    merge_keys(*open_.back());
    open_.pop_back();
  }

 private:
  Raw& make(Raw::Kind k, const YAML::Mark& m) {
    Raw& r = arena_.emplace_back();
    r.kind = k;
    if (!m.is_null()) {
      r.line = m.line;
      r.column = m.column;
    }
    return r;
  }
  void attach(Raw& r, YAML::anchor_t a) { attach(Node(&r), a); }
  void attach(Node n, YAML::anchor_t a) {
    if (a) anchors_[a] = n;
    if (open_.empty()) {
      root_ = n;
      return;
    }
    Raw& parent = *open_.back();
    if (parent.kind == Raw::Sequence) {
      parent.items.push_back(n);
    } else if (parent.awaiting_value) {
      parent.entries.back().second = n;
      parent.awaiting_value = false;
    } else {
      parent.entries.emplace_back(n, Node());
      parent.awaiting_value = true;
    }
  }

  /// YAML merge keys (`<<: *base`, `<<: [*a, *b]`, yaml.org/type/merge):
  /// the entries of the merged maps that the map does not set itself are
  /// added to it (earlier maps in a list win), keeping their own positions.
  /// A `<<` whose value is not a map or a list of maps stays, and the loader
  /// reports it.
  static void merge_keys(Raw& map) {
    auto is_merge = [](const std::pair<Node, Node>& e) {
      if (!e.first.IsScalar() || e.first.quoted() || e.first.Scalar() != "<<") return false;
      if (e.second.IsMap()) return true;
      if (!e.second.IsSequence() || e.second.size() == 0) return false;
      return std::all_of(e.second.begin(), e.second.end(), [](const Node& n) { return n.IsMap(); });
    };
    if (std::none_of(map.entries.begin(), map.entries.end(), is_merge)) return;
    std::vector<std::pair<Node, Node>> own, sources;
    for (const auto& e : map.entries) (is_merge(e) ? sources : own).push_back(e);
    std::unordered_map<std::string, bool> taken;
    for (const auto& e : own)
      if (e.first.IsScalar()) taken[e.first.Scalar()] = true;
    std::vector<std::pair<Node, Node>> merged = own;
    for (const auto& src : sources) {
      std::vector<Node> maps;
      if (src.second.IsMap()) maps.push_back(src.second);
      else maps.assign(src.second.begin(), src.second.end());
      for (const Node& m : maps)
        for (const auto& e : m.pairs())
          if (e.first.IsScalar() && taken.emplace(e.first.Scalar(), true).second) merged.push_back(e);
    }
    map.entries = std::move(merged);
  }

  std::deque<Raw>& arena_;
  int last_start_ = -1;
  std::vector<Raw*> open_;
  std::unordered_map<YAML::anchor_t, Node> anchors_;
  Node root_;
  Raw* root_map_ = nullptr;  ///< the document's root when it is a map
};

// Allowed keys per section, in the order docs/blueprint.md lists them.
const Keys kTopKeys{"apiVersion", "kind",       "metadata",    "stacks", "networks",  "storage",
                    "node_pools", "burst_pools", "access", "monitoring", "clusters", "providers"};
const Keys kProviderDeclKeys{"exec", "sha256", "options"};
const Keys kMetadataKeys{"name", "owner", "compliance", "labels"};
const Keys kStackKeys{"driver", "cuda", "cudnn", "frameworks", "images", "kernel_modules", "container_toolkit", "cuda_compat",
                       "precision"};
const Keys kNetworksKeys{"vlans", "fabrics"};
const Keys kVlanKeys{"name", "id", "cidr", "vrf", "purpose", "mtu"};
const Keys kFabricKeys{"name", "kind", "speed_gbps", "topology", "oversubscription", "pfc", "ecn", "rdma_stack"};
const Keys kStorageKeys{"tiers", "backups"};
const Keys kTierKeys{"name",           "kind",       "capacity_tb", "backend", "region",
                     "classification", "encryption", "lifecycle",   "export",  "mount_point",
                     "transfer"};
const Keys kTransferKeys{"basis", "reference"};
const Keys kEncryptionKeys{"at_rest", "in_transit", "kms_key"};
const Keys kLifecycleKeys{"transition_from", "after_days", "expire_days"};
const Keys kBackupKeys{"name", "source", "target", "schedule", "retention_days", "dr_test_interval_days"};
const Keys kNodePoolKeys{"name",  "provider", "count", "role",     "hardware", "largest_model_gb",
                         "stack", "fabric",   "boot",  "bios",     "networks", "storage",
                         "bmc",   "mig",      "largest_model", "interfaces", "os"};
const Keys kModelKeys{"params_b", "precision", "training"};
const Keys kInterfacesKeys{"bond", "rdma"};
const Keys kHardwareKeys{"gpu", "gpus_per_node", "cpu_cores", "memory_gb", "rdma_nics"};
const Keys kBootKeys{"method", "image"};
const Keys kBmcKeys{"endpoints", "credentials", "ca_bundle"};
const Keys kMigKeys{"profile", "instances", "layout", "profiles"};
const Keys kBurstPoolKeys{"name",    "provider", "region",        "zone",     "instance_type", "desired", "max",
                          "spot",    "stack",    "checkpointing", "networks", "storage",       "os",      "transfer"};
const Keys kCheckpointingKeys{"interval_minutes", "target"};
const Keys kAccessKeys{"namespaces", "roles", "audit_logging", "transport"};
const Keys kNamespaceKeys{"name", "quota", "service_accounts"};
const Keys kQuotaKeys{"gpus", "cpu", "memory"};
const Keys kRoleKeys{"name", "subjects", "namespaces", "verbs", "resources", "scope"};
const Keys kRoleScopes{"namespace", "cluster"};
const Keys kClusterKeys{"name", "context", "pools", "provider"};
const Keys kAuditLoggingKeys{"api_server", "storage", "retention_days"};
const Keys kTransportKeys{"tls_min", "mtls"};
const Keys kMonitoringKeys{"dcgm", "prometheus", "grafana", "provider"};

// Allowed values of enumerated fields.
const Keys kTierKinds{"nvme", "parallel-fs", "nfs", "object"};
const Keys kObjectBackends{"s3", "gcs", "azure-blob", "ceph"};
const Keys kParallelFsBackends{"lustre", "gpfs", "weka", "beegfs"};
const Keys kClassifications{"public", "internal", "confidential", "pii", "phi"};
const Keys kAtRest{"aes-256-xts", "aes-256-gcm", "luks2", "sed", "none"};
const Keys kInTransit{"tls1.3", "tls1.2", "none"};
const Keys kRoles{"training", "inference", "preprocessing"};
const Keys kBootMethods{"pxe", "uefi-http", "virtual-media"};
const Keys kFabricKinds{"infiniband", "roce-v2", "ethernet"};
const Keys kTopologies{"spine-leaf", "fat-tree", "rail-optimized", "dragonfly"};
const Keys kTlsVersions{"1.2", "1.3"};
const Keys kSubjectKinds{"group", "user", "serviceaccount"};
const Keys kKernelModules{"open", "proprietary"};
const Keys kPrecisions{"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"};
const Keys kTrainingMethods{"full", "lora"};
const Keys kRdmaStacks{"doca-ofed", "inbox"};
const Keys kOperatingSystems{"ubuntu-22.04", "ubuntu-24.04", "rhel-8", "rhel-9", "rocky-8", "rocky-9"};
const Keys kTransferBases{"adequacy", "scc", "bcr", "derogation"};
const Keys kMigLayouts{"all-balanced"};

constexpr int kNoMin = INT_MIN;
constexpr int kMaxInteger = INT_MAX;
// Limits on sizes that become resources, loops or memory (docs/blueprint.md,
// "Limits"): a typo such as `count: 2000000000` is an error naming the limit,
// not an out-of-memory abort in plan.
constexpr int kMaxPoolNodes = 100000;     // nodes in a node pool; instances (desired, max) in a burst pool
constexpr int kMaxGpusPerNode = 64;
constexpr int kMaxRdmaNics = 64;          // per node
constexpr int kMaxCpuCores = 16384;
constexpr int kMaxMemoryGb = 1048576;     // 1 PiB
constexpr int kMaxMigInstances = 64;      // per GPU; the catalog's profiles allow at most 7

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// How a wrongly typed value is described in messages.
std::string describe(const Node& n) {
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  if (n.IsNull()) return "nothing (null)";
  const std::string& s = n.Scalar();
  return "\"" + (s.size() > 40 ? s.substr(0, 37) + "..." : s) + "\"";
}

// Names become parts of resource addresses ("baremetal.node.NAME[3]").
bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 63 || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.';
  });
}

bool valid_env_name(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

// Quoted scalars are strings: `count: "2"` is not an integer.
bool plain_scalar(const Node& n) { return n.IsScalar() && !n.quoted(); }

/// A whole number; `*too_large` is set when it is one but does not fit.
std::optional<long long> parse_int(const std::string& s, bool* too_large = nullptr) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range && p == s.data() + s.size() && too_large && s[0] != '-') *too_large = true;
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  if (v > INT_MAX && too_large) *too_large = true;
  return v;
}

std::optional<double> parse_number(const std::string& s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<bool> parse_bool(const std::string& s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

/// The word (key or enumerated value) `word` was probably meant to be: a
/// close spelling, a word it extends ("cuda_version" -> "cuda"), or one it
/// abbreviates ("roce" -> "roce-v2").
std::optional<std::string> intended(std::string_view word, const Keys& words) {
  if (auto m = closest_match(word, words)) return m;
  for (const std::string& k : words) {
    if (word.size() > k.size() + 1 && word.substr(0, k.size()) == k && (word[k.size()] == '_' || word[k.size()] == '-'))
      return k;
    if (word.size() >= 3 && k.size() > word.size() && std::string_view(k).substr(0, word.size()) == word) return k;
  }
  return std::nullopt;
}

/// "did you mean 'x'?" or the list of valid words.
std::string suggest(std::string_view word, const Keys& words) {
  auto m = intended(word, words);
  return m ? "did you mean '" + *m + "'?" : did_you_mean(word, words);
}

const char* type_hint(std::string_view type) {
  if (type == "an integer") return "write a whole number without quotes, e.g. 4";
  if (type == "a number") return "write a number without quotes, e.g. 12.5";
  if (type == "a boolean") return "write true or false without quotes";
  if (type == "a list") return "write a YAML list: [a, b] or one '- item' per line";
  if (type == "a map") return "write a YAML map of 'key: value' pairs";
  return "write a single value; quote it if it contains ':' or '#'";
}

/// The file being read and where diagnostics go.
struct Ctx {
  std::string file;
  Diagnostics* diags;

  SourceLoc loc(const Node& n) const {
    if (n.line() < 0) return {file, 0, 0};
    return {file, n.line() + 1, n.column() + 1};
  }
  void error(const char* code, SourceLoc at, std::string message, std::string hint = "") const {
    diags->push_back({code, Severity::Error, std::move(message), std::move(at), "", std::move(hint)});
  }
};

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
      const Keys& keys)
      : c_(&c), loc_(std::move(where)), label_(std::move(label)), prefix_(std::move(prefix)), origin_(origin),
        keys_(&keys) {
    if (!node.IsMap()) {
      if (prefix_.empty())
        c_->error("BP003", loc_, label_ + " must be a map, not " + describe(node), type_hint("a map"));
      else
        c_->error("BP003", loc_,
                  "'" + prefix_.substr(0, prefix_.size() - 1) + "' in " + label_ + " must be a map, not " +
                      describe(node),
                  type_hint("a map"));
      return;
    }
    ok_ = true;
    entries_.reserve(node.size());
    for (const auto& [k, v] : node.pairs()) {
      Entry e;
      e.key = k.Scalar();
      e.merge = e.key == "<<" && !k.quoted();
      e.value = v;
      e.key_loc = c_->loc(k);
      // A null value (`key:`) has no useful mark of its own: point at the key.
      e.value_loc = v.IsNull() || v.line() < 0 ? e.key_loc : c_->loc(v);
      entries_.push_back(std::move(e));
    }
  }

  bool ok() const { return ok_; }
  const SourceLoc& loc() const { return loc_; }
  const std::string& label() const { return label_; }
  void set_label(std::string l) { label_ = std::move(l); }

  /// Unknown keys go to `out` instead of being reported: they may be
  /// settings of the entity's provider, checked once providers are known.
  void collect_unknown(std::vector<Entry>* out) { extras_ = out; }

  /// Reports unknown and repeated keys. Call once the label names the entity.
  void check_keys() const {
    for (size_t i = 0; i < entries_.size(); ++i) {
      const Entry& e = entries_[i];
      if (e.merge) {  // a merge key TreeBuilder could not merge
        c_->error("BP003", e.key_loc, "the YAML merge key '<<' in " + label_ + " must name a map, not " + describe(e.value),
                  "write '<<: *name' where '&name' marks a map (or '<<: [*a, *b]'); see docs/blueprint.md");
        continue;
      }
      if (std::find(keys_->begin(), keys_->end(), e.key) == keys_->end()) {
        if (extras_) {
          bool repeated = false;
          for (const Entry& x : *extras_) repeated = repeated || x.key == e.key;
          if (repeated)
            c_->error("BP010", e.key_loc, "duplicate key '" + path(e.key) + "' in " + label_,
                      "remove one of them; YAML keeps only one value per key");
          else
            extras_->push_back(e);
          continue;
        }
        c_->error("BP002", e.key_loc, "unknown key '" + path(e.key) + "' in " + label_, suggest(e.key, *keys_));
        continue;
      }
      for (size_t j = 0; j < i; ++j) {
        if (entries_[j].key == e.key) {
          c_->error("BP010", e.key_loc,
                    "duplicate key '" + path(e.key) + "' in " + label_ + ": the first is at " +
                        entries_[j].key_loc.str(),
                    "remove one of them; YAML keeps only one value per key");
          break;
        }
      }
    }
  }

  /// The entry for `key` (the first if repeated), or nullptr; reports a
  /// missing required field at the map's position, unless an unknown key
  /// already reported was meant to be it.
  const Entry* get(std::string_view key, bool required = false) const {
    for (const Entry& e : entries_)
      if (e.key == key) return &e;
    if (required && !misspelled(key))
      c_->error("BP004", loc_, "missing required field '" + path(key) + "' in " + label_,
                "add '" + std::string(key) + ":' (see docs/blueprint.md)");
    return nullptr;
  }

  std::string path(std::string_view key) const { return prefix_ + std::string(key); }

  bool misspelled(std::string_view key) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
      if (std::find(keys_->begin(), keys_->end(), e.key) != keys_->end()) return false;
      auto meant = intended(e.key, *keys_);
      return meant && *meant == key;
    });
  }

  void record(std::string_view key, const SourceLoc& at) const {
    if (origin_) origin_->fields[path(key)] = at;
  }

  void wrong_type(const Entry& e, const char* type) const {
    c_->error("BP003", e.value_loc,
              "'" + path(e.key) + "' in " + label_ + " must be " + type + ", not " + describe(e.value),
              type_hint(type));
  }

  void invalid(const Entry& e, std::string message, std::string hint) const {
    c_->error("BP005", e.value_loc, std::move(message), std::move(hint));
  }

  bool str(std::string_view key, std::string& out, bool required = false) const {
    const Entry* e = get(key, required);
    if (!e) return false;
    if (!e->value.IsScalar()) {
      wrong_type(*e, "a string");
      return false;
    }
    out = e->value.Scalar();
    record(key, e->value_loc);
    return true;
  }

  /// A string that must be one of `allowed`; `hint` replaces "did you mean".
  bool enumeration(std::string_view key, std::string& out, const Keys& allowed, bool required = false,
                   const std::string& hint = "") const {
    std::string v;
    if (!str(key, v, required)) return false;
    if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
      const Entry* e = get(key);
      invalid(*e, "invalid " + path(key) + " '" + v + "' in " + label_ + " (expected one of: " + join(allowed, ", ") + ")",
              hint.empty() ? suggest(v, allowed) : hint);
      return false;
    }
    out = v;
    return true;
  }

  /// An integer from `min` to `max` (kMaxInteger: anything an int holds).
  bool integer(std::string_view key, int& out, bool required = false, int min = 0, int max = kMaxInteger) const {
    const Entry* e = get(key, required);
    if (!e) return false;
    std::optional<long long> v;
    bool huge = false;
    if (plain_scalar(e->value)) v = parse_int(e->value.Scalar(), &huge);
    if (huge || (v && *v > max)) {
      invalid(*e, "'" + path(key) + "' in " + label_ + " is " + e->value.Scalar() + ", more than the limit of " +
                      std::to_string(max),
              max == kMaxInteger ? "use a smaller number" : "use at most " + std::to_string(max) + " (docs/blueprint.md, \"Limits\")");
      return false;
    }
    if (!v || *v < INT_MIN) {
      wrong_type(*e, "an integer");
      return false;
    }
    record(key, e->value_loc);
    if (min != kNoMin && *v < min) {
      invalid(*e, "'" + path(key) + "' in " + label_ + " must be at least " + std::to_string(min) + ", not " +
                      std::to_string(*v),
              "use a value of " + std::to_string(min) + " or more");
      return false;
    }
    out = static_cast<int>(*v);
    return true;
  }

  bool number(std::string_view key, double& out, bool required = false) const {
    const Entry* e = get(key, required);
    if (!e) return false;
    std::optional<double> v;
    if (plain_scalar(e->value)) v = parse_number(e->value.Scalar());
    if (!v) {
      wrong_type(*e, "a number");
      return false;
    }
    record(key, e->value_loc);
    if (*v < 0) {
      invalid(*e, "'" + path(key) + "' in " + label_ + " must not be negative, not " + e->value.Scalar(),
              "use 0 or a positive number");
      return false;
    }
    out = *v;
    return true;
  }

  bool boolean(std::string_view key, bool& out) const {
    const Entry* e = get(key);
    if (!e) return false;
    std::optional<bool> v;
    if (plain_scalar(e->value)) v = parse_bool(e->value.Scalar());
    if (!v) {
      wrong_type(*e, "a boolean");
      return false;
    }
    record(key, e->value_loc);
    out = *v;
    return true;
  }

  void opt_bool(std::string_view key, std::optional<bool>& out) const {
    bool v = false;
    if (boolean(key, v)) out = v;
  }

  /// A list of strings; element positions are recorded as "key.0", "key.1", ...
  bool str_list(std::string_view key, std::vector<std::string>& out, bool required = false) const {
    const Entry* e = get(key, required);
    if (!e) return false;
    if (!e->value.IsSequence()) {
      wrong_type(*e, "a list");
      return false;
    }
    record(key, e->value_loc);
    out.clear();
    out.reserve(e->value.size());
    size_t i = 0;
    for (const Node& item : e->value) {
      SourceLoc at = c_->loc(item);
      if (!item.IsScalar()) {
        c_->error("BP003", at,
                  "'" + path(key) + "[" + std::to_string(i) + "]' in " + label_ + " must be a string, not " +
                      describe(item),
                  type_hint("a string"));
      } else {
        out.push_back(item.Scalar());
        record(std::string(key) + "." + std::to_string(out.size() - 1), at);
      }
      ++i;
    }
    return true;
  }

  /// A map of strings to strings; entry positions are recorded as "key.NAME".
  bool str_map(std::string_view key, std::map<std::string, std::string>& out) const {
    const Entry* e = get(key);
    if (!e) return false;
    if (!e->value.IsMap()) {
      wrong_type(*e, "a map");
      return false;
    }
    record(key, e->value_loc);
    for (const auto& [k, v] : e->value.pairs()) {
      const std::string& name = k.Scalar();
      SourceLoc at = c_->loc(v.IsNull() || v.line() < 0 ? k : v);
      if (!v.IsScalar()) {
        c_->error("BP003", at,
                  "'" + path(key) + "." + name + "' in " + label_ + " must be a string, not " + describe(v),
                  type_hint("a string"));
        continue;
      }
      if (!out.emplace(name, v.Scalar()).second) {
        c_->error("BP010", c_->loc(k), "duplicate key '" + path(key) + "." + name + "' in " + label_,
                  "remove one of them; YAML keeps only one value per key");
        continue;
      }
      record(std::string(key) + "." + name, at);
    }
    return true;
  }

  /// A nested map (`hardware:`), read with the same label and a longer prefix.
  std::optional<Obj> sub(std::string_view key, const Keys& keys, bool required = false) const {
    const Entry* e = get(key, required);
    if (!e) return std::nullopt;
    Obj o(*c_, e->value, e->value_loc, label_, path(key) + ".", origin_, keys);
    if (!o.ok()) return std::nullopt;
    record(key, e->value_loc);
    o.check_keys();
    return o;
  }

  /// A list section (`node_pools:`); nullopt (and an error) when not a list.
  std::optional<Node> list(std::string_view key) const {
    const Entry* e = get(key);
    if (!e) return std::nullopt;
    if (!e->value.IsSequence()) {
      wrong_type(*e, "a list");
      return std::nullopt;
    }
    return e->value;
  }

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

/// A YAML value as JSON: quoted scalars are strings; plain scalars become
/// integers, numbers, booleans or null where they read as such. Records the
/// position of every element in `locs` under `path` ("subnets.0").
Json yaml_to_json(const Ctx& c, const Node& n, const std::string& path, std::map<std::string, SourceLoc>& locs) {
  if (n.line() >= 0) locs[path] = c.loc(n);
  if (n.IsMap()) {
    Json o = Json::object();
    for (const auto& [k, v] : n.pairs()) {
      const std::string child = path + "." + k.Scalar();
      locs[child] = c.loc(v.IsNull() || v.line() < 0 ? k : v);
      o[k.Scalar()] = yaml_to_json(c, v, child, locs);
    }
    return o;
  }
  if (n.IsSequence()) {
    Json a = Json::array();
    size_t i = 0;
    for (const Node& item : n) a.push_back(yaml_to_json(c, item, path + "." + std::to_string(i++), locs));
    return a;
  }
  if (n.IsNull()) return nullptr;
  const std::string& t = n.Scalar();
  if (n.quoted()) return t;
  if (auto i = parse_int(t)) return *i;
  if (auto d = parse_number(t)) return *d;
  if (auto b = parse_bool(t)) return *b;
  if (t == "null" || t == "~") return nullptr;
  return t;
}

/// How a JSON value is described in messages.
std::string describe_json(const Json& v) {
  if (v.is_object()) return "a map";
  if (v.is_array()) return "a list";
  if (v.is_null()) return "nothing (null)";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  return "\"" + (s.size() > 40 ? s.substr(0, 37) + "..." : s) + "\"";
}

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

/// What is wrong with a BMC endpoint URL: {code, message, hint}, or nullopt.
/// Anything but https:// would send the password in clear text (BP011), as
/// would a URL without a scheme or host (BP011); a user or password in the
/// URL (BP008) would land in plans and state, and is never repeated.
struct EndpointProblem {
  const char* code;
  std::string message, hint;
  bool secret = false;  ///< the URL holds a secret: show neither it nor its source line
};
std::optional<EndpointProblem> endpoint_problem(const std::string& url) {
  const size_t sep = url.find("://");
  std::string scheme = sep == std::string::npos ? "" : url.substr(0, sep);
  for (char& ch : scheme) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::string rest = sep == std::string::npos ? url : url.substr(sep + 3);
  const std::string authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string::npos)
    return EndpointProblem{"BP008",
                           "holds a user name or password in the URL (USER:PASSWORD@HOST); it would be shown in "
                           "plans and stored in state",
                           "remove it from the URL; the BMC user and password come from bmc.credentials (env:NAME "
                           "or file:PATH)",
                           true};
  if (scheme == "https") {
    if (authority.empty() || authority[0] == ':')
      return EndpointProblem{"BP011", "has no host",
                             "write https://HOST[:PORT][/PATH], e.g. https://bmc-{index}.dc1.example"};
    return std::nullopt;
  }
  if (scheme == "http")
    return EndpointProblem{"BP011",
                           "uses plain http: the BMC user and password would be sent in clear text",
                           "use https:// (Redfish services speak TLS; for a private CA set bmc.ca_bundle); plain "
                           "http is never accepted"};
  if (sep == std::string::npos)
    return EndpointProblem{"BP011", "has no scheme", "write it as a URL: https://" + url};
  return EndpointProblem{"BP011", "uses scheme '" + scheme + "'",
                         "BMCs are reached over Redfish: write https://HOST[:PORT][/PATH]"};
}

void check_bmc_endpoint(const Ctx& c, const std::string& url, const SourceLoc& at, const std::string& who) {
  auto p = endpoint_problem(url);
  if (!p) return;
  c.error(p->code, at,
          (p->secret ? "'bmc.endpoints' in " + who + " " : "BMC endpoint '" + url + "' in " + who + " ") + p->message,
          p->hint);
  if (p->secret) c.diags->back().show_source = false;  // the excerpt would print the password
}

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
  void load_document(const Ctx& c, const Node& root);
  void load_metadata(const Obj& top);
  void load_stacks(const Obj& top);
  void load_networks(const Obj& top);
  void load_storage(const Obj& top);
  void load_node_pools(const Obj& top);
  void load_burst_pools(const Obj& top);
  void load_access(const Obj& top);
  void load_monitoring(const Obj& top);
  void load_clusters(const Obj& top);
  void load_providers(const Obj& top);
  /// Checks one setting value against its spec; reports at its position.
  bool check_setting(const SettingSpec& spec, Json& value, const std::string& path,
                     const std::map<std::string, SourceLoc>& locs, const std::string& label);

  /// Keys of a pool that its section does not define, kept until the pool's
  /// provider is known.
  struct PendingPool {
    const char* section;  // "node_pools" | "burst_pools" | "monitoring"
    size_t index;         // into bp_.node_pools / bp_.burst_pools (0 for monitoring)
    std::string label;
    SourceLoc at;            // the pool
    SourceLoc provider_at;   // its provider value, or the pool
    std::vector<std::pair<std::string, SourceLoc>> keys;  // extra keys and where they are written
    Json values = Json::object();
    std::map<std::string, SourceLoc> locs;  // positions of every element of `values`
  };
  void keep_extras(const char* section, size_t index, const Obj& o, const std::vector<Obj::Entry>& extras);
  std::vector<PendingPool> pending_;

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
  std::optional<SourceLoc> metadata_at_, audit_logging_at_, transport_at_, monitoring_at_;
};

void Loader::load_text(const std::string& file, const std::string& text) {
  Ctx c{file, &diags_};
  // YAML text is Unicode; a byte that is not UTF-8 would reach plans, state
  // and reports as invalid JSON text. Refused here, where the position is
  // known. (UTF-16/32 files, which start with a byte order mark, are left to
  // yaml-cpp, which converts them.)
  const bool wide_bom = text.size() >= 2 && ((text[0] == '\xFE' && text[1] == '\xFF') ||
                                              (text[0] == '\xFF' && text[1] == '\xFE') || text[0] == '\0');
  if (auto bad = wide_bom ? std::nullopt : invalid_utf8_offset(text)) {
    int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(*bad), '\n'));
    size_t line_start = text.rfind('\n', *bad == 0 ? 0 : *bad - 1);
    line_start = *bad == 0 || line_start == std::string::npos ? 0 : line_start + 1;
    static const char* hex = "0123456789abcdef";
    auto byte = static_cast<unsigned char>(text[*bad]);
    c.error("BP001", {file, line, static_cast<int>(*bad - line_start) + 1},
            std::string("the file is not valid UTF-8: byte 0x") + hex[byte >> 4] + hex[byte & 0xf] +
                " is not part of a valid UTF-8 sequence",
            "save the file as UTF-8 (e.g. iconv -f LATIN1 -t UTF-8), or remove the stray bytes");
    return;
  }
  std::deque<Raw> arena;
  TreeBuilder builder(arena);
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder) && !builder.stalled) {
    }
  } catch (const YAML::Exception& e) {
    SourceLoc at = e.mark.is_null() ? SourceLoc{file, 0, 0} : SourceLoc{file, e.mark.line + 1, e.mark.column + 1};
    c.error("BP001", at, "YAML syntax error: " + e.msg,
            "fix the YAML near here (indentation, an unclosed quote or bracket, a missing ':')");
    return;
  }
  if (builder.stalled) {
    c.error("BP001", {file, builder.stalled->line + 1, builder.stalled->column + 1},
            "YAML syntax error: the parser cannot read past this point",
            "fix the YAML near here (a stray ',', ']' or '}' outside a flow collection?)");
    return;
  }
  if (builder.too_deep) {
    c.error("BP001", {file, builder.too_deep->line + 1, builder.too_deep->column + 1},
            "maps and lists nest deeper than " + std::to_string(TreeBuilder::kMaxYamlDepth) + " levels here",
            "a blueprint nests a few levels; flatten this value");
    return;
  }
  // A value that is not valid UTF-8 cannot be shown, stored in JSON state or
  // handed to policies, so it stops the load here. The check of the whole
  // text above finds raw bytes in UTF-8 files; this one is the net for what
  // yaml-cpp decodes itself (files that start like UTF-16/32).
  for (const YAML::Mark& m : builder.bad_utf8)
    c.error("BP001", m.is_null() ? SourceLoc{file, 0, 0} : SourceLoc{file, m.line + 1, m.column + 1},
            "this value is not valid UTF-8 text",
            "save the file as UTF-8 (iconv -f LATIN1 -t UTF-8), or write the character as an escape such as "
            "\"\\u00e9\"");
  if (!builder.bad_utf8.empty()) return;
  const std::vector<Node>& docs = builder.docs;
  if (docs.empty()) {
    c.error("BP004", {file, 1, 1}, "the file is empty: missing required fields 'apiVersion' and 'kind'",
            "start it with 'apiVersion: plinth/v1' and 'kind: Blueprint'");
    return;
  }
  for (const Node& d : docs) load_document(c, d);
}

void Loader::load_document(const Ctx& c, const Node& root) {
  SourceLoc where = root.line() < 0 ? SourceLoc{c.file, 1, 1} : c.loc(root);
  Obj top(c, root, where, "the blueprint", "", nullptr, kTopKeys);
  if (!top.ok()) return;
  top.check_keys();

  std::string api, kind;
  if (top.str("apiVersion", api, true) && api != "plinth/v1")
    c.error("BP009", top.get("apiVersion")->value_loc, "unsupported apiVersion '" + api + "'",
            "this version of plinth reads 'apiVersion: plinth/v1'");
  if (top.str("kind", kind, true) && kind != "Blueprint")
    c.error("BP009", top.get("kind")->value_loc, "unsupported kind '" + kind + "'",
            kind == "blueprint" ? "did you mean 'Blueprint'?" : "write 'kind: Blueprint'");

  load_metadata(top);
  load_stacks(top);
  load_networks(top);
  load_storage(top);
  load_node_pools(top);
  load_burst_pools(top);
  load_access(top);
  load_monitoring(top);
  load_clusters(top);
  load_providers(top);
}

bool Loader::claim_single(const Ctx& c, std::optional<SourceLoc>& first, const char* what, const SourceLoc& at) {
  if (!first) {
    first = at;
    return true;
  }
  c.error("BP006", at, std::string(what) + " is defined twice: the first is at " + first->str(),
          "keep " + std::string(what) + " in one file only");
  return false;
}

bool Loader::read_name(Obj& o, std::string& name, NameTable& table, const char* kind) {
  const Ctx& c = o.ctx();
  bool named = o.str("name", name, true);
  if (named && !valid_name(name)) {
    o.invalid(*o.get("name"), "invalid name '" + name + "' for " + o.label(),
              "use letters, digits, '-', '_' and '.', starting with a letter or digit (at most 63 characters)");
    named = false;
  }
  if (named) o.set_label(std::string(kind) + " '" + name + "'");
  o.check_keys();
  return named && table.claim(c, name, o.get("name")->value_loc, kind);
}

void Loader::load_metadata(const Obj& top) {
  const Obj::Entry* e = top.get("metadata");
  if (!e) return;
  Metadata m;
  Obj o(top.ctx(), e->value, e->value_loc, "metadata", "", &m.origin, kMetadataKeys);
  if (!o.ok()) return;
  o.check_keys();
  m.origin.loc = o.loc();
  o.str("name", m.name, true);
  if (!m.name.empty() && !valid_name(m.name))
    o.invalid(*o.get("name"), "invalid name '" + m.name + "' for metadata",
              "use letters, digits, '-', '_' and '.', starting with a letter or digit (at most 63 characters)");
  o.str("owner", m.owner);
  o.str_list("compliance", m.compliance);
  o.str_map("labels", m.labels);
  if (claim_single(top.ctx(), metadata_at_, "metadata", e->key_loc)) bp_.metadata = std::move(m);
}

void Loader::load_stacks(const Obj& top) {
  const Obj::Entry* e = top.get("stacks");
  if (!e) return;
  const Ctx& c = top.ctx();
  if (!e->value.IsMap()) {
    top.wrong_type(*e, "a map");
    return;
  }
  for (const auto& [k, v] : e->value.pairs()) {
    Stack s;
    s.origin.loc = c.loc(k);
    s.name = k.Scalar();
    std::string label = "stack '" + s.name + "'";
    if (!valid_name(s.name)) {
      c.error("BP005", s.origin.loc, "invalid stack name '" + s.name + "'",
              "use letters, digits, '-', '_' and '.', starting with a letter or digit (at most 63 characters)");
      continue;
    }
    s.origin.fields["name"] = s.origin.loc;
    // Missing fields are reported at the stack's name.
    Obj o(c, v, s.origin.loc, label, "", &s.origin, kStackKeys);
    if (!o.ok()) continue;
    o.check_keys();
    o.str("driver", s.driver, true);
    o.str("cuda", s.cuda, true);
    o.str("cudnn", s.cudnn);
    o.str_map("frameworks", s.frameworks);
    o.str_list("images", s.images);
    o.enumeration("kernel_modules", s.kernel_modules, kKernelModules);
    o.str("container_toolkit", s.container_toolkit);
    o.boolean("cuda_compat", s.cuda_compat);
    o.enumeration("precision", s.precision, kPrecisions);
    if (stacks_.claim(c, s.name, s.origin.loc, "stack")) bp_.stacks.push_back(std::move(s));
  }
}

void Loader::load_networks(const Obj& top) {
  auto net = top.sub("networks", kNetworksKeys);
  if (!net) return;
  const Ctx& c = top.ctx();
  if (auto vlans = net->list("vlans")) {
    int i = 0;
    for (const Node& item : *vlans) {
      Vlan v;
      Obj o(c, item, c.loc(item), "VLAN #" + std::to_string(++i), "", &v.origin, kVlanKeys);
      if (!o.ok()) continue;
      v.origin.loc = o.loc();
      bool named = read_name(o, v.name, vlans_, "VLAN");
      o.integer("id", v.id, true, kNoMin);  // range 1-4094 is a domain rule (NET001)
      o.str("cidr", v.cidr, true);
      o.str("vrf", v.vrf);
      o.str("purpose", v.purpose);
      o.integer("mtu", v.mtu, false, kNoMin);
      if (named) bp_.vlans.push_back(std::move(v));
    }
  }
  if (auto fabrics = net->list("fabrics")) {
    int i = 0;
    for (const Node& item : *fabrics) {
      Fabric f;
      Obj o(c, item, c.loc(item), "fabric #" + std::to_string(++i), "", &f.origin, kFabricKeys);
      if (!o.ok()) continue;
      f.origin.loc = o.loc();
      bool named = read_name(o, f.name, fabrics_, "fabric");
      o.enumeration("kind", f.kind, kFabricKinds, true);
      o.integer("speed_gbps", f.speed_gbps);
      o.enumeration("topology", f.topology, kTopologies);
      if (o.str("oversubscription", f.oversubscription)) {
        const std::string& r = f.oversubscription;
        size_t colon = r.find(':');
        if (colon == std::string::npos || !parse_number(r.substr(0, colon)) || !parse_number(r.substr(colon + 1)))
          o.invalid(*o.get("oversubscription"),
                    "invalid oversubscription '" + r + "' in " + o.label() + " (expected a ratio such as \"1:1\")",
                    "write it quoted as downlink:uplink, e.g. oversubscription: \"2:1\"");
      }
      o.opt_bool("pfc", f.pfc);
      o.opt_bool("ecn", f.ecn);
      if (o.enumeration("rdma_stack", f.rdma_stack, kRdmaStacks) && f.kind == "ethernet")
        o.invalid(*o.get("rdma_stack"), "'rdma_stack' in " + o.label() + " applies to infiniband and roce-v2 fabrics",
                  "remove it, or set kind: infiniband or roce-v2");
      if (named) bp_.fabrics.push_back(std::move(f));
    }
  }
}

void Loader::load_storage(const Obj& top) {
  auto st = top.sub("storage", kStorageKeys);
  if (!st) return;
  const Ctx& c = top.ctx();
  if (auto tiers = st->list("tiers")) {
    int i = 0;
    for (const Node& item : *tiers) {
      StorageTier t;
      Obj o(c, item, c.loc(item), "storage tier #" + std::to_string(++i), "", &t.origin, kTierKeys);
      if (!o.ok()) continue;
      t.origin.loc = o.loc();
      bool named = read_name(o, t.name, tiers_, "storage tier");
      o.enumeration("kind", t.kind, kTierKinds, true);
      o.number("capacity_tb", t.capacity_tb);
      if (o.str("backend", t.backend)) {
        const Keys* allowed = t.kind == "object" ? &kObjectBackends
                              : t.kind == "parallel-fs" ? &kParallelFsBackends : nullptr;
        if (allowed && std::find(allowed->begin(), allowed->end(), t.backend) == allowed->end())
          o.invalid(*o.get("backend"),
                    "invalid backend '" + t.backend + "' for " + t.kind + " " + o.label() + " (expected one of: " +
                        join(*allowed, ", ") + ")",
                    suggest(t.backend, *allowed));
      }
      o.str("region", t.region);
      o.enumeration("classification", t.classification, kClassifications);
      if (auto enc = o.sub("encryption", kEncryptionKeys)) {
        Encryption en;
        enc->enumeration("at_rest", en.at_rest, kAtRest);
        enc->enumeration("in_transit", en.in_transit, kInTransit);
        enc->str("kms_key", en.kms_key);
        t.encryption = en;
      }
      if (auto lc = o.sub("lifecycle", kLifecycleKeys)) {
        Lifecycle l;
        lc->str("transition_from", l.transition_from, true);
        lc->integer("after_days", l.after_days, true);
        lc->integer("expire_days", l.expire_days);
        t.lifecycle = l;
      }
      if (o.str("export", t.remote) && (t.kind == "nvme" || t.kind == "object"))
        o.invalid(*o.get("export"), "'export' in " + o.label() + " applies to nfs and parallel-fs tiers, not " + t.kind,
                  "remove it; " + t.kind + " tiers are not mounted from a server");
      if (o.str("mount_point", t.mount_point) && (t.mount_point.empty() || t.mount_point[0] != '/'))
        o.invalid(*o.get("mount_point"), "'mount_point' in " + o.label() + " must be an absolute path, not '" + t.mount_point + "'",
                  "write e.g. mount_point: /mnt/" + t.name);
      if (auto tr = o.sub("transfer", kTransferKeys)) {
        Transfer x;
        tr->enumeration("basis", x.basis, kTransferBases, true);
        tr->str("reference", x.reference);
        t.transfer = x;
      }
      if (named) bp_.tiers.push_back(std::move(t));
    }
  }
  if (auto backups = st->list("backups")) {
    int i = 0;
    for (const Node& item : *backups) {
      Backup b;
      Obj o(c, item, c.loc(item), "backup #" + std::to_string(++i), "", &b.origin, kBackupKeys);
      if (!o.ok()) continue;
      b.origin.loc = o.loc();
      bool named = read_name(o, b.name, backups_, "backup");
      o.str("source", b.source, true);
      o.str("target", b.target, true);
      if (o.str("schedule", b.schedule, true)) {
        size_t fields = 0;
        bool in_field = false;
        for (char ch : b.schedule) {
          bool space = ch == ' ' || ch == '\t';
          if (!space && !in_field) ++fields;
          in_field = !space;
        }
        if (fields != 5 && !starts_with(b.schedule, "@"))
          o.invalid(*o.get("schedule"),
                    "invalid schedule '" + b.schedule + "' in " + o.label() +
                        " (expected a cron expression with 5 fields)",
                    "write minute hour day-of-month month day-of-week, e.g. \"0 */6 * * *\", or @daily");
      }
      o.integer("retention_days", b.retention_days, true);
      o.integer("dr_test_interval_days", b.dr_test_interval_days);
      if (named) bp_.backups.push_back(std::move(b));
    }
  }
}

void Loader::load_node_pools(const Obj& top) {
  auto pools = top.list("node_pools");
  if (!pools) return;
  const Ctx& c = top.ctx();
  int i = 0;
  for (const Node& item : *pools) {
    NodePool p;
    Obj o(c, item, c.loc(item), "node pool #" + std::to_string(++i), "", &p.origin, kNodePoolKeys);
    if (!o.ok()) continue;
    p.origin.loc = o.loc();
    std::vector<Obj::Entry> extras;
    o.collect_unknown(&extras);
    bool named = read_name(o, p.name, pools_, "node pool");
    o.str("provider", p.provider);
    o.integer("count", p.count, true, 0, kMaxPoolNodes);
    o.enumeration("role", p.role, kRoles);
    if (auto h = o.sub("hardware", kHardwareKeys, true)) {
      h->str("gpu", p.hardware.gpu, true);
      h->integer("gpus_per_node", p.hardware.gpus_per_node, true, 0, kMaxGpusPerNode);
      h->integer("cpu_cores", p.hardware.cpu_cores, false, 0, kMaxCpuCores);
      h->integer("memory_gb", p.hardware.memory_gb, false, 0, kMaxMemoryGb);
      h->integer("rdma_nics", p.hardware.rdma_nics, false, 0, kMaxRdmaNics);
    }
    double largest = 0;
    if (o.number("largest_model_gb", largest)) p.largest_model_gb = largest;
    if (auto m = o.sub("largest_model", kModelKeys)) {
      ModelSize ms;
      if (m->number("params_b", ms.params_b, true) && ms.params_b <= 0)
        m->invalid(*m->get("params_b"), "'largest_model.params_b' in " + o.label() + " must be above 0",
                   "give the model's size in billions of parameters, e.g. params_b: 70");
      m->enumeration("precision", ms.precision, kPrecisions, true);
      m->enumeration("training", ms.training, kTrainingMethods);
      p.largest_model = ms;
      if (p.largest_model_gb)
        o.invalid(*o.get("largest_model"), "node pool '" + p.name + "' sets both largest_model and largest_model_gb",
                  "keep largest_model (size and precision); largest_model_gb is the older, raw-weights form");
    }
    if (auto ifs = o.sub("interfaces", kInterfacesKeys)) {
      Interfaces x;
      ifs->str_list("bond", x.bond);
      ifs->str_list("rdma", x.rdma);
      for (const auto* list : {&x.bond, &x.rdma})
        for (const auto& name : *list)
          if (name.empty() || !std::all_of(name.begin(), name.end(), [](char ch) {
                return std::isalnum(static_cast<unsigned char>(ch)) || ch == '*' || ch == '?' || ch == '-' || ch == '_' ||
                       ch == '.' || ch == '[' || ch == ']';
              }))
            ifs->invalid(*ifs->get(list == &x.bond ? "bond" : "rdma"),
                         "interface '" + name + "' in " + o.label() + " is not an interface name or glob",
                         "use a name such as eno1 or a glob such as \"ens1f*\"");
      for (const auto& b : x.bond)
        if (std::find(x.rdma.begin(), x.rdma.end(), b) != x.rdma.end())
          ifs->invalid(*ifs->get("bond"), "interface '" + b + "' of " + o.label() + " is both bonded and an RDMA rail",
                       "RDMA rails keep their own interfaces; list it under one of bond or rdma");
      p.interfaces = x;
    }
    o.enumeration("os", p.os, kOperatingSystems);
    o.str("stack", p.stack, true);
    o.str("fabric", p.fabric);
    if (auto b = o.sub("boot", kBootKeys)) {
      Boot boot;
      b->enumeration("method", boot.method, kBootMethods, true);
      b->str("image", boot.image);
      p.boot = boot;
    }
    o.str_map("bios", p.bios);
    o.str_list("networks", p.networks);
    o.str_list("storage", p.storage);
    if (auto b = o.sub("bmc", kBmcKeys)) {
      Bmc bmc;
      if (const Obj::Entry* ep = b->get("endpoints", true)) {
        if (ep->value.IsScalar()) {
          bmc.endpoints = {ep->value.Scalar()};
          b->record("endpoints", ep->value_loc);
          check_bmc_endpoint(c, bmc.endpoints[0], ep->value_loc, o.label());
          if (bmc.endpoints[0].find("{index}") == std::string::npos)
            b->invalid(*ep,
                       "'bmc.endpoints' in " + o.label() + " is one endpoint without '{index}' for a pool of nodes",
                       "use a template such as \"https://bmc-{index}.dc1.example\" or list one endpoint per node");
        } else if (b->str_list("endpoints", bmc.endpoints)) {
          for (size_t k = 0; k < bmc.endpoints.size(); ++k)
            check_bmc_endpoint(c, bmc.endpoints[k], p.origin.at("bmc.endpoints." + std::to_string(k)), o.label());
          if (static_cast<int>(bmc.endpoints.size()) != p.count && p.count > 0)
            b->invalid(*ep,
                       "'bmc.endpoints' in " + o.label() + " lists " + std::to_string(bmc.endpoints.size()) +
                           " endpoint(s) for " + std::to_string(p.count) + " node(s)",
                       "list exactly one endpoint per node, or use a template with {index}");
        }
      }
      if (const Obj::Entry* ce_map = b->get("credentials"); ce_map && !ce_map->value.IsScalar()) {
        // A map or list here is usually {user: ..., password: ...}: report
        // the type without the source line, which would print the password.
        b->wrong_type(*ce_map, "a string");
        c.diags->back().show_source = false;
        c.diags->back().hint = "write credentials: env:NAME or file:PATH; the user and password go in that "
                               "variable or file as \"user:password\", never in the blueprint";
      } else if (b->str("credentials", bmc.credentials, true)) {
        const std::string& cr = bmc.credentials;
        const Obj::Entry* ce = b->get("credentials");
        if (starts_with(cr, "env:")) {
          if (!valid_env_name(std::string_view(cr).substr(4)))
            c.error("BP008", ce->value_loc,
                    "'bmc.credentials' in " + o.label() + " names an invalid environment variable '" + cr.substr(4) + "'",
                    "write env:NAME with letters, digits and '_', e.g. env:BMC_CREDENTIALS");
        } else if (starts_with(cr, "file:")) {
          if (cr.size() == 5)
            c.error("BP008", ce->value_loc, "'bmc.credentials' in " + o.label() + " has an empty file path",
                    "write file:PATH naming a file that holds \"user:password\"");
        } else {
          // Never echo the value: it may be a real password.
          c.error("BP008", ce->value_loc,
                  cr.find(':') != std::string::npos
                      ? "'bmc.credentials' in " + o.label() + " looks like an inline user:password; blueprints must not hold secrets"
                      : "'bmc.credentials' in " + o.label() + " must be env:NAME or file:PATH",
                  "move the secret to an environment variable and write credentials: env:BMC_CREDENTIALS "
                  "(or keep it in a file and write credentials: file:/path/to/secret)");
          c.diags->back().show_source = false;  // the excerpt would print the secret
          bmc.credentials.clear();
        }
      }
      b->str("ca_bundle", bmc.ca_bundle);
      p.bmc = bmc;
    }
    if (auto m = o.sub("mig", kMigKeys)) {
      const bool mixed = m->get("layout") || m->get("profiles");
      m->str("profile", p.mig.profile, !mixed);
      m->integer("instances", p.mig.instances, false, 0, kMaxMigInstances);
      m->enumeration("layout", p.mig.layout, kMigLayouts);
      if (const Obj::Entry* prof = m->get("profiles")) {
        if (!prof->value.IsMap()) {
          m->wrong_type(*prof, "a map");
        } else {
          m->record("profiles", prof->value_loc);
          for (const auto& [k, v] : prof->value.pairs()) {
            std::optional<long long> n;
            if (plain_scalar(v)) n = parse_int(v.Scalar());
            if (!n || *n < 1 || *n > kMaxMigInstances) {
              c.error("BP003", c.loc(v.IsNull() ? k : v),
                      "'mig.profiles." + k.Scalar() + "' in " + o.label() + " must be a count of instances per GPU, not " +
                          describe(v),
                      "write profile: count, e.g. \"1g.10gb\": 2");
              continue;
            }
            p.mig.profiles.emplace_back(k.Scalar(), static_cast<int>(*n));
            m->record("profiles." + k.Scalar(), c.loc(v));
          }
        }
      }
      int forms = (m->get("profile") && p.mig.profile != "none" ? 1 : 0) + (m->get("layout") ? 1 : 0) + (m->get("profiles") ? 1 : 0);
      if (forms > 1)
        m->invalid(*m->get(m->get("layout") ? "layout" : "profiles"),
                   "'mig' in " + o.label() + " sets more than one of profile, layout and profiles",
                   "use profile + instances for one profile, layout: all-balanced, or profiles: {PROFILE: COUNT, ...}");
    }
    if (named) {
      bp_.node_pools.push_back(std::move(p));
      keep_extras("node_pools", bp_.node_pools.size() - 1, o, extras);
    }
  }
}

void Loader::load_burst_pools(const Obj& top) {
  auto pools = top.list("burst_pools");
  if (!pools) return;
  const Ctx& c = top.ctx();
  int i = 0;
  for (const Node& item : *pools) {
    BurstPool p;
    Obj o(c, item, c.loc(item), "burst pool #" + std::to_string(++i), "", &p.origin, kBurstPoolKeys);
    if (!o.ok()) continue;
    p.origin.loc = o.loc();
    std::vector<Obj::Entry> extras;
    o.collect_unknown(&extras);
    bool named = read_name(o, p.name, pools_, "burst pool");
    o.str("provider", p.provider, true);
    o.str("region", p.region, true);
    o.str("zone", p.zone);
    o.str("instance_type", p.instance_type, true);
    bool has_desired = o.integer("desired", p.desired, false, 0, kMaxPoolNodes);
    bool has_max = o.integer("max", p.max, false, 0, kMaxPoolNodes);
    if (has_desired && has_max && p.desired > p.max)
      o.invalid(*o.get("desired"),
                "'desired' (" + std::to_string(p.desired) + ") exceeds 'max' (" + std::to_string(p.max) + ") in " +
                    o.label(),
                "lower desired or raise max");
    o.boolean("spot", p.spot);
    o.str("stack", p.stack, true);
    if (auto ck = o.sub("checkpointing", kCheckpointingKeys)) {
      Checkpointing cp;
      ck->integer("interval_minutes", cp.interval_minutes, true, 1);
      ck->str("target", cp.target, true);
      p.checkpointing = cp;
    }
    o.str_list("networks", p.networks);
    o.str_list("storage", p.storage);
    o.enumeration("os", p.os, kOperatingSystems);
    if (auto tr = o.sub("transfer", kTransferKeys)) {
      Transfer x;
      tr->enumeration("basis", x.basis, kTransferBases, true);
      tr->str("reference", x.reference);
      p.transfer = x;
    }
    if (named) {
      bp_.burst_pools.push_back(std::move(p));
      keep_extras("burst_pools", bp_.burst_pools.size() - 1, o, extras);
    }
  }
}

void Loader::keep_extras(const char* section, size_t index, const Obj& o, const std::vector<Obj::Entry>& extras) {
  PendingPool pp;
  pp.section = section;
  pp.index = index;
  pp.label = o.label();
  pp.at = o.loc();
  const Obj::Entry* pe = o.get("provider");
  pp.provider_at = pe ? pe->value_loc : o.loc();
  for (const auto& e : extras) {
    pp.keys.emplace_back(e.key, e.key_loc);
    pp.values[e.key] = yaml_to_json(o.ctx(), e.value, e.key, pp.locs);
    pp.locs[e.key] = e.value_loc;
  }
  pending_.push_back(std::move(pp));
}

void Loader::load_providers(const Obj& top) {
  const Obj::Entry* e = top.get("providers");
  if (!e) return;
  const Ctx& c = top.ctx();
  if (!e->value.IsMap()) {
    top.wrong_type(*e, "a map");
    return;
  }
  const std::string base_dir = std::filesystem::path(c.file).parent_path().string();
  for (const auto& [k, v] : e->value.pairs()) {
    ProviderDecl d;
    d.name = k.Scalar();
    d.origin.loc = c.loc(k);
    d.base_dir = base_dir.empty() ? "." : base_dir;
    const std::string label = "provider '" + d.name + "'";
    if (!valid_name(d.name)) {
      c.error("BP005", d.origin.loc, "invalid provider name '" + d.name + "'",
              "use lower-case letters, digits, '-' and '_', starting with a letter");
      continue;
    }
    if (!v.IsNull()) {  // `NAME:` alone declares nothing but the name
      Obj o(c, v, d.origin.loc, label, "", &d.origin, kProviderDeclKeys);
      if (!o.ok()) continue;
      o.check_keys();
      o.str("exec", d.exec);
      if (o.str("sha256", d.sha256)) {
        bool hex = d.sha256.size() == 64 && std::all_of(d.sha256.begin(), d.sha256.end(), [](char ch) {
                     return std::isdigit(static_cast<unsigned char>(ch)) || (ch >= 'a' && ch <= 'f');
                   });
        if (!hex)
          o.invalid(*o.get("sha256"), "'sha256' of " + label + " is not 64 lower-case hex digits",
                    "write the output of: sha256sum PLUGIN | cut -d' ' -f1");
        if (d.exec.empty())
          o.invalid(*o.get("sha256"), "'sha256' of " + label + " pins a plugin, but the provider has no 'exec'",
                    "add exec: PATH of the plugin executable, or remove sha256");
      }
      o.str_map("options", d.options);
    }
    if (providers_.claim(c, d.name, d.origin.loc, "provider")) bp_.providers.push_back(std::move(d));
  }
}

bool Loader::check_setting(const SettingSpec& spec, Json& value, const std::string& path,
                           const std::map<std::string, SourceLoc>& locs, const std::string& label) {
  auto where = [&](const std::string& p) {
    auto it = locs.find(p);
    return it == locs.end() ? SourceLoc{} : it->second;
  };
  auto wrong = [&](const char* type) {
    diags_.push_back({"BP003", Severity::Error,
                      "'" + path + "' in " + label + " must be " + type + ", not " + describe_json(value), where(path),
                      "", type_hint(type)});
    return false;
  };
  switch (spec.type) {
    case ValueType::Any: return true;
    case ValueType::String:
    case ValueType::Duration:
      if (value.is_object() || value.is_array() || value.is_null()) return wrong("a string");
      if (!value.is_string()) value = value.dump();  // a plain 42 where text is expected
      break;
    case ValueType::Bool:
      if (!value.is_boolean()) return wrong("a boolean");
      break;
    case ValueType::Int:
      if (!value.is_number_integer()) return wrong("an integer");
      break;
    case ValueType::Number:
      if (!value.is_number()) return wrong("a number");
      break;
    case ValueType::StringList: {
      if (!value.is_array()) return wrong("a list");
      bool ok = true;
      for (size_t i = 0; i < value.size(); ++i) {
        Json& item = value[i];
        if (item.is_object() || item.is_array() || item.is_null()) {
          diags_.push_back({"BP003", Severity::Error,
                            "'" + path + "[" + std::to_string(i) + "]' in " + label + " must be a string, not " +
                                describe_json(item),
                            where(path + "." + std::to_string(i)), "", type_hint("a string")});
          ok = false;
        } else if (!item.is_string()) {
          item = item.dump();
        }
      }
      return ok;
    }
    case ValueType::Map:
      if (!value.is_object()) return wrong("a map");
      for (auto& [k, v] : value.items())
        if (!v.is_string() && !v.is_object() && !v.is_array() && !v.is_null()) v = v.dump();
      break;
    case ValueType::Object: {
      if (!value.is_object()) return wrong("a map");
      bool ok = true;
      Keys names;
      for (const auto& f : spec.fields) names.push_back(f.name);
      for (auto& [k, v] : value.items()) {
        auto f = std::find_if(spec.fields.begin(), spec.fields.end(),
                              [&k = k](const SettingSpec& x) { return x.name == k; });  // clang 14: no bindings in lambdas
        if (f == spec.fields.end()) {
          diags_.push_back({"BP002", Severity::Error, "unknown key '" + path + "." + k + "' in " + label,
                            where(path + "." + k), "", suggest(k, names)});
          ok = false;
          continue;
        }
        ok = check_setting(*f, v, path + "." + k, locs, label) && ok;
      }
      for (const auto& f : spec.fields)
        if (f.required && !value.contains(f.name)) {
          diags_.push_back({"BP004", Severity::Error, "missing required field '" + path + "." + f.name + "' in " + label,
                            where(path), "", "add '" + f.name + ":' (" + f.description + ")"});
          ok = false;
        }
      return ok;
    }
  }
  if (!spec.allowed.empty() && value.is_string()) {
    const std::string v = value.get<std::string>();
    if (std::find(spec.allowed.begin(), spec.allowed.end(), v) == spec.allowed.end()) {
      diags_.push_back({"BP005", Severity::Error,
                        "invalid " + path + " '" + v + "' in " + label + " (expected one of: " + join(spec.allowed, ", ") +
                            ")",
                        where(path), "", suggest(v, spec.allowed)});
      return false;
    }
  }
  return true;
}

void Loader::check_providers(const LoadOptions& options) {
  SchemaRegistry& registry = schema_registry();
  std::set<std::string> tried;
  auto resolve = [&](const std::string& name, const SourceLoc& at) -> bool {
    if (registry.provider(name)) return true;
    if (tried.count(name)) return false;
    tried.insert(name);
    if (!options.resolve_provider) return false;
    const ProviderDecl* decl = bp_.find_provider(name);
    Status st = options.resolve_provider(name, decl);
    if (!st) {
      diags_.push_back({"BP011", Severity::Error, st.error().message, decl ? decl->origin.loc : at, "",
                        "see docs/plugins.md for where plinth looks for plugins"});
      return false;
    }
    return registry.provider(name) != nullptr;
  };
  for (const ProviderDecl& d : bp_.providers) resolve(d.name, d.origin.loc);

  for (PendingPool& pp : pending_) {
    const bool burst = std::string_view(pp.section) == "burst_pools";
    const bool monitoring = std::string_view(pp.section) == "monitoring";
    std::string& provider = monitoring ? bp_.monitoring->provider
                            : burst    ? bp_.burst_pools[pp.index].provider
                                       : bp_.node_pools[pp.index].provider;
    Json& settings = monitoring ? bp_.monitoring->settings
                     : burst    ? bp_.burst_pools[pp.index].settings
                                : bp_.node_pools[pp.index].settings;
    Origin& origin = monitoring ? bp_.monitoring->origin
                     : burst    ? bp_.burst_pools[pp.index].origin
                                : bp_.node_pools[pp.index].origin;
    const Keys& own = monitoring ? kMonitoringKeys : burst ? kBurstPoolKeys : kNodePoolKeys;
    const Keys serving = registry.providers_for(pp.section);

    // Keys no provider could explain are reported now, whatever the provider.
    auto report_unknown = [&](const std::vector<SettingSpec>& settings_specs) {
      Keys names = own;
      for (const auto& st : settings_specs) names.push_back(st.name);
      for (const auto& [key, at] : pp.keys)
        if (std::none_of(settings_specs.begin(), settings_specs.end(),
                         [&key = key](const SettingSpec& x) { return x.name == key; }))
          diags_.push_back({"BP002", Severity::Error, "unknown key '" + key + "' in " + pp.label, at, "",
                            suggest(key, names)});
    };

    if (provider.empty()) {
      provider = registry.default_provider(pp.section);
      if (provider.empty()) {
        if (burst || monitoring) continue;  // reported already / nothing to check
        diags_.push_back({"BP004", Severity::Error, "missing required field 'provider' in " + pp.label, pp.at, "",
                          "no provider serves " + std::string(pp.section) + " by default; name one: " +
                              join(serving, ", ")});
        continue;
      }
    }
    if (!resolve(provider, pp.provider_at)) {
      std::string hint = suggest(provider, serving);
      if (hint.empty()) hint = "providers serving " + std::string(pp.section) + ": " + join(serving, ", ");
      if (!tried.count(provider) || !options.resolve_provider)
        diags_.push_back({"BP005", Severity::Error,
                          "unknown provider '" + provider + "' in " + pp.label + " (expected one of: " +
                              join(serving, ", ") + ")",
                          pp.provider_at, "", hint + "; or install the plugin plinth-provider-" + provider +
                                                  " (docs/plugins.md)"});
      report_unknown({});
      continue;
    }
    const SectionSpec* spec = registry.section(pp.section, provider);
    if (!spec) {
      std::string other = burst ? "node_pools" : "burst_pools";
      const SectionSpec* there = monitoring ? nullptr : registry.section(other, provider);
      diags_.push_back({"BP005", Severity::Error,
                        "provider '" + provider + "' does not serve " + pp.section + " (" + pp.label + ")",
                        pp.provider_at, "",
                        there ? "provider " + provider + " serves " + other + ": move the pool there"
                              : "providers serving " + std::string(pp.section) + ": " + join(serving, ", ")});
      report_unknown({});
      continue;
    }
    report_unknown(spec->settings);
    Json out = Json::object();
    for (const auto& st : spec->settings) {
      if (!pp.values.contains(st.name)) {
        if (st.required)
          diags_.push_back({"BP004", Severity::Error, "missing required field '" + st.name + "' in " + pp.label, pp.at,
                            "", "add '" + st.name + ":' (" + st.description + ")"});
        continue;
      }
      Json v = pp.values[st.name];
      if (check_setting(st, v, st.name, pp.locs, pp.label)) out[st.name] = std::move(v);
    }
    for (const auto& [path, at] : pp.locs) origin.fields[path] = at;
    settings = std::move(out);
  }
}

void Loader::load_access(const Obj& top) {
  auto acc = top.sub("access", kAccessKeys);
  if (!acc) return;
  const Ctx& c = top.ctx();
  if (auto list = acc->list("namespaces")) {
    int i = 0;
    for (const Node& item : *list) {
      Namespace ns;
      Obj o(c, item, c.loc(item), "namespace #" + std::to_string(++i), "", &ns.origin, kNamespaceKeys);
      if (!o.ok()) continue;
      ns.origin.loc = o.loc();
      bool named = read_name(o, ns.name, namespaces_, "namespace");
      if (auto q = o.sub("quota", kQuotaKeys)) {
        int gpus = 0;
        if (q->integer("gpus", gpus, true)) ns.gpu_quota = gpus;
        // Kubernetes quantities: a number with an optional SI or binary suffix.
        static const std::regex kQuantity(R"(^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$)");
        for (auto [key, out] : {std::pair<const char*, std::string*>{"cpu", &ns.cpu_quota}, {"memory", &ns.memory_quota}})
          if (q->str(key, *out) && !std::regex_match(*out, kQuantity)) {
            q->invalid(*q->get(key), "invalid quota." + std::string(key) + " '" + *out + "' in " + o.label(),
                       std::string("write a Kubernetes quantity, e.g. ") + (key == std::string("cpu") ? "64 or 500m" : "512Gi"));
            out->clear();
          }
      }
      o.str_list("service_accounts", ns.service_accounts);
      if (named) bp_.access.namespaces.push_back(std::move(ns));
    }
  }
  if (auto list = acc->list("roles")) {
    int i = 0;
    for (const Node& item : *list) {
      Role r;
      Obj o(c, item, c.loc(item), "role #" + std::to_string(++i), "", &r.origin, kRoleKeys);
      if (!o.ok()) continue;
      r.origin.loc = o.loc();
      bool named = read_name(o, r.name, roles_, "role");
      if (o.str_list("subjects", r.subjects, true)) {
        for (size_t k = 0; k < r.subjects.size(); ++k) {
          const std::string& s = r.subjects[k];
          std::string kind = s.substr(0, s.find(':'));
          if (s.find(':') == std::string::npos || s.size() == kind.size() + 1 ||
              std::find(kSubjectKinds.begin(), kSubjectKinds.end(), kind) == kSubjectKinds.end())
            c.error("BP005", r.origin.at("subjects." + std::to_string(k)),
                    "invalid subject '" + s + "' in " + o.label(),
                    "write group:NAME, user:NAME or serviceaccount:NAMESPACE/NAME");
        }
      }
      o.str_list("namespaces", r.namespaces);
      o.str_list("verbs", r.verbs, true);
      o.str_list("resources", r.resources, true);
      if (o.enumeration("scope", r.scope, kRoleScopes) && r.scope == "cluster" && !r.namespaces.empty())
        o.invalid(*o.get("scope"), "role '" + r.name + "' has scope cluster and also lists namespaces",
                  "a cluster-scoped role applies everywhere: remove namespaces, or use scope: namespace");
      if (named) bp_.access.roles.push_back(std::move(r));
    }
  }
  if (const Obj::Entry* e = acc->get("audit_logging")) {
    AuditLogging al;
    Obj o(c, e->value, e->value_loc, "access.audit_logging", "", &al.origin, kAuditLoggingKeys);
    if (o.ok()) {
      o.check_keys();
      al.origin.loc = o.loc();
      o.boolean("api_server", al.api_server);
      o.boolean("storage", al.storage);
      o.integer("retention_days", al.retention_days);
      if (claim_single(c, audit_logging_at_, "access.audit_logging", e->key_loc))
        bp_.access.audit_logging = std::move(al);
    }
  }
  if (const Obj::Entry* e = acc->get("transport")) {
    Transport tr;
    Obj o(c, e->value, e->value_loc, "access.transport", "", &tr.origin, kTransportKeys);
    if (o.ok()) {
      o.check_keys();
      tr.origin.loc = o.loc();
      o.enumeration("tls_min", tr.tls_min, kTlsVersions);
      o.boolean("mtls", tr.mtls);
      if (claim_single(c, transport_at_, "access.transport", e->key_loc)) bp_.access.transport = std::move(tr);
    }
  }
}

void Loader::load_monitoring(const Obj& top) {
  const Obj::Entry* e = top.get("monitoring");
  if (!e) return;
  Monitoring m;
  Obj o(top.ctx(), e->value, e->value_loc, "monitoring", "", &m.origin, kMonitoringKeys);
  if (!o.ok()) return;
  std::vector<Obj::Entry> extras;
  o.collect_unknown(&extras);
  o.check_keys();
  m.origin.loc = o.loc();
  o.boolean("dcgm", m.dcgm);
  o.boolean("prometheus", m.prometheus);
  o.boolean("grafana", m.grafana);
  o.str("provider", m.provider);
  if (claim_single(top.ctx(), monitoring_at_, "monitoring", e->key_loc)) {
    bp_.monitoring = std::move(m);
    keep_extras("monitoring", 0, o, extras);
  }
}

void Loader::load_clusters(const Obj& top) {
  auto list = top.list("clusters");
  if (!list) return;
  const Ctx& c = top.ctx();
  int i = 0;
  for (const Node& item : *list) {
    Cluster cl;
    Obj o(c, item, c.loc(item), "cluster #" + std::to_string(++i), "", &cl.origin, kClusterKeys);
    if (!o.ok()) continue;
    o.check_keys();
    cl.origin.loc = o.loc();
    bool named = read_name(o, cl.name, clusters_, "cluster");
    o.str("context", cl.context);
    o.str_list("pools", cl.pools);
    o.str("provider", cl.provider);
    if (!named) continue;
    if (!bp_.clusters.empty()) {
      c.error("BP005", cl.origin.loc,
              "cluster '" + cl.name + "' is a second cluster; this version of plinth applies a blueprint to one "
              "cluster (the first is '" + bp_.clusters.front().name + "' at " + bp_.clusters.front().origin.loc.str() + ")",
              "keep one entry under clusters: and split the blueprint per cluster");
      continue;
    }
    bp_.clusters.push_back(std::move(cl));
  }
}

void Loader::check_ref(const NameTable& table, const std::string& name, const SourceLoc& at, const std::string& who,
                       const char* define_hint) {
  if (table.has(name)) return;
  std::string hint = suggest(name, table.names());
  if (hint.empty() || table.first.empty()) hint = define_hint;
  diags_.push_back({"BP007", Severity::Error,
                    who + " references unknown " + table.kind + " '" + name + "'", at, "", std::move(hint)});
}

void Loader::check_references() {
  auto each = [&](const std::vector<std::string>& names, const Origin& o, const char* field, const NameTable& t,
                  const std::string& who, const char* hint) {
    for (size_t i = 0; i < names.size(); ++i)
      check_ref(t, names[i], o.at(std::string(field) + "." + std::to_string(i)), who, hint);
  };
  const char* kDefStack = "define it under stacks:";
  const char* kDefVlan = "define it under networks.vlans:";
  const char* kDefFabric = "define it under networks.fabrics:";
  const char* kDefTier = "define it under storage.tiers:";
  const char* kDefNs = "define it under access.namespaces:";
  for (const NodePool& p : bp_.node_pools) {
    std::string who = "node pool '" + p.name + "'";
    if (!p.stack.empty()) check_ref(stacks_, p.stack, p.origin.at("stack"), who, kDefStack);
    if (!p.fabric.empty()) check_ref(fabrics_, p.fabric, p.origin.at("fabric"), who, kDefFabric);
    each(p.networks, p.origin, "networks", vlans_, who, kDefVlan);
    each(p.storage, p.origin, "storage", tiers_, who, kDefTier);
  }
  for (const BurstPool& p : bp_.burst_pools) {
    std::string who = "burst pool '" + p.name + "'";
    if (!p.stack.empty()) check_ref(stacks_, p.stack, p.origin.at("stack"), who, kDefStack);
    if (p.checkpointing && !p.checkpointing->target.empty())
      check_ref(tiers_, p.checkpointing->target, p.origin.at("checkpointing.target"), who, kDefTier);
    each(p.networks, p.origin, "networks", vlans_, who, kDefVlan);
    each(p.storage, p.origin, "storage", tiers_, who, kDefTier);
  }
  for (const StorageTier& t : bp_.tiers) {
    if (!t.lifecycle || t.lifecycle->transition_from.empty()) continue;
    const SourceLoc& at = t.origin.at("lifecycle.transition_from");
    if (t.lifecycle->transition_from == t.name)
      diags_.push_back({"BP005", Severity::Error, "storage tier '" + t.name + "' transitions from itself", at, "",
                        "name the tier whose data moves into this one"});
    else
      check_ref(tiers_, t.lifecycle->transition_from, at, "storage tier '" + t.name + "'", kDefTier);
  }
  for (const Backup& b : bp_.backups) {
    std::string who = "backup '" + b.name + "'";
    if (!b.source.empty()) check_ref(tiers_, b.source, b.origin.at("source"), who, kDefTier);
    if (!b.target.empty()) check_ref(tiers_, b.target, b.origin.at("target"), who, kDefTier);
    if (!b.source.empty() && b.source == b.target)
      diags_.push_back({"BP005", Severity::Error, who + " has the same source and target '" + b.source + "'",
                        b.origin.at("target"), "", "back up to a different tier, ideally in another location"});
  }
  for (const Role& r : bp_.access.roles)
    each(r.namespaces, r.origin, "namespaces", namespaces_, "role '" + r.name + "'", kDefNs);
  for (const Cluster& cl : bp_.clusters) {
    std::string who = "cluster '" + cl.name + "'";
    NameTable node_pools{"node pool", "node_pools", {}};
    for (const NodePool& p : bp_.node_pools) node_pools.first.try_emplace(p.name, p.origin.loc, "node pool");
    each(cl.pools, cl.origin, "pools", node_pools, who, "define it under node_pools:");
    // One ClusterPolicy pins one driver: the cluster's pools must agree.
    const NodePool* first = nullptr;
    for (const NodePool& p : bp_.node_pools) {
      if (!cl.pools.empty() && std::find(cl.pools.begin(), cl.pools.end(), p.name) == cl.pools.end()) continue;
      const Stack* st = bp_.find_stack(p.stack);
      if (!st || st->driver.empty()) continue;
      if (!first) {
        first = &p;
        continue;
      }
      const std::string& want = bp_.find_stack(first->stack)->driver;
      if (st->driver != want)
        diags_.push_back({"BP005", Severity::Error,
                          who + " runs node pools that pin different drivers: '" + first->name + "' " + want +
                              " (stack " + first->stack + ") and '" + p.name + "' " + st->driver + " (stack " +
                              p.stack + "); the GPU Operator's ClusterPolicy pins one driver.version",
                          cl.origin.at(cl.pools.empty() ? "name" : "pools"), "",
                          "list the pools of one driver under pools: of the cluster"});
    }
  }
}

bool is_blueprint_file(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  std::string name = p.filename().string();
  if (ext != ".yaml" && ext != ".yml") return false;
  return name != "waivers.yaml" && name != "waivers.yml" && !starts_with(name, "plinth.");
}

}  // namespace

std::vector<std::string> collect_blueprint_files(const std::vector<std::string>& paths, Diagnostics& diags) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) {
      diags.push_back({"BP000", Severity::Error, "no such file or directory: " + path, {path, 0, 0}, "",
                       "check the path; plinth takes blueprint files or directories of *.yaml files"});
      continue;
    }
    if (!fs::is_directory(st)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(path, ec))
      if (entry.is_regular_file() && is_blueprint_file(entry.path())) found.push_back(entry.path().string());
    if (ec) {
      diags.push_back({"BP000", Severity::Error, "cannot read directory " + path + ": " + ec.message(), {path, 0, 0},
                       "", "check its permissions"});
      continue;
    }
    if (found.empty())
      diags.push_back({"BP000", Severity::Error, "no blueprint files (*.yaml, *.yml) in directory " + path,
                       {path, 0, 0}, "", "point plinth at a directory that holds blueprint files"});
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

LoadResult load_strings(const std::vector<std::pair<std::string, std::string>>& docs, const LoadOptions& options) {
  LoadResult r;
  Loader loader(r.blueprint, r.diagnostics);
  for (const auto& [name, text] : docs) {
    r.blueprint.files.push_back({name, sha256_hex(text)});
    loader.load_text(name, text);
  }
  loader.check_references();
  loader.check_providers(options);
  sort_diagnostics(r.diagnostics);
  return r;
}

std::string bmc_endpoint_problem(const std::string& url) {
  auto p = endpoint_problem(url);
  if (!p) return "";
  return (p->secret ? std::string("the BMC endpoint URL ") : "the BMC endpoint '" + url + "' ") + p->message + "; " +
         p->hint;
}

LoadResult load_string(const std::string& text, const std::string& name, const LoadOptions& options) {
  return load_strings({{name, text}}, options);
}

LoadResult load_files(const std::vector<std::string>& files, const LoadOptions& options) {
  LoadResult r;
  Loader loader(r.blueprint, r.diagnostics);
  for (const std::string& f : files) {
    auto text = read_file(f);
    if (!text) {
      r.diagnostics.push_back({"BP000", Severity::Error, text.error().message, {f, 0, 0}, "",
                               "check that the file exists and is readable"});
      continue;
    }
    r.blueprint.files.push_back({f, sha256_hex(*text)});
    loader.load_text(f, *text);
  }
  loader.check_references();
  loader.check_providers(options);
  sort_diagnostics(r.diagnostics);
  return r;
}

}  // namespace plinth::bp
