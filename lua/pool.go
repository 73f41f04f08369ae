package lua

import "sync"

// runnerPool holds the runners (each with its own LState) of a Program or
// Script, made on demand, so that one Program serves many goroutines.
type runnerPool[R any] struct {
	pool sync.Pool
}

// get returns a pooled runner, or a new one from newRunner.
func (p *runnerPool[R]) get(newRunner func() (R, error)) (R, error) {
	if r, ok := p.pool.Get().(R); ok {
		return r, nil
	}
	return newRunner()
}

func (p *runnerPool[R]) put(r R) { p.pool.Put(r) }
