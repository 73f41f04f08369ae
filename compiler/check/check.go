// Package check is the type checker of the policy language: it resolves the
// schema, types every expression with flow typing, and reports diagnostics.
package check

import (
	"regexp"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/spec"
)

// Info is what the checker learned about a file, for the code generator and
// the Lua transpiler. Maps are keyed by syntax-tree nodes, as in go/types.
type Info struct {
	// Root is the record type the schema declares ({...} without schema;
	// for schema otlp the closed object of the OTLP view's keys, refined).
	Root *types.Type
	// Types holds the type of every expression, after narrowing. An
	// integer literal whose type here is float is used as a float (the
	// default of ?? on a float, say) and must be emitted as one. The
	// target of a set holds the type written.
	Types map[policy.Expr]*types.Type
	// Guards holds, for every record path read (each FieldExpr and IndexExpr
	// over the record, and the RootExpr), the type the stored value must
	// have at run time: the schema's type, as changed by earlier writes but
	// not narrowed. A value of another kind is a type_mismatch fault. Where
	// Types is narrower (after P != null or is_string(P), and above P after
	// exists(P)), the narrowing test has proved it.
	Guards map[policy.Expr]*types.Type
	// PresentGuards holds, for a record path read through an optional
	// map or object (.meta.user, .meta optional), the type the stored
	// value must have when that container is there: the schema's type of
	// the field, which Guards holds only made optional. A field declared
	// without ? is required wherever its container is present: absent or
	// null there is a type_mismatch fault, as anywhere else.
	PresentGuards map[policy.Expr]*types.Type
	// Calls holds the built-in each call resolves to.
	Calls map[*policy.CallExpr]*builtin.Func
	// Regexps holds the compiled pattern of every constant regex argument,
	// keyed by the argument expression.
	Regexps map[policy.Expr]*regexp.Regexp
	// Defs maps the identifier of each let and for variable to its local;
	// Uses maps each identifier that reads a local to it.
	Defs map[*policy.Ident]*Local
	Uses map[*policy.Ident]*Local
	// InSets holds the constant set of each x in [...] expression.
	InSets map[*policy.BinaryExpr]*InSet
	// Defaults holds the arguments of each call that leaves out arguments
	// with defaults: the call's own, then literals of the defaults (typed
	// in Types; for a function, the default expressions of its
	// declaration). Backends read arguments through Args.
	Defaults map[*policy.CallExpr][]policy.Expr
	// Consts maps each identifier that names a constant, and each
	// module.name that names a module's constant (a FieldExpr), to it;
	// backends compile it as the constant's value.
	Consts map[policy.Expr]*Const
	// Funcs holds the function each call of a declared function calls
	// (Calls holds those of built-ins), and FuncDecls the function of
	// each declaration.
	Funcs     map[*policy.CallExpr]*Func
	FuncDecls map[*policy.FuncDecl]*Func
	// Modules are the modules the file imports, directly or through
	// other modules, each once, every module after those it imports.
	// Their side tables are in the maps above.
	Modules []*Module
	// Imports are the modules the file's imports load, as the check was
	// given them: a check again with parameters' values takes them.
	Imports Imports
	// Qualifiers maps the module name of each qualified call or
	// constant (the net of net.mask(.ip)) to the import that declares it.
	Qualifiers map[*policy.Ident]*policy.ImportDecl
	// Unbound is set when a parameter's value comes at run time only
	// (Check, not CheckParams): the file checks, but no backend can
	// compile it until the value is known.
	Unbound bool

	// modConsts and modFuncs are the file's constants and functions by
	// name, for a module's importers (CheckModule).
	modConsts map[string]*Const
	modFuncs  map[string]*Func
	// States holds what the checker resolved of each dedupe, rate_limit
	// and sample statement; StateOrder lists them in source order.
	States     map[*policy.StateStmt]*StateInfo
	StateOrder []*policy.StateStmt
}

