local base = fixture("compliant")

test { name = "roles granted to named groups pass", blueprint = base, expect = {} }

test {
  name = "anonymous, all-authenticated and wildcard subjects fail",
  blueprint = replace(replace(replace(base,
    'subjects: ["group:radiology-ml"]', 'subjects: ["group:system:authenticated"]'),
    'subjects: ["group:pathology-ml"]', 'subjects: ["group:*"]'),
    'subjects: ["group:clinical-qa"]', 'subjects: ["group:clinical-qa", "user:system:anonymous"]'),
  expect = { { "HIPAA-ACC-001", "access.role.radiology-researcher" }, { "HIPAA-ACC-001", "access.role.pathology-researcher" },
             { "HIPAA-ACC-001", "access.role.model-auditor" } },
}
