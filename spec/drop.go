package spec

import "fmt"

// DropReason says why a record was dropped when neither a drop of the
// policy nor on_fault drop did it: a statement that drops records of its
// own accord. Drops are counted by it (Counts.Drops).
type DropReason uint8

const (
	// ByPolicy is a drop statement, or a fault under on_fault drop.
	ByPolicy DropReason = iota
	// SplitEmpty: split P met an empty array, which makes no records.
	SplitEmpty
	// ByDedupe: dedupe met a repeat of a key within its window.
	ByDedupe
	// ByRateLimit: rate_limit found the key's bucket empty.
	ByRateLimit
	// BySample: sample did not keep the record.
	BySample
	// NumDropReasons is one more than the largest DropReason.
	NumDropReasons
)

var dropReasonNames = [NumDropReasons]string{ByPolicy: "policy", SplitEmpty: "split_empty",
	ByDedupe: "dedupe", ByRateLimit: "rate_limit", BySample: "sample"}

// String is the reason as summaries and metrics spell it.
func (r DropReason) String() string {
	if r < NumDropReasons {
		return dropReasonNames[r]
	}
	return fmt.Sprintf("drop_reason(%d)", r)
}
