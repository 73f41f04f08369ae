-- Copies the app label of a Kubernetes record to the top, without
-- checking that the record has one: a record without kubernetes metadata
-- raises "attempt to index a nil value".
function cb(tag, timestamp, record)
  record["app"] = record["kubernetes"]["labels"]["app"]
  record["kubernetes"] = nil
  return 2, timestamp, record
end
