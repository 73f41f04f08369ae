package pipeline

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/policyrun/policyrun/pipeline/output"
	"github.com/policyrun/policyrun/pipeline/tail"
	"github.com/policyrun/policyrun/spec"
)

// Stats counts what a run did. Counters are updated once per batch, never
// per record, and may be read from any goroutine.
type Stats struct {
	In, Out, Dropped, Faulted, Unparsed atomic.Int64
	Unrouted                            atomic.Int64 // kept, but no output matched
	BytesIn                             atomic.Int64
	BadCheckpoints, CheckpointErrors    atomic.Int64
	// Reloads and FailedReloads count reloads by result; LastReload is
	// when the last one took effect, UnixNano (0: none yet).
	Reloads, FailedReloads, LastReload atomic.Int64

	// Split counts the records splits added (StageCounts.Added).
	Split atomic.Int64

	mu     sync.Mutex
	faults map[string]int64 // by reason
	drops  map[string]int64 // by spec.DropReason, the policy's own left out
}

func (s *Stats) addStage(c StageCounts) {
	s.Dropped.Add(c.Dropped)
	s.Faulted.Add(c.Faulted)
	s.Split.Add(c.Added)
	if len(c.Faults) == 0 && !c.dropped() {
		return
	}
	s.mu.Lock()
	s.faults = addCounts(s.faults, c.Faults)
	s.drops = addDrops(s.drops, &c.Drops)
	s.mu.Unlock()
}

// dropped reports whether the batch had drops other than the policy's.
func (c *StageCounts) dropped() bool {
	for _, n := range c.Drops {
		if n != 0 {
			return true
		}
	}
	return false
}

// addDrops adds the drops of a batch to m, by reason, made when needed.
func addDrops(m map[string]int64, drops *[spec.NumDropReasons]int64) map[string]int64 {
	for r, n := range drops {
		if n == 0 {
			continue
		}
		if m == nil {
			m = map[string]int64{}
		}
		m[spec.DropReason(r).String()] += n
	}
	return m
}

// addCounts adds the counts of add to m, made when needed.
func addCounts(m, add map[string]int64) map[string]int64 {
	if len(add) == 0 {
		return m
	}
	if m == nil {
		m = map[string]int64{}
	}
	for k, v := range add {
		m[k] += v
	}
	return m
}

// DropsByReason returns a copy of the counts of drops by reason
// (spec.DropReason: split_empty), the policies' own drops left out.
func (s *Stats) DropsByReason() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.drops)
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

// inputStats counts what one input read, and the requests an otlp input
// answered; kept by alias, so that an input a reload restarts counts on.
type inputStats struct {
	in, unparsed, bytes atomic.Int64

	mu     sync.Mutex
	status map[int]int64 // requests by the status they were answered
}

// inputCounters returns the counters of the input alias.
func (p *Pipeline) inputCounters(alias string) *inputStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inputStats == nil {
		p.inputStats = map[string]*inputStats{}
	}
	st := p.inputStats[alias]
	if st == nil {
		st = &inputStats{status: map[int]int64{}}
		p.inputStats[alias] = st
	}
	return st
}

func (st *inputStats) count(status int) {
	st.mu.Lock()
	st.status[status]++
	st.mu.Unlock()
}

// requests returns how many requests were answered with each status.
func (st *inputStats) requests() map[int]int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return maps.Clone(st.status)
}

// stageStats counts what one filter did, and which of its fault messages
// were logged.
type stageStats struct {
	in, dropped, faulted, split atomic.Int64

	mu       sync.Mutex
	faults   map[string]int64 // by reason
	drops    map[string]int64 // by spec.DropReason, the policy's own left out
	logged   map[string]int64 // messages logged, by reason
	nlogged  int
	withheld bool // a message was not logged, and the log said so
}

