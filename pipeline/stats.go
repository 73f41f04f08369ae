package pipeline

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Stats counts what a run did. Counters are updated once per batch, never
// per record, and may be read from any goroutine.
type Stats struct {
	In, Out, Dropped, Faulted, Unparsed atomic.Int64
	Unrouted                            atomic.Int64 // kept, but no output matched
	BytesIn                             atomic.Int64
	BadCheckpoints, CheckpointErrors    atomic.Int64

	mu     sync.Mutex
	faults map[string]int64 // by reason
}

func (s *Stats) addStage(c StageCounts) {
	s.Dropped.Add(c.Dropped)
	s.Faulted.Add(c.Faulted)
	if len(c.Faults) == 0 {
		return
	}
	s.mu.Lock()
	if s.faults == nil {
		s.faults = map[string]int64{}
	}
	for k, v := range c.Faults {
		s.faults[k] += v
	}
	s.mu.Unlock()
}

// FaultsByReason returns a copy of the fault counts.
func (s *Stats) FaultsByReason() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]int64, len(s.faults))
	for k, v := range s.faults {
		m[k] = v
	}
	return m
}

// Summary is the end-of-run report.
type Summary struct {
	In, Out, Dropped, Faulted, Unparsed int64
	// Unrouted records were kept by the stages but matched no output.
	Unrouted          int64
	BytesIn, BytesOut int64
	// Lines over max_line_size: cut to it, or skipped (skip_long_lines).
	TruncatedLines, SkippedLines int64
	// Files that could not be opened or read (each is also logged), and
	// checkpoints that could not be read or saved.
	OpenErrors, ReadErrors          int64
	BadCheckpoints, CheckpointSaves int64
	Faults                          map[string]int64
	// UnmatchedPatterns is how many input path patterns matched no file
	// at their input's last scan.
	UnmatchedPatterns  int64
	Wall, User, System time.Duration
	PeakRSS            int64 // bytes
}

// Summary gathers the run's counters and the process's CPU time and peak
// resident memory (getrusage).
func (p *Pipeline) Summary() Summary {
	s := Summary{
		In:       p.stats.In.Load(),
		Out:      p.stats.Out.Load(),
		Dropped:  p.stats.Dropped.Load(),
		Faulted:  p.stats.Faulted.Load(),
		Unparsed: p.stats.Unparsed.Load(),
		Unrouted: p.stats.Unrouted.Load(),
		BytesIn:  p.stats.BytesIn.Load(),
		Faults:   p.stats.FaultsByReason(),
	}
	if start := p.started.Load(); start != 0 {
		end := p.ended.Load()
		if end == 0 {
			end = time.Now().UnixNano()
		}
		s.Wall = time.Duration(end - start)
	}
	for _, o := range p.outputs {
		_, b := o.out.Stats()
		s.BytesOut += b
	}
	for _, in := range p.inputs {
		ts := in.tail.Stats()
		s.TruncatedLines += ts.TruncatedLines
		s.SkippedLines += ts.SkippedLines
		s.OpenErrors += ts.OpenErrors
		s.ReadErrors += ts.ReadErrors
		s.UnmatchedPatterns += int64(ts.UnmatchedPatterns)
	}
	s.BadCheckpoints = p.stats.BadCheckpoints.Load()
	s.CheckpointSaves = p.stats.CheckpointErrors.Load()
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.User = time.Duration(ru.Utime.Nano())
		s.System = time.Duration(ru.Stime.Nano())
		s.PeakRSS = ru.Maxrss * 1024 // Linux reports KiB
	}
	return s
}

// Write prints the summary as a few aligned lines.
func (s Summary) Write(w io.Writer) {
	fmt.Fprintf(w, "records: in %d, out %d, dropped %d, faulted %d, unparsed %d",
		s.In, s.Out, s.Dropped, s.Faulted, s.Unparsed)
	if s.Unrouted > 0 {
		fmt.Fprintf(w, ", unrouted %d", s.Unrouted)
	}
	fmt.Fprintln(w)
	if len(s.Faults) > 0 {
		reasons := make([]string, 0, len(s.Faults))
		for k := range s.Faults {
			reasons = append(reasons, k)
		}
		sort.Strings(reasons)
		fmt.Fprint(w, "faults:")
		for i, k := range reasons {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(w, "%s %s %d", sep, k, s.Faults[k])
		}
		fmt.Fprintln(w)
	}
	if s.TruncatedLines > 0 || s.SkippedLines > 0 {
		fmt.Fprintf(w, "long lines: truncated %d, skipped %d\n", s.TruncatedLines, s.SkippedLines)
	}
	if s.OpenErrors > 0 || s.ReadErrors > 0 {
		fmt.Fprintf(w, "file errors: open %d, read %d\n", s.OpenErrors, s.ReadErrors)
	}
	if s.BadCheckpoints > 0 || s.CheckpointSaves > 0 {
		fmt.Fprintf(w, "checkpoint errors: unreadable %d, not saved %d\n", s.BadCheckpoints, s.CheckpointSaves)
	}
	fmt.Fprintf(w, "bytes: in %d, out %d\n", s.BytesIn, s.BytesOut)
	fmt.Fprintf(w, "time: wall %.3fs, user %.3fs, sys %.3fs; peak RSS %.1f MiB\n",
		s.Wall.Seconds(), s.User.Seconds(), s.System.Seconds(), float64(s.PeakRSS)/(1<<20))
}
