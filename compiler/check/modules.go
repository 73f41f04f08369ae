package check

import (
	"maps"
	"slices"
	"strings"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/suggest"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/spec"
)

// Module is a checked module file: the constants and functions a file
// that imports it may use, qualified by the import's name. It is checked
// once however often it is imported; an importer's Info takes in its
// side tables, so that the backends find the types of its functions'
// bodies where they find the policy's own.
type Module struct {
	Name   string // declared: module "name"
	Path   string // where the loader read it
	File   *policy.File
	Info   *Info
	Consts map[string]*Const
	Funcs  map[string]*Func
	// Errors is set when the module's own check found errors: an
	// importer cannot compile, and its uses of the module add no errors
	// of their own.
	Errors bool
}

// Imports gives each import declaration of a file the module it loads;
// one whose file could not be loaded is absent (the loader said why).
type Imports map[*policy.ImportDecl]*Module

// Config is what a check knows beyond the file: the values of its
// parameters, and the modules its imports load.
type Config struct {
	Params spec.Params
	// Bound says the parameters were given (CheckParams): one left
	// out without a default is an error.
	Bound   bool
	Imports Imports
}

// Check type-checks f, as the package's Check does, with cfg.
func (cfg Config) Check(f *policy.File) (*Info, diag.List) {
	return check(f, cfg.Params, cfg.Bound, cfg.Imports)
}

// CheckModule checks the module file f, whose imports load imports, and
// returns it ready for importers with every diagnostic of its own.
func CheckModule(f *policy.File, path string, imports Imports) (*Module, diag.List) {
	info, ds := check(f, nil, false, imports)
	for _, fn := range info.modFuncs {
		fn.File = path
	}
	return &Module{Name: f.Name, Path: path, File: f, Info: info, Consts: info.modConsts, Funcs: info.modFuncs, Errors: ds.HasErrors()}, ds
}

// ImportName is the name an import brings its module in under: the name
// after as, or else the module's declared name (m nil: the file's base).
func ImportName(d *policy.ImportDecl, m *Module) string {
	switch {
	case d.Name != nil:
		return d.Name.Name
	case m != nil:
		return m.Name
	}
	base := d.Path.Str[strings.LastIndexByte(d.Path.Str, '/')+1:]
	return strings.TrimSuffix(base, ".policy")
}

// imported is one name an import declares.
type imported struct {
	decl *policy.ImportDecl
	mod  *Module // nil when the file could not be loaded
}

// importDecls declares the names of f's imports and takes in the side
// tables of their modules.
func (c *checker) importDecls(ds []*policy.ImportDecl, imports Imports) {
	c.imports = map[string]*imported{}
	for _, d := range ds {
		m := imports[d]
		name := ImportName(d, m)
		if prev := c.imports[name]; prev != nil {
			c.report(diag.Errorf(d, CodeImportClash, "two modules imported under the name %s", name).
				WithLabel("the first import of %s is at line %d", name, prev.decl.Import.Line).
				WithHint("give one of them another name: import %s as %s2", d.Path.Raw, name))
			continue
		}
		c.imports[name] = &imported{decl: d, mod: m}
		if m == nil {
			continue
		}
		c.take(m)
	}
}

// take adds the side tables of m (which hold those of its own imports)
// to the file's, and m to Info.Modules after its imports.
func (c *checker) take(m *Module) {
	if slices.Contains(c.info.Modules, m) {
		return
	}
	for _, dep := range m.Info.Modules {
		c.take(dep)
	}
	mi, info := m.Info, c.info
	maps.Copy(info.Types, mi.Types)
	maps.Copy(info.Calls, mi.Calls)
	maps.Copy(info.Regexps, mi.Regexps)
	maps.Copy(info.Defs, mi.Defs)
	maps.Copy(info.Uses, mi.Uses)
	maps.Copy(info.InSets, mi.InSets)
	maps.Copy(info.Defaults, mi.Defaults)
	maps.Copy(info.Consts, mi.Consts)
	maps.Copy(info.Funcs, mi.Funcs)
	maps.Copy(info.FuncDecls, mi.FuncDecls)
	info.Modules = append(info.Modules, m)
}

// module resolves the module name qual of a qualified use; it reports an
// unknown one, and returns nil then or when the module did not load.
func (c *checker) module(qual *policy.Ident) *Module {
	im := c.imports[qual.Name]
	if im == nil {
		d := diag.Errorf(qual, CodeUnknownModule, "no module is imported under the name %s", qual.Name)
		if s := suggest.Closest(qual.Name, slices.Sorted(maps.Keys(c.imports))); s != "" {
			d = d.WithHint("did you mean %s?", s)
		} else {
			d = d.WithHint(`import the module first: import "%s.policy"`, qual.Name)
		}
		c.report(d)
		return nil
	}
	c.info.Qualifiers[qual] = im.decl
	return im.mod
}

