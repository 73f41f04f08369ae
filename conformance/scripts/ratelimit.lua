-- Keeps at most 3 records per tag per second of wall clock and drops the
-- rest, counting what it dropped into the next record it keeps.
local window = {}
local count = {}
local dropped = {}

function cb(tag, timestamp, record)
  local now = os.time()
  if window[tag] ~= now then
    window[tag] = now
    count[tag] = 0
  end
  count[tag] = count[tag] + 1
  if count[tag] > 3 then
    dropped[tag] = (dropped[tag] or 0) + 1
    return -1, timestamp, record
  end
  if (dropped[tag] or 0) > 0 then
    record["rate_limited"] = dropped[tag]
    dropped[tag] = 0
    return 2, timestamp, record
  end
  return 0, timestamp, record
end
