-- B1 policy 1 as a Fluent Bit Lua filter: pass every record through.
function cb(tag, timestamp, record)
  return 0, timestamp, record
end
