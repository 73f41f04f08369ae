package pipeline

import (
	"github.com/policyrun/policyrun/pipeline/output"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// otlpFields returns what of the OTLP view an otlp input must build its
// records with: only the keys (and attributes) its policies read or write
// (their vm.Access), when no output reads records, standing on their
// LogRecords' bytes when an output encodes them as OTLP protobuf
// (output.ReadsOTLPWire); every key else. Records then skip the cost of
// building what nothing looks at, while the request is still checked
// whole (a bad one is a 400 all the same).
//
// The decision is made once for each generation (a reload makes it again
// for its policies), so it holds for any tag a policy may give a record:
// every stage and every output counts, whatever it matches. A stage whose
// access is not known (a Lua script, a backend without vm.Access, a
// processor of Options.NewProcessor) needs the whole record, as does a
// policy with split.
func (g *generation) otlpFields() record.OTLPProjection {
	all := record.OTLPProjection{Fields: record.OTLPAllFields}
	wire := false
	for _, o := range g.outputs {
		rr, ok := o.out.(output.RecordReader)
		if !ok {
			return all
		}
		switch rr.Reads() {
		case output.ReadsRecords:
			return all
		case output.ReadsOTLPWire:
			wire = true
		}
	}
	var paths []record.Path
	for _, s := range g.stages {
		ps, ok := s.proc.(*policyStage)
		if !ok || ps.splits {
			// A split copies the whole record into each it makes.
			return all
		}
		ac, ok := ps.prog.(interface{ Access() vm.Access })
		if !ok {
			return all
		}
		a := ac.Access()
		paths = append(append(paths, a.Reads...), a.Writes...)
	}
	proj := record.OTLPProjectionOf(paths)
	proj.Wire = wire
	return proj
}
