local base = fixture("compliant")
local audit = 'audit_logging: {api_server: true, storage: true, retention_days: 2190}'

test { name = "API and storage audit logs kept six years pass", blueprint = base, expect = {} }

test {
  name = "API server audit logging off fails",
  blueprint = replace(base, audit, 'audit_logging: {api_server: false, storage: true, retention_days: 2190}'),
  expect = { { "SOC2-AUD-001", "access.audit_logging.default" } },
}

test {
  name = "storage audit logging off and 90-day retention fail",
  blueprint = replace(base, audit, 'audit_logging: {api_server: true, storage: false, retention_days: 90}'),
  expect = { { "SOC2-AUD-002", "access.audit_logging.default" }, { "SOC2-AUD-003", "access.audit_logging.default" } },
}

test {
  name = "exactly 365 days passes SOC2-AUD-003",
  blueprint = replace(base, audit, 'audit_logging: {api_server: true, storage: true, retention_days: 365}'),
  expect = {},
}

test {
  name = "no audit logging at all fails all three",
  blueprint = replace(base, '  ' .. audit .. '\n', ''),
  expect = { { "SOC2-AUD-001", "access.audit_logging.default" }, { "SOC2-AUD-002", "access.audit_logging.default" },
             { "SOC2-AUD-003", "access.audit_logging.default" } },
}
