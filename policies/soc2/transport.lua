-- SOC 2 CC6.7 (restricts the transmission of information; point of focus "Uses
-- encryption technologies or secure communication channels to protect data") and
-- CC6.6 (boundary protection). CC6.7 asks that data in transit is protected and
-- names no protocol version: TLS 1.3 and mutual TLS are this project's house
-- baseline, above the criteria; their enforcement is the soc2 pack setting
-- transport_baseline (soc2/settings.yaml).

local ADDRESS = "access.transport.default"
local TRANSPORT = setting("transport_baseline", "mandatory")

policy {
  id = "SOC2-TLS-001",
  title = "House baseline: transport encryption requires TLS 1.3 or later",
  description = "access.transport.tls_min is \"1.3\"; older protocol versions are refused. CC6.7 requires protected transmission; TLS 1.3 is the house baseline above it (enforcement: soc2 pack setting transport_baseline). Does not prove what clients negotiate; it checks the declared minimum.",
  severity = "high",
  enforcement = TRANSPORT,
  controls = { soc2 = { "CC6.7" }, hipaa = { "164.312(e)(1)" }, gdpr = { "Art.32(1)(a)" } },
  check = function(ctx)
    local t = ctx.blueprint.access.transport
    if not t or not t.tls_min then
      fail(ADDRESS, "access.transport.tls_min is not set; set tls_min: \"1.3\"")
    elseif tonumber(t.tls_min) == nil or tonumber(t.tls_min) < 1.3 then
      fail(ADDRESS, "minimum TLS version is " .. t.tls_min .. "; the house baseline is 1.3: set tls_min: \"1.3\"")
    else
      pass(ADDRESS, "tls_min = " .. t.tls_min)
    end
  end,
}

policy {
  id = "SOC2-TLS-002",
  title = "House baseline: services authenticate each other with mutual TLS",
  description = "access.transport.mtls is true, so service-to-service traffic is authenticated on both ends. Stronger than CC6.6/CC6.7 require; mutual TLS is the house baseline (enforcement: soc2 pack setting transport_baseline). Does not prove how certificates are issued or rotated.",
  severity = "high",
  enforcement = TRANSPORT,
  controls = { soc2 = { "CC6.6", "CC6.7" }, hipaa = { "164.312(d)" } },
  check = function(ctx)
    local t = ctx.blueprint.access.transport
    if not t or not t.mtls then
      fail(ADDRESS, "mutual TLS between services is off; set access.transport.mtls: true")
    else
      pass(ADDRESS, "mtls = true")
    end
  end,
}
