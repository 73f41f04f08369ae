package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/policy"
)

// Const is a constant a const or param declaration names. Backends
// compile a use of it as its Value, which is made of literals, operators
// and other constants only.
type Const struct {
	Name  string
	Decl  *policy.ConstDecl // nil for a parameter
	Param *policy.ParamDecl // nil for a const
	Type  *types.Type
	// Value is what a use stands for: a const's value; a parameter's
	// given value as a literal, or its default; nil for a parameter whose
	// value comes at run time (Info.Unbound).
	Value policy.Expr
	// checking is set while the value is typed: meeting the constant
	// again then is a cycle.
	checking bool
	done     bool
}

// Func is a function a fn declaration names. It is pure (it reads its
// parameters only) and no call graph through it is recursive, so a
// backend may inline it at every call or compile it once.
type Func struct {
	Name string
	// Module is the name of the module that declares it, and File that
	// module's file as it was loaded; both empty for a policy's own.
	Module string
	File   string
	Decl   *policy.FuncDecl
	Params []*Local // of kind Param, in order
	Result *types.Type
	// Calls are the calls of functions in the body, in source order.
	Calls []*policy.CallExpr
	// ConstParams are the parameters the body uses where a constant is
	// required (a pattern, a zone, a unit, a format), directly or through
	// its calls: each call must give a constant there.
	ConstParams []ConstParam

	fnScope *scope // the parameters
}

// Sig is the function's signature as declared: f(s: string, n: int = 3)
// string, net.f(...) for a module's.
func (f *Func) Sig() string {
	var b strings.Builder
	b.WriteString(f.FullName())
	b.WriteByte('(')
	for i, p := range f.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", p.Name, p.Type)
		if d := f.Decl.Params[i].Default; d != nil {
			b.WriteString(" = " + exprText(d))
		}
	}
	fmt.Fprintf(&b, ") %s", f.Result)
	return b.String()
}

// FullName is the function's name as a caller outside its module writes
// it, module.name, and its name alone for a policy's own function.
func (f *Func) FullName() string {
	if f.Module == "" {
		return f.Name
	}
	return f.Module + "." + f.Name
}

// required is the number of parameters without a default.
func (f *Func) required() int {
	n := 0
	for _, p := range f.Decl.Params {
		if p.Default == nil {
			n++
		}
	}
	return n
}

// funcCtx is what the checker knows of the function whose body it checks.
type funcCtx struct {
	fn *Func
}

// decls declares the file's constants and functions, checks their values
// and bodies, and reports recursion. The statements are checked after, in
// a scope of their own: a function sees its parameters only.
func (c *checker) decls(ds []policy.Decl) {
	for _, d := range ds {
		id := d.DeclName()
		if prev, ok := c.globals[id.Name]; ok {
			c.clashes[id.Name] = true
			c.report(diag.Errorf(id, CodeDupDecl, "%s declared twice", id.Name).
				WithLabel("first declared at line %d", prev.Pos().Line).
				WithHint("a file declares each constant and function once: rename one of them"))
			continue
		}
		if _, ok := d.(*policy.FuncDecl); ok && builtin.Lookup(id.Name) != nil {
			c.clashes[id.Name] = true
			c.report(diag.Errorf(id, CodeDupDecl, "fn %s has the name of a built-in function", id.Name).
				WithHint("choose another name: calls of %s must mean the built-in everywhere", id.Name))
			continue
		}
		c.globals[id.Name] = d
		switch d := d.(type) {
		case *policy.ConstDecl:
			c.consts[id.Name] = &Const{Name: id.Name, Decl: d, Value: d.Value}
		case *policy.ParamDecl:
			c.consts[id.Name] = &Const{Name: id.Name, Param: d}
		case *policy.FuncDecl:
			f := &Func{Name: id.Name, Decl: d}
			if c.file.Module {
				f.Module = c.file.Name
			}
			c.funcs[id.Name] = f
			c.info.FuncDecls[d] = f
		}
	}
	for _, d := range ds {
		if k := c.consts[d.DeclName().Name]; k != nil && (k.Decl == d || k.Param == d) {
			c.constType(k)
		}
	}
	var fns []*Func
	for _, d := range ds {
		if f := c.funcs[d.DeclName().Name]; f != nil && f.Decl == d {
			c.signature(f)
			fns = append(fns, f)
		}
	}
	for _, f := range fns {
		c.body(f)
	}
	c.funcConsts(fns)
	c.recursion(fns)
}

