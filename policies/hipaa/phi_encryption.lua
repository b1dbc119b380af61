-- HIPAA 45 CFR 164.312(a)(2)(iv): PHI is stored only on tiers encrypted with
-- AES-256 (directly, LUKS2 or SED), and never flows (backups, lifecycle
-- transitions) into a tier that is not.

local strong = { ["aes-256-xts"] = true, ["aes-256-gcm"] = true, luks2 = true, sed = true }

local function encrypted(tier)
  return tier and tier.encryption and strong[tier.encryption.at_rest] or false
end

policy {
  id = "HIPAA-ENC-001",
  title = "PHI is stored only on encrypted tiers",
  description = "Every tier classified phi is encrypted at rest with aes-256-xts, aes-256-gcm, luks2 or sed. Does not prove the keys are protected, or that data is encrypted on the running system (plinth audit --verify observes dm-crypt on nodes).",
  severity = "critical",
  enforcement = "mandatory",
  controls = { hipaa = { "164.312(a)(2)(iv)", "164.312(a)(1)" } },
  check = function(ctx)
    local any = false
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      if t.classification == "phi" then
        any = true
        if encrypted(t) then
          pass("storage.tier." .. t.name, "phi tier encrypted with " .. t.encryption.at_rest)
        else
          fail("storage.tier." .. t.name, "tier '" .. t.name .. "' holds PHI but is not encrypted at rest with AES-256; set encryption.at_rest: aes-256-xts")
        end
      end
    end
    if not any then not_applicable(nil, "no tier holds PHI") end
  end,
}

policy {
  id = "HIPAA-ENC-002",
  title = "PHI is copied only into encrypted tiers",
  description = "Backups and lifecycle transitions whose source tier holds PHI target a tier encrypted at rest with AES-256. Does not prove how copies outside Plinth's backups and lifecycle rules are stored.",
  severity = "critical",
  enforcement = "mandatory",
  controls = { hipaa = { "164.312(a)(2)(iv)" } },
  check = function(ctx)
    local tiers = {}
    for _, t in ipairs(ctx.blueprint.storage.tiers) do tiers[t.name] = t end
    local function phi(name) return tiers[name] and tiers[name].classification == "phi" end
    local any = false
    for _, b in ipairs(ctx.blueprint.storage.backups) do
      if phi(b.source) then
        any = true
        if encrypted(tiers[b.target]) then
          pass("storage.backup." .. b.name, "copies PHI into '" .. b.target .. "', encrypted with " .. tiers[b.target].encryption.at_rest)
        else
          fail("storage.backup." .. b.name, "backup '" .. b.name .. "' copies PHI from '" .. b.source .. "' into unencrypted tier '" .. b.target .. "'")
        end
      end
    end
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      local from = t.lifecycle and t.lifecycle.transition_from
      if from and phi(from) then
        any = true
        if encrypted(t) then
          pass("storage.tier." .. t.name, "receives PHI from '" .. from .. "', encrypted with " .. t.encryption.at_rest)
        else
          fail("storage.tier." .. t.name, "tier '" .. t.name .. "' receives PHI from '" .. from .. "' by lifecycle transition but is not encrypted at rest")
        end
      end
    end
    if not any then not_applicable(nil, "no backup or lifecycle transition copies PHI") end
  end,
}
