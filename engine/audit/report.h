#pragma once
// Compliance audit reports (docs/audit.md): one Report value built from a
// policy run, written as JSON (the source of truth, schema in
// docs/audit-report.schema.json), SARIF 2.1.0, JUnit XML, Markdown and HTML.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/audit/provenance.h"
#include "engine/blueprint/blueprint.h"
#include "engine/core/result.h"
#include "engine/core/strings.h"
#include "engine/plan/plan.h"
#include "engine/policy/policy.h"
#include "engine/policy/waivers.h"
#include "engine/verify/verify.h"

namespace plinth::audit {

/// The "report_format_version" this build writes (docs/audit-report.schema.json).
inline constexpr int kReportFormatVersion = 1;

/// Where SARIF's tool.driver.informationUri and every rule's helpUri point.
inline constexpr const char* kDocsUri = "https://github.com/plinth-infra/plinth/blob/main/docs/";

/// An implementation specification (HIPAA), paragraph (GDPR) or point a
/// control requires, listed under it in the framework file. A control whose
/// policies pass but leave one of these without evidence is "partial".
struct Specification {
  std::string id;         ///< "164.308(a)(1)(ii)(A)"
  std::string title;      ///< "Risk analysis"
  bool required = false;  ///< HIPAA "(R)"; false: addressable "(A)" or not graded
  bool operator==(const Specification&) const = default;
};

/// A compliance framework's well-known controls, from
/// <policy dir>/frameworks/<name>.yaml, so that controls no policy covers
/// show up as gaps.
struct FrameworkCatalog {
  std::string name;   ///< "hipaa"
  std::string title;  ///< "HIPAA Security Rule (45 CFR Part 164 Subpart C)"
  struct Control {
    std::string id;     ///< "164.312(a)(1)"
    std::string title;  ///< "Access control"
    /// Paragraphs this control heads besides its own sub-paragraphs: the HIPAA
    /// standard 164.312(a)(1) covers its implementation specifications
    /// 164.312(a)(2)(i)-(iv), so it lists "164.312(a)".
    std::vector<std::string> covers;
    /// What the control requires, each evidenced by a policy citing it (or a
    /// sub-paragraph of it) that had something to check.
    std::vector<Specification> specs;
    bool operator==(const Control&) const = default;
  };
  std::vector<Control> controls;
  bool operator==(const FrameworkCatalog&) const = default;
};

/// Reads every `frameworks/*.yaml` under each of `policy_dirs` (missing
/// folders are skipped). Errors name the file and the bad entry.
Result<std::vector<FrameworkCatalog>> load_frameworks(const std::vector<std::string>& policy_dirs);

/// Status of a policy or of a control, worst first. Partial: the policies
/// pass but some of the control's specifications have no evidence.
/// NotApplicable: every policy that ran found nothing to check. NotEvaluated:
/// a covering policy did not run, or the blueprint does not select the
/// framework (metadata.compliance), so nothing in it is claimed.
enum class ControlStatus { Fail, Error, Waived, Partial, Pass, NotApplicable, NotEvaluated, NotCovered };
const char* to_string(ControlStatus s);

/// One control of one framework in the per-framework view.
struct ControlView {
  std::string id;
  std::string title;  ///< from the catalog; "" for a control only the policies name
  ControlStatus status = ControlStatus::NotCovered;
  /// Policies citing this control or one of its sub-paragraphs
  /// ("164.312(a)(2)(iv)" is under "164.312(a)(1)", which covers "164.312(a)"),
  /// in load order.
  std::vector<std::string> policies;
  /// Those of `policies` that did not run (their pack is not selected by
  /// metadata.compliance): the control is at best not evaluated, never pass.
  std::vector<std::string> not_evaluated;
  bool in_catalog = false;  ///< listed in the framework's data file
  std::vector<std::string> covers;  ///< the catalog's `covers` (paragraphs it heads)
  /// The catalog's specifications no policy that had something to check
  /// cites: why a control is partial, or what a not covered one lacks.
  std::vector<Specification> missing;
  /// What `audit --verify` observed on the running nodes for this control
  /// (an observation's summary and time), evidence beside the policies.
  std::vector<std::string> observed;
  bool operator==(const ControlView&) const = default;
};

struct FrameworkView {
  std::string name;
  std::string title;
  std::vector<ControlView> controls;  ///< catalog order, then controls only policies cite (sorted)
  bool selected = false;              ///< listed in the blueprint's metadata.compliance
  bool operator==(const FrameworkView&) const = default;
};

/// A waiver that turned at least one failure into a waived verdict.
struct WaiverUse {
  policy::Waiver waiver;
  int days_left = 0;  ///< days from the report date to `expires` (0: expires today)
  bool operator==(const WaiverUse&) const = default;
};

/// What `plinth audit --verify` observed on the running nodes.
struct Observed {
  std::string source;   ///< "Prometheus at URL" or the probe files read
  std::string summary;  ///< "3 of 4 declared nodes report, 2 match; ..."
  std::vector<verify::Observation> observations;
  Diagnostics findings;  ///< verify's findings (VER001...)
  bool operator==(const Observed&) const = default;
};

/// Everything an auditor reads about one run.
struct Report {
  std::string generated_at;                 ///< UTC, "2026-12-02T13:04:05Z"
  std::string plinth_version = PLINTH_VERSION;
  std::string blueprint_name;
  std::vector<std::string> compliance;      ///< metadata.compliance
  std::vector<bp::SourceFile> files;        ///< blueprint files as loaded, with sha256
  Provenance provenance;
  std::optional<plan::Summary> plan;        ///< the plan against the state
  std::string state_path;
  std::vector<policy::PolicyInfo> policies;  ///< the policies that ran
  std::vector<policy::PolicyInfo> skipped;   ///< packs not selected by metadata.compliance
  std::map<std::string, std::string> policy_files;  ///< policy file -> sha256
  std::vector<policy::Verdict> verdicts;
  std::vector<WaiverUse> waivers;
  Diagnostics diagnostics;  ///< policy load errors, waiver problems
  /// The blueprint's own diagnostics (loader and domain rules): its warnings
  /// when it is valid; its errors too when it is not, and then no policy
  /// ran. Reported as findings (SARIF results, JUnit failures).
  Diagnostics validation;
  std::vector<FrameworkView> frameworks;
  std::string framework_filter;  ///< set by restrict_to_framework
  bool blocked = false;          ///< a mandatory policy failed or errored, or a waiver expired
  std::optional<Observed> observed;  ///< audit --verify

