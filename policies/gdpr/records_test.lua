local base = fixture("compliant")

test { name = "every tier declares its data classification", blueprint = base, expect = {} }

test {
  name = "a tier without classification fails GDPR-REC-001",
  blueprint = replace(base, '      capacity_tb: 122.88\n      classification: phi\n', '      capacity_tb: 122.88\n'),
  expect = { { "GDPR-REC-001", "storage.tier.phi-scratch" } },
}
