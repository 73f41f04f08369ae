package pipeline

import (
	"github.com/policyrun/policyrun/pipeline/output"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// otlpFields returns the keys of the OTLP view that an otlp input must
// build its records with: only those its policies read or write (their
// vm.Access), when no output reads records; every key else. Records then
// skip the cost of building what nothing looks at, while the request is
// still checked whole (a bad one is a 400 all the same).
//
// The decision is made once, for the whole pipeline, so it holds for any
// tag a policy may give a record: every stage and every output counts,
// whatever it matches. A stage whose access is not known (a Lua script,
// a backend without vm.Access, a processor of Options.NewProcessor) needs
// the whole record.
func (p *Pipeline) otlpFields() record.OTLPFields {
	for _, o := range p.outputs {
		if rr, ok := o.out.(output.RecordReader); !ok || rr.ReadsRecords() {
			return record.OTLPAllFields
		}
	}
	var keep record.OTLPFields
	for _, s := range p.stages {
		ps, ok := s.proc.(*policyStage)
		if !ok {
			return record.OTLPAllFields
		}
		ac, ok := ps.prog.(interface{ Access() vm.Access })
		if !ok {
			return record.OTLPAllFields
		}
		a := ac.Access()
		keep |= record.OTLPFieldsOf(a.Reads) | record.OTLPFieldsOf(a.Writes)
	}
	return keep
}