// addStage counts what stage s did to a batch of n records, and logs the
// first MaxFaultMessages fault messages of the stage: a broken filter
// faults on every record, and its log must stay readable. When one is
// withheld the log says so, once; the end of the run counts the rest
// (logUnloggedFaults).
func (p *Pipeline) addStage(s *stage, n int, c StageCounts) {
	p.stats.addStage(c)
	st := s.stats
	st.in.Add(int64(n))
	st.dropped.Add(c.Dropped)
	st.faulted.Add(c.Faulted)
	st.split.Add(c.Added)
	if len(c.Faults) == 0 && len(c.Messages) == 0 && !c.dropped() {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.drops = addDrops(st.drops, &c.Drops)
	if st.faults == nil {
		st.faults, st.logged = map[string]int64{}, map[string]int64{}
	}
	for k, v := range c.Faults {
		st.faults[k] += v
	}
	for _, m := range c.Messages {
		if st.nlogged < MaxFaultMessages {
			st.nlogged++
			st.logged[m.Reason]++
			p.log.Warn("fault", "filter", s.cfg.Alias, "reason", m.Reason, "err", m.Msg)
			continue
		}
		if !st.withheld {
			st.withheld = true
			p.log.Warn(fmt.Sprintf("%s has logged %d faults; the rest are counted, not logged (the summary and the metrics count them)",
				s.cfg.Alias, MaxFaultMessages), "filter", s.cfg.Alias)
		}
		break
	}
}

// logUnloggedFaults says, for each filter whose fault messages were
// logged, how many of its faults were not, by reason.
func (p *Pipeline) logUnloggedFaults() {
	for _, s := range p.gen.Load().stages {
		st := s.stats
		st.mu.Lock()
		if st.nlogged > 0 {
			for _, reason := range slices.Sorted(maps.Keys(st.faults)) {
				if more := st.faults[reason] - st.logged[reason]; more > 0 {
					p.log.Warn(fmt.Sprintf("… and %d more %s faults in %s (the summary counts them)", more, reason, s.cfg.Alias),
						"filter", s.cfg.Alias, "reason", reason, "more", more)
				}
			}
		}
		st.mu.Unlock()
	}
}

// InputSummary is what one input read.
type InputSummary struct {
	Alias                 string
	In, Unparsed, BytesIn int64
	// Requests counts an otlp input's requests by the HTTP status they
	// were answered with (nil for a tail input).
	Requests map[int]int64
}

// FilterSummary is what one filter did: In is the records it ran on.
type FilterSummary struct {
	Alias                string
	In, Dropped, Faulted int64
	Faults               map[string]int64 // by reason; nil when none
	// Split is the records the filter's splits added: a record split
	// into n adds n-1, so that a filter's out is In + Split - Dropped.
	Split int64
	Drops map[string]int64 // by spec.DropReason; nil when none
	// Stateful is set for a policy with dedupe, rate_limit or sample:
	// StateKeys are the keys its statements hold now, Evictions the keys
	// evicted since the start to make room for others.
	Stateful             bool
	StateKeys, Evictions int64
}

// OutputSummary is what one output wrote (Out: delivered) and, for an
// output with a buffer, how its delivery went (output.Stats).
type OutputSummary struct {
	Alias         string
	Out, BytesOut int64
	output.Stats
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
	// Split is the records splits added (a record split into n adds
	// n-1: out = in + split - dropped - unparsed - unrouted); Drops the
	// drops by spec.DropReason (split_empty), the policies' own drops
	// left out; nil when none.
	Split int64
	Drops map[string]int64
	// The same per input, filter and output, in config order.
	Inputs  []InputSummary
	Filters []FilterSummary
	Outputs []OutputSummary
	// UnmatchedPatterns is how many input path patterns matched no file
	// at their input's last scan.
	UnmatchedPatterns int64
	// Reloads and FailedReloads count the reloads that took effect and
	// those refused (the running config went on). LastReload is when the
	// running config took effect: the last reload that did, or the start
	// of the run before any (zero before Run), as Prometheus's own
	// last_reload_success_timestamp counts its start.
	Reloads, FailedReloads int64
	LastReload             time.Time

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
		Split:    p.stats.Split.Load(),
		Drops:    p.stats.DropsByReason(),
	}
	if start := p.started.Load(); start != 0 {
		end := p.ended.Load()
		if end == 0 {
			end = time.Now().UnixNano()
		}
		s.Wall = time.Duration(end - start)
	}
	for _, o := range p.outputs {
		st := o.out.Stats()
		s.BytesOut += st.Bytes
		s.Outputs = append(s.Outputs, OutputSummary{Alias: o.cfg.Alias, Out: st.Records, BytesOut: st.Bytes, Stats: st})
	}
	for _, st := range p.gen.Load().stages {
		f := FilterSummary{Alias: st.cfg.Alias, In: st.stats.in.Load(), Dropped: st.stats.dropped.Load(), Faulted: st.stats.faulted.Load(),
			Split: st.stats.split.Load()}
		if store := stateOf(st.proc); store != nil {
			ss := store.Stats()
			f.Stateful, f.StateKeys, f.Evictions = true, int64(ss.Keys), int64(ss.Evictions)
		}
		st.stats.mu.Lock()
		if len(st.stats.faults) > 0 {
			f.Faults = maps.Clone(st.stats.faults)
		}
		f.Drops = maps.Clone(st.stats.drops)
		st.stats.mu.Unlock()
		s.Filters = append(s.Filters, f)
	}
	p.mu.Lock()
	order, ts := p.order, p.retiredTail
	p.mu.Unlock()
	for _, ref := range order {
		if in := ref.otlp; in != nil {
			s.Inputs = append(s.Inputs, InputSummary{Alias: in.cfg.Alias, In: in.stats.in.Load(), BytesIn: in.stats.bytes.Load(),
				Requests: in.stats.requests()})
			continue
		}
		in := ref.tail
		s.Inputs = append(s.Inputs, InputSummary{Alias: in.cfg.Alias, In: in.stats.in.Load(),
			Unparsed: in.stats.unparsed.Load(), BytesIn: in.stats.bytes.Load()})
		ts = addTailStats(ts, in.tail.Stats())
	}
	s.TruncatedLines, s.SkippedLines = ts.TruncatedLines, ts.SkippedLines
	s.OpenErrors, s.ReadErrors = ts.OpenErrors, ts.ReadErrors
	s.UnmatchedPatterns = int64(ts.UnmatchedPatterns)
	s.Reloads, s.FailedReloads = p.stats.Reloads.Load(), p.stats.FailedReloads.Load()
	if at := cmp.Or(p.stats.LastReload.Load(), p.started.Load()); at != 0 {
		s.LastReload = time.Unix(0, at)
	}
	s.BadCheckpoints = p.stats.BadCheckpoints.Load()
	s.CheckpointSaves = p.stats.CheckpointErrors.Load()
	s.User, s.System, s.PeakRSS = processUsage()
	return s
}

