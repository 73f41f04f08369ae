package pipeline

import (
	"context"
	"crypto/sha256"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/pipeline/output"
)

// The watch (service.watch: true): the config file, every policy and
// script it names and the modules those import are polled every
// service.watch_interval, and a change of their content reloads the
// pipeline as SIGHUP does. Polling, with the standard library: each file
// is stat'ed, and hashed again only when its size or modification time
// changed (or that time is recent: racyTime); a file touched or rewritten
// as it was reloads nothing. A poll also sees what file notification can
// miss: a Kubernetes ConfigMap's update, which swaps a symlink to a new
// directory of files, and files on a network file system.

// fileState is what the watch knows of a file.
type fileState struct {
	size    int64
	mtime   time.Time
	sum     [sha256.Size]byte
	hashed  time.Time // when sum was taken
	missing bool      // it could not be read
}

// racyTime is how long before its hash a file's time must be for the hash
// to stand while the size and time stay: a file system with a coarse
// clock (FAT's 2 s, some NFS servers' 1 s) gives a rewrite of the same
// size within one tick the same time, so a file written that recently is
// hashed again at each poll, as git treats its "racily clean" files.
const racyTime = 2 * time.Second

// watchedFiles are the files of cfg a reload reads: the config, the
// filters' policies and scripts (an inline script has none) and the
// modules the policies import (as the last load of cfg found them).
func watchedFiles(cfg *config.Config, modules []string) []string {
	files := append([]string{cfg.File}, modules...)
	for _, f := range cfg.Filters {
		if f.File != "" {
			files = append(files, resolve(cfg.Dir, f.File))
		}
	}
	return files
}

// snapshot returns the state of each file, reusing the hash of prev's
// state when the size and time are the same and the time is well before
// the hash.
func snapshot(files []string, prev map[string]fileState) map[string]fileState {
	out := make(map[string]fileState, len(files))
	for _, name := range files {
		fi, err := os.Stat(name)
		if err != nil {
			out[name] = fileState{missing: true}
			continue
		}
		st := fileState{size: fi.Size(), mtime: fi.ModTime()}
		if was, ok := prev[name]; ok && !was.missing && was.size == st.size && was.mtime.Equal(st.mtime) &&
			st.mtime.Before(was.hashed.Add(-racyTime)) {
			st.sum, st.hashed = was.sum, was.hashed
		} else if st.sum, err = hashFile(name); err != nil {
			st = fileState{missing: true}
		} else {
			st.hashed = time.Now()
		}
		out[name] = st
	}
	return out
}

func hashFile(name string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := os.Open(name)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// changed reports whether a file's content changed (or it appeared or
// went) between two snapshots of the same files.
func changed(a, b map[string]fileState) bool {
	return !maps.EqualFunc(a, b, func(x, y fileState) bool {
		return x.missing == y.missing && x.sum == y.sum
	})
}

// watchFrom notes, before a reload reads cfg's files again, what they
// hold; reloadWatched then updates it for the files the reload read.
func (p *Pipeline) watchFrom() map[string]fileState {
	return snapshot(slices.Collect(maps.Keys(p.watched)), p.watched)
}

// reloadWatched sets the files to watch after a reload that read cfg (nil
// when the config could not be read): those of cfg and its modules, each as it was before
// the reload read it when the watch knew it (pre), so that a change made
// while the reload ran reloads again.
func (p *Pipeline) reloadWatched(cfg *config.Config, modules []string, pre map[string]fileState) {
	if cfg == nil {
		p.watched = pre
		return
	}
	files := watchedFiles(cfg, modules)
	now := snapshot(files, pre)
	for _, name := range files {
		if st, ok := pre[name]; ok {
			now[name] = st
		}
	}
	p.watched = now
}

// watch polls the watched files while the run lasts, every
// service.watch_interval of the running config, and reloads when their
// content changed and has held still for a while (settle). With
// service.watch false it only waits: a reload may set it.
func (p *Pipeline) watch(ctx context.Context) {
	if p.gen.Load().cfg.File == "" {
		if p.gen.Load().cfg.Service.Watch {
			p.log.Warn("service.watch: the config was not read from a file (config.Load), so there is nothing to watch")
		}
		return
	}
	for {
		interval := p.gen.Load().cfg.Service.WatchInterval
		if !output.Sleep(ctx, interval) {
			return
		}
		if !p.gen.Load().cfg.Service.Watch {
			continue
		}
		p.reloading.Lock()
		was := p.watched
		p.reloading.Unlock()
		now := snapshot(slices.Collect(maps.Keys(was)), was)
		if !changed(was, now) || !settle(ctx, now, min(settleTime, interval)) {
			continue
		}
		p.reloading.Lock()
		if ctx.Err() == nil {
			p.reloadLocked()
		}
		p.reloading.Unlock()
	}
}

// settleTime is how long changed files must hold still before the watch
// reloads, at most (watch_interval when shorter): a writer may be midway
// through them, one file truncated and not yet written, or one policy of
// two written. Vector's watch waits 1 s after a change likewise.
const settleTime = time.Second

// settle waits until the files of now hold still for d, and reports
// whether they did before ctx ended (it gives up after 10 tries, to
// reload what is there then).
func settle(ctx context.Context, now map[string]fileState, d time.Duration) bool {
	for range 10 {
		if !output.Sleep(ctx, d) {
			return false
		}
		again := snapshot(slices.Collect(maps.Keys(now)), now)
		if !changed(now, again) {
			return true
		}
		now = again
	}
	return true
}
