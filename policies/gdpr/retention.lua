-- GDPR Art. 5(1)(e) storage limitation: personal data is not kept longer than
-- needed, so object tiers holding pii or phi (health data is personal data,
-- Art. 4(15), 9) expire what they store, or keep backup copies for a bounded time.

local expiry = import("expiry")

policy {
  id = "GDPR-RET-001",
  title = "Object tiers holding personal data (pii, phi) expire it",
  description = "Every object tier classified pii or phi has a lifecycle rule with expire_days > 0, or holds only backup copies (no lifecycle transition into it) of backups with retention_days > 0. Does not prove the expiry fits the purpose (Art. 5(1)(e) asks for no longer than necessary), or that copies outside these tiers expire.",
  severity = "medium",
  enforcement = "advisory",
  controls = { gdpr = { "Art.5(1)(e)" } },
  check = function(ctx)
    local bounded = expiry.bounds(ctx)
    local any = false
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      if (t.classification == "pii" or t.classification == "phi") and t.kind == "object" then
        any = true
        local ok, why = bounded(t)
        if ok then
          pass("storage.tier." .. t.name, why)
        else
          fail("storage.tier." .. t.name, "tier '" .. t.name .. "' keeps " .. t.classification ..
               " data forever; set lifecycle.expire_days to the retention period")
        end
      end
    end
    if not any then not_applicable(nil, "no object tier holds pii or phi data") end
  end,
}
