-- B1 policy 6 as a Fluent Bit Lua filter: lift the kubernetes map to the
-- top level with the prefix k8s_ (what the nest filter's lift does).
function cb(tag, timestamp, record)
  local k8s = record["kubernetes"]
  if type(k8s) ~= "table" then
    return 0, timestamp, record
  end
  record["kubernetes"] = nil
  for k, v in pairs(k8s) do
    record["k8s_" .. k] = v
  end
  return 2, timestamp, record
end
