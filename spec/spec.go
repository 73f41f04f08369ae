// Package spec is the contract every backend of the engine is held to: a
// run's Result, the fault Reasons with their one spelling, and a run's
// Options (its clock and Limits).
//
// It imports nothing of ours but package state (itself a leaf), so that the VM, the Lua backend, the
// pipeline, the test runner and embedders all read one definition
// (docs/semantics.md, "Faults"; docs/language.md, "Limits").
package spec

import (
	"fmt"
	"time"

	"github.com/policyrun/policyrun/state"
)

// Action is what happens to a record after a run.
type Action uint8

const (
	Keep Action = iota // the record goes on
	Drop               // the record is dropped
)

func (a Action) String() string {
	if a == Drop {
		return "drop"
	}
	return "keep"
}

// Reason is why a run faulted; NoFault when it did not.
type Reason uint8

const (
	NoFault Reason = iota
	// Faults of a policy, on every backend (docs/semantics.md, "Faults").
	TypeMismatch
	DivisionByZero
	NonFinite
	PathConflict
	StringTooLong
	RecordTooLarge
	IterationLimit
	// OTLPView: an edit left an OTLP record that is not a LogRecord
	// (record.CheckOTLP): a fixed key of another type, an id that is not
	// hex of its length, a key the view does not have.
	OTLPView
	// SplitLimit: split P met an array of more than Limits.MaxSplit
	// elements, or one whose records would hold more than MaxBuilt bytes
	// together (record.Record.Split).
	SplitLimit
	// Faults of a Fluent Bit-style Lua script (docs/lua.md).
	LuaError    // the call raised an error
	BadReturn   // the call returned no valid code and record
	Timeout     // the call ran past its time budget
	MemoryLimit // the call would have made its state hold more than its memory limit
	// NumReasons is one more than the largest Reason, for tables of counts.
	NumReasons
)

var reasonNames = [NumReasons]string{
	NoFault: "", TypeMismatch: "type_mismatch", DivisionByZero: "division_by_zero",
	NonFinite: "non_finite", PathConflict: "path_conflict", StringTooLong: "string_too_long",
	RecordTooLarge: "record_too_large", IterationLimit: "iteration_limit", OTLPView: "otlp_view",
	SplitLimit: "split_limit", LuaError: "lua_error", BadReturn: "bad_return", Timeout: "timeout",
	MemoryLimit: "memory_limit",
}

// String is the reason as logs, summaries, metrics and test blocks spell it.
func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", r)
}

// ParseReason returns the Reason spelled s ("" is NoFault).
func ParseReason(s string) (Reason, bool) {
	for r, name := range reasonNames {
		if name == s {
			return Reason(r), true
		}
	}
	return NoFault, false
}

// Result is the result of one run. After a fault the record is as it came
// in (every edit discarded) and Action says whether it is kept (the
// default) or dropped (on_fault drop).
type Result struct {
	Action Action
	Fault  Reason
	// Why says what dropped a record that was dropped by other than the
	// policy's drop or on_fault drop (ByPolicy, the zero value).
	Why DropReason
}

// Kept reports whether the record goes on.
func (r Result) Kept() bool { return r.Action == Keep }

// Faulted reports whether the run faulted.
func (r Result) Faulted() bool { return r.Fault != NoFault }

func (r Result) String() string {
	switch {
	case r.Fault != NoFault && r.Action == Drop:
		return "fault (" + r.Fault.String() + "), dropped"
	case r.Fault != NoFault:
		return "fault (" + r.Fault.String() + ")"
	case r.Action == Drop && r.Why != ByPolicy:
		return "drop (" + r.Why.String() + ")"
	case r.Action == Drop:
		return "drop"
	}
	return "keep"
}

// Counts tallies results. Whoever runs a program owns its Counts (a
// pipeline stage, a CLI command), so that two users of one program do not
// mix their figures; a Counts is not safe for concurrent use.
type Counts struct {
	Runs, Dropped uint64
	Faults        [NumReasons]uint64 // by Reason; Faults[NoFault] stays 0
	// Drops counts the drops by DropReason; Drops[ByPolicy] stays 0
	// (Dropped less the others).
	Drops [NumDropReasons]uint64
}

// Add counts one result.
func (c *Counts) Add(r Result) {
	c.Runs++
	if r.Action == Drop {
		c.Dropped++
		if r.Why != ByPolicy {
			c.Drops[r.Why]++
		}
	}
	if r.Fault != NoFault {
		c.Faults[r.Fault]++
	}
}

// Merge adds every count of o to c.
func (c *Counts) Merge(o *Counts) {
	c.Runs += o.Runs
	c.Dropped += o.Dropped
	for i := range c.Faults {
		c.Faults[i] += o.Faults[i]
	}
	for i := range c.Drops {
		c.Drops[i] += o.Drops[i]
	}
}

// Faulted is how many runs faulted, for any reason.
func (c *Counts) Faulted() uint64 {
	var n uint64
	for _, f := range c.Faults {
		n += f
	}
	return n
}

// Limits bound what one run may do; exceeding one is a fault. The zero
// value of a field means its default (DefaultLimits).
type Limits struct {
	// MaxString is the longest string a policy may build, in bytes
	// (string_too_long).
	MaxString int
	// MaxRecord is the largest record a policy may leave, encoded as JSON,
	// in bytes (record_too_large).
	MaxRecord int
	// MaxIterations is how many elements the for loops of one run may
	// visit, all loops together (iteration_limit). A loop is bounded by its
	// data, but loops nested n deep cost the data's size to the n-th power:
	// this keeps one record from stalling a pipeline, as Lua filters need a
	// time budget for.
	MaxIterations int
	// MaxSplit is how many records one split P may make of a record
	// (split_limit): a record's array of more elements faults, and the
	// record goes on unchanged.
	MaxSplit int
}

