-- Stamps each record with its time as ISO 8601 and in the Apache log
-- style, and with the time it was processed, as many Fluent Bit
-- deployments do before shipping to Elasticsearch.
function cb(tag, timestamp, record)
  record["@timestamp"] = os.date("!%Y-%m-%dT%H:%M:%S", timestamp) .. string.format(".%03dZ", math.floor((timestamp % 1) * 1000))
  record["apache_time"] = os.date("!%d/%b/%Y:%H:%M:%S +0000", timestamp)
  record["processed_at"] = os.time()
  record["day"] = os.date("!%A", timestamp)
  return 2, timestamp, record
end
