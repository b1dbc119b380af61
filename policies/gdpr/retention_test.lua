local base = fixture("compliant")

test { name = "a pii object tier that expires data passes", blueprint = base, expect = {} }

test {
  name = "a pii object tier that keeps data forever fails",
  blueprint = replace(base, 'after_days: 30, expire_days: 2555', 'after_days: 30, expire_days: 0'),
  expect = { { "GDPR-RET-001", "storage.tier.pii-archive" } },
}

test {
  name = "a phi object tier that keeps data forever fails: health data is personal data",
  blueprint = replace(replace(base, 'after_days: 30, expire_days: 2555', 'after_days: 30, expire_days: 0'),
                      'classification: pii\n', 'classification: phi\n'),
  expect = { { "GDPR-RET-001", "storage.tier.pii-archive", "keeps phi data forever" } },
}

test {
  name = "a phi object tier whose backups are kept forever (retention_days 0) fails",
  blueprint = replace(base, 'retention_days: 365, dr_test_interval_days: 30', 'retention_days: 0, dr_test_interval_days: 30'),
  expect = { { "GDPR-RET-001", "storage.tier.phi-dr" } },
}
