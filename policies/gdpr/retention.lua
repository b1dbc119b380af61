-- GDPR Art. 5(1)(e) storage limitation: personal data is not kept longer than
-- needed, so object tiers holding pii or phi (health data is personal data,
-- Art. 4(15), 9) expire what they store, or keep backup copies for a bounded time.

policy {
  id = "GDPR-RET-001",
  title = "Object tiers holding personal data (pii, phi) expire it",
  description = "Every object tier classified pii or phi has a lifecycle rule with expire_days > 0, or holds only backup copies (no lifecycle transition into it) of backups with retention_days > 0. Does not prove the expiry fits the purpose (Art. 5(1)(e) asks for no longer than necessary), or that copies outside these tiers expire.",
  severity = "medium",
  enforcement = "advisory",
  controls = { gdpr = { "Art.5(1)(e)" } },
  check = function(ctx)
    local kept = {}  -- tier -> the backup that bounds how long its copies stay
    for _, b in ipairs(ctx.blueprint.storage.backups) do
      if (b.retention_days or 0) > 0 then kept[b.target] = b end
    end
    local any = false
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      if (t.classification == "pii" or t.classification == "phi") and t.kind == "object" then
        any = true
        local days = t.lifecycle and t.lifecycle.expire_days or 0
        if days > 0 then
          pass("storage.tier." .. t.name, "expires after " .. days .. " days")
        elseif kept[t.name] and not (t.lifecycle and t.lifecycle.transition_from) then
          -- only backup copies land here, and the backup prunes them
          local b = kept[t.name]
          pass("storage.tier." .. t.name, "backup '" .. b.name .. "' keeps its copies " .. b.retention_days .. " days")
        else
          fail("storage.tier." .. t.name, "tier '" .. t.name .. "' keeps " .. t.classification ..
               " data forever; set lifecycle.expire_days to the retention period")
        end
      end
    end
    if not any then not_applicable(nil, "no object tier holds pii or phi data") end
  end,
}
