#pragma once
// The plan for review: a Markdown summary sized for a pull-request comment
// and a self-contained HTML plan view, both built pool by pool from the
// grouped plan (engine/plan/groups.h) with the policy verdicts and the drift
// beside the changes. docs/plan.md, "Views".
#include <string>
#include <vector>

#include "engine/core/diagnostic.h"
#include "engine/plan/plan.h"
#include "engine/policy/policy.h"

namespace plinth::audit {

/// What a view shows. Pointers may be null: no evaluation (a saved plan
/// shown with plinth show holds no verdicts), no drift (not refreshed).
struct PlanView {
  const plan::Plan* plan = nullptr;
  const policy::Evaluation* evaluation = nullptr;
  const std::vector<plan::Drift>* drift = nullptr;
  /// The blueprint's diagnostics. With errors there is no plan (`plan` may be
  /// null): the views name the blueprint invalid and list the errors.
  const Diagnostics* validation = nullptr;
  std::string blueprint_name;
  std::string provenance;   ///< audit::describe() of the blueprint files' git provenance, or ""
  std::string plan_file;    ///< the saved plan's path (-out), or "" when the plan was not saved
  std::string plan_sha256;  ///< the saved plan file's sha256, hex
  std::string plinth_version = PLINTH_VERSION;
};

/// GitHub refuses comments of 65,536 characters or more; the summary stays
/// under 65,000 bytes, leaving room for a marker line a CI job adds.
inline constexpr size_t kCommentLimit = 65000;

/// The Markdown summary: the counts, the policy verdicts that block or warn,
/// the drift, every entry (a pool's members taking one action, or a single
/// resource) with its attributes in a collapsible block, replaces and
/// deletes first, and a footer with the plan file's digest; no links. It is
/// always shorter than `limit` characters: the entries that do not fit are
/// folded into rows of entries with identical changes (else of the same
/// type, attributes and action; else of the same type and action), with
/// their counts, and the text says what it folded and how to see it all.
std::string plan_markdown(const PlanView& view, size_t limit = kCommentLimit);

/// The HTML plan view: one self-contained page (inline CSS, no script, no
/// fetch) with a row per pool (or single resource) and its counts per action,
/// replaces and deletes first, each expandable to the attributes its members
/// share and a table of its members with the attributes that differ; the
/// policy verdicts beside the rows of the resources they name.
std::string plan_html(const PlanView& view);

}  // namespace plinth::audit