// DefaultLimits are the limits of a run unless the embedder sets others.
// MaxSplitMeaning says what Limits.MaxSplit bounds, for the configs
// that set it.
const MaxSplitMeaning = "the most records a split may make of one"

var DefaultLimits = Limits{MaxString: 1 << 20, MaxRecord: 16 << 20, MaxIterations: 1 << 20, MaxSplit: 1000}

// OrDefault returns l with every zero field set to its default.
func (l Limits) OrDefault() Limits {
	if l.MaxString <= 0 {
		l.MaxString = DefaultLimits.MaxString
	}
	if l.MaxRecord <= 0 {
		l.MaxRecord = DefaultLimits.MaxRecord
	}
	if l.MaxIterations <= 0 {
		l.MaxIterations = DefaultLimits.MaxIterations
	}
	if l.MaxSplit <= 0 {
		l.MaxSplit = DefaultLimits.MaxSplit
	}
	return l
}

// Clock gives now() its value.
type Clock func() time.Time

// FixedClock is a Clock that always says t (tests, replays).
func FixedClock(t time.Time) Clock { return func() time.Time { return t } }

// Batch is what the runs of one batch share: the time that now() and the
// stateful statements see, read from the clock when the first run of the
// batch needs it and the same for every record after (docs/language.md,
// "State"). The records of a batch arrive microseconds apart, and reading
// the clock costs as much as a lookup in a dedupe's table (50 ns on a
// VM's kvm-clock): once a batch, it costs nothing a record. The zero
// value is a new batch; a run given none is a batch of its own.
type Batch struct {
	now  int64
	read bool
}

// Now is the batch's time in unix nanoseconds, read from o's clock the
// first time.
func (b *Batch) Now(o *Options) int64 {
	if !b.read {
		b.now, b.read = o.Now().UnixNano(), true
	}
	return b.now
}

// MaxElements is the most elements an array that a + b or append builds
// may have under lim: more could never be stored in a record (every
// element takes at least two bytes of JSON), and building them is
// record_too_large, so that doubling an array in a loop faults rather than
// exhausts memory.
func MaxElements(lim Limits) int { return lim.OrDefault().MaxRecord / 2 }

// MaxBuilt is the most bytes of values one run may build under lim, all
// of them together: four records' worth and a mebibyte (memory_limit;
// the mebibyte keeps a small MaxRecord from refusing the few values any
// run builds, which the Lua backend counts with its tables' overhead). A
// run's values stay in memory until its batch ends, garbage or not, and
// each step of rebuilding a value in a loop (set .acc = .acc + .items)
// makes a new copy: without a bound on the sum, a policy within every
// other limit could exhaust memory with one record.
func MaxBuilt(lim Limits) int { return 4*lim.OrDefault().MaxRecord + 1<<20 }

// Random is the source of the random bits of uuid_v4 and uuid_v7: it
// fills b with the bytes of a run's n-th call of either (n counts from 0
// in each run, in the order the policy makes them). Tests fix it, as they
// fix the clock, so that every backend gives the same UUIDs.
type Random func(n int, b *[16]byte)

// SeededRandom is a Random whose bytes depend on seed and n alone: the
// same on every backend and in every run.
func SeededRandom(seed uint64) Random {
	return func(n int, b *[16]byte) {
		x := seed ^ uint64(n)*0x9E3779B97F4A7C15
		for i := 0; i < 16; i += 8 {
			// SplitMix64.
			x += 0x9E3779B97F4A7C15
			z := x
			z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
			z = (z ^ z>>27) * 0x94D049BB133111EB
			z ^= z >> 31
			for j := range 8 {
				b[i+j] = byte(z >> (8 * j))
			}
		}
	}
}

// Options are how a program runs on any backend: its clock, its source of
// randomness, its limits and its parameters' values. The zero value is the
// wall clock, random bits from a generator seeded from crypto/rand,
// DefaultLimits, and no parameter given.
type Options struct {
	Clock  Clock  // nil: the wall clock, read once per batch (Batch)
	Random Random // nil: a ChaCha8 generator per machine, seeded from crypto/rand
	Limits Limits
	// Params are checked and folded in when the policy is compiled: a
	// parameter is a constant for the whole run.
	Params Params
	// State holds the memory of the policy's dedupe, rate_limit and
	// sample statements: a pipeline stage's, kept across reloads and
	// restarts. Nil gives each loaded program a fresh one.
	State *state.Store
}

// Params are the values given to a policy's parameters, by name.
type Params map[string]Param

// Param is the value given to one parameter and where it was given.
type Param struct {
	// Value is the value as encoding/json or a YAML decoder gives it: nil,
	// bool, a number (int, int64, uint64, float64, json.Number), string,
	// []any, map[string]any.
	Value any
	// Raw says Value is a string as written on a command line: the value
	// itself for a parameter of type string, JSON for any other type, so
	// that --param env=prod needs no quotes.
	Raw bool
	// Where says where the value was given, for errors: "pipeline.yaml
	// line 12", "--param env".
	Where string
}

// Now returns the time now() gives in a run that starts now.
func (o *Options) Now() time.Time {
	if o.Clock != nil {
		return o.Clock()
	}
	return time.Now()
}
