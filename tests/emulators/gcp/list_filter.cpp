#include "tests/emulators/gcp/list_filter.h"

#include <cctype>
#include <regex>
#include <vector>

namespace plinth::gcp_emulator {

using nlohmann::json;

struct ListFilter::Node {
  enum class Kind { And, Or, Not, Compare };
  Kind kind = Kind::Compare;
  std::vector<std::shared_ptr<const Node>> kids;
  std::vector<std::string> path;  ///< Compare: the field, split at '.'
  std::string op;                 ///< Compare: = != < <= > >= : eq ne
  std::string value;
  std::shared_ptr<const std::regex> re;  ///< eq/ne
};

namespace {

using Node = ListFilter::Node;
using NodePtr = std::shared_ptr<const Node>;

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  NodePtr parse(std::string& error) {
    skip();
    NodePtr root;
    if (pos_ < s_.size()) root = expr();
    skip();
    if (error_.empty() && pos_ < s_.size()) fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    error = error_;
    return error_.empty() ? root : nullptr;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;

  void fail(const std::string& what) {
    if (error_.empty()) error_ = what + " at offset " + std::to_string(pos_);
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  static bool field_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  }
  /// True (and consumes it) when the next word is `kw` followed by a boundary.
  bool keyword(std::string_view kw) {
    skip();
    if (s_.substr(pos_, kw.size()) != kw) return false;
    size_t end = pos_ + kw.size();
    if (end < s_.size() && !std::isspace(static_cast<unsigned char>(s_[end])) && s_[end] != '(') return false;
    pos_ = end;
    return true;
  }

  NodePtr expr() {
    auto left = conj();
    std::vector<NodePtr> alts{left};
    while (error_.empty() && keyword("OR")) alts.push_back(conj());
    if (alts.size() == 1) return left;
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::Or;
    n->kids = std::move(alts);
    return n;
  }

  NodePtr conj() {
    std::vector<NodePtr> parts{unary()};
    while (error_.empty()) {
      skip();
      if (pos_ >= s_.size() || s_[pos_] == ')') break;
      size_t save = pos_;
      if (keyword("OR")) {
        pos_ = save;
        break;
      }
      keyword("AND");
      parts.push_back(unary());
    }
    if (parts.size() == 1) return parts[0];
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::And;
    n->kids = std::move(parts);
    return n;
  }

  NodePtr unary() {
    skip();
    if (pos_ >= s_.size()) {
      fail("expected a restriction");
      return nullptr;
    }
    bool negate = false;
    if (keyword("NOT")) {
      negate = true;
    } else if (s_[pos_] == '-') {
      ++pos_;
      negate = true;
    }
    NodePtr inner;
    skip();
    if (negate) {
      inner = unary();
    } else if (pos_ < s_.size() && s_[pos_] == '(') {
      ++pos_;
      inner = expr();
      skip();
      if (pos_ >= s_.size() || s_[pos_] != ')') {
        fail("missing ')'");
        return nullptr;
      }
      ++pos_;
    } else {
      inner = restriction();
    }
    if (!negate || !inner) return inner;
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::Not;
    n->kids = {inner};
    return n;
  }

  NodePtr restriction() {
    skip();
    size_t start = pos_;
    while (pos_ < s_.size() && field_char(s_[pos_])) ++pos_;
    std::string field(s_.substr(start, pos_ - start));
    if (field.empty() || field.front() == '.' || field.back() == '.' || field.find("..") != std::string::npos) {
      fail("expected a field name");
      return nullptr;
    }
    skip();
    std::string op;
    for (std::string_view cand : {"!=", "<=", ">=", "=", "<", ">", ":"})
      if (s_.substr(pos_, cand.size()) == cand) {
        op = cand;
        pos_ += cand.size();
        break;
      }
    if (op.empty()) {
      if (keyword("eq"))
        op = "eq";
      else if (keyword("ne"))
        op = "ne";
      else {
        fail("expected a comparison (=, !=, <, <=, >, >=, :, eq, ne) after '" + field + "'");
        return nullptr;
      }
    }
    skip();
    std::string value;
    if (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '\'')) {
      char q = s_[pos_++];
      bool closed = false;
      while (pos_ < s_.size()) {
        char c = s_[pos_++];
        if (c == '\\' && pos_ < s_.size()) {
          value += s_[pos_++];
        } else if (c == q) {
          closed = true;
          break;
        } else {
          value += c;
        }
      }
      if (!closed) {
        fail("unterminated string");
        return nullptr;
      }
    } else {
      size_t vs = pos_;
      while (pos_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[pos_])) && s_[pos_] != ')' &&
             s_[pos_] != '(')
        ++pos_;
      value = std::string(s_.substr(vs, pos_ - vs));
      if (value.empty()) {
        fail("expected a value after '" + field + " " + op + "'");
        return nullptr;
      }
    }
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::Compare;
    n->op = op;
    n->value = value;
    size_t from = 0;
    while (from <= field.size()) {
      auto dot = field.find('.', from);
      if (dot == std::string::npos) dot = field.size();
      n->path.push_back(field.substr(from, dot - from));
      from = dot + 1;
    }
    if (op == "eq" || op == "ne") {
      try {
        n->re = std::make_shared<std::regex>(value, std::regex::ECMAScript);
      } catch (const std::regex_error&) {
        fail("'" + value + "' is not a regular expression");
        return nullptr;
      }
    }
    return n;
  }
};

