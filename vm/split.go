package vm

import (
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// Piece is one record a run made of the record it was given, with its
// own result: a policy with split P makes one per element of P's array
// (docs/language.md, "split"), every other policy one, the record itself.
// A dropped piece is in the sequence too, so that whoever runs the policy
// counts each piece's result; only kept pieces go on.
type Piece struct {
	Rec    *record.Record
	Result spec.Result
}