// Args returns the arguments of the call e, those it leaves out filled in
// with their defaults: every backend passes a built-in all its arguments.
func (info *Info) Args(e *policy.CallExpr) []policy.Expr {
	if args, ok := info.Defaults[e]; ok {
		return args
	}
	return e.Args
}

// LocalKind says how a local was declared.
type LocalKind int

const (
	LetVar   LocalKind = iota // let x = E
	ForKey                    // k of for k, v in E
	ForValue                  // v of for k, v in E
	Param                     // a parameter of a function
)

// Local is a local variable.
type Local struct {
	Name string
	Kind LocalKind
	Decl *policy.Ident
	Type *types.Type
	ID   int // unique within the file, in declaration order from 1
	path *pathNode
}

// InSet is the constant list of an `in` test: Values holds nil, bool, int64,
// float64 or string constants, without duplicates, in source order. Elem is
// the element type.
type InSet struct {
	Elem   *types.Type
	Values []any
}

// Check type-checks f and returns what it learned and every diagnostic
// (sorted; errors and warnings). It does not stop at the first error.
// Parameters without a default are typed by their declaration, their
// values left to run time (CheckParams gives them).
func Check(f *policy.File) (*Info, diag.List) { return check(f, nil, false, nil) }

func check(f *policy.File, params spec.Params, bound bool, imports Imports) (*Info, diag.List) {
	c := &checker{
		params: params,
		bound:  bound,
		file:   f,
		info: &Info{
			Types:         map[policy.Expr]*types.Type{},
			Guards:        map[policy.Expr]*types.Type{},
			PresentGuards: map[policy.Expr]*types.Type{},
			Calls:         map[*policy.CallExpr]*builtin.Func{},
			Regexps:       map[policy.Expr]*regexp.Regexp{},
			Defs:          map[*policy.Ident]*Local{},
			Uses:          map[*policy.Ident]*Local{},
			InSets:        map[*policy.BinaryExpr]*InSet{},

			Defaults:  map[*policy.CallExpr][]policy.Expr{},
			Consts:    map[policy.Expr]*Const{},
			Funcs:     map[*policy.CallExpr]*Func{},
			FuncDecls: map[*policy.FuncDecl]*Func{},

			Qualifiers: map[*policy.Ident]*policy.ImportDecl{},
			States:     map[*policy.StateStmt]*StateInfo{},
		},
		globals:  map[string]policy.Decl{},
		consts:   map[string]*Const{},
		funcs:    map[string]*Func{},
		clashes:  map[string]bool{},
		setAt:    map[int]bool{},
		paths:    map[childKey]*pathNode{},
		narrowed: map[narrowKey]*state{},

		presentReads: map[policy.Expr]bool{},
	}
	c.otlp = f.IsOTLP()
	c.record = c.newPathNode(nil, seg{}, nil)
	c.info.Root = c.schema(f.Schema)
	c.info.Imports = imports
	c.importDecls(f.Imports, imports)
	c.decls(f.Decls)
	c.info.modConsts, c.info.modFuncs = c.consts, c.funcs
	if bound {
		c.unknownParams()
	}
	st := &state{root: c.info.Root}
	c.scope = &scope{names: map[string]*Local{}}
	c.stmts(f.Stmts, st)
	c.tests(f.Tests)
	for i := range c.diags {
		c.diags[i].Filename = f.Filename
	}
	return c.info, diag.Sort(c.diags)
}

