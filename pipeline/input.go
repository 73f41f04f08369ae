package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/policyrun/policyrun/pipeline/checkpoint"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/pipeline/parse"
	"github.com/policyrun/policyrun/pipeline/tail"
	"github.com/policyrun/policyrun/record"
)

// input is one tail input with its parser, its arena and its checkpoint.
type input struct {
	cfg    config.Input
	tail   *tail.Tail
	parser parse.Parser
	store  *checkpoint.Store
	arena  *record.Arena
	recs   []*record.Record
	sc     scratch // for stages that match part of a batch
	tags   *tagCache
	// held are the sources whose parser holds lines back (the parts of a
	// CRI or Docker line, a multiline record), with how long they have
	// waited: they are emitted after holdTimeout, so that what never ends
	// does not stay in memory for ever.
	held        map[string]heldJoin
	holdTimeout time.Duration
	// cursor is the last batch's cursor while it is not committed (lines
	// held), so that the flush at the end of input can commit it; until
	// then the commits stand before the first line held (commitHeld).
	cursor   tail.Cursor
	uncommit bool
	marks    []tail.Mark // commitHeld's
	// resumed: the tail started from a checkpoint; committed: it has
	// committed since. Either way its Checkpoint is where a restarted
	// input resumes when it has no checkpoint file (inputs.go).
	resumed, committed bool
	stats              *inputStats
	// kube is each file's Kubernetes metadata (kubernetes_path), nil
	// without it.
	kube map[*tail.File]kubeMeta
}

// newInput builds the tail input ic of cfg. It resumes from its db, or
// from carry when that is not nil: where the input it replaces, restarted
// by a reload, stood.
func (p *Pipeline) newInput(cfg *config.Config, ic config.Input, carry *checkpoint.Checkpoint) (*input, error) {
	parser, err := parse.NewSized(ic.Parser, ic.MaxLineSize)
	holdTimeout := cmp.Or(ic.FlushTimeout, tail.DefaultFlushTimeout)
	if ml := ic.Multiline; ml != nil {
		parser, err = parse.NewMultiline(ic.Parser, ic.MaxLineSize, parse.Multiline{Rules: ml.Rules, MaxLines: ml.MaxLines})
		holdTimeout = cmp.Or(ml.Flush, config.DefaultMultilineFlush)
	}
	if err != nil {
		return nil, err
	}
	// Patterns are matched against resolved paths, so relative exclude
	// patterns are resolved like the paths they exclude.
	paths := make([]string, len(ic.Paths))
	for i, s := range ic.Paths {
		paths[i] = resolve(cfg.Dir, s)
	}
	excludes := make([]string, len(ic.ExcludePaths))
	for i, s := range ic.ExcludePaths {
		excludes[i] = resolve(cfg.Dir, s)
	}
	db := resolve(cfg.Dir, ic.DB)
	if db != "" {
		// Found now rather than as a warning per batch: a run without
		// its checkpoints would re-read or skip lines on the next start.
		if fi, err := os.Stat(filepath.Dir(db)); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("db %s: its directory does not exist", ic.DB)
		}
		fst := checkpoint.FileStorage{Path: db}
		if !p.check {
			// Temporary files of a save that a kill interrupted.
			removed, err := fst.RemoveStale()
			for _, f := range removed {
				p.log.Info("removed a temporary checkpoint file left by an interrupted save", "file", f)
			}
			if err != nil {
				p.log.Warn("cannot remove stale temporary checkpoint files", "db", ic.DB, "err", err)
			}
		}
		if err := fst.CheckWritable(); err != nil {
			return nil, fmt.Errorf("db %s: %w", ic.DB, err)
		}
	}
	store, cp := p.checkpointStore(ic.Alias, db)
	if carry != nil {
		cp = carry
	}
	tc := ic.Config
	tc.Paths, tc.ExcludePaths = paths, excludes
	tc.MaxBatchLines = cfg.Service.BatchSize
	tc.Logger = p.log.With("input", ic.Alias)
	t, err := tail.New(tc, cp)
	if err != nil {
		return nil, err
	}
	return &input{
		cfg:    ic,
		tail:   t,
		parser: parser,
		store:  store,
		arena:  record.NewArena(),
		tags:   newTagCache(ic.Tag, p.gen.Load()),
		held:   map[string]heldJoin{},
		kube:   kubeCache(ic.KubernetesPath),
		stats:  p.inputCounters(ic.Alias),

		resumed:     cp != nil,
		holdTimeout: holdTimeout,
	}, nil
}

