package check

import (
	"strconv"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/policy"
)

// expr types e in state st, records the type in Info.Types and reports
// what does not fit. An operand whose type is already invalid produces no
// second diagnostic.
func (c *checker) expr(e policy.Expr, st *state) *types.Type {
	var t *types.Type
	switch e := e.(type) {
	case nil:
		return types.InvalidType
	case *policy.RootExpr, *policy.Ident, *policy.MetaExpr, *policy.FieldExpr, *policy.IndexExpr:
		t, _ = c.read(e, st)
		return t
	case *policy.BasicLit:
		t = litType(e)
	case *policy.ListLit:
		t = c.list(e, st)
	case *policy.MapLit:
		t = c.mapLit(e, st)
	case *policy.ParenExpr:
		t = c.expr(e.X, st)
	case *policy.UnaryExpr:
		t = c.unary(e, st)
	case *policy.BinaryExpr:
		t = c.binary(e, st)
	case *policy.CallExpr:
		t = c.call(e, st)
	default:
		t = types.InvalidType
	}
	if t == nil {
		t = types.InvalidType
	}
	c.info.Types[e] = t
	return t
}

func litType(e *policy.BasicLit) *types.Type {
	switch e.Kind {
	case policy.LitNull:
		return types.NullType
	case policy.LitBool:
		return types.BoolType
	case policy.LitInt:
		return types.IntType
	case policy.LitFloat:
		return types.FloatType
	case policy.LitString:
		return types.StringType
	}
	return types.InvalidType
}

// intLit reports whether e is an integer literal (possibly negated): such a
// constant may stand for a float where one is expected, as in Go.
func intLit(e policy.Expr) bool {
	lit, _ := policy.SignedLit(e)
	return lit != nil && lit.Kind == policy.LitInt
}

// asFloat marks the integer literal e as used as a float.
func (c *checker) asFloat(e policy.Expr) {
	for {
		c.info.Types[e] = types.FloatType
		switch x := e.(type) {
		case *policy.ParenExpr:
			e = x.X
		case *policy.UnaryExpr:
			e = x.X
		default:
			return
		}
	}
}

func (c *checker) list(e *policy.ListLit, st *state) *types.Type {
	var elems []*types.Type
	for _, x := range e.Elems {
		elems = append(elems, c.expr(x, st))
	}
	var acc *types.Type = types.NeverType
	joined := true
	for _, t := range elems {
		j, ok := types.Join(acc, t)
		if !ok {
			joined = false
			break
		}
		acc = j
	}
	if joined {
		return types.ArrayOf(acc)
	}
	// [1, 2.5]: integer literals among floats are floats.
	allNum, hasFloat := true, false
	for i, t := range elems {
		switch types.NonOptional(t).Kind {
		case types.Float:
			hasFloat = true
		case types.Int:
			if !intLit(e.Elems[i]) {
				allNum = false
			}
		default:
			if t.Kind != types.Null {
				allNum = false
			}
		}
	}
	if allNum && hasFloat {
		opt := false
		for i, t := range elems {
			if t.Kind == types.Null {
				opt = true
			} else if t.Kind == types.Int {
				c.asFloat(e.Elems[i])
			}
		}
		if opt {
			return types.ArrayOf(types.OptionalOf(types.FloatType))
		}
		return types.ArrayOf(types.FloatType)
	}
	return types.ArrayOf(types.AnyType)
}

func (c *checker) mapLit(e *policy.MapLit, st *state) *types.Type {
	var fields []types.Field
	seen := map[string]*policy.MapEntry{}
	for _, ent := range e.Entries {
		if ent == nil || ent.Key == nil {
			continue
		}
		t := c.expr(ent.Value, st)
		if prev := seen[ent.Key.Str]; prev != nil {
			c.report(diag.Errorf(ent.Key, CodeDupKey, "duplicate key %s in map literal", policy.Quote(ent.Key.Str)).
				WithLabel("first given at line %d", prev.Key.Pos().Line).
				WithHint("a key appears once; remove one of the two entries"))
			continue
		}
		seen[ent.Key.Str] = ent
		c.typos.add(ent.Key.Str)
		fields = append(fields, types.Field{Name: ent.Key.Str, Type: t, Decl: ent.Key.Pos()})
	}
	return types.ObjectOf(false, fields...)
}

