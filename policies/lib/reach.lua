-- Which cloud providers a blueprint lets reach the data of some storage tiers,
-- and through which resource: the common ground of the HIPAA business
-- associate and the GDPR processor policies (policies/hipaa/agreements.lua,
-- policies/gdpr/agreements.lua). A library: import("reach") returns the table
-- below; it declares no policy and reports nothing itself.

local M = {}

-- The cloud of an object tier's backend, and the resource type of a burst pool.
M.backend_cloud = { s3 = "aws", gcs = "gcp", ["azure-blob"] = "azure" }
M.pool_type = { aws = "aws.instance", gcp = "gcp.instance", azure = "azure.vm" }

-- providers(ctx, holds) -> reach, order.
-- `holds(tier)` says whether a tier holds the data (a short description of
-- what it holds, or nil/false). A cloud object tier that holds it makes its
-- cloud a provider reaching the data; so does a burst pool that mounts such a
-- tier or checkpoints to one. reach[provider] = {address, tier, what, pool}
-- for the first resource, in blueprint order (tiers first, then pools);
-- order lists the providers in that order.
function M.providers(ctx, holds)
  local tiers, reach, order = {}, {}, {}
  for _, t in ipairs(ctx.blueprint.storage.tiers) do tiers[t.name] = t end
  local function add(provider, entry)
    if not reach[provider] then
      reach[provider] = entry
      order[#order + 1] = provider
    end
  end
  for _, t in ipairs(ctx.blueprint.storage.tiers) do
    local cloud = t.kind == "object" and M.backend_cloud[t.backend or ""]
    local what = cloud and holds(t)
    if what then add(cloud, { address = "storage.tier." .. t.name, tier = t.name, what = what }) end
  end
  for _, p in ipairs(ctx.blueprint.burst_pools) do
    local reached, what
    for _, s in ipairs(p.storage) do
      local w = tiers[s] and holds(tiers[s])
      if w then reached, what = s, w end
    end
    local target = p.checkpointing and tiers[p.checkpointing.target]
    local w = target and holds(target)
    if w then reached, what = target.name, w end
    if reached then
      add(p.provider, { address = (M.pool_type[p.provider] or p.provider) .. "." .. p.name, tier = reached,
                        what = what, pool = p.name })
    end
  end
  return reach, order
end

return M
