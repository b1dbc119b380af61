-- HIPAA 164.308(b)(1), 164.314(a): a covered entity may let a business
-- associate create, receive, maintain or transmit ePHI on its behalf only
-- under a written business associate agreement (a BAA). A cloud provider
-- that stores PHI or runs machines that read or write it is a business
-- associate; the major clouds sign BAAs (AWS through AWS Artifact, Google
-- Cloud and Microsoft through their online terms), but only when the customer
-- accepts them. Plinth cannot see the contract: the blueprint records it in
-- metadata.agreements ({provider, kind: baa, reference}), and this policy
-- checks that every provider the blueprint lets reach PHI has one.

local reach_lib = import("reach")

-- Tiers holding PHI: classified phi, or receiving copies of a phi tier by a
-- backup or a lifecycle transition (a pii archive that PHI ages into holds PHI).
local function phi_tiers(ctx)
  local by_name, phi = {}, {}
  for _, t in ipairs(ctx.blueprint.storage.tiers) do
    by_name[t.name] = t
    if t.classification == "phi" then phi[t.name] = "classified phi" end
  end
  for _, b in ipairs(ctx.blueprint.storage.backups) do
    if phi[b.source] == "classified phi" and by_name[b.target] and not phi[b.target] then
      phi[b.target] = "receives PHI from '" .. b.source .. "' by backup " .. b.name
    end
  end
  for _, t in ipairs(ctx.blueprint.storage.tiers) do
    local from = t.lifecycle and t.lifecycle.transition_from
    if from and phi[from] == "classified phi" and not phi[t.name] then
      phi[t.name] = "receives PHI from '" .. from .. "' by lifecycle transition"
    end
  end
  return phi
end

-- provider -> {address, why} of the first resource through which it reaches PHI, in blueprint order.
local function providers_reaching_phi(ctx)
  local phi = phi_tiers(ctx)
  local reach, order = reach_lib.providers(ctx, function(t) return phi[t.name] end)
  for _, provider in ipairs(order) do
    local e = reach[provider]
    e.why = e.pool and "runs burst pool '" .. e.pool .. "', which reaches PHI in tier '" .. e.tier .. "'"
        or "stores PHI in tier '" .. e.tier .. "' (" .. e.what .. ")"
  end
  return reach, order
end

policy {
  id = "HIPAA-BAA-001",
  title = "Every provider that stores or processes PHI is under a business associate agreement",
  description = "A cloud object tier holding PHI (classified phi, or receiving a phi tier's backups or lifecycle transitions) and a burst pool that mounts or checkpoints to one make their provider a business associate; metadata.agreements records a `baa` with each such provider. Proves a written agreement is recorded (164.308(b)(3)), not what it says: the terms 164.314(a)(2)(i) requires of it (complying with the Security Rule, binding subcontractors, reporting security incidents) are not cited as checked.",
  severity = "critical",
  enforcement = "mandatory",
  controls = { hipaa = { "164.308(b)(1)", "164.308(b)(3)", "164.314(a)(1)" } },
  check = function(ctx)
    local reach, order = providers_reaching_phi(ctx)
    local baa = {}
    for _, a in ipairs(ctx.blueprint.metadata.agreements) do
      if a.kind == "baa" then baa[a.provider] = a.reference end
    end
    for _, provider in ipairs(order) do
      local r = reach[provider]
      if baa[provider] then
        pass(r.address, provider .. " " .. r.why .. "; business associate agreement: " .. baa[provider])
      else
        fail(r.address, provider .. " " .. r.why .. " but the blueprint records no business associate agreement with " ..
             provider .. "; sign its BAA, then add {provider: " .. provider ..
             ", kind: baa, reference: \"where the signed BAA is\"} to metadata.agreements")
      end
    end
    if #order == 0 then not_applicable(nil, "no cloud provider stores PHI or runs a burst pool that reaches it") end
  end,
}
