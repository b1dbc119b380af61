// The loader's YAML tree (yaml_tree.h): yaml-cpp's parser events built into
// Node/Raw, with YAML merge keys applied and top-level "x-" keys dropped, and
// the checks that stop a file before any section is read (BP001: bytes that
// are not UTF-8, syntax errors, nesting deeper than 64 levels).
#include "engine/blueprint/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "engine/core/strings.h"

namespace plinth::bp::detail {
namespace {

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

}  // namespace

bool parse_yaml(const Ctx& c, const std::string& text, YamlFile& out) {
  const std::string& file = c.file;
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
    return false;
  }
  TreeBuilder builder(out.arena);
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder) && !builder.stalled) {
    }
  } catch (const YAML::Exception& e) {
    SourceLoc at = e.mark.is_null() ? SourceLoc{file, 0, 0} : SourceLoc{file, e.mark.line + 1, e.mark.column + 1};
    c.error("BP001", at, "YAML syntax error: " + e.msg,
            "fix the YAML near here (indentation, an unclosed quote or bracket, a missing ':')");
    return false;
  }
  if (builder.stalled) {
    c.error("BP001", {file, builder.stalled->line + 1, builder.stalled->column + 1},
            "YAML syntax error: the parser cannot read past this point",
            "fix the YAML near here (a stray ',', ']' or '}' outside a flow collection?)");
    return false;
  }
  if (builder.too_deep) {
    c.error("BP001", {file, builder.too_deep->line + 1, builder.too_deep->column + 1},
            "maps and lists nest deeper than " + std::to_string(TreeBuilder::kMaxYamlDepth) + " levels here",
            "a blueprint nests a few levels; flatten this value");
    return false;
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
  if (!builder.bad_utf8.empty()) return false;
  out.docs = std::move(builder.docs);
  return true;
}

}  // namespace plinth::bp::detail
