-- GDPR Art. 44 (general principle for transfers): personal data (tiers
-- classified pii or phi) stays in EU/EEA regions, including object tiers,
-- cloud burst pools that reach it, and its backups and lifecycle copies.

-- Cloud regions located in an EU or EEA country, by provider. London,
-- Zurich and other adequacy-decision regions are outside the EU/EEA.
local eea = {
  aws = { ["eu-west-1"] = true, ["eu-west-3"] = true, ["eu-central-1"] = true, ["eu-north-1"] = true,
          ["eu-south-1"] = true, ["eu-south-2"] = true },
  gcp = { ["europe-west1"] = true, ["europe-west3"] = true, ["europe-west4"] = true, ["europe-west8"] = true,
          ["europe-west9"] = true, ["europe-west10"] = true, ["europe-west12"] = true, ["europe-north1"] = true,
          ["europe-central2"] = true, ["europe-southwest1"] = true },
  azure = { westeurope = true, northeurope = true, francecentral = true, francesouth = true,
            germanywestcentral = true, germanynorth = true, swedencentral = true, swedensouth = true,
            italynorth = true, polandcentral = true, spaincentral = true, norwayeast = true, norwaywest = true },
}
local backend_cloud = { s3 = "aws", gcs = "gcp", ["azure-blob"] = "azure" }
local pool_type = { aws = "aws.instance", gcp = "gcp.instance", azure = "azure.vm" }

local function personal(tier) return tier and (tier.classification == "pii" or tier.classification == "phi") end

-- nil when the tier is on premises (no cloud region to check); else whether its region is in the EU/EEA.
local function tier_in_eea(tier)
  local cloud = backend_cloud[tier.backend or ""]
  if tier.kind ~= "object" or not cloud then return nil end
  return eea[cloud][tier.region or ""] == true
end

local function tiers_by_name(ctx)
  local tiers = {}
  for _, t in ipairs(ctx.blueprint.storage.tiers) do tiers[t.name] = t end
  return tiers
end

policy {
  id = "GDPR-RES-001",
  title = "Object tiers holding personal data are in EU/EEA regions",
  description = "Every cloud object tier classified pii or phi names a region in an EU/EEA country.",
  severity = "critical",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.44", "Art.5(1)(f)" } },
  check = function(ctx)
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      if personal(t) and tier_in_eea(t) == false then
        fail("storage.tier." .. t.name, "tier '" .. t.name .. "' holds " .. t.classification .. " data in region '" .. tostring(t.region) .. "', outside the EU/EEA; move it to an EU/EEA region")
      elseif personal(t) and tier_in_eea(t) then
        pass("storage.tier." .. t.name, "region " .. t.region)
      end
    end
  end,
}

policy {
  id = "GDPR-RES-002",
  title = "Burst pools that reach personal data run in EU/EEA regions",
  description = "A burst pool that mounts or checkpoints to a tier classified pii or phi runs in an EU/EEA region of its cloud.",
  severity = "critical",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.44", "Art.32(1)(b)" } },
  check = function(ctx)
    local tiers = tiers_by_name(ctx)
    for _, p in ipairs(ctx.blueprint.burst_pools) do
      local reached
      for _, s in ipairs(p.storage) do if personal(tiers[s]) then reached = s end end
      if p.checkpointing and personal(tiers[p.checkpointing.target]) then reached = p.checkpointing.target end
      local regions = eea[p.provider] or {}
      if reached and not regions[p.region] then
        fail((pool_type[p.provider] or p.provider) .. "." .. p.name, "burst pool '" .. p.name .. "' reaches personal data in tier '" .. reached .. "' from region '" .. p.region .. "', outside the EU/EEA; run it in an EU/EEA region")
      end
    end
  end,
}

policy {
  id = "GDPR-RES-003",
  title = "Copies of personal data stay in EU/EEA regions",
  description = "Backups and lifecycle transitions whose source holds pii or phi data target a tier in an EU/EEA region (or on premises).",
  severity = "critical",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.44", "Art.32(1)(c)" } },
  check = function(ctx)
    local tiers = tiers_by_name(ctx)
    for _, b in ipairs(ctx.blueprint.storage.backups) do
      local target = tiers[b.target]
      if personal(tiers[b.source]) and target and tier_in_eea(target) == false then
        fail("storage.backup." .. b.name, "backup '" .. b.name .. "' copies personal data from '" .. b.source .. "' to '" .. b.target .. "' in region '" .. tostring(target.region) .. "', outside the EU/EEA")
      end
    end
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      local from = t.lifecycle and t.lifecycle.transition_from
      if from and personal(tiers[from]) and tier_in_eea(t) == false then
        fail("storage.tier." .. t.name, "tier '" .. t.name .. "' receives personal data from '" .. from .. "' in region '" .. tostring(t.region) .. "', outside the EU/EEA")
      end
    end
  end,
}
