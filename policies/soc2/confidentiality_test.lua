local base = fixture("compliant")

test { name = "classified tiers whose object data expires pass", blueprint = base, expect = {} }

test {
  name = "a tier without classification fails SOC2-CONF-001",
  blueprint = replace(base, '      capacity_tb: 122.88\n      classification: phi\n', '      capacity_tb: 122.88\n'),
  policies = { "SOC2-CONF-001" },
  expect = { { "SOC2-CONF-001", "storage.tier.phi-scratch" } },
}

test {
  name = "a confidential object tier kept forever fails SOC2-CONF-002",
  blueprint = replace(replace(base, 'classification: pii\n', 'classification: confidential\n'),
                      'after_days: 30, expire_days: 2555}', 'after_days: 30}'),
  policies = { "SOC2-CONF-002" },
  expect = { { "SOC2-CONF-002", "storage.tier.pii-archive" } },
}

test {
  name = "a tier that receives only pruned backup copies passes SOC2-CONF-002",
  blueprint = base,
  policies = { "SOC2-CONF-002" },
  expect = {},
}

test {
  name = "an internal object tier is not confidential information",
  blueprint = replace(replace(base, 'classification: pii\n', 'classification: internal\n'),
                      'after_days: 30, expire_days: 2555}', 'after_days: 30}'),
  policies = { "SOC2-CONF-002" },
  expect = {},
}
