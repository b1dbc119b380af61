-- ML practice: GPUs are shared through per-namespace quotas that the cluster
-- can actually honour.

policy {
  id = "ML-QUOTA-001",
  title = "Every namespace has a GPU quota",
  description = "Each access.namespaces entry sets quota.gpus, so no tenant can take every GPU.",
  severity = "medium",
  enforcement = "advisory",
  controls = { soc2 = { "CC6.1", "A1.1" } },
  check = function(ctx)
    for _, ns in ipairs(ctx.blueprint.access.namespaces) do
      if not (ns.quota and ns.quota.gpus) then
        fail("access.namespace." .. ns.name, "namespace '" .. ns.name .. "' has no GPU quota; set quota: {gpus: N}")
      end
    end
  end,
}

-- GPUs per instance of common cloud GPU instance types.
local instance_gpus = {
  ["p5.48xlarge"] = 8, ["p5e.48xlarge"] = 8, ["p4d.24xlarge"] = 8, ["p4de.24xlarge"] = 8, ["g6e.48xlarge"] = 8,
  ["a3-highgpu-8g"] = 8, ["a3-megagpu-8g"] = 8, ["a2-highgpu-8g"] = 8, ["a2-ultragpu-8g"] = 8,
  ["Standard_ND96isr_H100_v5"] = 8, ["Standard_ND96amsr_A100_v4"] = 8, ["Standard_ND96asr_v4"] = 8,
}

policy {
  id = "ML-QUOTA-002",
  title = "GPU quotas fit the GPUs the blueprint provides",
  description = "The sum of namespace GPU quotas is at most the GPUs of all node pools plus burst pools at their max size (for the GPU instance types the policy knows).",
  severity = "low",
  enforcement = "advisory",
  controls = { soc2 = { "A1.1" } },
  check = function(ctx)
    local b = ctx.blueprint
    local capacity = 0
    for _, p in ipairs(b.node_pools) do capacity = capacity + p.count * p.hardware.gpus_per_node end
    -- Burst pools count at their max size; instance types this table does not know add nothing.
    for _, p in ipairs(b.burst_pools) do capacity = capacity + p.max * (instance_gpus[p.instance_type] or 0) end
    local quota = 0
    for _, ns in ipairs(b.access.namespaces) do
      if ns.quota and ns.quota.gpus then quota = quota + ns.quota.gpus end
    end
    if quota > capacity then
      fail(nil, "namespaces are promised " .. quota .. " GPUs but the blueprint provides " .. capacity .. "; lower the quotas or add capacity")
    elseif #b.access.namespaces > 0 then
      pass(nil, quota .. " of " .. capacity .. " GPUs under quota")
    end
  end,
}
