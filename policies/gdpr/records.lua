-- GDPR Art. 30 records of processing activities name the categories of personal
-- data (Art. 30(1)(c)); a blueprint can evidence its part of that record only
-- when every storage tier says what class of data it holds.

policy {
  id = "GDPR-REC-001",
  title = "Every storage tier declares the class of data it holds",
  description = "Each storage tier sets classification (public, internal, confidential, pii or phi), so the record of processing can say where personal data is kept. Does not prove a record of processing exists (Art. 30(1)); it shows the blueprint's part of one, where each class of data is kept.",
  severity = "medium",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.30(1)(c)" } },
  check = function(ctx)
    local tiers = ctx.blueprint.storage.tiers
    for _, t in ipairs(tiers) do
      if t.classification then pass("storage.tier." .. t.name, "classification = " .. t.classification)
      else fail("storage.tier." .. t.name, "tier '" .. t.name .. "' does not say what data it holds; set classification: public | internal | confidential | pii | phi") end
    end
    if #tiers == 0 then not_applicable(nil, "the blueprint declares no storage tier") end
  end,
}
