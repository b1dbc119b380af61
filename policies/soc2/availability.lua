-- SOC 2 A1.2 / A1.3: backups are kept and their restore is tested.

policy {
  id = "SOC2-BAK-001",
  title = "Backups are retained and restore-tested at least yearly",
  description = "Every backup keeps copies (retention_days > 0) and has a disaster-recovery restore test at least every 365 days (dr_test_interval_days 1..365). Does not prove the tests are run or pass; a blueprint without backups is not applicable, not a pass.",
  severity = "medium",
  enforcement = "mandatory",
  controls = { soc2 = { "A1.2", "A1.3" } },
  check = function(ctx)
    local backups = ctx.blueprint.storage.backups
    for _, b in ipairs(backups) do
      local address = "storage.backup." .. b.name
      local ok = true
      if b.retention_days <= 0 then
        ok = false
        fail(address, "backup '" .. b.name .. "' keeps no copies; set retention_days")
      end
      local dr = b.dr_test_interval_days
      if dr <= 0 then
        ok = false
        fail(address, "backup '" .. b.name .. "' is never restore-tested; set dr_test_interval_days (365 or less)")
      elseif dr > 365 then
        ok = false
        fail(address, "backup '" .. b.name .. "' is restore-tested every " .. dr .. " days; test at least every 365 days")
      end
      if ok then pass(address, "copies kept " .. b.retention_days .. " days, restore-tested every " .. dr .. " days") end
    end
    if #backups == 0 then not_applicable(nil, "the blueprint declares no backups") end
  end,
}
