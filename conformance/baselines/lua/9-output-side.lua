-- B1 policy 9 as a Fluent Bit Lua filter on the output side: drop noise,
-- trim what is shipped.
function cb(tag, timestamp, record)
  if record["level"] == "debug" or record["path"] == "/healthz" then
    return -1, timestamp, record
  end
  record["trace_id"] = nil
  record["user"] = nil
  record["shipped_by"] = "policyrun"
  record["status_class"] = math.floor(record["status"] / 100)
  return 2, timestamp, record
end