// unknownMember reports that m has no function or constant name (at n).
func (c *checker) unknownMember(n policy.Node, m *Module, qual, name, what string) {
	if m.Errors && (m.Funcs[name] != nil || m.Consts[name] != nil) {
		return
	}
	d := diag.Errorf(n, CodeUnknownMember, "module %s has no %s %s", m.Name, what, name)
	var names []string
	if what == "function" {
		names = slices.Sorted(maps.Keys(m.Funcs))
		if k := m.Consts[name]; k != nil {
			c.report(d.WithHint("%s.%s is a constant, not a function: use it without ()", qual, name))
			return
		}
	} else {
		names = slices.Sorted(maps.Keys(m.Consts))
		if m.Funcs[name] != nil {
			c.report(d.WithHint("%s.%s is a function: call it, %s.%s(...)", qual, name, qual, name))
			return
		}
	}
	if s := suggest.Closest(name, names); s != "" {
		d = d.WithHint("did you mean %s.%s?", qual, s)
	} else if len(names) > 0 {
		d = d.WithHint("module %s declares %s", m.Name, strings.Join(names, ", "))
	} else {
		d = d.WithHint("module %s (%s) declares no %s", m.Name, m.Path, what)
	}
	c.report(d)
}

// qualifiedCall checks a call qual.name(...) of a module's function.
func (c *checker) qualifiedCall(e *policy.CallExpr, st *state) *types.Type {
	m := c.module(e.Qual)
	var f *Func
	if m != nil {
		if f = m.Funcs[e.Fun.Name]; f == nil {
			c.unknownMember(e.Fun, m, e.Qual.Name, e.Fun.Name, "function")
		}
	}
	if f == nil {
		for _, a := range e.Args {
			c.expr(a, st)
		}
		return types.InvalidType
	}
	return c.callFunc(e, f, st)
}

// qualified reports whether e is a module's constant, qual.name: a field
// of a name that no local has and an import has, or that is no name at
// all but a slip away from an import's (E0616 then, not E0204).
func (c *checker) qualified(e *policy.FieldExpr) (*policy.Ident, bool) {
	id, ok := e.X.(*policy.Ident)
	if !ok || e.Quoted || c.lookup(id.Name) != nil {
		return nil, false
	}
	if c.imports[id.Name] != nil {
		return id, true
	}
	if c.consts[id.Name] != nil || len(c.imports) == 0 {
		return nil, false
	}
	return id, suggest.Closest(id.Name, slices.Sorted(maps.Keys(c.imports))) != ""
}

// qualifiedConst types qual.name, a constant of the module qual.
func (c *checker) qualifiedConst(e *policy.FieldExpr, qual *policy.Ident) *types.Type {
	m := c.module(qual)
	if m == nil {
		return types.InvalidType
	}
	k := m.Consts[e.Name]
	if k == nil {
		c.unknownMember(span{e.NamePos, e.End()}, m, qual.Name, e.Name, "constant")
		return types.InvalidType
	}
	c.info.Consts[e] = k
	return k.Type
}

// asserts checks the assert lines of a module's tests: bool conditions
// over constants and calls.
func (c *checker) asserts(t *policy.Test) {
	for _, a := range t.Asserts {
		var bad policy.Expr
		policy.Inspect(a.Cond, func(n policy.Node) bool {
			if bad != nil {
				return false
			}
			if x, ok := n.(policy.Expr); ok && recordAccess(x) != "" {
				bad = x
				return false
			}
			return true
		})
		if bad != nil {
			c.report(diag.Errorf(bad, CodeAssert, "an assert reads no record: %s %s", exprText(bad), recordAccess(bad)).
				WithHint("a module's test calls its functions with constant arguments: assert f(\"a\") == \"b\""))
			continue
		}
		saved := c.scope
		c.scope = &scope{names: map[string]*Local{}}
		tt := c.expr(a.Cond, &state{root: types.ObjectOf(true)})
		c.scope = saved
		if !tt.IsInvalid() && tt.Kind != types.Bool {
			c.report(diag.Errorf(a.Cond, CodeAssert, "assert needs a bool, and %s is %s", exprText(a.Cond), tt).
				WithHint("compare the result with what you expect: assert %s == ...", exprText(a.Cond)))
		}
	}
}

// importedFunc is name qualified by the first import (by name) whose
// module declares a function of that name, or "".
func (c *checker) importedFunc(name string) string {
	for _, q := range slices.Sorted(maps.Keys(c.imports)) {
		if m := c.imports[q].mod; m != nil && m.Funcs[name] != nil {
			return q + "." + name
		}
	}
	return ""
}

// importedConst is importedFunc for a constant.
func (c *checker) importedConst(name string) string {
	for _, q := range slices.Sorted(maps.Keys(c.imports)) {
		if m := c.imports[q].mod; m != nil && m.Consts[name] != nil {
			return q + "." + name
		}
	}
	return ""
}
