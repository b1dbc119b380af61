#pragma once
// The `filter` parameter of Compute Engine list and aggregatedList calls.
//
// Grammar (what the Compute API documents for `filter`):
//   expr        := and { OR and }
//   and         := unary { [AND] unary }          juxtaposition means AND
//   unary       := NOT unary | '-' unary | '(' expr ')' | restriction
//   restriction := FIELD OP VALUE                   FIELD: a.b.c (label keys may hold '-')
//   OP          := = | != | < | <= | > | >= | : | eq | ne
//   VALUE       := "string" | 'string' | word
// Semantics on a resource's JSON:
//   =, !=       string fields compare literally with '*' as a wildcard
//               (name = "gpu-*"); numbers and booleans compare as such
//   <, <=, >, >= numbers numerically, strings lexically (timestamps)
//   :           has: `labels.env:*` is true when the label exists; otherwise as =
//   eq, ne      the value is a regular expression that must match the whole field
//               (the older Compute syntax: `name eq 'gpu-[0-9]+'`, `labels.env eq prod`)
// A missing field makes =, :, <, >, eq false and !=, ne true. A path through
// an array matches when any element does.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace plinth::gcp_emulator {

class ListFilter {
 public:
  struct Node;
  /// Parses `text`; "" matches everything. On a syntax error returns nullptr
  /// and sets `error` to what is wrong and where (0-based offset).
  static std::shared_ptr<const ListFilter> parse(std::string_view text, std::string& error);
  bool matches(const nlohmann::json& resource) const;

 private:
  std::shared_ptr<const Node> root_;  ///< null: match everything
};

}  // namespace plinth::gcp_emulator
