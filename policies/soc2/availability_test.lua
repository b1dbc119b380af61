local base = fixture("compliant")

test { name = "retained, restore-tested backups pass", blueprint = base, expect = {} }

test {
  name = "a backup never restore-tested fails",
  blueprint = replace(base, 'retention_days: 365, dr_test_interval_days: 30', 'retention_days: 365, dr_test_interval_days: 0'),
  expect = { { "SOC2-BAK-001", "storage.backup.lake-dr" } },
}

test {
  name = "no retention and a restore test every two years fail",
  blueprint = replace(base, 'retention_days: 2190, dr_test_interval_days: 90', 'retention_days: 0, dr_test_interval_days: 730'),
  expect = { { "SOC2-BAK-001", "storage.backup.lake-to-archive" }, { "SOC2-BAK-001", "storage.backup.lake-to-archive" } },
}
