-- B1 policy 7 as a Fluent Bit Lua filter: the policy, then the
-- content-modifier chain (insert, upsert, delete, rename).
function cb(tag, timestamp, record)
  if record["level"] == "debug" then
    return -1, timestamp, record
  end
  record["slow"] = record["latency_ms"] > 200
  if record["env"] == nil then
    record["env"] = "prod"
  end
  record["pipeline"] = "b1"
  record["trace_id"] = nil
  if record["msg"] ~= nil then
    record["message"] = record["msg"]
    record["msg"] = nil
  end
  return 2, timestamp, record
end
