-- SOC 2 CC7.2 / CC7.3: audit logs of the API server and of storage access,
-- kept for at least a year.

local ADDRESS = "access.audit_logging.default"

local function audit(ctx) return ctx.blueprint.access.audit_logging end

policy {
  id = "SOC2-AUD-001",
  title = "API server audit logging is on",
  description = "access.audit_logging.api_server is true, so every API call is recorded. Does not prove the events are monitored or evaluated (CC7.2, CC7.3 ask for both).",
  severity = "high",
  enforcement = "mandatory",
  controls = { soc2 = { "CC7.2", "CC7.3" }, hipaa = { "164.312(b)" } },
  check = function(ctx)
    local a = audit(ctx)
    if not (a and a.api_server) then
      fail(ADDRESS, "API server audit logging is off; set access.audit_logging.api_server: true")
    else
      pass(ADDRESS, "api_server = true")
    end
  end,
}

policy {
  id = "SOC2-AUD-002",
  title = "Storage access audit logging is on",
  description = "access.audit_logging.storage is true, so reads and writes of stored data are recorded. Does not prove the events are monitored or evaluated.",
  severity = "high",
  enforcement = "mandatory",
  controls = { soc2 = { "CC7.2" }, hipaa = { "164.312(b)" } },
  check = function(ctx)
    local a = audit(ctx)
    if not (a and a.storage) then
      fail(ADDRESS, "storage audit logging is off; set access.audit_logging.storage: true")
    else
      pass(ADDRESS, "storage = true")
    end
  end,
}

policy {
  id = "SOC2-AUD-003",
  title = "Audit logs are kept for at least 365 days (this pack's rule)",
  description = "access.audit_logging.retention_days is 365 or more. SOC 2 names no retention period; a Type II examination covers a period (commonly 6 to 12 months) from which the auditor samples the evidence of CC7.2's monitoring, so this pack keeps a year of logs. A house rule, not the text of a criterion. Does not prove the logs are reviewed.",
  severity = "medium",
  enforcement = "mandatory",
  controls = { soc2 = { "CC7.2" } },
  check = function(ctx)
    local a = audit(ctx)
    local days = a and a.retention_days or 0
    if days < 365 then
      fail(ADDRESS, "audit logs are kept " .. days .. " days; keep them at least 365 (retention_days: 365)")
    else
      pass(ADDRESS, "retention_days = " .. days)
    end
  end,
}
