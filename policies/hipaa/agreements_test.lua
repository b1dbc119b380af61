local base = fixture("compliant")

test { name = "every provider reaching PHI under a recorded BAA passes", blueprint = base, expect = {} }

test {
  name = "a provider storing PHI without a BAA fails at its first PHI tier",
  blueprint = replace(base, '    - {provider: gcp, kind: baa, reference: "Google Cloud BAA accepted in the console, 2026-02-12"}\n', ''),
  expect = { { "HIPAA-BAA-001", "storage.tier.phi-dr", "no business associate agreement with gcp" } },
}

test {
  name = "a pii tier that PHI ages into makes its cloud a business associate, and a burst pool reaching it too",
  blueprint = replace(replace(base,
    '    - {provider: aws, kind: baa, reference: "AWS BAA via AWS Artifact, accepted 2026-02-10"}\n', ''),
    '    - {provider: azure, kind: baa, reference: "Microsoft BAA in the Product Terms, 2026-02-11"}\n', ''),
  expect = { { "HIPAA-BAA-001", "storage.tier.pii-archive", "receives PHI from 'phi-lake'" },
             { "HIPAA-BAA-001", "azure.vm.azure-eu-nd", "reaches PHI in tier 'pii-archive'" } },
}

test {
  name = "a DPA is not a BAA",
  blueprint = replace(base, 'provider: gcp, kind: baa', 'provider: gcp, kind: dpa'),
  expect = { { "HIPAA-BAA-001", "storage.tier.phi-dr" } },
}

test {
  name = "PHI kept on premises needs no BAA",
  blueprint = [[
apiVersion: plinth/v1
kind: Blueprint
metadata: {name: onprem, compliance: [hipaa]}
storage:
  tiers:
    - {name: phi-lake, kind: parallel-fs, backend: lustre, export: "10.0.0.10@tcp:/phi", capacity_tb: 10, classification: phi,
       encryption: {at_rest: aes-256-xts, in_transit: tls1.3}}
]],
  expect = {},
  not_applicable = { "HIPAA-BAA-001" },
}