// runInput is the loop of one input: poll, parse, process, deliver, commit,
// checkpoint. The checkpoint is saved after every delivered batch, so a
// crash re-reads at most the batch in flight.
func (p *Pipeline) runInput(ctx context.Context, in *input) (err error) {
	defer func() {
		if serr := p.saveCheckpoint(in); err == nil {
			err = serr
		}
	}()
	for {
		batch, err := in.tail.Poll(ctx)
		if errors.Is(err, io.EOF) {
			if err := p.flushPending(in); !errors.Is(err, errStopped) {
				return err
			}
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("input %s: %w", in.cfg.Alias, err)
		}
		if err := p.deliver(in, batch); err != nil {
			if errors.Is(err, errStopped) {
				return nil // not committed: read again at the next start
			}
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// deliver parses, processes and delivers a batch, and commits it. The whole
// batch, all its chunks, runs on one generation: a reload replaces the
// policies before it or after it.
func (p *Pipeline) deliver(in *input, batch *tail.Batch) error {
	g := p.beginBatch(in)
	defer g.release()
	wall := time.Now()
	now := wall.UnixNano()
	var bytesIn int64
	// The batch goes through the stages and outputs in chunks of about
	// chunkInput bytes, each as soon as it is parsed, while its records
	// are still in the CPU's caches: a policy and an encoder that meet
	// records parsed a batch (megabytes) ago wait on memory.
	chunk, chunkBytes := 0, 0 // where the chunk begins in in.recs
	for i := range batch.Lines {
		l := &batch.Lines[i]
		bytesIn += int64(len(l.Bytes)) + 1
		n := len(in.recs)
		var err error
		in.recs, err = in.parser.Parse(in.arena, in.recs, l.File.Path, l.Bytes, l.Mark())
		if err != nil {
			p.stats.Unparsed.Add(1)
			in.stats.unparsed.Add(1)
		}
		if h, ok := in.parser.Held(l.File.Path); ok || len(in.held) > 0 {
			in.noteHeld(l.File, h, ok, wall)
		}
		if len(in.recs) == n {
			continue
		}
		for j := n; j < len(in.recs); j++ {
			p.addMeta(in, in.recs[j], l.File, now, j == 0)
		}
		if chunkBytes += len(l.Bytes); chunkBytes >= chunkInput {
			if err := p.processChunk(in, chunk); err != nil {
				return err
			}
			// The chunk's records are written: the next chunk reuses
			// their arena, which is still in the CPU's caches. (Kept for
			// the whole batch, megabytes, the arena had each chunk write
			// its records and edits into memory long out of the caches:
			// that cost the editing policies a fifth of their CPU.) A
			// join the parser holds is in its own buffers, not here.
			in.arena.Reset()
			in.recs, chunk, chunkBytes = in.recs[:0], 0, 0
		}
	}
	for src, h := range in.held {
		if wall.Sub(h.since) >= in.holdTimeout {
			p.flushSource(in, src, now)
		}
	}
	pending := len(in.held) > 0
	p.stats.BytesIn.Add(bytesIn)
	in.stats.bytes.Add(bytesIn)
	if err := p.processChunk(in, chunk); err != nil {
		return err
	}
	// Lines held back live only in memory: committing past the first one
	// would lose them in a crash. While some are, the commit stands just
	// before the first line each source holds; the batch's own cursor is
	// committed with the next batch that leaves nothing held.
	if pending {
		in.cursor, in.uncommit = batch.Cursor, true
		return p.commitHeld(in, batch.Cursor)
	}
	in.tail.Commit(batch.Cursor)
	in.uncommit, in.committed = false, true
	return p.saveCheckpoint(in)
}

// chunkInput is about how many bytes of input lines go through the stages
// and outputs at a time: with the arena nodes they become, well within a
// core's L2 cache.
const chunkInput = 128 << 10

// processChunk runs the records of the batch from index from on through
// the stages and outputs.
func (p *Pipeline) processChunk(in *input, from int) error {
	recs := in.recs[from:]
	if len(recs) == 0 {
		return nil
	}
	p.stats.In.Add(int64(len(recs)))
	in.stats.in.Add(int64(len(recs)))
	return p.process(recs, in.tags, &in.sc)
}

// heldJoin is what a parser holds for a source: its wait (parse.Hold) and
// since when, and the file of the source's lines meanwhile.
type heldJoin struct {
	wait  uint64
	since time.Time
	file  *tail.File
	// mixed: lines of another file with the same path (a file rotated
	// away and the new one) came while the source held lines, so the
	// first line held does not tell where each file's commit may stand.
	mixed bool
}

// noteHeld updates what is known of the source of a line of f, which the
// parser holds h of (ok) or nothing: a wait that changes starts again;
// lines that do not change it (the other stream's, unparsed ones) do not.
func (in *input) noteHeld(f *tail.File, h parse.Hold, ok bool, now time.Time) {
	src := f.Path
	held, had := in.held[src]
	switch {
	case !ok:
		if had {
			delete(in.held, src)
		}
	case !had:
		in.held[src] = heldJoin{wait: h.Wait, since: now, file: f}
	default:
		if held.wait != h.Wait {
			held.wait, held.since = h.Wait, now
		}
		held.mixed = held.mixed || held.file != f
		in.held[src] = held
	}
}

// commitHeld commits the batch's cursor set back to the first line each
// source holds, so that a crash loses none of them and reads again only
// from there. When that cannot be told (a source mixes two files, or a
// file was truncated or closed since its first line held), nothing is
// committed until nothing is held.
func (p *Pipeline) commitHeld(in *input, c tail.Cursor) error {
	in.marks = in.marks[:0]
	for src, h := range in.held {
		hold, ok := in.parser.Held(src)
		if h.mixed || !ok {
			return nil
		}
		in.marks = append(in.marks, hold.First)
	}
	c, ok := c.Before(in.marks...)
	if !ok {
		return nil
	}
	in.tail.Commit(c)
	in.committed = true
	return p.saveCheckpoint(in)
}

// flushSource moves what the parser holds for src into the batch.
func (p *Pipeline) flushSource(in *input, src string, now int64) {
	f := &tail.File{Path: src}
	n := len(in.recs)
	in.recs = in.parser.Flush(in.arena, in.recs, src)
	for j := n; j < len(in.recs); j++ {
		p.addMeta(in, in.recs[j], f, now, j == 0)
	}
	delete(in.held, src)
}

// addMeta sets r's tag, Kubernetes metadata and time; first says r is the
// first record since the arena's reset.
func (p *Pipeline) addMeta(in *input, r *record.Record, f *tail.File, now int64, first bool) {
	r.SetTagValue(in.tags.tagValue(in.arena, f, first))
	if in.kube != nil {
		in.addKubernetes(r, f)
	}
	if r.Time() == 0 {
		r.SetTime(now)
	}
	r.Commit()
}

// beginBatch takes the running generation for a batch of in, held
// until release, and clears what the last batch left in in's arena and
// records.
func (p *Pipeline) beginBatch(in *input) *generation {
	g := p.acquire()
	in.tags = in.tags.forGen(g)
	in.arena.Reset()
	in.recs = in.recs[:0]
	return g
}

// flushPending delivers what the parser still holds at the end of input,
// then commits the batches that waited for it.
func (p *Pipeline) flushPending(in *input) error {
	g := p.beginBatch(in)
	defer g.release()
	now := time.Now().UnixNano()
	for src := range in.held {
		p.flushSource(in, src, now)
	}
	if len(in.recs) > 0 {
		p.stats.In.Add(int64(len(in.recs)))
		in.stats.in.Add(int64(len(in.recs)))
		if err := p.process(in.recs, in.tags, &in.sc); err != nil {
			return err
		}
	}
	if in.uncommit {
		in.tail.Commit(in.cursor)
		in.uncommit, in.committed = false, true
	}
	return nil
}

// saveCheckpoint saves the input's committed state. A failure stops the
// run: going on would deliver lines whose progress no checkpoint holds, to
// be delivered again after the next start, as long as saves fail (out of
// file descriptors, a full disk).
func (p *Pipeline) saveCheckpoint(in *input) error {
	if in.store == nil {
		return nil
	}
	// The store writes only the files that changed, and nothing after an
	// idle poll cycle.
	cp := in.tail.Checkpoint()
	if cp == nil {
		return nil
	}
	if err := in.store.Save(cp); err != nil {
		p.stats.CheckpointErrors.Add(1)
		return fmt.Errorf("input %s: cannot save its checkpoint: %w", in.cfg.Alias, err)
	}
	return nil
}

// tagCache holds, per source file, the record tag and which stages and
// outputs match it, so that the per-record work is a map lookup and two bit
// tests.
type tagCache struct {
	tmpl   string
	g      *generation // whose stages and outputs
	byPath map[string]*tagEntry
	byTag  map[string]*tagEntry
	last   *tagEntry // the entry of the last record looked up

	lastFile  *tail.File // tagValue's last file and value
	lastValue record.Value
}

// A tagEntry says which stages and outputs match a tag: bit i of stages
// for stage i < 64 (later ones are matched by pattern each time).
type tagEntry struct {
	tag     string
	stages  uint64
	outputs uint64
	routed  bool // some output matches
}

func newTagCache(tmpl string, g *generation) *tagCache {
	return &tagCache{tmpl: tmpl, g: g,
		byPath: map[string]*tagEntry{}, byTag: map[string]*tagEntry{}}
}

// forGen returns c when it was made for g, else a new cache for g: a
// reload changed the filters, or the outputs' match.
func (c *tagCache) forGen(g *generation) *tagCache {
	if c.g == g {
		return c
	}
	return newTagCache(c.tmpl, g)
}

// Tag expands a tail tag as Fluent Bit does: a '*' in the tag is replaced by
// the file's path with '/' turned into '.' (kube.* → kube.var.log.app.log).
func Tag(tmpl, path string) string {
	if !strings.Contains(tmpl, "*") {
		return tmpl
	}
	p := strings.TrimPrefix(strings.ReplaceAll(path, "/", "."), ".")
	return strings.ReplaceAll(tmpl, "*", p)
}

func (c *tagCache) entry(tag string) *tagEntry {
	if e := c.byTag[tag]; e != nil {
		return e
	}
	e := &tagEntry{tag: tag}
	for i, s := range c.g.stages {
		if i < 64 && Match(s.cfg.Match, tag) {
			e.stages |= 1 << i
		}
	}
	for i, o := range c.g.outputs {
		if Match(o.cfg.Match, tag) {
			e.routed = true
			if i < 64 {
				e.outputs |= 1 << i
			}
		}
	}
	c.byTag[tag] = e
	return e
}

// of returns the entry of r's tag. Records of a batch mostly share one
// tag, so comparing with the last one saves hashing it.
func (c *tagCache) of(r *record.Record) *tagEntry {
	tag := r.Tag()
	if c.last != nil && string(tag) == c.last.tag {
		return c.last
	}
	c.last = c.entry(string(tag))
	return c.last
}

// tagValue returns the tag of f's records as a string of arena a. Lines of
// a batch come file by file, so the value made for the last file is reused
// until the arena is reset (reset says it was).
func (c *tagCache) tagValue(a *record.Arena, f *tail.File, reset bool) record.Value {
	if !reset && f == c.lastFile {
		return c.lastValue
	}
	e := c.byPath[f.Path]
	if e == nil {
		e = c.entry(Tag(c.tmpl, f.Path))
		c.byPath[f.Path] = e
	}
	c.lastFile, c.lastValue = f, a.NewStringFrom(e.tag)
	return c.lastValue
}

// A policy may change a record's tag, so matching reads the tag each time.
func (c *tagCache) matchStage(r *record.Record, i int) bool {
	if i >= 64 {
		return Match(c.g.stages[i].cfg.Match, string(r.Tag()))
	}
	return c.of(r).stages&(1<<i) != 0
}

func (c *tagCache) matchOutput(r *record.Record, i int) bool {
	if i >= 64 {
		return Match(c.g.outputs[i].cfg.Match, string(r.Tag()))
	}
	return c.of(r).outputs&(1<<i) != 0
}
