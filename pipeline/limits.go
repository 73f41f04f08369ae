package pipeline

import "context"

// contextBinder is a processor, or a program in one, whose calls can be
// tied to the run's context: luascript.Script, whose calls in progress when the
// run ends get their time limit to finish and are then stopped, so that a
// looping script cannot hold up a stop (docs/lua.md, "Limits").
type contextBinder interface {
	BindContext(ctx context.Context)
}

// BindContext binds the stage's program when it can be bound.
func (s *policyStage) BindContext(ctx context.Context) {
	if b, ok := s.prog.(contextBinder); ok {
		b.BindContext(ctx)
	}
}
