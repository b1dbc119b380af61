-- ML practice: training checkpoints are what a lost week of GPU time is
-- rebuilt from. Tiers that hold them are backed up, those backups are
-- restore-tested at least quarterly, and spot capacity checkpoints often.

local pool_type = { aws = "aws.instance", gcp = "gcp.instance", azure = "azure.vm" }

-- Checkpoint tiers: the checkpoint targets of burst pools, and the network
-- (non-NVMe) tiers mounted by training node pools.
local function checkpoint_tiers(ctx)
  local kinds, set, order = {}, {}, {}
  for _, t in ipairs(ctx.blueprint.storage.tiers) do kinds[t.name] = t.kind end
  local function add(name)
    if name and not set[name] then set[name] = true; order[#order + 1] = name end
  end
  for _, p in ipairs(ctx.blueprint.node_pools) do
    if p.role == "training" then
      for _, s in ipairs(p.storage) do if kinds[s] and kinds[s] ~= "nvme" then add(s) end end
    end
  end
  for _, p in ipairs(ctx.blueprint.burst_pools) do
    if p.checkpointing then add(p.checkpointing.target) end
  end
  return set, order
end

policy {
  id = "ML-BAK-001",
  title = "Checkpoint tiers are backed up",
  description = "Every tier that holds training checkpoints (a burst pool's checkpoint target, or a network tier a training pool mounts) is the source or the target of a backup. Does not prove a checkpoint can be restored into a running job. Cites no HIPAA paragraph: a checkpoint tier need not hold ePHI, and HIPAA-BAK-001 checks the backups of the tiers that do.",
  severity = "medium",
  enforcement = "advisory",
  controls = { soc2 = { "A1.2" } },
  check = function(ctx)
    local covered = {}
    for _, b in ipairs(ctx.blueprint.storage.backups) do
      covered[b.source] = true
      covered[b.target] = true
    end
    local _, order = checkpoint_tiers(ctx)
    for _, name in ipairs(order) do
      if not covered[name] then
        fail("storage.tier." .. name, "tier '" .. name .. "' holds training checkpoints but no backup copies it; add a storage.backups entry with source: " .. name)
      else
        pass("storage.tier." .. name, "checkpoint tier is the source or target of a backup")
      end
    end
    if #order == 0 then not_applicable(nil, "no tier holds training checkpoints") end
  end,
}

policy {
  id = "ML-BAK-002",
  title = "Checkpoint backups are restore-tested at least every 90 days",
  description = "A backup whose source is a checkpoint tier has dr_test_interval_days between 1 and 90. Does not prove the tests are run or pass; it checks the declared interval. Cites no HIPAA paragraph: HIPAA-BAK-002 checks the restore tests of backups of ePHI.",
  severity = "medium",
  enforcement = "advisory",
  controls = { soc2 = { "A1.3" } },
  check = function(ctx)
    local set = checkpoint_tiers(ctx)
    local any = false
    for _, b in ipairs(ctx.blueprint.storage.backups) do
      local dr = b.dr_test_interval_days
      if set[b.source] then
        any = true
        if dr <= 0 or dr > 90 then
          fail("storage.backup." .. b.name, "checkpoint backup '" .. b.name .. "' is " .. (dr <= 0 and "never restore-tested" or ("restore-tested every " .. dr .. " days")) .. "; set dr_test_interval_days: 90 or less")
        else
          pass("storage.backup." .. b.name, "checkpoint backup restore-tested every " .. dr .. " days")
        end
      end
    end
    if not any then not_applicable(nil, "no backup copies a checkpoint tier") end
  end,
}

policy {
  id = "ML-SPOT-001",
  title = "Spot burst pools checkpoint at least hourly",
  description = "A burst pool with spot: true sets checkpointing with a target tier and interval_minutes between 1 and 60, so a reclaimed instance loses at most an hour. Does not prove the jobs write checkpoints; it checks the pool's declared interval and target.",
  severity = "medium",
  enforcement = "advisory",
  controls = { soc2 = { "A1.2" } },
  check = function(ctx)
    local any = false
    for _, p in ipairs(ctx.blueprint.burst_pools) do
      if p.spot then
        any = true
        local address = (pool_type[p.provider] or p.provider) .. "." .. p.name
        local c = p.checkpointing
        if not c or not c.target then
          fail(address, "spot pool '" .. p.name .. "' does not checkpoint; add checkpointing: {interval_minutes: 30, target: TIER}")
        elseif c.interval_minutes <= 0 or c.interval_minutes > 60 then
          fail(address, "spot pool '" .. p.name .. "' checkpoints every " .. c.interval_minutes .. " minutes; checkpoint at least hourly")
        else
          pass(address, "checkpoints to '" .. c.target .. "' every " .. c.interval_minutes .. " minutes")
        end
      end
    end
    if not any then not_applicable(nil, "no burst pool runs on spot capacity") end
  end,
}
