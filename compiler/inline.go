package compiler

import (
	"regexp"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/vm"
)

// Calls of a policy's functions are inlined: a function is pure and no
// call graph is recursive (the checker makes sure), so its body can be
// generated at each call with its parameters bound to the registers of
// the arguments. A call then costs what its body costs written out: no
// frame, no copy of the arguments, and constant arguments fold through
// it (mask(s, 3) compiles slice(parts, 0, 3) with a constant). Disasm
// shows which call each instruction is the body of (vm.Code.Inlines).

// retCtx is one function being inlined: its returns move their value into
// r and jump to the end of the body.
type retCtx struct {
	r      reg
	result *types.Type
	jumps  []int
}

// inline generates the call e of fn and returns the register of its value.
func (g *gen) inline(e *policy.CallExpr, fn *check.Func) reg {
	args := g.info.Args(e) // with the defaults of left-out parameters
	regs := make([]reg, len(fn.Params))
	for i, p := range fn.Params {
		v := g.expr(args[i])
		if types.NonOptional(p.Type).Kind == types.Float {
			v = g.toFloat(args[i], v)
		}
		regs[i] = v
	}
	// A function may be inlined inside its own inlined body no more than a
	// checked call graph allows; bindings of an outer call of the same
	// function are restored after.
	type binding struct {
		r   reg
		arg policy.Expr
		ok  bool
	}
	saved := make([]binding, len(fn.Params))
	for i, p := range fn.Params {
		r, ok := g.locals[p]
		saved[i] = binding{r, g.bound[p], ok}
		g.locals[p] = regs[i]
		g.bound[p] = args[i]
	}
	if len(g.inlines) >= 1<<16-1 {
		failf("the policy inlines more than %d calls", 1<<16-1)
	}
	g.inlines = append(g.inlines, vm.Inline{Func: fn.FullName(), Line: int32(e.Pos().Line), Parent: g.frame, File: fn.File})
	outer := g.frame
	g.frame = uint16(len(g.inlines) - 1)
	ctx := &retCtx{r: g.newReg(), result: fn.Result}
	g.rets = append(g.rets, ctx)

	start := len(g.code)
	g.stmts(fn.Decl.Body.Stmts)
	g.dropLastJump(ctx, start)
	for _, j := range ctx.jumps {
		g.patch(j)
	}

	g.rets = g.rets[:len(g.rets)-1]
	g.frame = outer
	for i, p := range fn.Params {
		if saved[i].ok {
			g.locals[p], g.bound[p] = saved[i].r, saved[i].arg
		} else {
			delete(g.locals, p)
			delete(g.bound, p)
		}
	}
	return ctx.r
}

// ret generates return E of the function being inlined: it always ends
// the body.
func (g *gen) ret(s *policy.ReturnStmt) bool {
	if len(g.rets) == 0 {
		failf("%s: return outside a function", s.Pos())
	}
	ctx := g.rets[len(g.rets)-1]
	v := g.expr(s.Value)
	if types.NonOptional(ctx.result).Kind == types.Float {
		v = g.toFloat(s.Value, v)
	}
	g.emit(s.Pos(), vm.MOVE, ctx.r, v, 0, 0)
	ctx.jumps = append(ctx.jumps, g.emit(s.Pos(), vm.JMP, 0, 0, 0, 0))
	return true
}

// dropLastJump removes the jump of the body's last return, which would
// go to the next instruction; the jumps of the body that went past it go
// where it was.
func (g *gen) dropLastJump(ctx *retCtx, start int) {
	last := len(g.code) - 1
	if n := len(ctx.jumps); n == 0 || ctx.jumps[n-1] != last {
		return
	}
	ctx.jumps = ctx.jumps[:len(ctx.jumps)-1]
	g.code, g.lines = g.code[:last], g.lines[:last]
	for i := start; i < last; i++ {
		in := &g.code[i]
		k := in.Op.Operands()
		for j, v := range [3]*uint16{&in.A, &in.B, &in.C} {
			if k[j] == 'j' && int(*v) == last+1 {
				*v = uint16(last)
			}
		}
	}
}

// patternOf returns the compiled pattern of the argument a: its own, or,
// for a parameter of a function being inlined, that of the argument the
// call gives it (the checker compiled it there, at each call).
func (g *gen) patternOf(a policy.Expr) *regexp.Regexp {
	for range len(g.rets) + 1 {
		if rx := g.info.Regexps[a]; rx != nil {
			return rx
		}
		id, ok := policy.Unparen(a).(*policy.Ident)
		if !ok || g.bound[g.info.Uses[id]] == nil {
			return nil
		}
		a = g.bound[g.info.Uses[id]]
	}
	return nil
}