  const policy::PolicyInfo* find(const std::string& id) const;
  /// False when the blueprint did not pass validation (no policy ran).
  bool blueprint_valid() const { return !has_errors(validation); }
  /// Verdict counts by outcome ("pass", "fail", "waived", "error", "not_applicable").
  std::map<std::string, int> counts() const;
  /// Policy counts by outcome, each policy counted once at its worst verdict
  /// ("pass", "fail", "waived", "error", "not_applicable": every verdict
  /// not applicable), plus "not_evaluated" (skipped packs).
  std::map<std::string, int> policy_outcomes() const;
  /// Failed or errored verdicts of mandatory policies.
  int mandatory_failures() const;
  /// `path` relative to the repository root when the blueprint is in a
  /// repository, else relative to the current directory (SARIF, links).
  std::string repo_path(const std::string& path) const;
};

struct ReportInput {
  const bp::Blueprint* blueprint = nullptr;
  Provenance provenance;
  const policy::Evaluation* evaluation = nullptr;
  std::vector<policy::Waiver> waivers;  ///< as loaded; the ones used are recorded
  std::optional<plan::Summary> plan;
  std::string state_path;
  std::vector<FrameworkCatalog> catalogs;
  std::string today;         ///< YYYY-MM-DD, for waiver days_left
  std::string generated_at;  ///< timestamp
};

Report build_report(const ReportInput& in);

/// What `plinth audit` and `plinth plan --report` hand over after a policy run.
struct RunInput {
  const bp::Blueprint* blueprint = nullptr;
  const policy::Evaluation* evaluation = nullptr;  ///< waivers already applied
  std::optional<plan::Summary> plan;
  std::string state_path;
  std::vector<std::string> policy_dirs;  ///< where frameworks/*.yaml are looked for
  std::string waivers_path;              ///< the waivers.yaml the run applied
  /// The blueprint's diagnostics. With errors, `blueprint` and `evaluation`
  /// may be null (it did not load or validate) and `files` names what was read.
  Diagnostics validation;
  std::vector<bp::SourceFile> files;     ///< blueprint files, when `blueprint` is null
};

/// build_report() with the blueprint files' git provenance, the framework
/// control lists of `policy_dirs` and the waivers of `waivers_path`, dated now.
/// Errors: an unreadable repository, a malformed framework file.
Result<Report> collect_report(const RunInput& in);

/// A `--report FORMAT:FILE` argument.
struct ReportTarget {
  std::string format;  ///< one of formats()
  std::string path;    ///< "-" for stdout
  bool operator==(const ReportTarget&) const = default;
};
Result<ReportTarget> parse_report_target(const std::string& spec);

/// Renders `r` as `format` and writes it to `path` (replacing the file
/// atomically; "-" is stdout). Errors name the file.
plinth::Status write_report(const Report& r, const std::string& format, const std::string& path);

/// Records what verify observed and lists each observation under the
/// framework controls it is evidence for (ControlView::observed; an
/// observation of "164.312(a)(2)(iv)" is listed under "164.312(a)(1)").
void attach_observed(Report& r, Observed observed);

/// Keeps only framework `name` in the frameworks view and only the policies
/// (and their verdicts) that cite one of its controls. Fails with the known
/// framework names when `name` is neither catalogued nor cited.
plinth::Status restrict_to_framework(Report& r, const std::string& name);

/// The JSON report (docs/audit-report.schema.json).
nlohmann::json to_json(const Report& r);

/// SARIF 2.1.0: one rule per policy, one result per failed, errored or
/// waived verdict (waived as suppressed), locations relative to %SRCROOT%;
/// blueprint validation errors and warnings are results too (rule = code).
nlohmann::json to_sarif(const Report& r);

/// JUnit XML: a testsuite per pack, a testcase per policy x resource.
std::string to_junit(const Report& r);

/// Markdown sized for a pull-request comment.
std::string to_markdown(const Report& r);

/// One self-contained HTML page (inline CSS, no scripts, no fetches).
std::string to_html(const Report& r);

/// The formats accepted by `--format` / `--report FORMAT:FILE`.
const std::vector<std::string>& formats();

/// Renders `r` in `format` (one of formats()), text ending in a newline.
Result<std::string> render(const Report& r, const std::string& format);

/// engine/core/strings.h, where verify's reports find it too.
using plinth::xml_escape;

/// "2026-12-02T13:04:05Z" now.
std::string utc_timestamp();

}  // namespace plinth::audit
