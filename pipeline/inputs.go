package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/policyrun/policyrun/pipeline/checkpoint"
	"github.com/policyrun/policyrun/pipeline/config"
)

// The inputs as they run: each in a goroutine of its own, under a context
// of its own (a child of the run's), so that a reload can stop one and
// start another while the rest read on.

// inputRef is one input of either kind and, while it runs, how to stop
// it.
type inputRef struct {
	tail *input
	otlp *otlpInput

	cancel context.CancelFunc // ends its run; nil when it has not run
	done   chan struct{}      // closed once its run has returned
}

// runState is how the run of the inputs stands (guarded by Pipeline.mu).
type runState struct {
	ctx    context.Context    // the run's; nil before Run
	cancel context.CancelFunc // ends the whole run
	live   int                // inputs running
	// held counts the reloads that are replacing inputs: the run does
	// not end while one has stopped an input and not yet started its
	// successor.
	held  int
	ended bool // the run saw every input end: nothing more starts
	errs  []error
	idle  sync.Cond // broadcast when live or held falls
}

func (r *inputRef) config() config.Input {
	if r.otlp != nil {
		return r.otlp.cfg
	}
	return r.tail.cfg
}

func (r *inputRef) close() error {
	if r.otlp != nil {
		return r.otlp.close()
	}
	return r.tail.tail.Close()
}

// newInputRef builds the input ic of cfg; a tail input without a
// checkpoint of its own resumes from carry when it is not nil.
func (p *Pipeline) newInputRef(cfg *config.Config, ic config.Input, carry *checkpoint.Checkpoint) (*inputRef, error) {
	if ic.Name == "otlp" {
		in, err := p.newOTLPInput(cfg, ic, nil)
		if err != nil {
			return nil, err
		}
		return &inputRef{otlp: in}, nil
	}
	in, err := p.newInput(cfg, ic, carry)
	if err != nil {
		return nil, err
	}
	return &inputRef{tail: in}, nil
}

// runInputs runs every input until all have returned (ctx ended, or every
// input ended with exit_on_eof), and returns their errors. An input that
// fails ends the run (cancel): the others deliver the batch in hand and
// stop too, rather than read on while part of the pipeline is dead.
func (p *Pipeline) runInputs(ctx context.Context, cancel context.CancelFunc) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runs.ctx, p.runs.cancel = ctx, cancel
	p.gen.Load().bind(ctx)
	for _, in := range p.order {
		p.startLocked(in)
	}
	for p.runs.live > 0 || p.runs.held > 0 {
		p.runs.idle.Wait()
	}
	p.runs.ended = true
	return errors.Join(p.runs.errs...)
}

// startLocked starts in, with p.mu held, unless the run is stopping.
func (p *Pipeline) startLocked(in *inputRef) {
	if p.runs.ctx == nil || p.runs.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(p.runs.ctx)
	in.cancel, in.done = cancel, make(chan struct{})
	p.runs.live++
	go func() {
		var err error
		if in.otlp != nil {
			err = in.otlp.run(ctx)
		} else {
			err = p.runInput(ctx, in.tail)
		}
		cancel()
		p.mu.Lock()
		if err != nil {
			p.runs.errs = append(p.runs.errs, err)
			p.runs.cancel()
		}
		p.runs.live--
		p.runs.idle.Broadcast()
		p.mu.Unlock()
		close(in.done)
	}()
}

// stop stops in as a stop of the run does (the batch in hand delivered,
// the checkpoint saved; an otlp input's requests in hand answered), waits
// for it, and closes it.
func (p *Pipeline) stop(in *inputRef) error {
	if in.cancel != nil {
		in.cancel()
		<-in.done
	}
	if in.tail != nil {
		ts := in.tail.tail.Stats()
		ts.Files, ts.UnmatchedPatterns = 0, 0 // what it found: it no longer looks
		p.mu.Lock()
		p.retiredTail = addTailStats(p.retiredTail, ts)
		p.mu.Unlock()
	}
	return in.close()
}

// position is where a tail input restarted by a reload resumes when it
// has no checkpoint file of its own: where this one stood, or nil when it
// had neither resumed nor committed (a fresh start, as read_from_head
// says).
func (in *input) position() *checkpoint.Checkpoint {
	if !in.resumed && !in.committed {
		return nil
	}
	return in.tail.Checkpoint()
}

// inputChange is an input a reload starts, stops or restarts.
type inputChange struct {
	alias string
	old   *inputRef     // running; nil for an added input
	new   *config.Input // nil for a removed input
	why   string        // for the log: "path changed", "added"
}

