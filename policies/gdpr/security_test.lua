local base = fixture("compliant")

test { name = "encrypted personal data, TLS 1.3, backed-up and restore-tested personal tiers pass", blueprint = base, expect = {} }

test {
  name = "an unencrypted pii tier fails GDPR-SEC-001; TLS 1.2 is encryption in transit but below the TLS 1.3 baseline",
  blueprint = replace(replace(base, 'at_rest: aes-256-gcm, in_transit: tls1.3, kms_key: "arn', 'at_rest: none, in_transit: tls1.3, kms_key: "arn'),
    'tls_min: "1.3"', 'tls_min: "1.2"'),
  expect = { { "GDPR-SEC-001", "storage.tier.pii-archive" }, { "GDPR-TLS-001", "access.transport.default" } },
}

test {
  name = "no minimum TLS version fails GDPR-SEC-001 and the baseline",
  blueprint = replace(base, 'transport: {tls_min: "1.3", mtls: true}', 'transport: {mtls: true}'),
  expect = { { "GDPR-SEC-001", "access.transport.default" }, { "GDPR-TLS-001", "access.transport.default" } },
}

test {
  name = "a personal-data tier no backup copies cannot be restored (GDPR-SEC-002)",
  blueprint = replace(replace(base, 'source: phi-lake, target: pii-archive', 'source: phi-scratch, target: pii-archive'),
    'source: phi-lake, target: phi-dr', 'source: phi-scratch, target: phi-dr'),
  policies = { "GDPR-SEC-002" },
  expect = { { "GDPR-SEC-002", "storage.tier.phi-lake" } },
}

test {
  name = "restores of personal data never tested, or every 400 days, fail GDPR-SEC-003",
  blueprint = replace(replace(base, 'retention_days: 2190, dr_test_interval_days: 90', 'retention_days: 2190, dr_test_interval_days: 0'),
    'retention_days: 365, dr_test_interval_days: 30', 'retention_days: 365, dr_test_interval_days: 400'),
  policies = { "GDPR-SEC-003" },
  expect = { { "GDPR-SEC-003", "storage.backup.lake-to-archive" }, { "GDPR-SEC-003", "storage.backup.lake-dr" } },
}