// addTailStats adds b's counters to a's, and b's gauges (what its last
// scan found) to a's: a's are those of inputs that no longer run, when it
// is Pipeline.retiredTail, whose gauges are 0.
func addTailStats(a, b tail.Stats) tail.Stats {
	a.Files += b.Files
	a.Lines += b.Lines
	a.Bytes += b.Bytes
	a.TruncatedLines += b.TruncatedLines
	a.SkippedLines += b.SkippedLines
	a.Rotations += b.Rotations
	a.Truncations += b.Truncations
	a.OpenErrors += b.OpenErrors
	a.ReadErrors += b.ReadErrors
	a.CheckpointResume += b.CheckpointResume
	a.UnmatchedPatterns += b.UnmatchedPatterns
	return a
}

// Write prints the summary as a few aligned lines.
func (s Summary) Write(w io.Writer) {
	fmt.Fprintf(w, "records: in %d, out %d, dropped %d, faulted %d, unparsed %d",
		s.In, s.Out, s.Dropped, s.Faulted, s.Unparsed)
	if s.Unrouted > 0 {
		fmt.Fprintf(w, ", unrouted %d", s.Unrouted)
	}
	if s.Split > 0 {
		fmt.Fprintf(w, ", split %d", s.Split)
	}
	fmt.Fprintln(w)
	if len(s.Faults) > 0 {
		fmt.Fprintf(w, "faults: %s\n", byReason(s.Faults))
	}
	if len(s.Drops) > 0 {
		fmt.Fprintf(w, "drops: %s\n", byReason(s.Drops))
	}
	for _, in := range s.Inputs {
		if in.Requests != nil {
			fmt.Fprintf(w, "input %s: in %d, bytes %d, requests", in.Alias, in.In, in.BytesIn)
			if len(in.Requests) == 0 {
				fmt.Fprint(w, " none")
			}
			for i, code := range statuses(in.Requests) {
				sep := ","
				if i == 0 {
					sep = ""
				}
				fmt.Fprintf(w, "%s %d: %d", sep, code, in.Requests[code])
			}
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, "input %s: in %d, unparsed %d, bytes %d\n", in.Alias, in.In, in.Unparsed, in.BytesIn)
	}
	for _, f := range s.Filters {
		fmt.Fprintf(w, "filter %s: in %d, dropped %d", f.Alias, f.In, f.Dropped)
		if len(f.Drops) > 0 {
			fmt.Fprintf(w, " (%s)", byReason(f.Drops))
		}
		fmt.Fprintf(w, ", faulted %d", f.Faulted)
		if len(f.Faults) > 0 {
			fmt.Fprintf(w, " (%s)", byReason(f.Faults))
		}
		if f.Split > 0 {
			fmt.Fprintf(w, ", split %d", f.Split)
		}
		if f.Stateful {
			fmt.Fprintf(w, ", state keys %d, evictions %d", f.StateKeys, f.Evictions)
		}
		fmt.Fprintln(w)
	}
	for _, o := range s.Outputs {
		fmt.Fprintf(w, "output %s: out %d, bytes %d", o.Alias, o.Out, o.BytesOut)
		if o.Buffered {
			fmt.Fprintf(w, ", retries %d (%d records), rejected %d, dropped %d, failed %d, lost %d; buffer %d bytes in %d chunks",
				o.Retries, o.RetriedRecords, o.Rejected, o.Dropped, o.Failed, o.Lost, o.BufferBytes, o.BufferChunks)
			if o.Corrupt > 0 {
				fmt.Fprintf(w, ", %d damaged chunks", o.Corrupt)
			}
			if o.DeadLettered > 0 {
				fmt.Fprintf(w, ", dead-lettered %d", o.DeadLettered)
			}
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
	if s.Reloads > 0 || s.FailedReloads > 0 {
		fmt.Fprintf(w, "reloads: ok %d, failed %d\n", s.Reloads, s.FailedReloads)
	}
	fmt.Fprintf(w, "bytes: in %d, out %d\n", s.BytesIn, s.BytesOut)
	fmt.Fprintf(w, "time: wall %.3fs, user %.3fs, sys %.3fs; peak RSS %.1f MiB\n",
		s.Wall.Seconds(), s.User.Seconds(), s.System.Seconds(), float64(s.PeakRSS)/(1<<20))
}

// byReason writes fault counts as "division_by_zero 2, lua_error 1".
func byReason(faults map[string]int64) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(faults)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, faults[k])
	}
	return b.String()
}
