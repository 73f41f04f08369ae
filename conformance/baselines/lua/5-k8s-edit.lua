-- B1 policy 5 as a Fluent Bit Lua filter: edit inside the kubernetes map.
function cb(tag, timestamp, record)
  local k8s = record["kubernetes"]
  if k8s == nil then
    k8s = {}
    record["kubernetes"] = k8s
  end
  k8s["cluster"] = "prod-eu-1"
  local labels = k8s["labels"]
  k8s["app"] = (labels and labels["app"]) or "unknown"
  k8s["pod_id"] = nil
  k8s["annotations"] = nil
  return 2, timestamp, record
end
