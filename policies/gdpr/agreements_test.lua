local base = fixture("compliant")

test { name = "processors under recorded DPAs and a recorded DPIA pass", blueprint = base, expect = {} }

test {
  name = "a cloud processing personal data without a DPA fails at the first resource that reaches it",
  blueprint = replace(base, '    - {provider: aws, kind: dpa, reference: "AWS GDPR DPA in the AWS Service Terms, 2026-02-10"}\n', ''),
  expect = { { "GDPR-DPA-001", "storage.tier.pii-archive", "no data processing agreement with aws" } },
}

test {
  name = "a burst pool reaching personal data makes its cloud a processor",
  blueprint = replace(base, '    - {provider: azure, kind: dpa, reference: "Microsoft Products and Services DPA, 2026-02-11"}\n', ''),
  expect = { { "GDPR-DPA-001", "azure.vm.azure-eu-nd", "reaches personal data in tier 'pii-archive'" } },
}

test {
  name = "health data without a recorded DPIA fails at the first phi tier",
  blueprint = replace(base, '  dpia: "DPIA-2026-014 (clinical model training), approved by the DPO 2026-03-02"\n', ''),
  expect = { { "GDPR-DPIA-001", "storage.tier.phi-scratch", "no data protection impact assessment" } },
}

test {
  name = "no personal data in any cloud and no health data: neither applies",
  blueprint = [[
apiVersion: plinth/v1
kind: Blueprint
metadata: {name: research, compliance: [gdpr]}
storage:
  tiers:
    - {name: datasets, kind: object, backend: s3, region: eu-west-1, capacity_tb: 10, classification: internal,
       encryption: {at_rest: aes-256-gcm, in_transit: tls1.3}}
]],
  expect = {},
  not_applicable = { "GDPR-DPA-001", "GDPR-DPIA-001" },
}