bool glob(std::string_view pattern, std::string_view text) {
  // Iterative '*' matching: remember the last star and retry from one further.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::optional<double> number(const std::string& s) {
  try {
    size_t used = 0;
    double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (...) {
  }
  return std::nullopt;
}

/// Every scalar the path reaches (arrays fan out).
void collect(const json& v, const std::vector<std::string>& path, size_t i, std::vector<const json*>& out) {
  if (v.is_array()) {
    for (const auto& e : v) collect(e, path, i, out);
    return;
  }
  if (i == path.size()) {
    out.push_back(&v);
    return;
  }
  if (!v.is_object()) return;
  auto it = v.find(path[i]);
  if (it == v.end()) return;
  collect(*it, path, i + 1, out);
}

bool compare_one(const Node& n, const json& v) {
  const std::string& op = n.op;
  if (op == ":" && n.value == "*") return true;
  std::string text;
  if (v.is_string()) {
    text = v.get<std::string>();
  } else if (v.is_boolean()) {
    text = v.get<bool>() ? "true" : "false";
  } else if (v.is_number()) {
    auto want = number(n.value);
    double have = v.get<double>();
    if (!want) return false;
    if (op == "=" || op == ":") return have == *want;
    if (op == "<") return have < *want;
    if (op == "<=") return have <= *want;
    if (op == ">") return have > *want;
    if (op == ">=") return have >= *want;
    text = v.dump();
  } else {
    return false;
  }
  if (op == "=" || op == ":") return glob(n.value, text);
  if (op == "eq") return std::regex_match(text, *n.re);
  auto a = number(text), b = number(n.value);
  int cmp = (a && b) ? (*a < *b ? -1 : *a > *b ? 1 : 0) : text.compare(n.value);
  if (op == "<") return cmp < 0;
  if (op == "<=") return cmp <= 0;
  if (op == ">") return cmp > 0;
  if (op == ">=") return cmp >= 0;
  return false;
}

bool eval(const Node& n, const json& r) {
  switch (n.kind) {
    case Node::Kind::And:
      for (const auto& k : n.kids)
        if (!eval(*k, r)) return false;
      return true;
    case Node::Kind::Or:
      for (const auto& k : n.kids)
        if (eval(*k, r)) return true;
      return false;
    case Node::Kind::Not:
      return !eval(*n.kids[0], r);
    case Node::Kind::Compare: {
      std::vector<const json*> values;
      collect(r, n.path, 0, values);
      if (n.op == "!=" || n.op == "ne") {
        Node positive = n;
        positive.op = n.op == "!=" ? "=" : "eq";
        for (const json* v : values)
          if (compare_one(positive, *v)) return false;
        return true;
      }
      for (const json* v : values)
        if (compare_one(n, *v)) return true;
      return false;
    }
  }
  return false;
}

}  // namespace

std::shared_ptr<const ListFilter> ListFilter::parse(std::string_view text, std::string& error) {
  Parser p(text);
  auto root = p.parse(error);
  if (!error.empty()) return nullptr;
  auto f = std::make_shared<ListFilter>();
  f->root_ = root;
  return f;
}

bool ListFilter::matches(const json& resource) const { return !root_ || eval(*root_, resource); }

}  // namespace plinth::gcp_emulator
