package strftime

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
	_ "time/tzdata" // zone names check and work the same on hosts without a tz database, and in wasm
)

// zones caches the locations Zone has loaded: an immutable map, replaced
// whole when a zone is added, so that the backends' lookups take no lock
// and allocate nothing.
var (
	zones   atomic.Pointer[map[string]*time.Location]
	zonesMu sync.Mutex
)

// Zone returns the location of an IANA time zone name ("UTC",
// "Europe/Paris", "America/New_York"), from the host's tz database or,
// where it has none or lacks the name, from the copy linked into the
// program (time/tzdata). Names are case-sensitive. "Local" and "" are
// refused: what they mean depends on the host.
func Zone(name string) (*time.Location, error) {
	if name == "UTC" {
		return time.UTC, nil
	}
	if m := zones.Load(); m != nil {
		if loc, ok := (*m)[name]; ok {
			return loc, nil
		}
	}
	if name == "" || name == "Local" {
		return nil, errors.New("the zone must be named: what Local means depends on the host")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, errors.New("no time zone has this name")
	}
	zonesMu.Lock()
	defer zonesMu.Unlock()
	next := map[string]*time.Location{name: loc}
	if m := zones.Load(); m != nil {
		for k, v := range *m {
			next[k] = v
		}
	}
	zones.Store(&next)
	return loc, nil
}
