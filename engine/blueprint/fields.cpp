// Reading typed fields from the YAML maps of a blueprint: Obj's checks of
// keys, types, enumerations and limits, each with its diagnostic, and the
// value helpers every section reader uses (loader_internal.h).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "engine/blueprint/loader_internal.h"
#include "engine/core/strings.h"

namespace plinth::bp::detail {
namespace {

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

}  // namespace

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string describe(const Node& n) {
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  if (n.IsNull()) return "nothing (null)";
  const std::string& s = n.Scalar();
  return "\"" + (s.size() > 40 ? s.substr(0, 37) + "..." : s) + "\"";
}

bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 63 || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.';
  });
}

bool plain_scalar(const Node& n) { return n.IsScalar() && !n.quoted(); }

std::optional<long long> parse_int(const std::string& s, bool* too_large) {
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

Obj::Obj(const Ctx& c, const Node& node, SourceLoc where, std::string label, std::string prefix, Origin* origin,
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

void Obj::check_keys() const {
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

const Obj::Entry* Obj::get(std::string_view key, bool required) const {
  for (const Entry& e : entries_)
    if (e.key == key) return &e;
  if (required && !misspelled(key))
    c_->error("BP004", loc_, "missing required field '" + path(key) + "' in " + label_,
              "add '" + std::string(key) + ":' (see docs/blueprint.md)");
  return nullptr;
}

bool Obj::misspelled(std::string_view key) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
    if (std::find(keys_->begin(), keys_->end(), e.key) != keys_->end()) return false;
    auto meant = intended(e.key, *keys_);
    return meant && *meant == key;
  });
}

void Obj::record(std::string_view key, const SourceLoc& at) const {
  if (origin_) origin_->fields[path(key)] = at;
}

void Obj::wrong_type(const Entry& e, const char* type) const {
  c_->error("BP003", e.value_loc,
            "'" + path(e.key) + "' in " + label_ + " must be " + type + ", not " + describe(e.value),
            type_hint(type));
}

void Obj::invalid(const Entry& e, std::string message, std::string hint) const {
  c_->error("BP005", e.value_loc, std::move(message), std::move(hint));
}

bool Obj::str(std::string_view key, std::string& out, bool required) const {
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

bool Obj::enumeration(std::string_view key, std::string& out, const Keys& allowed, bool required,
                      const std::string& hint) const {
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

bool Obj::integer(std::string_view key, int& out, bool required, int min, int max) const {
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

bool Obj::number(std::string_view key, double& out, bool required) const {
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

bool Obj::boolean(std::string_view key, bool& out) const {
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

void Obj::opt_bool(std::string_view key, std::optional<bool>& out) const {
  bool v = false;
  if (boolean(key, v)) out = v;
}

bool Obj::str_list(std::string_view key, std::vector<std::string>& out, bool required) const {
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

bool Obj::str_map(std::string_view key, std::map<std::string, std::string>& out) const {
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

std::optional<Obj> Obj::sub(std::string_view key, const Keys& keys, bool required) const {
  const Entry* e = get(key, required);
  if (!e) return std::nullopt;
  Obj o(*c_, e->value, e->value_loc, label_, path(key) + ".", origin_, keys);
  if (!o.ok()) return std::nullopt;
  record(key, e->value_loc);
  o.check_keys();
  return o;
}

std::optional<Node> Obj::list(std::string_view key) const {
  const Entry* e = get(key);
  if (!e) return std::nullopt;
  if (!e->value.IsSequence()) {
    wrong_type(*e, "a list");
    return std::nullopt;
  }
  return e->value;
}

}  // namespace plinth::bp::detail
