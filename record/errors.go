package record

import (
	"errors"
	"strconv"
)

// Causes of decode errors; a *DecodeError wraps one of them, so callers can
// test with errors.Is.
var (
	ErrSyntax      = errors.New("syntax error")
	ErrTruncated   = errors.New("unexpected end of input")
	ErrInvalidUTF8 = errors.New("invalid UTF-8")
	ErrNumberRange = errors.New("number out of range")
	ErrDepth       = errors.New("nesting too deep")
	ErrTooLarge    = errors.New("input too large")
	ErrNotMap      = errors.New("record is not a map")
	ErrKeyType     = errors.New("map key is not a string")
	ErrTrailing    = errors.New("data after the value")
)

// Causes of edit errors, returned as they are.
var (
	ErrNotContainer = errors.New("path goes through a value that is not a map or array")
	ErrIndexRange   = errors.New("array index out of range")
	ErrNotLiftable  = errors.New("lift needs a map with a map parent")
	ErrRootType     = errors.New("the record root must be a map")
)

// DecodeError reports malformed input: what was wrong (Err, one of the
// causes above) and where (Offset, in bytes from the start of the input).
type DecodeError struct {
	Offset int
	Err    error
	Detail string
}

func (e *DecodeError) Error() string {
	s := "record: " + e.Err.Error() + " at byte " + strconv.Itoa(e.Offset)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *DecodeError) Unwrap() error { return e.Err }

func decodeErr(off int, err error, detail string) error {
	return &DecodeError{Offset: off, Err: err, Detail: detail}
}

// depthErr is the error for a container at off that would nest deeper
// than maxDepth levels, the same in every decoder.
func depthErr(off, maxDepth int) error {
	return decodeErr(off, ErrDepth, "more than "+strconv.Itoa(maxDepth)+" levels")
}

// Causes of OTLP decode errors (besides the ones above).
var (
	ErrWireType = errors.New("wrong protobuf wire type")
	ErrIDLength = errors.New("trace or span id of the wrong length")
	// ErrFieldType is an OTLP/JSON field holding a JSON value its type
	// does not take (a number for a string, "abc" for an integer, …).
	ErrFieldType = errors.New("OTLP field of the wrong type")
	// ErrTooManyRecords is a request past Limits.MaxRecords.
	ErrTooManyRecords = errors.New("too many records")
)
