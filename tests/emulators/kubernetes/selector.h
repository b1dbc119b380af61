#pragma once
// Label and field selectors as the Kubernetes API server reads them from
// ?labelSelector= and ?fieldSelector= (k8s.io/apimachinery labels and fields).
#include <map>
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
/// joined with commas. Only metadata.name and metadata.namespace are fields.
struct FieldSelector {
  struct Term {
    std::string field;
    bool negated = false;
    std::string value;
  };
  std::vector<Term> terms;
  bool matches(const std::string& name, const std::string& ns) const;
};

/// Parses a field selector. Returns "" or the API server's error, e.g.
/// `field label not supported: spec.nodeName`.
std::string parse_field_selector(const std::string& text, FieldSelector& out);

}  // namespace plinth::kube_emulator