// constType types the value of k, once, and reports what makes it no
// constant; a constant met again while its value is typed is a cycle.
func (c *checker) constType(k *Const) *types.Type {
	switch {
	case k.done:
		return k.Type
	case k.checking:
		return nil
	}
	k.checking = true
	saved, savedFn := c.scope, c.fn
	c.scope, c.fn = &scope{names: map[string]*Local{}}, nil
	c.inConst = append(c.inConst, k)
	if k.Param != nil {
		k.Type = c.paramType(k)
	} else if c.constExpr(k.Decl.Value) {
		k.Type = c.expr(k.Decl.Value, &state{root: types.ObjectOf(true)})
	} else {
		k.Type = types.InvalidType
	}
	c.inConst = c.inConst[:len(c.inConst)-1]
	c.scope, c.fn = saved, savedFn
	k.checking, k.done = false, true
	return k.Type
}

// constExpr reports whether e is made of literals, operators and other
// constants, and reports the first part that is not.
func (c *checker) constExpr(e policy.Expr) bool {
	ok := true
	policy.Inspect(e, func(n policy.Node) bool {
		if !ok {
			return false
		}
		var what string
		if fx, ok := n.(*policy.FieldExpr); ok {
			if _, ok := c.qualified(fx); ok {
				return false // a module's constant
			}
		}
		switch n := n.(type) {
		case *policy.RootExpr, *policy.MetaExpr, *policy.FieldExpr, *policy.IndexExpr:
			what = recordAccess(n.(policy.Expr))
		case *policy.CallExpr:
			what = "calls " + n.Fun.Name
		case *policy.Ident:
			if c.consts[n.Name] == nil {
				return true // undefined: the checker reports it
			}
		}
		if what != "" {
			ok = false
			c.report(diag.Errorf(n, CodeConstValue, "a constant's value must be constant: %s %s", exprText(n.(policy.Expr)), what).
				WithLabel("computed at run time").
				WithHint("a constant is made of literals, operators and other constants; compute it in a function instead"))
		}
		return ok
	})
	return ok
}

// constRef types the use id of the constant k.
func (c *checker) constRef(id *policy.Ident, k *Const) *types.Type {
	c.info.Consts[id] = k
	if k.checking {
		chain := []string{}
		for i := slices.Index(c.inConst, k); i >= 0 && i < len(c.inConst); i++ {
			chain = append(chain, c.inConst[i].Name)
		}
		chain = append(chain, k.Name)
		c.report(diag.Errorf(id, CodeCycle, "constant %s refers to itself: %s", k.Name, strings.Join(chain, " → ")).
			WithHint("a constant's value cannot depend on itself; give one of them a literal value"))
		return types.InvalidType
	}
	return c.constType(k)
}

// constLit returns the string literal e stands for: e itself, or the value
// of the constant e names, through parentheses and other constants. The
// arguments a built-in needs constant (a pattern, a zone) may be either.
func (c *checker) constLit(e policy.Expr) (*policy.BasicLit, bool) {
	end, _ := c.resolveConst(e)
	x, ok := policy.Unparen(end).(*policy.BasicLit)
	return x, ok && x.Kind == policy.LitString
}

// unboundConst reports whether e names a parameter whose value comes at
// run time, directly or through constants: a constant all the same, whose
// value is checked where it is given (CheckParams).
func (c *checker) unboundConst(e policy.Expr) bool {
	_, k := c.resolveConst(e)
	return k != nil && k.Param != nil
}

