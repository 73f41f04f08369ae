-- B1 policy 4 as a Fluent Bit Lua filter: a condition over five fields,
-- then a set.
function cb(tag, timestamp, record)
  local path = record["path"]
  if record["level"] == "error" and record["status"] >= 500 and record["method"] == "POST"
      and string.sub(path, 1, 5) == "/api/" and record["latency_ms"] > 100 then
    record["alert"] = "page-oncall"
    return 2, timestamp, record
  end
  return 0, timestamp, record
end
