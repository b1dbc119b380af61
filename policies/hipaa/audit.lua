-- HIPAA 45 CFR 164.312(b) audit controls: record and examine activity in systems
-- holding ePHI. 164.308(a)(1)(ii)(D) information system activity review is a
-- procedure (regularly reviewing the records) that no blueprint shows: keeping the
-- logs is its precondition, not evidence of it, so neither policy cites it.

local ADDRESS = "access.audit_logging.default"
local RETENTION = setting("audit_log_retention_days", 2190)

policy {
  id = "HIPAA-AUD-001",
  title = "Activity on systems holding PHI is audited",
  description = "Both API server and storage audit logging are on (access.audit_logging.api_server and .storage). Does not prove anyone reviews the logs (164.308(a)(1)(ii)(D)) or that they reach tamper-proof storage.",
  severity = "high",
  enforcement = "mandatory",
  controls = { hipaa = { "164.312(b)" } },
  check = function(ctx)
    local a = ctx.blueprint.access.audit_logging
    local ok = true
    if not (a and a.api_server) then
      ok = false
      fail(ADDRESS, "HIPAA needs API server audit logs; set access.audit_logging.api_server: true")
    end
    if not (a and a.storage) then
      ok = false
      fail(ADDRESS, "HIPAA needs storage access audit logs; set access.audit_logging.storage: true")
    end
    if ok then pass(ADDRESS, "API server and storage audit logging on") end
  end,
}

policy {
  id = "HIPAA-AUD-002",
  title = "Audit logs are kept long enough to review activity",
  description = "access.audit_logging.retention_days is at least the hipaa pack setting audit_log_retention_days (2190, six years, by default). HIPAA sets no audit-log retention period; six years mirrors the documentation retention of 164.316(b)(2)(i) and is the house baseline. Does not prove the logs are reviewed (164.308(a)(1)(ii)(D), which it does not cite); it checks how long they are kept.",
  severity = "high",
  enforcement = "mandatory",
  controls = { hipaa = { "164.312(b)" } },
  check = function(ctx)
    local a = ctx.blueprint.access.audit_logging
    local days = a and a.retention_days or 0
    if days < RETENTION then
      fail(ADDRESS, "audit logs are kept " .. days .. " days; the baseline for activity review is " .. RETENTION .. " (retention_days: " .. RETENTION .. ")", "retention_days")
    else
      pass(ADDRESS, "retention_days = " .. days)
    end
  end,
}
