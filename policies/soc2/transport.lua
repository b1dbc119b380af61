-- SOC 2 CC6.7 / CC6.6: data in transit uses TLS 1.3 or later, and services
-- authenticate each other with mutual TLS.

local ADDRESS = "access.transport.default"

policy {
  id = "SOC2-TLS-001",
  title = "Transport encryption requires TLS 1.3 or later",
  description = "access.transport.tls_min is \"1.3\"; older protocol versions are refused.",
  severity = "high",
  enforcement = "mandatory",
  controls = { soc2 = { "CC6.7" }, hipaa = { "164.312(e)(1)" }, gdpr = { "Art.32(1)(a)" } },
  check = function(ctx)
    local t = ctx.blueprint.access.transport
    if not t or not t.tls_min then
      fail(ADDRESS, "access.transport.tls_min is not set; set tls_min: \"1.3\"")
    elseif tonumber(t.tls_min) == nil or tonumber(t.tls_min) < 1.3 then
      fail(ADDRESS, "minimum TLS version is " .. t.tls_min .. "; set tls_min: \"1.3\"")
    else
      pass(ADDRESS, "tls_min = " .. t.tls_min)
    end
  end,
}

policy {
  id = "SOC2-TLS-002",
  title = "Services authenticate each other with mutual TLS",
  description = "access.transport.mtls is true, so service-to-service traffic is authenticated on both ends.",
  severity = "high",
  enforcement = "mandatory",
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
