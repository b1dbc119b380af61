local base = fixture("compliant")

test { name = "the PHI lake is backed up and restore-tested", blueprint = base, expect = {} }

test {
  name = "a persistent PHI tier without backup fails HIPAA-BAK-001",
  blueprint = replace(replace(base, 'source: phi-lake, target: pii-archive', 'source: phi-scratch, target: pii-archive'),
    'source: phi-lake, target: phi-dr', 'source: phi-scratch, target: phi-dr'),
  expect = { { "HIPAA-BAK-001", "storage.tier.phi-lake" } },
}

test {
  name = "a PHI backup never restore-tested, or tested every 400 days, fails HIPAA-BAK-002",
  blueprint = replace(replace(base, 'retention_days: 2190, dr_test_interval_days: 90', 'retention_days: 2190, dr_test_interval_days: 0'),
    'retention_days: 365, dr_test_interval_days: 30', 'retention_days: 365, dr_test_interval_days: 400'),
  policies = { "HIPAA-BAK-002" },
  expect = { { "HIPAA-BAK-002", "storage.backup.lake-to-archive" }, { "HIPAA-BAK-002", "storage.backup.lake-dr" } },
}