func (c *checker) unary(e *policy.UnaryExpr, st *state) *types.Type {
	x := c.expr(e.X, st)
	switch e.Op {
	case policy.NOT:
		c.wantBool(e.X, x, "operator !")
		return types.BoolType
	case policy.SUB:
		if !c.wantValue(e.X, x, "a number", types.IntType) {
			return types.InvalidType
		}
		if !x.IsNumeric() {
			c.report(diag.Errorf(e, CodeNegate, "cannot negate %s", x).
				WithLabel("%s is %s", exprText(e.X), x).
				WithHint("unary - takes an int or a float"))
			return types.InvalidType
		}
		return x
	}
	return types.InvalidType
}

// wantValue reports an optional or any operand where a present, typed value
// is needed; it returns false when it reported (or x is invalid).
func (c *checker) wantValue(e policy.Expr, x *types.Type, what string, want *types.Type) bool {
	switch {
	case x.IsInvalid():
		return false
	case x.Kind == types.Null:
		c.report(diag.Errorf(e, CodeOptional, "null used where %s is needed", what).
			WithLabel("%s is null", exprText(e)))
		return false
	case x.IsOptional() && types.NonOptional(x).Kind != types.Any:
		c.report(c.optionalErr(e, x, what))
		return false
	case types.NonOptional(x).Kind == types.Any:
		c.report(anyErr(e, x, what, want))
		return false
	}
	return true
}

// wantBool checks an operand of && || !.
func (c *checker) wantBool(e policy.Expr, x *types.Type, op string) {
	if !c.wantValue(e, x, "a bool", types.BoolType) || x.Kind == types.Bool {
		return
	}
	c.report(diag.Errorf(e, CodeLogic, "%s needs bool operands, got %s", op, x).
		WithLabel("%s is %s", exprText(e), x).
		WithHint("there is no truthiness: compare explicitly, e.g. %s", truthHint(e, x)))
}

// cond checks the condition of if, drop when and stop when.
func (c *checker) cond(e policy.Expr, st *state, what string) {
	x := c.expr(e, st)
	if !c.wantValue(e, x, "a bool condition", types.BoolType) || x.Kind == types.Bool {
		return
	}
	c.report(diag.Errorf(e, CodeCondition, "%s condition must be bool, got %s", what, x).
		WithLabel("%s is %s", exprText(e), x).
		WithHint("there is no truthiness: write %s", truthHint(e, x)))
}

func (c *checker) binary(e *policy.BinaryExpr, st *state) *types.Type {
	switch e.Op {
	case policy.LAND, policy.LOR:
		x := c.expr(e.X, st)
		// && chains narrow left to right; || narrows by the left side
		// having been false.
		y := c.expr(e.Y, c.narrow(e.X, st, e.Op == policy.LAND))
		n := len(c.diags)
		c.wantBool(e.X, x, "operator "+e.Op.String())
		c.wantBool(e.Y, y, "operator "+e.Op.String())
		c.orListHint(e, c.diags[n:])
		return types.BoolType
	case policy.COALESCE:
		return c.coalesce(e, st)
	case policy.IN:
		return c.in(e, st)
	}
	x := c.expr(e.X, st)
	y := c.expr(e.Y, st)
	switch e.Op {
	case policy.EQL, policy.NEQ:
		c.equality(e, x, y)
		return types.BoolType
	case policy.LSS, policy.LEQ, policy.GTR, policy.GEQ:
		c.order(e, x, y)
		return types.BoolType
	case policy.ADD, policy.SUB, policy.MUL, policy.QUO, policy.REM:
		return c.arith(e, x, y)
	}
	return types.InvalidType
}

