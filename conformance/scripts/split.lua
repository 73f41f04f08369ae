-- Splits a record that carries a batch of messages into one record per
-- message, each with the record's other fields; returns the others as
-- they are.
function cb(tag, timestamp, record)
  local msgs = record["messages"]
  if type(msgs) ~= "table" then
    return 0, timestamp, record
  end
  local out = {}
  for i, m in ipairs(msgs) do
    local r = {}
    for k, v in pairs(record) do
      if k ~= "messages" then r[k] = v end
    end
    r["message"] = m
    r["seq"] = i
    table.insert(out, r)
  end
  return 1, timestamp + 1, out
end
