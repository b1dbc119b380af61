-- HIPAA 45 CFR 164.312(b) audit controls, and 164.316(b)(2)(i): documentation
-- (including audit records) is retained for six years.

local ADDRESS = "access.audit_logging.default"
local SIX_YEARS = 2190

policy {
  id = "HIPAA-AUD-001",
  title = "Activity on systems holding PHI is audited",
  description = "Both API server and storage audit logging are on (access.audit_logging.api_server and .storage).",
  severity = "high",
  enforcement = "mandatory",
  controls = { hipaa = { "164.312(b)" } },
  check = function(ctx)
    local a = ctx.blueprint.access.audit_logging
    if not (a and a.api_server) then
      fail(ADDRESS, "HIPAA needs API server audit logs; set access.audit_logging.api_server: true")
    end
    if not (a and a.storage) then
      fail(ADDRESS, "HIPAA needs storage access audit logs; set access.audit_logging.storage: true")
    end
  end,
}

policy {
  id = "HIPAA-AUD-002",
  title = "Audit logs are kept for six years",
  description = "access.audit_logging.retention_days is at least 2190 (six years).",
  severity = "high",
  enforcement = "mandatory",
  controls = { hipaa = { "164.316(b)(2)(i)", "164.312(b)" } },
  check = function(ctx)
    local a = ctx.blueprint.access.audit_logging
    local days = a and a.retention_days or 0
    if days < SIX_YEARS then
      fail(ADDRESS, "audit logs are kept " .. days .. " days; HIPAA documentation is kept six years (retention_days: 2190)")
    else
      pass(ADDRESS, "retention_days = " .. days)
    end
  end,
}