func (c *checker) equality(e *policy.BinaryExpr, x, y *types.Type) {
	if x.IsInvalid() || y.IsInvalid() {
		return
	}
	if !types.Comparable(x, y) {
		d := diag.Errorf(e, CodeCompare, "cannot compare %s with %s", x, y).
			WithLabel("%s", c.operandLabel(e.X, x, e.Y, y))
		c.report(d.WithHint("%s", compareHint(e, x, y)))
		return
	}
	// x == null on a value that is never null.
	for _, side := range [][2]policy.Expr{{e.X, e.Y}, {e.Y, e.X}} {
		lit, ok := policy.Unparen(side[1]).(*policy.BasicLit)
		if !ok || lit.Kind != policy.LitNull {
			continue
		}
		t := c.info.Types[side[0]]
		if t != nil && !t.IsOptional() && t.Kind != types.Any && !t.IsInvalid() {
			res := "false"
			if e.Op == policy.NEQ {
				res = "true"
			}
			c.report(diag.Warnf(e, CodeNullCompare, "%s is never null: the comparison is always %s", exprText(side[0]), res).
				WithLabel("%s is %s%s", exprText(side[0]), t, c.declaredAt(side[0])))
		}
	}
}

// operandLabel explains the operands' types, citing where a field was
// declared.
func (c *checker) operandLabel(xe policy.Expr, x *types.Type, ye policy.Expr, y *types.Type) string {
	if at := c.declaredAt(xe); at != "" {
		return exprText(xe) + " is " + x.String() + at
	}
	if at := c.declaredAt(ye); at != "" {
		return exprText(ye) + " is " + y.String() + at
	}
	if isPathExpr(xe) || !isPathExpr(ye) {
		return exprText(xe) + " is " + x.String()
	}
	return exprText(ye) + " is " + y.String()
}

func isPathExpr(e policy.Expr) bool {
	switch e.(type) {
	case *policy.FieldExpr, *policy.IndexExpr, *policy.Ident, *policy.MetaExpr:
		return true
	}
	return false
}

func (c *checker) order(e *policy.BinaryExpr, x, y *types.Type) {
	if x.IsInvalid() || y.IsInvalid() {
		return
	}
	if !c.wantValue(e.X, x, "a value to compare", types.NonOptional(y)) || !c.wantValue(e.Y, y, "a value to compare", types.NonOptional(x)) {
		return
	}
	if types.Ordered(x, y) {
		return
	}
	d := diag.Errorf(e, CodeOrder, "operator %s needs two numbers, two strings or two timestamps, got %s and %s", e.Op, x, y).
		WithLabel("%s", c.operandLabel(e.X, x, e.Y, y))
	if (x.IsNumeric() || y.IsNumeric()) && (x.Kind == types.String || y.Kind == types.String) {
		d = d.WithHint("%s", orderHint(e, x))
	}
	if x.Kind == types.Timestamp && y.Kind == types.String {
		d = d.WithHint("turn the string into a timestamp: %s %s %s", exprText(e.X), e.Op, parseTimeHint(e.Y))
	} else if x.Kind == types.String && y.Kind == types.Timestamp {
		d = d.WithHint("turn the string into a timestamp: %s %s %s", parseTimeHint(e.X), e.Op, exprText(e.Y))
	}
	c.report(d)
}

