-- HIPAA 45 CFR 164.308(a)(7) contingency plan: (ii)(A) data backup plan and
-- (ii)(D) testing and revision procedures.

local function tiers_by_name(ctx)
  local tiers = {}
  for _, t in ipairs(ctx.blueprint.storage.tiers) do tiers[t.name] = t end
  return tiers
end

policy {
  id = "HIPAA-BAK-001",
  title = "Persistent PHI tiers are backed up",
  description = "Every tier classified phi is the source of a backup, unless it is node-local NVMe scratch or itself a backup target. Does not prove the backups are exact or retrievable (164.308(a)(7)(ii)(A)); HIPAA-BAK-002 checks restore tests are planned.",
  severity = "high",
  enforcement = "mandatory",
  controls = { hipaa = { "164.308(a)(7)(i)", "164.308(a)(7)(ii)(A)" } },
  check = function(ctx)
    local source, target = {}, {}
    for _, b in ipairs(ctx.blueprint.storage.backups) do
      source[b.source] = b.name
      target[b.target] = true
    end
    local any = false
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      if t.classification == "phi" and t.kind ~= "nvme" and not target[t.name] then
        any = true
        if source[t.name] then
          pass("storage.tier." .. t.name, "backed up by " .. source[t.name])
        else
          fail("storage.tier." .. t.name, "tier '" .. t.name .. "' holds PHI and has no backup; add a storage.backups entry with source: " .. t.name)
        end
      end
    end
    if not any then not_applicable(nil, "no persistent PHI tier outside a backup target") end
  end,
}

policy {
  id = "HIPAA-BAK-002",
  title = "PHI backups are restore-tested",
  description = "Every backup whose source holds PHI has a disaster-recovery restore test at least every 365 days. Does not prove the tests are run or pass, nor that a disaster recovery plan exists beyond the declared interval.",
  severity = "high",
  enforcement = "mandatory",
  controls = { hipaa = { "164.308(a)(7)(ii)(B)", "164.308(a)(7)(ii)(D)" } },
  check = function(ctx)
    local tiers = tiers_by_name(ctx)
    local any = false
    for _, b in ipairs(ctx.blueprint.storage.backups) do
      local src = tiers[b.source]
      if src and src.classification == "phi" then
        any = true
        local dr = b.dr_test_interval_days
        if dr <= 0 or dr > 365 then
          fail("storage.backup." .. b.name, "backup '" .. b.name .. "' of PHI is " .. (dr <= 0 and "never restore-tested" or ("restore-tested every " .. dr .. " days")) .. "; set dr_test_interval_days to 365 or less")
        else
          pass("storage.backup." .. b.name, "restore-tested every " .. dr .. " days")
        end
      end
    end
    if not any then not_applicable(nil, "no backup copies PHI") end
  end,
}
