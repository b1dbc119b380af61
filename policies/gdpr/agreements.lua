-- GDPR Art. 28 and Art. 35: what a controller must have in writing before a
-- GPU fleet processes personal data. Plinth cannot read either document; the
-- blueprint records them (metadata.agreements, metadata.dpia) and these
-- policies check that the record exists where the processing needs it.

local reach_lib = import("reach")

local function personal(tier) return (tier.classification == "pii" or tier.classification == "phi") and tier.classification end

-- provider -> {address, why} of the first resource through which it processes personal data.
local function processors(ctx)
  local reach, order = reach_lib.providers(ctx, personal)
  for _, provider in ipairs(order) do
    local e = reach[provider]
    e.why = e.pool and "runs burst pool '" .. e.pool .. "', which reaches personal data in tier '" .. e.tier .. "'"
        or "stores " .. e.what .. " data in tier '" .. e.tier .. "'"
  end
  return reach, order
end

policy {
  id = "GDPR-DPA-001",
  title = "Every processor of personal data is bound by a data processing agreement",
  description = "A cloud object tier classified pii or phi, and a burst pool that mounts or checkpoints to one, make their provider a processor (Art. 28); metadata.agreements records a `dpa` with each such provider (Art. 28(3): processing under a contract that sets out its subject matter, duration, nature and purpose). Proves the agreement is recorded, not what it says or that the processor gives sufficient guarantees (Art. 28(1)).",
  severity = "high",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.28(3)" } },
  check = function(ctx)
    local reach, order = processors(ctx)
    local dpa = {}
    for _, a in ipairs(ctx.blueprint.metadata.agreements) do
      if a.kind == "dpa" then dpa[a.provider] = a.reference end
    end
    for _, provider in ipairs(order) do
      local r = reach[provider]
      if dpa[provider] then
        pass(r.address, provider .. " " .. r.why .. "; data processing agreement: " .. dpa[provider])
      else
        fail(r.address, provider .. " " .. r.why .. " but the blueprint records no data processing agreement with " ..
             provider .. " (Art. 28(3)); add {provider: " .. provider ..
             ", kind: dpa, reference: \"where the signed DPA is\"} to metadata.agreements")
      end
    end
    if #order == 0 then not_applicable(nil, "no cloud provider stores personal data or runs a burst pool that reaches it") end
  end,
}

policy {
  id = "GDPR-DPIA-001",
  title = "Processing of health data is covered by a data protection impact assessment",
  description = "A blueprint with a tier classified phi processes health data, a special category (Art. 9(1)), on a scale a GPU training fleet implies: Art. 35(3)(b) makes a DPIA mandatory before the processing starts. metadata.dpia records it. Proves a DPIA is recorded, not its content (Art. 35(7)) or its outcome.",
  severity = "high",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.35(1)", "Art.35(3)(b)" } },
  check = function(ctx)
    local dpia = ctx.blueprint.metadata.dpia
    local first
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      if t.classification == "phi" and not first then first = t.name end
    end
    if dpia and dpia ~= "" then
      pass(nil, "data protection impact assessment: " .. dpia)
    elseif first then
      fail("storage.tier." .. first, "tier '" .. first .. "' holds health data (phi), a special category (Art. 9), " ..
           "and the blueprint records no data protection impact assessment (Art. 35(3)(b)); carry one out and set " ..
           "metadata.dpia to its reference")
    else
      not_applicable(nil, "no tier holds health data (phi); if other processing is high-risk (Art. 35(3)), record its DPIA in metadata.dpia")
    end
  end,
}
