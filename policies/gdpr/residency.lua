-- GDPR Chapter V (Art. 44-49): personal data (tiers classified pii or phi) may
-- leave the EU/EEA only on a basis the regulation allows -- an adequacy decision
-- for the destination country (Art. 45: e.g. the UK, Switzerland, Japan, Canada
-- for commercial organisations, the US for organisations certified under the
-- EU-US Data Privacy Framework), or appropriate safeguards such as standard
-- contractual clauses (Art. 46(2)(c)) or binding corporate rules (Art. 46(2)(b),
-- Art. 47). A tier or burst pool outside the EU/EEA declares its basis with
-- `transfer: {basis, reference}`; Art. 49 derogations cover occasional
-- transfers, not systematic storage or processing, so they are not accepted.

-- Cloud regions located in an EU or EEA country, by provider.
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

-- Regions in countries with a Commission adequacy decision (Art. 45), and the decision.
local adequacy_decisions = {
  uk = "the United Kingdom: Commission Implementing Decision (EU) 2021/1772",
  ch = "Switzerland: Commission Decision 2000/518/EC (confirmed in the 2024 review)",
  jp = "Japan: Commission Implementing Decision (EU) 2019/419",
  ca = "Canada (commercial organisations): Commission Decision 2002/2/EC",
  il = "Israel: Commission Decision 2011/61/EU",
  kr = "the Republic of Korea: Commission Implementing Decision (EU) 2022/254",
  nz = "New Zealand: Commission Implementing Decision 2013/65/EU",
  us = "the United States (organisations certified under the EU-US Data Privacy Framework): Commission Implementing Decision (EU) 2023/1795",
}
local country = {
  aws = { ["eu-west-2"] = "uk", ["eu-central-2"] = "ch", ["ap-northeast-1"] = "jp", ["ap-northeast-3"] = "jp",
          ["ca-central-1"] = "ca", ["ca-west-1"] = "ca", ["il-central-1"] = "il", ["ap-northeast-2"] = "kr",
          ["us-east-1"] = "us", ["us-east-2"] = "us", ["us-west-1"] = "us", ["us-west-2"] = "us" },
  gcp = { ["europe-west2"] = "uk", ["europe-west6"] = "ch", ["asia-northeast1"] = "jp", ["asia-northeast2"] = "jp",
          ["northamerica-northeast1"] = "ca", ["northamerica-northeast2"] = "ca", ["me-west1"] = "il",
          ["asia-northeast3"] = "kr", ["us-central1"] = "us", ["us-east1"] = "us", ["us-east4"] = "us",
          ["us-east5"] = "us", ["us-west1"] = "us", ["us-west2"] = "us", ["us-west3"] = "us", ["us-west4"] = "us",
          ["us-south1"] = "us" },
  azure = { uksouth = "uk", ukwest = "uk", switzerlandnorth = "ch", switzerlandwest = "ch", japaneast = "jp",
            japanwest = "jp", canadacentral = "ca", canadaeast = "ca", israelcentral = "il", koreacentral = "kr",
            koreasouth = "kr", newzealandnorth = "nz", eastus = "us", eastus2 = "us", westus = "us", westus2 = "us",
            westus3 = "us", centralus = "us", northcentralus = "us", southcentralus = "us", westcentralus = "us" },
}
local backend_cloud = { s3 = "aws", gcs = "gcp", ["azure-blob"] = "azure" }
local pool_type = { aws = "aws.instance", gcp = "gcp.instance", azure = "azure.vm" }

local function personal(tier) return tier and (tier.classification == "pii" or tier.classification == "phi") end

-- The cloud and region of a tier, or nil when it is on premises (no cloud region to check).
local function tier_place(tier)
  local cloud = backend_cloud[tier.backend or ""]
  if tier.kind ~= "object" or not cloud then return nil end
  return cloud, tier.region or ""
end

-- Whether personal data may be at `region` of `cloud` given `transfer`: ok,
-- evidence-or-reason, and whether it is a transfer at all (Chapter V applies
-- only to personal data leaving the EU/EEA: inside it, a policy here has
-- nothing to check and says not applicable, never pass).
local function lawful(cloud, region, transfer)
  if (eea[cloud] or {})[region] then return true, "region " .. region .. " is in the EU/EEA: no transfer", true end
  if not transfer then
    return false, "region '" .. region .. "' is outside the EU/EEA and no transfer basis is declared (Art. 44)"
  end
  local ref = transfer.reference or ""
  if transfer.basis == "adequacy" then
    local c = (country[cloud] or {})[region]
    if not c then
      return false, "region '" .. region .. "' is outside the EU/EEA and in no country with a Commission adequacy decision (Art. 45); use standard contractual clauses (transfer.basis: scc) or binding corporate rules"
    end
    if c == "us" and ref == "" then
      return false, "the US adequacy decision covers only organisations certified under the EU-US Data Privacy Framework; name the certification in transfer.reference"
    end
    return true, "region " .. region .. ": adequacy decision for " .. adequacy_decisions[c] .. " (Art. 45)" .. (ref ~= "" and "; " .. ref or "")
  elseif transfer.basis == "scc" or transfer.basis == "bcr" then
    local what = transfer.basis == "scc" and "standard contractual clauses (Art. 46(2)(c))" or "binding corporate rules (Art. 46(2)(b), Art. 47)"
    if ref == "" then
      return false, "region '" .. region .. "' relies on " .. what .. " but transfer.reference does not say which; name the signed document"
    end
    return true, "region " .. region .. " under " .. what .. ": " .. ref
  end
  return false, "region '" .. region .. "' relies on an Art. 49 derogation, which covers occasional transfers, not storing or processing personal data there; use scc, bcr or a region with an adequacy decision"
