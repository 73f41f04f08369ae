module github.com/policyrun/policyrun

go 1.26.8

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/expr-lang/expr v1.17.8
	github.com/klauspost/compress v1.19.2
	github.com/vmihailenco/msgpack/v5 v5.4.1
	go.opentelemetry.io/proto/otlp v1.9.0
	go.yaml.in/yaml/v3 v3.0.6
	google.golang.org/protobuf v1.36.12
)

require github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
