package pipeline

import "github.com/policyrun/policyrun/record"

// ProcessorFunc adapts a function to a Processor, as http.HandlerFunc
// adapts one to an http.Handler: Process calls the function and Close does
// nothing. It is the short way to a stage written in Go, returned from
// Options.NewProcessor. The function keeps the contract of Process: it
// writes the records it keeps, in order, over the slice it is given and
// returns them with its counts; since inputs run batches concurrently, it
// must be safe for concurrent use when the pipeline has several inputs.
type ProcessorFunc func(recs []*record.Record) ([]*record.Record, StageCounts)

// Process calls f(recs).
func (f ProcessorFunc) Process(recs []*record.Record) ([]*record.Record, StageCounts) {
	return f(recs)
}

// Close does nothing; it returns nil.
func (ProcessorFunc) Close() error { return nil }
