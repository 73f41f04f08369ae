package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"time"
)

// ServeMetrics serves the run's counters in the Prometheus text format at
// /metrics on addr: a loopback address or localhost (the endpoint has no
// authentication; localhost binds only a loopback address it resolves to),
// or another IP address written out, as config.SplitMetricsAddr says. It
// returns once the listener is up; the server stops when ctx is done.
func (p *Pipeline) ServeMetrics(ctx context.Context, addr string) (net.Addr, error) {
	listen, err := p.metricsListenAddr(ctx, addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		p.WriteMetrics(w)
	})
	p.healthHandlers(mux)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.log.Warn("metrics server stopped", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	return ln.Addr(), nil
}

// WriteMetrics writes the counters in the Prometheus text format.
func (p *Pipeline) WriteMetrics(w io.Writer) {
	s := p.Summary()
	counter := func(name, help string, v int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
	}
	counter("policyrun_records_in_total", "Records read and parsed.", s.In)
	counter("policyrun_records_out_total", "Records handed to the outputs.", s.Out)
	counter("policyrun_records_dropped_total", "Records dropped by policies.", s.Dropped)
	counter("policyrun_records_faulted_total", "Records on which a policy faulted.", s.Faulted)
	counter("policyrun_records_unparsed_total", "Lines that did not parse, passed on raw.", s.Unparsed)
	counter("policyrun_records_unrouted_total", "Records kept by the policies whose tag no output matches.", s.Unrouted)
	counter("policyrun_records_split_total", "Records added by splits: a record split into n adds n-1.", s.Split)
	counter("policyrun_lines_truncated_total", "Lines over max_line_size, cut to it.", s.TruncatedLines)
	counter("policyrun_lines_skipped_total", "Lines over max_line_size, skipped (skip_long_lines).", s.SkippedLines)
	counter("policyrun_file_open_errors_total", "Failed attempts to open a matched file.", s.OpenErrors)
	counter("policyrun_file_read_errors_total", "Failed reads of an open file.", s.ReadErrors)
	counter("policyrun_checkpoint_errors_total", "Checkpoints that could not be read or saved.", s.BadCheckpoints+s.CheckpointSaves)
	counter("policyrun_bytes_in_total", "Bytes of lines read.", s.BytesIn)
	counter("policyrun_bytes_out_total", "Bytes written by outputs.", s.BytesOut)
	fmt.Fprintf(w, "# HELP policyrun_reloads_total Reloads of the config (SIGHUP, service.watch), by result: ok, or failed (the running config went on).\n# TYPE policyrun_reloads_total counter\n")
	fmt.Fprintf(w, "policyrun_reloads_total{result=\"ok\"} %d\npolicyrun_reloads_total{result=\"failed\"} %d\n", s.Reloads, s.FailedReloads)
	if !s.LastReload.IsZero() {
		fmt.Fprintf(w, "# HELP policyrun_last_reload_timestamp_seconds When the running config took effect: its reload, or the start of the run.\n# TYPE policyrun_last_reload_timestamp_seconds gauge\npolicyrun_last_reload_timestamp_seconds %.3f\n",
			float64(s.LastReload.UnixNano())/1e9)
	}
	fmt.Fprintf(w, "# HELP policyrun_tail_patterns_unmatched Input path patterns that matched no file at the last scan.\n# TYPE policyrun_tail_patterns_unmatched gauge\npolicyrun_tail_patterns_unmatched %d\n", s.UnmatchedPatterns)
	fmt.Fprintf(w, "# HELP process_cpu_seconds_total User and system CPU time (getrusage).\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %g\n",
		(s.User + s.System).Seconds())
	fmt.Fprintf(w, "# HELP policyrun_peak_rss_bytes Peak resident memory (getrusage).\n# TYPE policyrun_peak_rss_bytes gauge\npolicyrun_peak_rss_bytes %d\n", s.PeakRSS)
	writeReasons(w, "policyrun_faults_total", "Policy faults by reason.", s.Faults)
	writeReasons(w, "policyrun_drops_total", "Records dropped by a statement of their own accord (split_empty, dedupe, rate_limit, sample), by reason; the policies' drop statements are not counted here.", s.Drops)

	// The same per input, filter and output.
	writeFamilies(w, s.Inputs, func(in *InputSummary) string { return in.Alias }, []family[InputSummary]{
		{"policyrun_input_records_in_total", "Records read and parsed, by input.", func(in *InputSummary) int64 { return in.In }},
		{"policyrun_input_records_unparsed_total", "Lines that did not parse, passed on raw, by input.", func(in *InputSummary) int64 { return in.Unparsed }},
		{"policyrun_input_bytes_in_total", "Bytes of lines read, by input.", func(in *InputSummary) int64 { return in.BytesIn }},
	})
	wroteReq := false
	for _, in := range s.Inputs {
		for _, code := range statuses(in.Requests) {
			if !wroteReq {
				wroteReq = true
				fmt.Fprintf(w, "# HELP policyrun_input_requests_total Requests to an otlp input, by the HTTP status of their answer.\n# TYPE policyrun_input_requests_total counter\n")
			}
			fmt.Fprintf(w, "policyrun_input_requests_total{name=%q,code=\"%d\"} %d\n", in.Alias, code, in.Requests[code])
		}
	}
	writeFamilies(w, s.Filters, func(f *FilterSummary) string { return f.Alias }, []family[FilterSummary]{
		{"policyrun_filter_records_in_total", "Records a filter ran on.", func(f *FilterSummary) int64 { return f.In }},
		{"policyrun_filter_records_dropped_total", "Records dropped, by filter.", func(f *FilterSummary) int64 { return f.Dropped }},
		{"policyrun_filter_records_faulted_total", "Records on which a filter faulted.", func(f *FilterSummary) int64 { return f.Faulted }},
		{"policyrun_filter_records_split_total", "Records a filter's splits added.", func(f *FilterSummary) int64 { return f.Split }},
	})
	writeByReason(w, s.Filters, "policyrun_filter_drops_total", "Records dropped by a statement of their own accord (split_empty, dedupe, rate_limit, sample), by filter and reason.",
		func(f *FilterSummary) map[string]int64 { return f.Drops })
	stateful := only(s.Filters, func(f *FilterSummary) bool { return f.Stateful })
	writeFamilies(w, stateful, func(f *FilterSummary) string { return f.Alias }, []family[FilterSummary]{
		{"policyrun_filter_state_evictions_total", "Keys of dedupe and rate_limit evicted to make room for others (max_keys), by filter.", func(f *FilterSummary) int64 { return f.Evictions }},
	})
	writeTyped(w, "gauge", stateful, func(f *FilterSummary) string { return f.Alias }, []family[FilterSummary]{
		{"policyrun_filter_state_keys", "Keys the dedupe and rate_limit statements of a filter hold.", func(f *FilterSummary) int64 { return f.StateKeys }},
	})
	writeByReason(w, s.Filters, "policyrun_filter_faults_total", "Faults by filter and reason.",
		func(f *FilterSummary) map[string]int64 { return f.Faults })
	writeFamilies(w, s.Outputs, func(o *OutputSummary) string { return o.Alias }, []family[OutputSummary]{
		{"policyrun_output_records_out_total", "Records written or delivered, by output.", func(o *OutputSummary) int64 { return o.Out }},
		{"policyrun_output_bytes_out_total", "Bytes written or sent, by output.", func(o *OutputSummary) int64 { return o.BytesOut }},
	})
	buffered := only(s.Outputs, func(o *OutputSummary) bool { return o.Buffered })
	writeFamilies(w, buffered, func(o *OutputSummary) string { return o.Alias }, []family[OutputSummary]{
		{"policyrun_output_retries_total", "Sends that failed and were tried again, by output.", func(o *OutputSummary) int64 { return o.Retries }},
		{"policyrun_output_records_retried_total", "Records in sends that failed and were tried again (each time), by output.", func(o *OutputSummary) int64 { return o.RetriedRecords }},
		{"policyrun_output_records_rejected_total", "Records the receiver refused (not retried), by output.", func(o *OutputSummary) int64 { return o.Rejected }},
		{"policyrun_output_records_dropped_total", "Records dropped by a full buffer under when_full: drop_newest, by output.", func(o *OutputSummary) int64 { return o.Dropped }},
		{"policyrun_output_records_failed_total", "Records whose retries ran out (retry.max_elapsed), by output.", func(o *OutputSummary) int64 { return o.Failed }},
		{"policyrun_output_records_dead_lettered_total", "Records kept in the dead-letter directory (refused for good, or retries run out), by output.", func(o *OutputSummary) int64 { return o.DeadLettered }},
		{"policyrun_output_records_lost_total", "Records still in a memory buffer when the output stopped, by output.", func(o *OutputSummary) int64 { return o.Lost }},
		{"policyrun_output_buffer_corrupt_chunks_total", "Damaged chunk files found in a filesystem buffer, by output.", func(o *OutputSummary) int64 { return o.Corrupt }},
	})
	writeTyped(w, "gauge", buffered, func(o *OutputSummary) string { return o.Alias }, []family[OutputSummary]{
		{"policyrun_output_buffer_bytes", "Bytes an output's buffer holds.", func(o *OutputSummary) int64 { return o.BufferBytes }},
		{"policyrun_output_buffer_chunks", "Chunks an output's buffer holds.", func(o *OutputSummary) int64 { return o.BufferChunks }},
	})
}

