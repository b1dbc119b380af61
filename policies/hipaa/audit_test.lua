local base = fixture("compliant")
local audit = 'audit_logging: {api_server: true, storage: true, retention_days: 2190}'

test { name = "both audit logs kept 2190 days pass", blueprint = base, expect = {} }

test {
  name = "one year of retention fails HIPAA-AUD-002",
  blueprint = replace(base, audit, 'audit_logging: {api_server: true, storage: true, retention_days: 365}'),
  expect = { { "HIPAA-AUD-002", "access.audit_logging.default" } },
}

test {
  name = "audit logging off fails HIPAA-AUD-001 once per log",
  blueprint = replace(base, audit, 'audit_logging: {api_server: false, storage: false, retention_days: 2190}'),
  expect = { { "HIPAA-AUD-001", "access.audit_logging.default" }, { "HIPAA-AUD-001", "access.audit_logging.default" } },
}
