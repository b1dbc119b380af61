-- GDPR Art. 5(1)(e) storage limitation: personal data is not kept longer than
-- needed, so object tiers holding pii expire what they store.

policy {
  id = "GDPR-RET-001",
  title = "Object tiers holding pii data expire it",
  description = "Every object tier classified pii has a lifecycle rule with expire_days > 0.",
  severity = "medium",
  enforcement = "advisory",
  controls = { gdpr = { "Art.5(1)(e)" } },
  check = function(ctx)
    local any = false
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      if t.classification == "pii" and t.kind == "object" then
        any = true
        local days = t.lifecycle and t.lifecycle.expire_days or 0
        if days <= 0 then
          fail("storage.tier." .. t.name, "tier '" .. t.name .. "' keeps pii data forever; set lifecycle.expire_days to the retention period")
        else
          pass("storage.tier." .. t.name, "expires after " .. days .. " days")
        end
      end
    end
    if not any then pass(nil, "no object tier holds pii data") end
  end,
}
