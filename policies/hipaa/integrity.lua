-- HIPAA 45 CFR 164.312(c)(1) integrity: protect ePHI from improper alteration or
-- destruction. A blueprint evidences it when persistent PHI is copied by a backup
-- that keeps versions (restorable after alteration or destruction) and every
-- change to stored data is recorded by storage audit logging. It does not
-- evidence 164.312(c)(2), electronic mechanisms that corroborate that ePHI was
-- not altered (checksums, digital signatures): a blueprint declares none, so
-- that specification is not claimed here.

policy {
  id = "HIPAA-INT-001",
  title = "PHI is protected against improper alteration or destruction",
  description = "Every persistent PHI tier (not node-local NVMe, not itself a backup target) is the source of a backup that keeps copies (retention_days > 0), and storage audit logging records changes to stored data. Does not prove a mechanism to authenticate ePHI (checksums, signatures: 164.312(c)(2)).",
  severity = "high",
  enforcement = "mandatory",
  controls = { hipaa = { "164.312(c)(1)" } },
  check = function(ctx)
    local source, target = {}, {}
    for _, b in ipairs(ctx.blueprint.storage.backups) do
      if b.retention_days > 0 then source[b.source] = b end
      target[b.target] = true
    end
    local any = false
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      if t.classification == "phi" and t.kind ~= "nvme" and not target[t.name] then
        any = true
        local b = source[t.name]
        if b then pass("storage.tier." .. t.name, "earlier versions kept " .. b.retention_days .. " days by backup " .. b.name)
        else fail("storage.tier." .. t.name, "tier '" .. t.name .. "' holds PHI with no backup keeping earlier versions; an alteration or deletion could not be undone") end
      end
    end
    if not any then not_applicable(nil, "no persistent PHI tier outside a backup target") return end
    local a = ctx.blueprint.access.audit_logging
    if a and a.storage then pass("access.audit_logging.default", "storage audit logging records changes to PHI")
    else fail("access.audit_logging.default", "storage audit logging is off, so an alteration of PHI could not be corroborated; set access.audit_logging.storage: true") end
  end,
}
