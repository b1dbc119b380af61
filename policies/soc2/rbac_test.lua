local base = fixture("compliant")
local radiology = 'verbs: [get, list, create], resources: [jobs, pods/log]}\n    - {name: pathology'

test { name = "least-privilege roles pass", blueprint = base, expect = {} }

test {
  name = "wildcard verbs and resources fail",
  blueprint = replace(base, radiology, 'verbs: ["*"], resources: ["*"]}\n    - {name: pathology'),
  expect = { { "SOC2-RBAC-001", "access.role.radiology-researcher" }, { "SOC2-RBAC-001", "access.role.radiology-researcher" } },
}

test {
  name = "cluster-admin or escalate granted to a group fails",
  blueprint = replace(replace(base, '{name: model-auditor,', '{name: cluster-admin,'),
    radiology, 'verbs: [get, bind], resources: [jobs, pods/log]}\n    - {name: pathology'),
  expect = { { "SOC2-RBAC-002", "access.role.cluster-admin" }, { "SOC2-RBAC-002", "access.role.radiology-researcher" } },
}

test {
  name = "cluster-admin for a named user passes",
  blueprint = replace(base, '{name: model-auditor, subjects: ["group:clinical-qa"]', '{name: cluster-admin, subjects: ["user:oncall"]'),
  policies = { "SOC2-RBAC-002" },
  expect = {},
}

test {
  name = "a service account shared between namespaces or bound elsewhere fails",
  blueprint = replace(replace(base,
    'service_accounts: [pathology-train]', 'service_accounts: [radiology-train]'),
    'subjects: ["group:clinical-qa"], namespaces: [model-review]', 'subjects: ["serviceaccount:radiology-ai/radiology-train"], namespaces: [model-review]'),
  expect = { { "SOC2-RBAC-003", "access.namespace.pathology-ai" }, { "SOC2-RBAC-003", "access.role.model-auditor" } },
}

test {
  name = "a service account bound in its own namespace passes; an undeclared one fails",
  blueprint = replace(replace(base,
    'subjects: ["group:radiology-ml"]', 'subjects: ["serviceaccount:radiology-ai/radiology-train"]'),
    'subjects: ["group:pathology-ml"]', 'subjects: ["serviceaccount:pathology-ai/ghost"]'),
  expect = { { "SOC2-RBAC-003", "access.role.pathology-researcher" } },
}

test {
  name = "on a cluster, wildcard verbs fail at the kubernetes.role resource",
  blueprint = replace(base, radiology, 'verbs: ["*"], resources: [jobs]}\n    - {name: pathology') .. "clusters:\n  - {name: clinic, context: admin}\n",
  policies = { "SOC2-RBAC-001" },
  expect = { { "SOC2-RBAC-001", "kubernetes.role.radiology-researcher" } },
}