// signature resolves f's parameter and result types and checks the
// defaults: constants of the parameter's type.
func (c *checker) signature(f *Func) {
	saved := c.scope
	c.scope = &scope{names: map[string]*Local{}}
	f.Result = c.typeExpr(f.Decl.Result)
	for _, p := range f.Decl.Params {
		t := c.typeExpr(p.Type)
		if prev := c.scope.names[p.Name.Name]; prev != nil {
			c.report(diag.Errorf(p.Name, CodeRedeclared, "parameter %s declared twice", p.Name.Name).
				WithLabel("%s was first declared at column %d", p.Name.Name, prev.Decl.Pos().Col).
				WithHint("give each parameter its own name"))
		}
		if p.Default != nil {
			c.paramDefault(p.Name, p.Default, t)
		}
		f.Params = append(f.Params, c.declare(p.Name, Param, t))
	}
	f.fnScope = c.scope
	c.scope = saved
}

// paramDefault checks the default def of the parameter name (of a
// function, or of the policy) of type t.
func (c *checker) paramDefault(name *policy.Ident, def policy.Expr, t *types.Type) {
	saved := c.scope
	c.scope = &scope{names: map[string]*Local{}}
	defer func() { c.scope = saved }()
	if !c.constExpr(def) {
		return
	}
	d := c.expr(def, &state{root: types.ObjectOf(true)})
	switch {
	case d.IsInvalid() || t.IsInvalid():
	case types.NonOptional(t).Kind == types.Float && intLit(def):
		c.asFloat(def)
	case !types.AssignableTo(d, t):
		c.report(diag.Errorf(def, CodeParamDefault, "the default of %s is %s, but %s is %s", name.Name, d, name.Name, t).
			WithLabel("%s is %s", exprText(def), d).
			WithHint("give a default of the parameter's type, or change the type"))
	}
}

// body checks the body of f: pure, and returning a value of its result
// type on every path.
func (c *checker) body(f *Func) {
	saved := c.scope
	c.scope = &scope{parent: f.fnScope, names: map[string]*Local{}}
	c.fn = &funcCtx{fn: f}
	st := &state{root: types.ObjectOf(true)}
	c.stmts(f.Decl.Body.Stmts, st)
	if !st.dead && !f.Result.IsInvalid() {
		rb := f.Decl.Body.Rbrace
		c.report(diag.Errorf(span{rb, rb.Advance("}")}, CodeNoReturn, "fn %s does not return a value on every path", f.Name).
			WithLabel("the body can end here without a return").
			WithHint("end the body with return E, or give each if an else that returns"))
	}
	c.fn = nil
	c.scope = saved
}

// ret checks return E against the result type of the function.
func (c *checker) ret(s *policy.ReturnStmt, st *state) {
	v := c.expr(s.Value, st)
	if !st.dead {
		st.dead = true
		st.deadWhy = fmt.Sprintf("return at line %d", s.Return.Line)
	}
	if c.fn == nil {
		return // outside a function: the parser reported it (E0031)
	}
	want := c.fn.fn.Result
	switch {
	case v.IsInvalid() || want.IsInvalid():
	case types.NonOptional(want).Kind == types.Float && intLit(s.Value):
		c.asFloat(s.Value)
	case types.AssignableTo(v, want):
	case v.IsOptional() && types.AssignableTo(types.NonOptional(v), want):
		c.report(c.optionalErr(s.Value, v, "a "+want.String()))
	default:
		c.report(diag.Errorf(s.Value, CodeReturnType, "fn %s returns %s, not %s", c.fn.fn.Name, want, v).
			WithLabel("%s is %s", exprText(s.Value), v).
			WithHint("return a value of type %s, or change the result type of %s", want, c.fn.fn.Name))
	}
}

// impure reports a statement or an access a function body may not hold.
func (c *checker) impure(n policy.Node, what string) {
	c.report(diag.Errorf(n, CodeImpure, "fn %s %s: a function reads its parameters only", c.fn.fn.Name, what).
		WithHint("pass what it needs as an argument, and let the policy do the edit with the result"))
}

