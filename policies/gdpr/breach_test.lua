local base = fixture("compliant")
local audit = 'audit_logging: {api_server: true, storage: true, retention_days: 2190}'

test { name = "API and storage audit logs kept six years support breach notification", blueprint = base, expect = {} }

test {
  name = "storage audit logging off and 30 days of logs fail GDPR-BRE-001",
  blueprint = replace(base, audit, 'audit_logging: {api_server: true, storage: false, retention_days: 30}'),
  expect = { { "GDPR-BRE-001", "access.audit_logging.default" } },
}

test {
  name = "a blueprint without personal data needs no breach logs",
  blueprint = replace(replace(replace(base, audit, 'audit_logging: {api_server: false, storage: false, retention_days: 0}'),
    'classification: phi', 'classification: internal'), 'classification: pii', 'classification: internal'),
  expect = {},
}