// replaceInputs makes g the running generation and replaces the inputs of
// changes: otlp inputs are built first, listening (on the socket of the
// input they replace, when on its address: it is handed over, so that no
// client is refused meanwhile), and a failure there leaves everything as
// it was. Then g takes over, the inputs that go are stopped as a stop
// does, and the new ones are built (a tail input from the checkpoint its
// predecessor just saved) and started, in cfg's order among the others.
func (p *Pipeline) replaceInputs(cfg *config.Config, g *generation, changes []inputChange) error {
	p.mu.Lock()
	if p.runs.ended {
		p.mu.Unlock()
		g.retire()
		return errors.New("the run has ended")
	}
	p.runs.held++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.runs.held--
		p.runs.idle.Broadcast()
		p.mu.Unlock()
	}()

	// Sockets the inputs that go listen on, by address: a new otlp input
	// on one of them takes it over.
	socks := map[string]*handoffListener{}
	for _, c := range changes {
		if c.old != nil && c.old.otlp != nil && c.old.otlp.sock != nil {
			socks[c.old.otlp.cfg.OTLP.Listen] = c.old.otlp.sock
		}
	}
	built := map[string]*inputRef{}
	// from are the sockets handed over, to the successors' wrappers.
	var from, to []*handoffListener
	for _, c := range changes {
		if c.new == nil || c.new.Name != "otlp" {
			continue
		}
		var sock *net.TCPListener
		h := socks[c.new.OTLP.Listen]
		if h != nil {
			sock = h.TCPListener
			delete(socks, c.new.OTLP.Listen)
		}
		in, err := p.newOTLPInput(cfg, *c.new, sock)
		if err != nil {
			for _, b := range built {
				if slices.Contains(to, b.otlp.sock) {
					b.otlp.sock.handedOver.Store(true) // the socket stays its owner's
				}
				b.close()
			}
			g.retire()
			return fmt.Errorf("input %s: %w", c.alias, err)
		}
		if h != nil {
			from, to = append(from, h), append(to, in.sock)
		}
		built[c.alias] = &inputRef{otlp: in}
	}

	// The point of no return: the new policies run from the next batch.
	p.mu.Lock()
	if p.runs.ctx != nil {
		g.bind(p.runs.ctx)
	}
	p.gen.Swap(g).retire()
	p.mu.Unlock()

	for _, h := range from {
		h.handedOver.Store(true)
	}
	var errs []error
	var wg sync.WaitGroup
	for _, c := range changes {
		if c.old == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.stop(c.old); err != nil {
				p.log.Warn("reload: closing an input that stopped", "input", c.alias, "err", err)
			}
		}()
	}
	wg.Wait()
	for _, c := range changes {
		if c.new == nil || c.new.Name == "otlp" {
			continue
		}
		// An input with a db resumes from it, as at a start; one without
		// resumes from where its predecessor of the same alias stood.
		var carry *checkpoint.Checkpoint
		if c.new.DB == "" && c.old != nil && c.old.tail != nil {
			carry = c.old.tail.position()
		}
		in, err := p.newInputRef(cfg, *c.new, carry)
		if err != nil {
			// Checked before (run --check's checks), so an I/O error of
			// the moment: the run fails, as when an input fails.
			errs = append(errs, fmt.Errorf("input %s could not be started again: %w", c.alias, err))
			continue
		}
		built[c.alias] = in
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	running := map[string]*inputRef{}
	for _, in := range p.order {
		running[in.config().Alias] = in
	}
	var order []*inputRef
	for _, ic := range cfg.Inputs {
		if in := built[ic.Alias]; in != nil {
			order = append(order, in)
			p.startLocked(in)
		} else if in := running[ic.Alias]; in != nil && !changing(changes, ic.Alias) {
			order = append(order, in)
		}
	}
	p.order = order
	if err := errors.Join(errs...); err != nil {
		p.runs.errs = append(p.runs.errs, err)
		if p.runs.cancel != nil {
			p.runs.cancel()
		}
		return err
	}
	return nil
}

func changing(changes []inputChange, alias string) bool {
	for _, c := range changes {
		if c.alias == alias {
			return true
		}
	}
	return false
}

// handoffListener is an otlp input's socket as its server takes it. When
// a reload restarts the input on the same address, the server's Close (at
// its Shutdown) stops its Accept without closing the socket, and the new
// input's server takes the socket over: a client that connects in between
// waits in its backlog rather than being refused.
type handoffListener struct {
	*net.TCPListener
	closed     atomic.Bool // the server's Close was called
	handedOver atomic.Bool // a successor serves on the socket
}

// open makes Accept wait again: a predecessor's Close set a deadline to
// end its own.
func (l *handoffListener) open() error { return l.TCPListener.SetDeadline(time.Time{}) }

func (l *handoffListener) Accept() (net.Conn, error) {
	c, err := l.TCPListener.Accept()
	if err != nil && l.closed.Load() {
		return nil, net.ErrClosed
	}
	return c, err
}

// Close ends Accept: by closing the socket, so that clients are refused
// at once as the server stops, unless it is handed over.
func (l *handoffListener) Close() error {
	l.closed.Store(true)
	if l.handedOver.Load() {
		return l.TCPListener.SetDeadline(time.Unix(1, 0))
	}
	return l.TCPListener.Close()
}
