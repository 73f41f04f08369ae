package spec

import (
	"testing"
	"time"
)

func TestReasons(t *testing.T) {
	seen := map[string]bool{}
	for r := NoFault + 1; r < NumReasons; r++ {
		name := r.String()
		if name == "" || seen[name] {
			t.Errorf("reason %d is spelled %q", r, name)
		}
		seen[name] = true
		if back, ok := ParseReason(name); !ok || back != r {
			t.Errorf("ParseReason(%q) = %v, %v", name, back, ok)
		}
	}
	if r, ok := ParseReason(""); !ok || r != NoFault {
		t.Errorf("ParseReason(\"\") = %v, %v", r, ok)
	}
	if _, ok := ParseReason("oops"); ok {
		t.Error("ParseReason accepted oops")
	}
}

func TestResult(t *testing.T) {
	tests := []struct {
		r       Result
		s       string
		kept    bool
		faulted bool
	}{
		{Result{}, "keep", true, false},
		{Result{Action: Drop}, "drop", false, false},
		{Result{Fault: TypeMismatch}, "fault (type_mismatch)", true, true},
		{Result{Action: Drop, Fault: LuaError}, "fault (lua_error), dropped", false, true},
	}
	for _, tt := range tests {
		if tt.r.String() != tt.s || tt.r.Kept() != tt.kept || tt.r.Faulted() != tt.faulted {
			t.Errorf("%+v: %q kept=%v faulted=%v", tt.r, tt.r.String(), tt.r.Kept(), tt.r.Faulted())
		}
	}
}

func TestCounts(t *testing.T) {
	var a, b Counts
	for _, r := range []Result{{}, {Action: Drop}, {Fault: TypeMismatch}, {Action: Drop, Fault: TypeMismatch}} {
		a.Add(r)
	}
	b.Add(Result{Fault: IterationLimit})
	a.Merge(&b)
	if a.Runs != 5 || a.Dropped != 2 || a.Faults[TypeMismatch] != 2 || a.Faults[IterationLimit] != 1 || a.Faulted() != 3 {
		t.Errorf("%+v", a)
	}
}

func TestLimits(t *testing.T) {
	if got := (Limits{}).OrDefault(); got != DefaultLimits {
		t.Errorf("zero limits = %+v", got)
	}
	if got := (Limits{MaxString: 5, MaxIterations: -1}).OrDefault(); got.MaxString != 5 || got.MaxRecord != DefaultLimits.MaxRecord || got.MaxIterations != DefaultLimits.MaxIterations {
		t.Errorf("partial limits = %+v", got)
	}
}

func TestClock(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := Options{Clock: FixedClock(at)}
	if !o.Now().Equal(at) {
		t.Errorf("Now = %v", o.Now())
	}
	var wall Options
	if d := time.Since(wall.Now()); d < 0 || d > time.Minute {
		t.Errorf("the wall clock is %v off", d)
	}
}
