#include "tests/emulators/kubernetes/selector.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace plinth::kube_emulator {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// A tokenizer for the label selector grammar of k8s.io/apimachinery/pkg/labels.
class Lexer {
 public:
  enum class Tok {
    End,
    Identifier,
    Comma,
    OpenParen,
    CloseParen,
    Equals,
    DoubleEquals,
    NotEquals,
    Not,
    In,
    NotIn,
    Gt,
    Lt
  };
  explicit Lexer(const std::string& s) : s_(s) {}

  Tok next(std::string& text) {
    while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
    text.clear();
    if (pos_ >= s_.size()) return Tok::End;
    char c = s_[pos_];
    auto two = [&](const char* t) { return s_.compare(pos_, 2, t) == 0; };
    if (c == ',') return ++pos_, text = ",", Tok::Comma;
    if (c == '(') return ++pos_, text = "(", Tok::OpenParen;
    if (c == ')') return ++pos_, text = ")", Tok::CloseParen;
    if (two("==")) return pos_ += 2, text = "==", Tok::DoubleEquals;
    if (two("!=")) return pos_ += 2, text = "!=", Tok::NotEquals;
    if (c == '=') return ++pos_, text = "=", Tok::Equals;
    if (c == '!') return ++pos_, text = "!", Tok::Not;
    if (c == '>') return ++pos_, text = ">", Tok::Gt;
    if (c == '<') return ++pos_, text = "<", Tok::Lt;
    while (pos_ < s_.size() && !is_space(s_[pos_]) && std::string(",()=!<>").find(s_[pos_]) == std::string::npos)
      text += s_[pos_++];
    if (text == "in") return Tok::In;
    if (text == "notin") return Tok::NotIn;
    return Tok::Identifier;
  }
  Tok peek(std::string& text) {
    size_t save = pos_;
    Tok t = next(text);
    pos_ = save;
    return t;
  }

 private:
  const std::string& s_;
  size_t pos_ = 0;
};

bool valid_value(const std::string& v) {
  if (v.size() > 63) return false;
  if (v.empty()) return true;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(v.front()) || !alnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(), [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool valid_key(const std::string& k) {
  auto slash = k.find('/');
  std::string name = slash == std::string::npos ? k : k.substr(slash + 1);
  if (slash != std::string::npos) {
    std::string prefix = k.substr(0, slash);
    if (prefix.empty() || prefix.size() > 253) return false;
    for (char c : prefix)
      if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' ||
            c == '.'))
        return false;
  }
  return !name.empty() && valid_value(name);
}

