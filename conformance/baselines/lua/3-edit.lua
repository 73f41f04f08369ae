-- B1 policy 3 as a Fluent Bit Lua filter: remove one field, set one.
function cb(tag, timestamp, record)
  record["trace_id"] = nil
  record["env"] = "prod"
  return 2, timestamp, record
end
