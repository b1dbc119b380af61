// The loader's YAML tree: one file's text read into read-only nodes, with the
// position of each, and the syntax problems that stop a file (BP001).
//
// A read-only YAML tree built from yaml-cpp's parser events. yaml-cpp's own
// YAML::Node tree costs about three times the parse itself (reference-counted
// nodes, map lookups); this one is plain vectors in an arena that lives as
// long as one file is being read. Private to engine/blueprint.
#pragma once
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/diagnostic.h"

namespace plinth::bp::detail {

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

inline const std::string kEmpty;
inline const std::vector<std::pair<Node, Node>> kNoPairs;

inline bool Node::IsNull() const { return !r_ || r_->kind == Raw::Null; }
inline bool Node::IsScalar() const { return r_ && r_->kind == Raw::Scalar; }
inline bool Node::IsSequence() const { return r_ && r_->kind == Raw::Sequence; }
inline bool Node::IsMap() const { return r_ && r_->kind == Raw::Map; }
inline const std::string& Node::Scalar() const { return IsScalar() ? r_->text : kEmpty; }
inline bool Node::quoted() const { return r_ && r_->quoted; }
inline int Node::line() const { return r_ ? r_->line : -1; }
inline int Node::column() const { return r_ ? r_->column : -1; }
inline size_t Node::size() const { return !r_ ? 0 : IsMap() ? r_->entries.size() : r_->items.size(); }
inline const Node* Node::begin() const { return IsSequence() ? r_->items.data() : nullptr; }
inline const Node* Node::end() const { return IsSequence() ? r_->items.data() + r_->items.size() : nullptr; }
inline const std::vector<std::pair<Node, Node>>& Node::pairs() const { return IsMap() ? r_->entries : kNoPairs; }

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

/// The documents of one file; their nodes live in `arena`, as long as it.
struct YamlFile {
  std::deque<Raw> arena;
  std::vector<Node> docs;
};

/// Reads `text` (the file `c.file`) into `out`. A file that is not valid
/// UTF-8, has a YAML syntax error or nests maps and lists deeper than 64
/// levels is reported (BP001, at its position) and false is returned:
/// nothing of it is read.
bool parse_yaml(const Ctx& c, const std::string& text, YamlFile& out);

}  // namespace plinth::bp::detail
