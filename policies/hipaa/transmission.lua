-- HIPAA 45 CFR 164.312(e)(1) transmission security and (e)(2)(ii) encryption:
-- PHI moves only over TLS 1.3 with mutual authentication.

policy {
  id = "HIPAA-TLS-001",
  title = "PHI moves only over TLS 1.3 with mutual TLS",
  description = "access.transport sets tls_min \"1.3\" and mtls true, and every network tier (not node-local NVMe) holding PHI encrypts in transit with tls1.3.",
  severity = "critical",
  enforcement = "mandatory",
  controls = { hipaa = { "164.312(e)(1)", "164.312(e)(2)(ii)" } },
  check = function(ctx)
    local t = ctx.blueprint.access.transport
    local address = "access.transport.default"
    if not t or tonumber(t.tls_min or "0") < 1.3 then
      fail(address, "PHI needs TLS 1.3 in transit; set access.transport.tls_min: \"1.3\"")
    end
    if not t or not t.mtls then
      fail(address, "PHI needs mutual TLS between services; set access.transport.mtls: true")
    end
    for _, tier in ipairs(ctx.blueprint.storage.tiers) do
      if tier.classification == "phi" and tier.kind ~= "nvme" then
        local transit = tier.encryption and tier.encryption.in_transit
        if transit ~= "tls1.3" then
          fail("storage.tier." .. tier.name, "network tier '" .. tier.name .. "' holds PHI but encrypts in transit with '" .. tostring(transit or "nothing") .. "'; set encryption.in_transit: tls1.3")
        end
      end
    end
  end,
}
