-- ML practice: GPUs are shared through per-namespace quotas that the cluster
-- can actually honour. Capacity is an availability matter: SOC 2 A1.1 ("maintains,
-- monitors and evaluates current processing capacity ... to manage capacity demand").

-- The namespace's resource: access.namespace.NAME (recorded only), or
-- kubernetes.namespace.NAME when the blueprint declares a cluster.
local function namespace_address(ctx, name)
  local applied = "kubernetes.namespace." .. name
  if ctx.resource(applied) then return applied end
  return "access.namespace." .. name
end

policy {
  id = "ML-QUOTA-001",
  title = "Every namespace has a GPU quota",
  description = "Each access.namespaces entry sets quota.gpus, so no tenant can take every GPU and starve the others (capacity management, A1.1). Does not prove the quota is enforced on a cluster (ML-QUOTA-003 checks the applied ResourceQuota).",
  severity = "medium",
  enforcement = "advisory",
  controls = { soc2 = { "A1.1" } },
  check = function(ctx)
    local namespaces = ctx.blueprint.access.namespaces
    for _, ns in ipairs(namespaces) do
      if not (ns.quota and ns.quota.gpus) then
        fail(namespace_address(ctx, ns.name), "namespace '" .. ns.name .. "' has no GPU quota; set quota: {gpus: N}")
      else
        pass(namespace_address(ctx, ns.name), "quota of " .. ns.quota.gpus .. " GPUs")
      end
    end
    if #namespaces == 0 then not_applicable(nil, "the blueprint declares no namespaces") end
  end,
}

policy {
  id = "ML-QUOTA-002",
  title = "GPU quotas fit the GPUs the blueprint provides",
  description = "The sum of namespace GPU quotas is at most the GPUs of all node pools plus burst pools at their max size, with each instance type's GPU count from the catalog (ctx.catalog). Does not prove the capacity is there; burst pools count at their max.",
  severity = "low",
  enforcement = "advisory",
  controls = { soc2 = { "A1.1" } },
  check = function(ctx)
    local b = ctx.blueprint
    local types = ctx.catalog.instance_types
    local capacity, unknown = 0, {}
    for _, p in ipairs(b.node_pools) do capacity = capacity + p.count * p.hardware.gpus_per_node end
    for _, p in ipairs(b.burst_pools) do
      local t = (types[p.provider] or {})[p.instance_type]
      if t then capacity = capacity + p.max * t.gpu_count else unknown[#unknown + 1] = p.name end
    end
    local quota = 0
    for _, ns in ipairs(b.access.namespaces) do
      if ns.quota and ns.quota.gpus then quota = quota + ns.quota.gpus end
    end
    local note = #unknown > 0 and (" (burst pools " .. table.concat(unknown, ", ") .. " have instance types the catalog does not know and count as 0)") or ""
    if quota > capacity then
      fail(nil, "namespaces are promised " .. quota .. " GPUs but the blueprint provides " .. capacity .. note .. "; lower the quotas or add capacity")
    elseif #b.access.namespaces > 0 then
      pass(nil, quota .. " of " .. capacity .. " GPUs under quota" .. note)
    else
      not_applicable(nil, "no namespaces, so no quotas to honour")
    end
  end,
}

policy {
  id = "ML-QUOTA-003",
  title = "Namespaces created on a cluster have a GPU quota",
  description = "Every namespace the blueprint applies to a Kubernetes cluster (clusters:) gets a ResourceQuota with requests.nvidia.com/gpu (quota.gpus); without one a single tenant can schedule every GPU of the cluster. Checked on the planned kubernetes.namespace resources, so a plan that breaks it sends no request (A1.1). Does not prove workloads cannot bypass the quota through other namespaces.",
  severity = "high",
  enforcement = "mandatory",
  controls = { soc2 = { "A1.1" } },
  check = function(ctx)
    local namespaces = ctx.resources("kubernetes.namespace")
    for _, r in ipairs(namespaces) do
      if r.gpu_quota == nil then
        fail(r.address, "namespace '" .. r.name .. "' would be created on cluster '" .. tostring(r.cluster) .. "' without a GPU quota; set quota: {gpus: N}")
      else
        pass(r.address, "ResourceQuota gpu-quota with requests.nvidia.com/gpu " .. r.gpu_quota)
      end
    end
    if #namespaces == 0 then not_applicable(nil, "no namespace is applied to a cluster") end
  end,
}
