-- SOC 2 CC6.1 (point of focus "Uses encryption to protect data"): data at rest is
-- encrypted with AES-256 (directly, through LUKS2, or by self-encrypting drives) on
-- every storage tier and backup target. CC6.7 is about data in transit
-- (soc2/transport.lua), not at rest.

local strong = { ["aes-256-xts"] = true, ["aes-256-gcm"] = true, luks2 = true, sed = true }

local function cipher(tier)
  return tier.encryption and tier.encryption.at_rest or nil
end

policy {
  id = "SOC2-ENC-001",
  title = "Storage tiers encrypt data at rest with AES-256, LUKS2 or SED",
  description = "Every storage tier sets encryption.at_rest to aes-256-xts, aes-256-gcm, luks2 or sed. Does not prove the keys are managed, or that data is encrypted on the running system (plinth audit --verify observes dm-crypt on nodes).",
  severity = "high",
  enforcement = "mandatory",
  controls = { soc2 = { "CC6.1" }, hipaa = { "164.312(a)(2)(iv)" }, gdpr = { "Art.32(1)(a)" } },
  check = function(ctx)
    if #ctx.blueprint.storage.tiers == 0 then not_applicable(nil, "the blueprint declares no storage tiers") end
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      local c = cipher(t)
      if not c then
        fail("storage.tier." .. t.name, "tier '" .. t.name .. "' sets no encryption at rest; set encryption.at_rest: aes-256-xts (or aes-256-gcm, luks2, sed)")
      elseif not strong[c] then
        fail("storage.tier." .. t.name, "tier '" .. t.name .. "' encrypts at rest with '" .. c .. "'; use aes-256-xts, aes-256-gcm, luks2 or sed")
      else
        pass("storage.tier." .. t.name, "encryption.at_rest = " .. c)
      end
    end
  end,
}

policy {
  id = "SOC2-ENC-002",
  title = "Backup targets encrypt data at rest",
  description = "Every backup copies into a tier that is encrypted at rest with a strong cipher, so a copy is protected like its source. Does not prove copies outside Plinth's backups are encrypted; a blueprint without backups is not applicable, not a pass.",
  severity = "high",
  enforcement = "mandatory",
  controls = { soc2 = { "CC6.1", "A1.2" }, hipaa = { "164.312(a)(2)(iv)" } },
  check = function(ctx)
    local tiers = {}
    for _, t in ipairs(ctx.blueprint.storage.tiers) do tiers[t.name] = t end
    local backups = ctx.blueprint.storage.backups
    for _, b in ipairs(backups) do
      local target = tiers[b.target]
      local c = target and cipher(target)
      if not (c and strong[c]) then
        fail("storage.backup." .. b.name, "backup '" .. b.name .. "' copies into tier '" .. b.target .. "', which is not encrypted at rest with AES-256; encrypt the target tier")
      else
        pass("storage.backup." .. b.name, "target '" .. b.target .. "' encrypted with " .. c)
      end
    end
    if #backups == 0 then not_applicable(nil, "the blueprint declares no backups") end
  end,
}