type checker struct {
	file   *policy.File
	otlp   bool // the schema is schema otlp (otlp.go)
	info   *Info
	diags  diag.List
	quiet  int // > 0 while a loop body is checked for its fixpoint
	scope  *scope
	locals int
	loops  []loopInfo
	// setAt records the offsets of set statements, so that a label can say
	// "set at line N" rather than "declared at line N".
	setAt map[int]bool
	// record is the path of the record, the base of the interned paths
	// (see pathNode) that paths holds.
	record  *pathNode
	paths   map[childKey]*pathNode
	pathIDs uint64
	// typos holds every field name, for the near-miss warning (nearField).
	typos typoIndex
	// narrowed remembers the narrowings of the statement being checked.
	narrowed map[narrowKey]*state
	// presentReads holds the reads of an optional path that exists()
	// proved present (for the hint of E0307).
	presentReads map[policy.Expr]bool

	// globals holds the file's declarations by name; consts and funcs
	// the constants and functions among them (decls.go).
	globals map[string]policy.Decl
	consts  map[string]*Const
	funcs   map[string]*Func
	// clashes are the names declared twice (E0607): their calls add no
	// error of their own.
	clashes map[string]bool
	// fn is the function whose body is checked, nil outside one; inConst
	// the constants whose values are being typed, innermost last.
	fn      *funcCtx
	inConst []*Const
	// imports are the modules the file imports, by the name each is
	// imported under (modules.go).
	imports map[string]*imported
	// params are the values given to the parameters; bound says they
	// were given (CheckParams), so that one left out is an error.
	params spec.Params
	bound  bool
	// split is the policy's split statement, once checked (split.go).
	split1 *policy.SplitStmt
}

type scope struct {
	parent *scope
	names  map[string]*Local
}

func (c *checker) lookup(name string) *Local {
	for s := c.scope; s != nil; s = s.parent {
		if l := s.names[name]; l != nil {
			return l
		}
	}
	return nil
}

func (c *checker) openScope()  { c.scope = &scope{parent: c.scope, names: map[string]*Local{}} }
func (c *checker) closeScope() { c.scope = c.scope.parent }

func (c *checker) report(d diag.Diagnostic) {
	if c.quiet > 0 {
		return
	}
	c.diags = append(c.diags, d)
}

// span is a Node made of two positions, for diagnostics over a range that
// no single node covers (the "?? b" of a dead default).
type span struct{ from, to policy.Pos }

func (s span) Pos() policy.Pos { return s.from }
func (s span) End() policy.Pos { return s.to }

// schema resolves the schema block to the record type.
func (c *checker) schema(s *policy.Schema) *types.Type {
	if s.IsOTLP() {
		return c.otlpRecord(s.Type)
	}
	if s == nil || s.Type == nil {
		return types.ObjectOf(true)
	}
	return c.typeExpr(s.Type)
}

func (c *checker) typeExpr(t policy.TypeExpr) *types.Type {
	switch t := t.(type) {
	case *policy.NamedType:
		if b := types.Basic(t.Name); b != nil {
			return b
		}
		return types.InvalidType // the parser reported it (E0018)
	case *policy.ArrayType:
		return types.ArrayOf(c.typeExpr(t.Elem))
	case *policy.MapType:
		return types.MapOf(c.typeExpr(t.Elem))
	case *policy.OptionalType:
		return types.OptionalOf(c.typeExpr(t.Elem))
	case *policy.ObjectType:
		if t == nil {
			return types.InvalidType
		}
		var fields []types.Field
		seen := map[string]*policy.FieldDecl{}
		for _, fd := range t.Fields {
			if fd == nil || fd.Type == nil {
				continue
			}
			ft := c.typeExpr(fd.Type)
			if prev := seen[fd.Name]; prev != nil {
				c.report(diag.Errorf(span{fd.NamePos, fd.NamePos.Advance(fieldName(fd))}, CodeDupField, "field %s declared twice", fd.Name).
					WithLabel("first declared at line %d", prev.NamePos.Line).
					WithHint("remove one of the two lines"))
				continue
			}
			seen[fd.Name] = fd
			c.typos.add(fd.Name)
			fields = append(fields, types.Field{Name: fd.Name, Type: ft, Decl: fd.NamePos})
		}
		return types.ObjectOf(t.Open, fields...)
	}
	return types.InvalidType
}

func fieldName(fd *policy.FieldDecl) string {
	if fd.Quoted {
		return policy.Quote(fd.Name)
	}
	return fd.Name
}
