-- GDPR Art. 32 security of processing: (1)(a) encryption of personal data,
-- (1)(c) the ability to restore it in a timely manner, (1)(d) regular testing of
-- the measures; Art. 5(1)(f) integrity and confidentiality.

local strong = { ["aes-256-xts"] = true, ["aes-256-gcm"] = true, luks2 = true, sed = true }
local function personal(t) return t and (t.classification == "pii" or t.classification == "phi") end

local TRANSPORT = setting("transport_baseline", "mandatory")

policy {
  id = "GDPR-SEC-001",
  title = "Personal data is encrypted at rest and in transit",
  description = "Tiers classified pii or phi are encrypted at rest with AES-256 (aes-256-xts, aes-256-gcm, luks2, sed), and access.transport requires TLS (1.2 or later) when personal data is stored. Does not prove keys are managed well or that data is encrypted on the running system (plinth audit --verify observes dm-crypt on nodes).",
  severity = "high",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.32(1)(a)", "Art.5(1)(f)" } },
  check = function(ctx)
    local any = false
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      if personal(t) then
        any = true
        local c = t.encryption and t.encryption.at_rest
        if strong[c or ""] then
          pass("storage.tier." .. t.name, t.classification .. " data encrypted at rest with " .. c)
        else
          fail("storage.tier." .. t.name, "tier '" .. t.name .. "' holds " .. t.classification .. " data without AES-256 encryption at rest; set encryption.at_rest: aes-256-xts")
        end
      end
    end
    if not any then not_applicable(nil, "no tier holds pii or phi data"); return end
    local tr = ctx.blueprint.access.transport
    if not tr or not tr.tls_min then
      fail("access.transport.default", "personal data is stored here but access.transport sets no minimum TLS version; set tls_min: \"1.3\"")
    else
      pass("access.transport.default", "transport requires TLS " .. tr.tls_min .. " or later")
    end
  end,
}

policy {
  id = "GDPR-TLS-001",
  title = "House baseline: personal data moves only over TLS 1.3",
  description = "When tiers hold pii or phi data, access.transport.tls_min is \"1.3\". GDPR Art. 32 asks for encryption appropriate to the risk and names no protocol version; TLS 1.3 is this project's house baseline, above that. Enforcement is the gdpr pack setting transport_baseline. Does not prove what clients negotiate; it checks the declared minimum.",
  severity = "medium",
  enforcement = TRANSPORT,
  controls = { gdpr = { "Art.32(1)(a)" } },
  check = function(ctx)
    local any = false
    for _, t in ipairs(ctx.blueprint.storage.tiers) do if personal(t) then any = true end end
    if not any then not_applicable(nil, "no tier holds pii or phi data"); return end
    local tr = ctx.blueprint.access.transport
    if not tr or tonumber(tr.tls_min or "0") < 1.3 then
      fail("access.transport.default", "the house baseline for personal data is TLS 1.3; set access.transport.tls_min: \"1.3\"")
    else
      pass("access.transport.default", "tls_min = " .. tr.tls_min)
    end
  end,
}

local function personal_backups(ctx)
  local tiers, out = {}, {}
  for _, t in ipairs(ctx.blueprint.storage.tiers) do tiers[t.name] = t end
  for _, b in ipairs(ctx.blueprint.storage.backups) do
    if personal(tiers[b.source]) then out[#out + 1] = b end
  end
  return tiers, out
end

policy {
  id = "GDPR-SEC-002",
  title = "Personal data can be restored: persistent tiers holding it are backed up",
  description = "Every tier classified pii or phi that is not node-local NVMe scratch, nor itself a backup target, is the source of a backup that keeps copies (retention_days > 0), so availability and access can be restored after an incident. Does not prove a restore works; GDPR-SEC-003 checks that one is tested.",
  severity = "high",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.32(1)(c)" } },
  check = function(ctx)
    local source, target = {}, {}
    for _, b in ipairs(ctx.blueprint.storage.backups) do
      if b.retention_days > 0 then source[b.source] = b end
      target[b.target] = true
    end
    local any = false
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      if personal(t) and t.kind ~= "nvme" and not target[t.name] then
        any = true
        local b = source[t.name]
        if b then pass("storage.tier." .. t.name, "backed up by " .. b.name .. " to '" .. b.target .. "', copies kept " .. b.retention_days .. " days")
        else fail("storage.tier." .. t.name, "tier '" .. t.name .. "' holds " .. t.classification .. " data and no backup with retention copies it; add a storage.backups entry with source: " .. t.name) end
      end
    end
    if not any then not_applicable(nil, "no persistent tier holds personal data outside a backup target") end
  end,
}

policy {
  id = "GDPR-SEC-003",
  title = "Restores of personal data are tested regularly",
  description = "Every backup whose source holds pii or phi data is restore-tested at least every 365 days (dr_test_interval_days 1..365): a process for regularly testing the effectiveness of the measures. Does not prove the tests are run or pass; it checks the declared interval.",
  severity = "medium",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.32(1)(d)", "Art.32(1)(c)" } },
  check = function(ctx)
    local _, backups = personal_backups(ctx)
    for _, b in ipairs(backups) do
      local dr = b.dr_test_interval_days
      if dr <= 0 or dr > 365 then
        fail("storage.backup." .. b.name, "backup '" .. b.name .. "' of personal data is " .. (dr <= 0 and "never restore-tested" or ("restore-tested every " .. dr .. " days")) .. "; set dr_test_interval_days to 365 or less")
      else
        pass("storage.backup." .. b.name, "restore-tested every " .. dr .. " days")
      end
    end
    if #backups == 0 then not_applicable(nil, "no backup copies personal data") end
  end,
}
