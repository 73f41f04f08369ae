package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"

	"github.com/policyrun/policyrun/pipeline"
	"github.com/policyrun/policyrun/pipeline/config"
)

func runCommand(fl *flag.FlagSet) runFunc {
	checkOnly := fl.Bool("check", false, "validate the config and compile its policies, then exit")
	quiet := fl.Bool("quiet", false, "do not print the run summary")
	cpuProfile := fl.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	return func(c *call) int {
		// SIGINT and SIGTERM end the run cleanly: the batch in hand is
		// delivered, checkpoints are saved, the outputs get service.grace to
		// deliver, the summary is printed. They are caught from here on, so
		// that a signal while the pipeline starts ends it as cleanly. A
		// second signal, while the drain waits on a blocked output, kills
		// the process as usual: nothing acknowledged is lost. Both are read
		// from one channel with room for two, so that a second signal sent
		// before the first is handled (a busy machine) is not lost.
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		sigs, finished := make(chan os.Signal, 2), make(chan struct{})
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sigs)
		defer close(finished)
		// SIGHUP reloads the config (reloadOnHUP). It is caught from here on
		// too, so that one sent while the pipeline starts does not end the
		// process (its default action): it is held, and acted on once the
		// pipeline is built. SIGHUPs that come during a reload are folded
		// into one more (the channel holds one).
		hups := make(chan os.Signal, 1)
		signal.Notify(hups, syscall.SIGHUP)
		defer signal.Stop(hups)
		go func() {
			select {
			case <-sigs:
			case <-finished:
				return
			}
			stop()
			var sig os.Signal
			select {
			case sig = <-sigs:
			case <-finished:
				return
			}
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			if self, err := os.FindProcess(os.Getpid()); err == nil {
				self.Signal(sig) // the default action: the process ends
			}
		}()
		cfg, err := config.Load(fl.Arg(0))
		if err != nil {
			fmt.Fprintln(c.stderr, err)
			var list config.ErrorList
			if errors.As(err, &list) {
				return 1
			}
			return 2
		}
		if n := cfg.Service.Threads; n > 0 && !*checkOnly {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
		}
		// A reload says so on stderr as the run's other news does; its
		// errors are logged by the pipeline. (Reloads take turns, and end
		// before the summary is written.)
		onReload := func(err error) {
			if err == nil {
				fmt.Fprintf(c.stderr, "%s: reloaded\n", fl.Arg(0))
			}
		}
		p, err := pipeline.New(cfg, pipeline.Options{Stdout: c.stdout, Check: *checkOnly, OnReload: onReload})
		if err != nil {
			fmt.Fprintln(c.stderr, err)
			return 1
		}
		if *checkOnly {
			// The policies' warnings, as policyrun check prints them; they do
			// not fail the check.
			warns := 0
			for _, w := range p.Warnings() {
				c.stderr.Write(w.Text)
				fmt.Fprintln(c.stderr)
				warns += w.N
			}
			p.Close()
			fmt.Fprintf(c.stderr, "%s: ok (%d inputs, %d filters, %d outputs)", fl.Arg(0), len(cfg.Inputs), len(cfg.Filters), len(cfg.Outputs))
			if warns > 0 {
				fmt.Fprintf(c.stderr, ", %s", plural(warns, "warning"))
			}
			fmt.Fprintln(c.stderr)
			return 0
		}
		if cfg.Service.Metrics != "" {
			addr, err := p.ServeMetrics(ctx, cfg.Service.Metrics)
			if err != nil {
				fmt.Fprintln(c.stderr, "metrics:", err)
				p.Close()
				return 2
			}
			fmt.Fprintf(c.stderr, "metrics at http://%s/metrics\n", addr)
		}
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				fmt.Fprintln(c.stderr, "cpuprofile:", err)
				p.Close()
				return 2
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				fmt.Fprintln(c.stderr, "cpuprofile:", err)
				p.Close()
				return 2
			}
			defer pprof.StopCPUProfile()
		}
		ran := make(chan struct{})
		reloaded := reloadOnHUP(p, hups, ran)
		runErr := p.Run(ctx)
		close(ran)
		<-reloaded // a reload under way ends first
		closeErr := p.Close()
		if !*quiet {
			p.Summary().Write(c.stderr)
		}
		if err := errors.Join(runErr, closeErr); err != nil {
			fmt.Fprintln(c.stderr, "policyrun run:", err)
			return 2
		}
		return 0
	}
}

// reloadOnHUP reloads p at each SIGHUP of hups until ran is closed; the
// channel it returns is closed once it has stopped.
func reloadOnHUP(p *pipeline.Pipeline, hups <-chan os.Signal, ran <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-hups:
				p.Reload() // its errors are logged
			case <-ran:
				return
			}
		}
	}()
	return done
}