func (c *checker) arith(e *policy.BinaryExpr, x, y *types.Type) *types.Type {
	if x.IsInvalid() || y.IsInvalid() {
		return types.InvalidType
	}
	what := "a number"
	if e.Op == policy.ADD {
		what = "a number or a string"
		if types.NonOptional(x).Kind == types.Array || types.NonOptional(y).Kind == types.Array {
			what = "an array"
		}
	}
	if !c.wantValue(e.X, x, what, y) || !c.wantValue(e.Y, y, what, x) {
		return types.InvalidType
	}
	if (e.Op == policy.QUO || e.Op == policy.REM) && isZero(e.Y) {
		c.report(diag.Errorf(e.Y, CodeDivZero, "division by zero").
			WithLabel("the divisor is the constant 0").
			WithHint("division or modulo by zero is a fault at run time"))
		return types.InvalidType
	}
	switch {
	case x.Kind == types.Int && y.Kind == types.Int:
		return types.IntType
	case x.IsNumeric() && y.IsNumeric():
		return types.FloatType
	case e.Op == policy.ADD && x.Kind == types.String && y.Kind == types.String:
		return types.StringType
	case e.Op == policy.ADD && x.Kind == types.Array && y.Kind == types.Array:
		if elem, ok := types.Join(x.Elem, y.Elem); ok {
			return types.ArrayOf(elem)
		}
		c.report(diag.Errorf(e, CodeArith, "cannot concatenate %s and %s", x, y).
			WithLabel("%s", c.operandLabel(e.X, x, e.Y, y)).
			WithHint("+ concatenates arrays of one element type"))
		return types.InvalidType
	}
	verb := map[policy.Token]string{policy.ADD: "add", policy.SUB: "subtract", policy.MUL: "multiply", policy.QUO: "divide", policy.REM: "take the remainder of"}[e.Op]
	d := diag.Errorf(e, CodeArith, "cannot %s %s and %s", verb, x, y).
		WithLabel("%s", c.operandLabel(e.X, x, e.Y, y))
	switch {
	case e.Op == policy.ADD && (x.Kind == types.String) != (y.Kind == types.String) && (x.IsNumeric() || y.IsNumeric()):
		num := e.X
		if y.IsNumeric() {
			num = e.Y
		}
		if lit, ok := policy.Unparen(num).(*policy.BasicLit); ok {
			d = d.WithHint("+ does not convert: write the number as a string, %s, to concatenate", policy.Quote(lit.Raw))
		} else {
			d = d.WithHint("+ does not convert: write to_string(%s) to concatenate, or convert the string with to_int(...) ?? 0 to add", exprText(num))
		}
	case e.Op == policy.ADD && (x.Kind == types.Array || y.Kind == types.Array):
		d = d.WithHint("+ concatenates two arrays; to add one element, write append(a, v)")
	case e.Op == policy.ADD:
		d = d.WithHint("+ adds two numbers or joins two strings")
	default:
		d = d.WithHint("%s takes two numbers", e.Op)
	}
	c.report(d)
	return types.InvalidType
}

func isZero(e policy.Expr) bool {
	lit, ok := policy.Unparen(e).(*policy.BasicLit)
	return ok && (lit.Kind == policy.LitInt && lit.Int == 0 || lit.Kind == policy.LitFloat && lit.Float == 0)
}

func (c *checker) coalesce(e *policy.BinaryExpr, st *state) *types.Type {
	n := len(c.diags)
	x := c.expr(e.X, st)
	c.precedenceHint(e, c.diags[n:])
	xErr := false
	for _, d := range c.diags[n:] {
		xErr = xErr || d.Severity == diag.Error
	}
	y := c.expr(e.Y, st)
	switch {
	case x.IsInvalid():
		return y
	case y.IsInvalid():
		return types.NonOptional(x)
	case x.Kind == types.Null:
		return y
	case !x.IsOptional() && xErr:
		// A mistake is reported once: the left side is wrong already.
		return x
	case x.Kind == types.Any:
		// An any holds null too (inside if exists(.x), say): the default
		// replaces it.
		return x
	case !x.IsOptional():
		c.report(diag.Warnf(span{e.OpPos, e.End()}, CodeDeadDefault, "%s is never absent: the default is dead", exprText(e.X)).
			WithLabel("%s is %s%s", exprText(e.X), x, c.declaredAt(e.X)).
			WithHint("remove ?? %s", exprText(e.Y)))
		return x
	}
	base := types.NonOptional(x)
	yb := types.NonOptional(y)
	wrap := func(t *types.Type) *types.Type {
		if y.IsOptional() {
			return types.OptionalOf(t)
		}
		return t
	}
	if types.AssignableTo(yb, base) {
		return wrap(base)
	}
	if base.Kind == types.Float && intLit(e.Y) {
		c.asFloat(e.Y)
		return types.FloatType
	}
	if j, ok := types.Join(base, yb); ok {
		return wrap(j)
	}
	c.report(diag.Errorf(e.Y, CodeDefault, "the default is %s, but %s is %s", y, exprText(e.X), x).
		WithLabel("%s is %s%s", exprText(e.X), x, c.declaredAt(e.X)).
		WithHint("give a default of type %s, e.g. %s ?? %s", base, exprText(e.X), defaultFor(base)))
	return base
}

