module example.com/consumer

go 1.26.8

require github.com/policyrun/policyrun v0.0.0

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/klauspost/compress v1.19.2 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

// The consumer's only replace: the core from this checkout, as a program
// would take a released version of it.
replace github.com/policyrun/policyrun => ../..
