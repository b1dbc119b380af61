local base = fixture("compliant")

test { name = "the PHI lake keeps earlier versions in backups and storage access is audited", blueprint = base, expect = {} }

test {
  name = "a PHI tier without a backup keeping versions fails HIPAA-INT-001",
  blueprint = replace(replace(base, 'source: phi-lake, target: pii-archive', 'source: phi-scratch, target: pii-archive'),
    'source: phi-lake, target: phi-dr', 'source: phi-scratch, target: phi-dr'),
  expect = { { "HIPAA-INT-001", "storage.tier.phi-lake" } },
}

test {
  name = "storage audit logging off fails HIPAA-INT-001",
  blueprint = replace(base, 'audit_logging: {api_server: true, storage: true', 'audit_logging: {api_server: true, storage: false'),
  expect = { { "HIPAA-INT-001", "access.audit_logging.default" } },
}
