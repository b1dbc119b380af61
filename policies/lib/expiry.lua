-- How long an object tier keeps what it stores: the common ground of GDPR's
-- storage limitation (policies/gdpr/retention.lua) and SOC 2's disposal of
-- confidential information (policies/soc2/confidentiality.lua). A library:
-- import("expiry") returns the table below; it declares no policy and reports
-- nothing itself.

local M = {}

-- bounds(ctx) -> function(tier) -> ok, why.
-- A tier's data is disposed of on a schedule when its lifecycle expires it
-- (expire_days > 0), or when only backup copies land in it (no lifecycle
-- transition into it) and the backup that writes them prunes them
-- (retention_days > 0). `why` says which, or is nil when neither holds.
function M.bounds(ctx)
  local kept = {}  -- tier -> the backup that bounds how long its copies stay
  for _, b in ipairs(ctx.blueprint.storage.backups) do
    if (b.retention_days or 0) > 0 then kept[b.target] = b end
  end
  return function(t)
    local days = t.lifecycle and t.lifecycle.expire_days or 0
    if days > 0 then return true, "expires after " .. days .. " days" end
    local b = kept[t.name]
    if b and not (t.lifecycle and t.lifecycle.transition_from) then
      return true, "backup '" .. b.name .. "' keeps its copies " .. b.retention_days .. " days"
    end
    return false, nil
  end
end

return M
