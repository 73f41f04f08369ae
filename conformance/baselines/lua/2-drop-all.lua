-- B1 policy 2 as a Fluent Bit Lua filter: drop every record.
function cb(tag, timestamp, record)
  return -1, timestamp, record
end
