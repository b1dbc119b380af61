local base = fixture("compliant")

test { name = "a pii object tier that expires data passes", blueprint = base, expect = {} }

test {
  name = "a pii object tier that keeps data forever fails",
  blueprint = replace(base, 'after_days: 30, expire_days: 2555', 'after_days: 30, expire_days: 0'),
  expect = { { "GDPR-RET-001", "storage.tier.pii-archive" } },
}
