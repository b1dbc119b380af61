#pragma once
// plinth verify (docs/verify.md): what the running nodes report, through the
// probe render installs (engine/render/plinth-probe.sh, Prometheus text) and
// the DCGM exporter, compared with what the blueprint declares for their pool.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/blueprint/blueprint.h"
#include "engine/catalog/catalog.h"
#include "engine/core/diagnostic.h"
#include "engine/core/result.h"

namespace plinth::verify {

/// The probe output format this build reads (plinth_probe_info{format="1"}).
inline constexpr const char* kProbeFormat = "1";

/// One series: metric name, labels, value.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
  std::string label(const std::string& key) const {
    auto it = labels.find(key);
    return it == labels.end() ? std::string() : it->second;
  }
  bool operator==(const Sample&) const = default;
};

/// Parses the Prometheus text exposition format (what the probe writes and
/// exporters serve). Comments and HELP/TYPE lines are skipped; timestamps are
/// ignored. Errors name `file`:line:column and what was expected.
Result<std::vector<Sample>> parse_text(std::string_view text, const std::string& file);

/// Where `plinth verify` reads the facts from a Prometheus server.
struct PrometheusOptions {
  std::string url;         ///< base URL, e.g. "https://prometheus.example:9090"
  std::string ca_bundle;   ///< PEM bundle; "" = the system store
  std::string token;       ///< bearer token; "" = none
  long timeout_ms = 30000;
};

/// The two instant queries plinth verify sends (/api/v1/query): every probe
/// series, and one series per DCGM exporter GPU (or MIG instance) with its
/// identifying labels.
const std::vector<std::string>& prometheus_queries();

/// Runs prometheus_queries() against `options.url` and returns their series.
/// Errors name the URL and Prometheus's own error (status "error", errorType).
Result<std::vector<Sample>> query_prometheus(const PrometheusOptions& options);

/// A fact observed on running nodes that supports a compliance control.
struct Observation {
  std::string fact;      ///< "encryption_at_rest" | "audit_logging" | "configuration"
  std::string summary;   ///< one sentence: what was observed where
  /// "framework:control" the fact is evidence for, e.g. "hipaa:164.312(a)(2)(iv)".
  std::vector<std::string> controls;
  int nodes = 0;          ///< nodes where it was observed
  int of = 0;             ///< nodes it was looked for on
  std::string observed_at;  ///< UTC of the newest probe run it rests on ("" = unknown)
  bool operator==(const Observation&) const = default;
};

struct Options {
  std::string pool;     ///< only this pool ("" = every pool)
  long long now = 0;    ///< Unix time (0 = the clock)
  long long max_age_s = 3600;  ///< facts older than this are stale (VER012)
};

/// What verify found: findings with stable rule IDs (Diagnostic::code
/// VER001...; address = the node, loc = where its pool is declared), the
/// evidence, and counts.
struct Outcome {
  Diagnostics findings;
  std::vector<Observation> observations;
  int nodes_declared = 0;  ///< node pool members and burst pool `desired`, of the checked pools
  int nodes_seen = 0;      ///< of those, nodes that report
  int nodes_matching = 0;  ///< nodes with no error finding
  std::vector<std::string> pools;  ///< the pools checked
  std::vector<std::string> checked;  ///< nodes declared or reporting, of the checked pools
  std::string source;      ///< "prometheus URL" or the files read
  std::string newest;      ///< UTC of the newest probe run seen
  bool failed() const { return has_errors(findings); }
};

/// Compares the facts with the blueprint (docs/verify.md lists the rules).
/// Errors: an unknown --pool, a pool that cannot be rendered.
Result<Outcome> compare(const bp::Blueprint& blueprint, const catalog::Catalog& catalog,
                        const std::vector<Sample>& samples, const Options& options);

/// One verify rule, for docs and SARIF.
struct Rule {
  std::string id;
  Severity severity;
  std::string title;
  std::string fix;
};
const std::vector<Rule>& rules();

/// "3 of 4 declared nodes report, 2 match; 2 error(s), 0 warning(s)".
std::string summary(const Outcome& o);

/// Renders `o` as text (diagnostics, then a summary), json, sarif, junit,
/// markdown or html (formats()).
const std::vector<std::string>& formats();
Result<std::string> render(const Outcome& o, const std::string& blueprint_name, const std::string& format, bool color = false);

}  // namespace plinth::verify
