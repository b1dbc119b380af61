-- GDPR Art. 32(1)(a) encryption of personal data, Art. 5(1)(f) integrity and
-- confidentiality.

local strong = { ["aes-256-xts"] = true, ["aes-256-gcm"] = true, luks2 = true, sed = true }

policy {
  id = "GDPR-SEC-001",
  title = "Personal data is encrypted at rest and in transit",
  description = "Tiers classified pii or phi are encrypted at rest with AES-256 (aes-256-xts, aes-256-gcm, luks2, sed), and access.transport requires TLS 1.3.",
  severity = "high",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.32(1)(a)", "Art.5(1)(f)" } },
  check = function(ctx)
    local any = false
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      if t.classification == "pii" or t.classification == "phi" then
        any = true
        local c = t.encryption and t.encryption.at_rest
        if not strong[c or ""] then
          fail("storage.tier." .. t.name, "tier '" .. t.name .. "' holds " .. t.classification .. " data without AES-256 encryption at rest; set encryption.at_rest: aes-256-xts")
        end
      end
    end
    local tr = ctx.blueprint.access.transport
    if any and (not tr or tonumber(tr.tls_min or "0") < 1.3) then
      fail("access.transport.default", "personal data is stored here but transport does not require TLS 1.3; set access.transport.tls_min: \"1.3\"")
    end
  end,
}
