-- HIPAA 45 CFR 164.312(e)(1) transmission security and (e)(2)(ii) encryption
-- (addressable): PHI is encrypted whenever it crosses a network. TLS 1.3 with
-- mutual authentication is the house baseline above that.

local TRANSPORT = setting("transport_baseline", "mandatory")

local function phi_network_tiers(ctx)
  local out = {}
  for _, t in ipairs(ctx.blueprint.storage.tiers) do
    if t.classification == "phi" and t.kind ~= "nvme" then out[#out + 1] = t end
  end
  return out
end

policy {
  id = "HIPAA-TLS-001",
  title = "PHI is encrypted in transit",
  description = "access.transport sets a minimum TLS version (1.2 or later), and every network tier (not node-local NVMe) holding PHI encrypts in transit (tls1.2 or tls1.3). Does not prove integrity controls on the wire (164.312(e)(2)(i)) beyond what TLS gives, or what clients negotiate.",
  severity = "critical",
  enforcement = "mandatory",
  controls = { hipaa = { "164.312(e)(1)", "164.312(e)(2)(ii)" } },
  check = function(ctx)
    local t = ctx.blueprint.access.transport
    local address = "access.transport.default"
    if not t or tonumber(t.tls_min or "0") < 1.2 then
      fail(address, "PHI needs encryption in transit; set access.transport.tls_min: \"1.3\" (at least \"1.2\")")
    else
      pass(address, "tls_min = " .. t.tls_min)
    end
    for _, tier in ipairs(phi_network_tiers(ctx)) do
      local transit = tier.encryption and tier.encryption.in_transit
      if transit == "tls1.3" or transit == "tls1.2" then
        pass("storage.tier." .. tier.name, "PHI tier encrypts in transit with " .. transit)
      else
        if transit == nil or transit == "" then
          fail("storage.tier." .. tier.name, "network tier '" .. tier.name .. "' holds PHI but sets no encryption in transit; set encryption.in_transit: tls1.3")
        else
          fail("storage.tier." .. tier.name, "network tier '" .. tier.name .. "' holds PHI but encrypts in transit with '" .. tostring(transit) .. "'; set encryption.in_transit: tls1.3")
        end
      end
    end
  end,
}

policy {
  id = "HIPAA-TLS-002",
  title = "House baseline: PHI moves only over TLS 1.3 with mutual TLS",
  description = "access.transport sets tls_min \"1.3\" and mtls true, and network PHI tiers use tls1.3. HIPAA asks for transmission security and names no protocol version; TLS 1.3 with mutual authentication is this project's house baseline, above that. Enforcement is the hipaa pack setting transport_baseline. Does not prove how certificates are issued or rotated.",
  severity = "high",
  enforcement = TRANSPORT,
  controls = { hipaa = { "164.312(e)(1)", "164.312(d)" } },
  check = function(ctx)
    local t = ctx.blueprint.access.transport
    local address = "access.transport.default"
    local ok = true
    if not t or tonumber(t.tls_min or "0") < 1.3 then ok = false; fail(address, "the house baseline for PHI is TLS 1.3; set access.transport.tls_min: \"1.3\"") end
    if not t or not t.mtls then ok = false; fail(address, "the house baseline for PHI is mutual TLS between services; set access.transport.mtls: true") end
    if ok then pass(address, "tls_min = " .. t.tls_min .. ", mtls = true") end
    -- A tier without any encryption in transit is HIPAA-TLS-001's failure, not reported twice.
    for _, tier in ipairs(phi_network_tiers(ctx)) do
      local transit = tier.encryption and tier.encryption.in_transit
      if transit == "tls1.3" then
        pass("storage.tier." .. tier.name, "PHI tier encrypts in transit with tls1.3")
      elseif transit == "tls1.2" then
        fail("storage.tier." .. tier.name, "the house baseline for network PHI tiers is tls1.3; tier '" .. tier.name .. "' uses tls1.2")
      end
    end
  end,
}