// callFunc checks a call of the user function f.
func (c *checker) callFunc(e *policy.CallExpr, f *Func, st *state) *types.Type {
	c.info.Funcs[e] = f
	if c.fn != nil {
		c.fn.fn.Calls = append(c.fn.fn.Calls, e)
	}
	args := make([]*types.Type, len(e.Args))
	for i, a := range e.Args {
		args[i] = c.expr(a, st)
	}
	if n := len(e.Args); n < f.required() || n > len(f.Params) {
		want := fmt.Sprint(len(f.Params))
		if r := f.required(); r < len(f.Params) {
			want = fmt.Sprintf("%d to %d", r, len(f.Params))
		}
		c.report(diag.Errorf(e, CodeArgCount, "%s takes %s arguments, got %d", f.FullName(), want, n).
			WithLabel("%s", f.Sig()).
			WithHint("fn %s is declared at line %d", f.Name, f.Decl.Fn.Line))
		return f.Result
	}
	for i, a := range e.Args {
		want, t := f.Params[i].Type, args[i]
		switch {
		case t.IsInvalid() || want.IsInvalid():
		case types.NonOptional(want).Kind == types.Float && intLit(a):
			c.asFloat(a)
		case types.AssignableTo(t, want):
		case t.Kind == types.Null || t.IsOptional() && types.AssignableTo(types.NonOptional(t), want):
			c.report(c.optionalErr(a, t, "a "+want.String()))
		case types.NonOptional(t).Kind == types.Any:
			c.report(anyErr(a, t, fmt.Sprintf("argument %s of %s", f.Params[i].Name, f.FullName()), want))
		default:
			d := diag.Errorf(a, CodeArgType, "argument %s of %s is %s, want %s", f.Params[i].Name, f.FullName(), t, want).
				WithLabel("%s is %s%s", exprText(a), t, c.declaredAt(a))
			if want.Kind == types.String && t.IsNumeric() {
				d = d.WithHint("convert it: to_string(%s)", exprText(a))
			} else {
				d = d.WithHint("%s", f.Sig())
			}
			c.report(d)
		}
	}
	if len(e.Args) < len(f.Params) {
		all := append([]policy.Expr(nil), e.Args...)
		for _, p := range f.Decl.Params[len(e.Args):] {
			all = append(all, p.Default)
		}
		c.info.Defaults[e] = all
	}
	if c.fn == nil {
		c.callConsts(e, f, nil) // in a body, once all bodies are checked
	}
	return f.Result
}

// recursion reports each cycle of the call graph once, at the call that
// closes it, naming the functions on the way.
func (c *checker) recursion(fns []*Func) {
	const (
		unseen = iota
		active
		finished
	)
	color := map[*Func]int{}
	var stack []*Func
	var visit func(f *Func)
	visit = func(f *Func) {
		color[f] = active
		stack = append(stack, f)
		for _, call := range f.Calls {
			g := c.info.Funcs[call]
			switch color[g] {
			case unseen:
				visit(g)
			case active:
				var names []string
				for _, h := range stack[slices.Index(stack, g):] {
					names = append(names, h.Name)
				}
				names = append(names, g.Name)
				msg := "fn " + g.Name + " calls itself"
				if len(names) > 2 {
					msg += " through " + strings.Join(names[1:len(names)-1], ", ")
				}
				c.report(diag.Errorf(call, CodeCycle, "%s: %s", msg, strings.Join(names, " → ")).
					WithLabel("this call closes the cycle").
					WithHint("functions cannot recurse, so that every call costs a bounded time: compute the result without calling %s again", g.Name))
			}
		}
		stack = stack[:len(stack)-1]
		color[f] = finished
	}
	for _, f := range fns {
		if color[f] == unseen {
			visit(f)
		}
	}
}

// funcNames are the names of the file's functions, for did-you-mean.
func (c *checker) funcNames() []string { return slices.Sorted(maps.Keys(c.funcs)) }

// constNames are the names of the file's constants, for did-you-mean.
func (c *checker) constNames() []string { return slices.Sorted(maps.Keys(c.consts)) }
