-- GDPR Art. 33: a personal data breach is notified within 72 hours of becoming
-- aware of it, with its nature, categories and approximate number of records
-- (33(3)), and every breach is documented (33(5)). Only audit logs of the API
-- server and of storage access let an operator find out what was reached.

local RETENTION = setting("breach_log_retention_days", 365)

policy {
  id = "GDPR-BRE-001",
  title = "Audit logs can establish what a personal data breach reached",
  description = "When tiers hold pii or phi data, API server and storage audit logging are on and kept at least breach_log_retention_days (gdpr pack setting, 365 by default), so a breach can be assessed, notified and documented. Does not prove that breaches are detected, assessed or notified within 72 hours (Art. 33(1)), only that the logs to assess one are kept.",
  severity = "high",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.33" } },
  check = function(ctx)
    local any = false
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      if t.classification == "pii" or t.classification == "phi" then any = true end
    end
    if not any then not_applicable(nil, "no tier holds pii or phi data"); return end
    local a = ctx.blueprint.access.audit_logging
    local address = "access.audit_logging.default"
    local missing = {}
    if not (a and a.api_server) then missing[#missing + 1] = "API server audit logging is off (set access.audit_logging.api_server: true)" end
    if not (a and a.storage) then missing[#missing + 1] = "storage audit logging is off, so which personal data was read could not be established (set access.audit_logging.storage: true)" end
    local days = a and a.retention_days or 0
    if days < RETENTION then missing[#missing + 1] = "audit logs are kept " .. days .. " days, not the " .. RETENTION .. " needed to assess and document a breach (retention_days)" end
    if #missing > 0 then fail(address, "a breach could not be assessed: " .. table.concat(missing, "; "))
    else pass(address, "API server and storage audit logs kept " .. days .. " days") end
  end,
}
