package lua

// policyrun patch (new file): pattern searches stop with the state's
// context, as the VM does between instructions.

// matchStop returns what a pattern search asks now and then whether to
// give up (pm.FindCharged): whether the state's context is done. nil when
// the state has none.
func (ls *LState) matchStop() func() bool {
	ctx := ls.ctx
	if ctx == nil {
		return nil
	}
	return func() bool { return ctx.Err() != nil }
}