bool integer_value(const std::string& s, long long& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

bool LabelSelector::matches(const std::map<std::string, std::string>& labels) const {
  for (const auto& r : requirements) {
    auto it = labels.find(r.key);
    bool has = it != labels.end();
    auto in_values = [&] { return has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end(); };
    long long have = 0, want = 0;
    switch (r.op) {
      case Requirement::Op::Exists:
        if (!has) return false;
        break;
      case Requirement::Op::DoesNotExist:
        if (has) return false;
        break;
      case Requirement::Op::Equals:
      case Requirement::Op::In:
        if (!in_values()) return false;
        break;
      case Requirement::Op::NotEquals:
      case Requirement::Op::NotIn:
        if (in_values()) return false;
        break;
      case Requirement::Op::GreaterThan:
      case Requirement::Op::LessThan:
        if (!has || !integer_value(it->second, have) || !integer_value(r.values[0], want)) return false;
        if (r.op == Requirement::Op::GreaterThan ? !(have > want) : !(have < want)) return false;
        break;
    }
  }
  return true;
}

std::string parse_label_selector(const std::string& text, LabelSelector& out) {
  out.requirements.clear();
  Lexer lex(text);
  std::string tok;
  using Tok = Lexer::Tok;
  if (lex.peek(tok) == Tok::End) return "";
  auto fail = [](const std::string& found, const std::string& expected) {
    return "unable to parse requirement: found '" + found + "', expected: " + expected;
  };
  while (true) {
    Requirement r;
    Tok t = lex.next(tok);
    if (t == Tok::Not) {
      if (lex.next(tok) != Tok::Identifier) return fail(tok, "identifier after '!'");
      r.key = tok;
      r.op = Requirement::Op::DoesNotExist;
    } else if (t == Tok::Identifier) {
      r.key = tok;
      Tok op = lex.peek(tok);
      if (op == Tok::End || op == Tok::Comma) {
        r.op = Requirement::Op::Exists;
      } else {
        lex.next(tok);
        if (op == Tok::In || op == Tok::NotIn) {
          r.op = op == Tok::In ? Requirement::Op::In : Requirement::Op::NotIn;
          if (lex.next(tok) != Tok::OpenParen) return fail(tok, "'('");
          while (true) {
            Tok v = lex.next(tok);
            if (v == Tok::CloseParen && r.values.empty()) break;  // "in ()" is an empty set
            if (v != Tok::Identifier) return fail(tok, "identifier");
            r.values.push_back(tok);
            Tok sep = lex.next(tok);
            if (sep == Tok::CloseParen) break;
            if (sep != Tok::Comma) return fail(tok, "',' or ')'");
          }
        } else if (op == Tok::Equals || op == Tok::DoubleEquals || op == Tok::NotEquals || op == Tok::Gt ||
                   op == Tok::Lt) {
          r.op = op == Tok::NotEquals ? Requirement::Op::NotEquals
                 : op == Tok::Gt      ? Requirement::Op::GreaterThan
                 : op == Tok::Lt      ? Requirement::Op::LessThan
                                      : Requirement::Op::Equals;
          std::string v;
          Tok vt = lex.peek(v);
          if (vt == Tok::Identifier) {
            lex.next(v);
          } else if (vt != Tok::End && vt != Tok::Comma) {
            return fail(v, "identifier");
          } else {
            v.clear();
          }
          long long n = 0;
          if ((r.op == Requirement::Op::GreaterThan || r.op == Requirement::Op::LessThan) && !integer_value(v, n))
            return "unable to parse requirement: for 'gt', 'lt' operators, the value must be an integer";
          r.values.push_back(v);
        } else {
          return fail(tok, "'=', '!=', '==', 'in', 'notin'");
        }
      }
    } else {
      return fail(tok, "'!' or identifier");
    }
    if (!valid_key(r.key))
      return "unable to parse requirement: key: Invalid value: \"" + r.key +
             "\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character";
    for (const auto& v : r.values)
      if (!valid_value(v))
        return "unable to parse requirement: values[0][" + r.key + "]: Invalid value: \"" + v +
               "\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
               "must start and end with an alphanumeric character";
    out.requirements.push_back(std::move(r));
    Tok sep = lex.next(tok);
    if (sep == Tok::End) break;
    if (sep != Tok::Comma) return fail(tok, "','");
  }
  return "";
}

bool FieldSelector::matches(const nlohmann::json& object) const {
  for (const auto& t : terms) {
    const nlohmann::json* at = &object;
    for (size_t start = 0; at && start <= t.field.size();) {
      size_t dot = t.field.find('.', start);
      const std::string key = t.field.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      at = at->is_object() && at->contains(key) ? &(*at)[key] : nullptr;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    const std::string have = at && at->is_string() ? at->get<std::string>() : "";
    if ((have == t.value) == t.negated) return false;
  }
  return true;
}

std::string parse_field_selector(const std::string& text, FieldSelector& out, const std::string& kind) {
  out.terms.clear();
  if (text.find_first_not_of(" ") == std::string::npos) return "";
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    FieldSelector::Term t;
    size_t op = part.find("!=");
    size_t len = 2;
    if (op != std::string::npos) {
      t.negated = true;
    } else if ((op = part.find("==")) == std::string::npos) {
      op = part.find('=');
      len = 1;
    }
    if (op == std::string::npos) return "invalid selector: '" + text + "'; can't understand '" + part + "'";
    t.field = part.substr(0, op);
    t.value = part.substr(op + len);
    const bool pod_field = kind == "Pod" && (t.field == "spec.nodeName" || t.field == "status.phase");
    if (t.field != "metadata.name" && t.field != "metadata.namespace" && !pod_field)
      return "field label not supported: " + t.field;
    out.terms.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return "";
}

}  // namespace plinth::kube_emulator