// only is the items keep holds for: the ones a family of state or buffer
// counters has samples of.
func only[T any](items []T, keep func(*T) bool) []T {
	var out []T
	for i := range items {
		if keep(&items[i]) {
			out = append(out, items[i])
		}
	}
	return out
}

// family is a counter of each input, filter or output (T's summary): the
// total's name with input_, filter_ or output_ after policyrun_.
type family[T any] struct {
	name, help string
	value      func(*T) int64
}

// writeFamilies writes each family with a sample per item, labelled with
// the item's alias as name (aliases need no escaping: config allows
// letters, digits and _ . - only); nothing when there are no items.
func writeFamilies[T any](w io.Writer, items []T, alias func(*T) string, fams []family[T]) {
	writeTyped(w, "counter", items, alias, fams)
}

// writeTyped is writeFamilies for families of another type (gauge).
func writeTyped[T any](w io.Writer, typ string, items []T, alias func(*T) string, fams []family[T]) {
	if len(items) == 0 {
		return
	}
	for _, fam := range fams {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", fam.name, fam.help, fam.name, typ)
		for i := range items {
			fmt.Fprintf(w, "%s{name=%q} %d\n", fam.name, alias(&items[i]), fam.value(&items[i]))
		}
	}
}

// writeReasons writes a counter family with a sample per reason of
// counts, labelled reason; nothing when there are none.
func writeReasons(w io.Writer, name, help string, counts map[string]int64) {
	if len(counts) == 0 {
		return
	}
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(w, "%s{reason=%q} %d\n", name, k, counts[k])
	}
}

// writeByReason writes a counter family with a sample per filter and
// reason, labelled name and reason; nothing when no filter has any.
func writeByReason(w io.Writer, items []FilterSummary, name, help string, counts func(*FilterSummary) map[string]int64) {
	wroteHead := false
	for i := range items {
		m := counts(&items[i])
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !wroteHead {
				wroteHead = true
				fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
			}
			fmt.Fprintf(w, "%s{name=%q,reason=%q} %d\n", name, items[i].Alias, k, m[k])
		}
	}
}