// in checks x in [c1, c2, ...] and records the constant set.
func (c *checker) in(e *policy.BinaryExpr, st *state) *types.Type {
	x := c.expr(e.X, st)
	list, ok := policy.Unparen(e.Y).(*policy.ListLit)
	if !ok {
		// x in name: a constant or a parameter that is an array.
		yt := c.expr(e.Y, st)
		if c.unboundConst(e.Y) && yt.Kind == types.Array {
			return types.BoolType // the set is built when the value is given
		}
		if l, lok := c.constList(e.Y); lok {
			return c.inSet(e, x, l, st)
		}
		c.report(diag.Errorf(e.Y, CodeInList, "in needs a constant list").
			WithHint("write %s in [\"a\", \"b\"]", exprText(e.X)))
		return types.BoolType
	}
	c.info.Types[e.Y] = c.list(list, st)
	return c.inSet(e, x, list, st)
}

// constList is the list literal e names through constants, as a given
// parameter's value or a const's.
func (c *checker) constList(e policy.Expr) (*policy.ListLit, bool) {
	end, _ := c.resolveConst(e)
	x, ok := policy.Unparen(end).(*policy.ListLit)
	return x, ok
}

// maxConstChain bounds a walk through constants that name constants:
// they are acyclic (E0603), so the bound is only a guard.
const maxConstChain = 100

// resolveConst follows e through the constants it names (an identifier,
// or module.name) to where the chain ends: e itself when it names none,
// else the value of the last constant, or that last constant itself
// (unbound) when it has no value: a parameter given at run time.
func (c *checker) resolveConst(e policy.Expr) (end policy.Expr, unbound *Const) {
	for range maxConstChain {
		k := c.info.Consts[policy.Unparen(e)]
		if k == nil {
			return e, nil
		}
		if k.Value == nil {
			return e, k
		}
		e = k.Value
	}
	return e, nil
}

// inSet records the constant set of x in list, e's right side.
func (c *checker) inSet(e *policy.BinaryExpr, x *types.Type, list *policy.ListLit, st *state) *types.Type {
	base := types.NonOptional(x)
	set := &InSet{Elem: base}
	seen := map[any]bool{}
	for _, el := range list.Elems {
		v, lt, ok := constValue(el)
		if !ok {
			c.report(diag.Errorf(el, CodeInList, "in list elements must be constants").
				WithLabel("%s is not a literal", exprText(el)).
				WithHint("compare with == for a computed value"))
			continue
		}
		if !x.IsInvalid() && base.Kind != types.Any {
			fits := lt.Kind == base.Kind || lt.IsNumeric() && base.IsNumeric() || lt.Kind == types.Null && x.IsOptional()
			if !fits {
				d := diag.Errorf(el, CodeInList, "list element is %s, but %s is %s", lt, exprText(e.X), x).
					WithLabel("%s", c.operandLabel(e.X, x, el, lt))
				if base.IsNumeric() && lt.Kind == types.String {
					if _, err := strconv.ParseFloat(v.(string), 64); err == nil {
						d = d.WithHint("write the number %s without quotes", v)
					}
				} else {
					d = d.WithHint("every element must be a %s constant", base)
				}
				c.report(d)
				continue
			}
			if base.Kind == types.Float {
				if i, ok := v.(int64); ok {
					v = float64(i)
					c.asFloat(el)
				}
			}
		}
		if !seen[v] {
			seen[v] = true
			set.Values = append(set.Values, v)
		}
	}
	if base.Kind == types.Any {
		set.Elem = types.NonOptional(c.info.Types[e.Y]).Elem
	}
	c.info.InSets[e] = set
	return types.BoolType
}

// constValue returns the value of a scalar literal (a negated number too).
func constValue(e policy.Expr) (any, *types.Type, bool) {
	lit, neg := policy.SignedLit(e)
	if lit == nil {
		return nil, nil, false
	}
	switch lit.Kind {
	case policy.LitInt:
		if neg {
			return -lit.Int, types.IntType, true
		}
		return lit.Int, types.IntType, true
	case policy.LitFloat:
		if neg {
			return -lit.Float, types.FloatType, true
		}
		return lit.Float, types.FloatType, true
	}
	if neg {
		return nil, nil, false
	}
	switch lit.Kind {
	case policy.LitNull:
		return nil, types.NullType, true
	case policy.LitBool:
		return lit.Bool, types.BoolType, true
	case policy.LitString:
		return lit.Str, types.StringType, true
	}
	return nil, nil, false
}