end

local function tiers_by_name(ctx)
  local tiers = {}
  for _, t in ipairs(ctx.blueprint.storage.tiers) do tiers[t.name] = t end
  return tiers
end

policy {
  id = "GDPR-RES-001",
  title = "Object tiers holding personal data are in the EU/EEA or under a lawful transfer basis",
  description = "Every cloud object tier classified pii or phi is in an EU/EEA region, or declares a Chapter V transfer basis that holds for its region: an adequacy decision for the region's country (Art. 45) or standard contractual clauses / binding corporate rules with a reference (Art. 46). Does not prove where data is actually replicated by the provider, or that a named transfer document is valid; data that stays in the EU/EEA is not applicable, not a pass.",
  severity = "critical",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.44", "Art.45", "Art.46" } },
  check = function(ctx)
    local any = false
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      local cloud, region = tier_place(t)
      if personal(t) and cloud then
        any = true
        local ok, why, inside = lawful(cloud, region, t.transfer)
        if inside then not_applicable("storage.tier." .. t.name, t.classification .. " data: " .. why)
        elseif ok then pass("storage.tier." .. t.name, t.classification .. " data: " .. why)
        else fail("storage.tier." .. t.name, "tier '" .. t.name .. "' holds " .. t.classification .. " data: " .. why) end
      end
    end
    if not any then not_applicable(nil, "no cloud object tier holds pii or phi data") end
  end,
}

policy {
  id = "GDPR-RES-002",
  title = "Burst pools that reach personal data run in the EU/EEA or under a lawful transfer basis",
  description = "A burst pool that mounts or checkpoints to a tier classified pii or phi runs in an EU/EEA region of its cloud, or declares a transfer basis that holds for its region (Art. 45 adequacy, Art. 46 safeguards). Does not prove what the pool's jobs copy elsewhere; a pool in the EU/EEA is not applicable, not a pass.",
  severity = "critical",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.44", "Art.45", "Art.46" } },
  check = function(ctx)
    local tiers = tiers_by_name(ctx)
    local any = false
    for _, p in ipairs(ctx.blueprint.burst_pools) do
      local reached
      for _, s in ipairs(p.storage) do if personal(tiers[s]) then reached = s end end
      if p.checkpointing and personal(tiers[p.checkpointing.target]) then reached = p.checkpointing.target end
      if reached then
        any = true
        local address = (pool_type[p.provider] or p.provider) .. "." .. p.name
        local ok, why, inside = lawful(p.provider, p.region, p.transfer)
        if inside then not_applicable(address, "reaches personal data in tier '" .. reached .. "': " .. why)
        elseif ok then pass(address, "reaches personal data in tier '" .. reached .. "': " .. why)
        else fail(address, "burst pool '" .. p.name .. "' reaches personal data in tier '" .. reached .. "': " .. why) end
      end
    end
    if not any then not_applicable(nil, "no burst pool reaches a pii or phi tier") end
  end,
}

policy {
  id = "GDPR-RES-003",
  title = "Copies of personal data stay in the EU/EEA or under a lawful transfer basis",
  description = "Backups and lifecycle transitions whose source holds pii or phi data target an on-premises tier, a tier in an EU/EEA region, or one whose declared transfer basis holds for its region (Art. 45, Art. 46). Does not prove copies made outside Plinth's backups and lifecycle rules; copies that stay in the EU/EEA or on premises are not applicable, not a pass.",
  severity = "critical",
  enforcement = "mandatory",
  controls = { gdpr = { "Art.44", "Art.45", "Art.46" } },
  check = function(ctx)
    local tiers = tiers_by_name(ctx)
    local any = false
    local function copy(address, what, target)
      any = true
      local cloud, region = tier_place(target)
      if not cloud then not_applicable(address, what .. " stays on premises (tier '" .. target.name .. "'): no transfer"); return end
      local ok, why, inside = lawful(cloud, region, target.transfer)
      if inside then not_applicable(address, what .. ": " .. why)
      elseif ok then pass(address, what .. ": " .. why)
      else fail(address, what .. " into tier '" .. target.name .. "': " .. why) end
    end
    for _, b in ipairs(ctx.blueprint.storage.backups) do
      local target = tiers[b.target]
      if personal(tiers[b.source]) and target then
        copy("storage.backup." .. b.name, "backup '" .. b.name .. "' copies personal data from '" .. b.source .. "'", target)
      end
    end
    for _, t in ipairs(ctx.blueprint.storage.tiers) do
      local from = t.lifecycle and t.lifecycle.transition_from
      if from and personal(tiers[from]) then
        copy("storage.tier." .. t.name, "tier '" .. t.name .. "' receives personal data from '" .. from .. "'", t)
      end
    end
    if not any then not_applicable(nil, "no backup or lifecycle transition copies pii or phi data") end
  end,
}
