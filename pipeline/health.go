package pipeline

import (
	"fmt"
	"net/http"
	"strings"
)

// Health for the kubelet's probes, on the metrics listener: /healthz says
// the process serves, /readyz that the pipeline takes records.

// Ready reports whether the pipeline takes records: it runs (its inputs
// and outputs started, not stopping), no output's buffer is full, and no
// checkpoint save has failed. When it does not, the reasons say why.
func (p *Pipeline) Ready() (bool, []string) {
	var why []string
	switch {
	case p.started.Load() == 0:
		why = append(why, "not started")
	case p.ended.Load() != 0:
		why = append(why, "stopped")
	case p.stopping.Load():
		why = append(why, "stopping")
	}
	for _, o := range p.outputs {
		if o.out.Stats().BufferFull {
			why = append(why, fmt.Sprintf("output %s: its buffer is full", o.cfg.Alias))
		}
	}
	if n := p.stats.CheckpointErrors.Load(); n > 0 {
		why = append(why, fmt.Sprintf("%d checkpoint saves failed", n))
	}
	return len(why) == 0, why
}

// healthHandlers adds /healthz and /readyz to mux.
func (p *Pipeline) healthHandlers(mux *http.ServeMux) {
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if ok, why := p.Ready(); !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, strings.Join(why, "\n"))
			return
		}
		fmt.Fprintln(w, "ready")
	})
}
