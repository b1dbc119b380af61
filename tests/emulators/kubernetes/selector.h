#pragma once
// Label and field selectors as the Kubernetes API server reads them from
// ?labelSelector= and ?fieldSelector= (k8s.io/apimachinery labels and fields).
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace plinth::kube_emulator {

/// One requirement of a label selector: `key`, `!key`, `key=v`, `key==v`,
/// `key!=v`, `key in (a,b)`, `key notin (a,b)`, `key>N`, `key<N`.
struct Requirement {
  enum class Op { Exists, DoesNotExist, Equals, NotEquals, In, NotIn, GreaterThan, LessThan };
  std::string key;
  Op op = Op::Exists;
  std::vector<std::string> values;
  bool operator==(const Requirement&) const = default;
};

/// A parsed label selector; every requirement must hold (AND).
struct LabelSelector {
  std::vector<Requirement> requirements;
  /// True when every requirement holds for `labels`. `!=` and `notin` hold
  /// for an object without the key, as in Kubernetes.
  bool matches(const std::map<std::string, std::string>& labels) const;
};

/// Parses a label selector. Returns "" or the error the API server would
/// answer with (400), e.g. "unable to parse requirement: found 'x', expected: '('".
std::string parse_label_selector(const std::string& text, LabelSelector& out);

/// A parsed field selector: `field=value`, `field==value`, `field!=value`,
/// joined with commas. metadata.name and metadata.namespace are fields of
/// every kind; Pods also have spec.nodeName and status.phase (what kubectl
/// drain lists a node's pods with).
struct FieldSelector {
  struct Term {
    std::string field;
    bool negated = false;
    std::string value;
  };
  std::vector<Term> terms;
  /// True when every term holds for `object` (a missing field is "").
  bool matches(const nlohmann::json& object) const;
};

/// Parses a field selector for objects of `kind`. Returns "" or the API
/// server's error, e.g. `field label not supported: spec.nodeName`.
std::string parse_field_selector(const std::string& text, FieldSelector& out, const std::string& kind = "");

}  // namespace plinth::kube_emulator
