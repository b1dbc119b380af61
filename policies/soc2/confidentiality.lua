-- SOC 2 Confidentiality (C1). C1.1: the entity identifies and maintains
-- confidential information; C1.2: it disposes of confidential information to
-- meet its objectives (points of focus: identify confidential information for
-- destruction when its retention period ends, and destroy it). Tiers classified
-- confidential, pii or phi hold confidential information here.

local expiry = import("expiry")

local confidential = { confidential = true, pii = true, phi = true }

policy {
  id = "SOC2-CONF-001",
  title = "Every storage tier says whether it holds confidential information",
  description = "Each storage tier sets classification (public, internal, confidential, pii or phi), so confidential information is identified where it is stored (C1.1, point of focus 'Identifies confidential information'). Advisory, so blueprints written before it keep applying. Does not prove the classification is right, or that confidential information outside these tiers is identified.",
  severity = "medium",
  enforcement = "advisory",
  controls = { soc2 = { "C1.1" } },
  check = function(ctx)
    local tiers = ctx.blueprint.storage.tiers
    for _, t in ipairs(tiers) do
      if t.classification then pass("storage.tier." .. t.name, "classification = " .. t.classification)
      else fail("storage.tier." .. t.name, "tier '" .. t.name .. "' does not say whether it holds confidential information; set classification: public | internal | confidential | pii | phi") end
    end
    if #tiers == 0 then not_applicable(nil, "the blueprint declares no storage tier") end
  end,
}

policy {
  id = "SOC2-CONF-002",
  title = "Object tiers holding confidential information dispose of it on a schedule",
  description = "Every object tier classified confidential, pii or phi has a lifecycle rule with expire_days > 0, or holds only backup copies (no lifecycle transition into it) of backups with retention_days > 0, so confidential information is destroyed when its retention period ends (C1.2). Does not prove the period fits the entity's commitments, that deletion reaches every copy, or how media are sanitised; file and block tiers are not checked (no lifecycle).",
  severity = "medium",
  enforcement = "advisory",
  controls = { soc2 = { "C1.2" } },
  check = function(ctx)
    local bounded = expiry.bounds(ctx)
    local any = false
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      if t.kind == "object" and confidential[t.classification or ""] then
        any = true
        local ok, why = bounded(t)
        if ok then
          pass("storage.tier." .. t.name, why)
        else
          fail("storage.tier." .. t.name, "tier '" .. t.name .. "' keeps " .. t.classification ..
               " data forever; set lifecycle.expire_days to its retention period")
        end
      end
    end
    if not any then not_applicable(nil, "no object tier holds confidential, pii or phi data") end
  end,
}
