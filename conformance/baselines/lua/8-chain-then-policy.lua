-- B1 policy 8 as a Fluent Bit Lua filter: the chain of policy 7 first, then
-- the policy, which reads the renamed field.
function cb(tag, timestamp, record)
  if record["env"] == nil then
    record["env"] = "prod"
  end
  record["pipeline"] = "b1"
  record["trace_id"] = nil
  if record["msg"] ~= nil then
    record["message"] = record["msg"]
    record["msg"] = nil
  end
  if record["level"] == "debug" then
    return -1, timestamp, record
  end
  record["slow"] = record["latency_ms"] > 200
  record["has_error"] = string.find(record["message"], "failed", 1, true) ~= nil
  return 2, timestamp, record
end
