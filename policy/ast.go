// Package policy is the front end of the policy language: positions, the
// lexer, the parser, the plain syntax tree and the canonical formatter.
package policy

// Every node knows the source span it covers: Pos is its first byte, End the
// byte just past it. Spans drive diagnostics (carets under the span) and the
// formatter's placement of comments.
type Node interface {
	Pos() Pos
	End() Pos
}

// Expr is any expression node.
type Expr interface {
	Node
	exprNode()
}

// Stmt is any statement node.
type Stmt interface {
	Node
	stmtNode()
}

// Decl is a declaration of a name at the top of a file: a ConstDecl, a
// FuncDecl or a ParamDecl.
type Decl interface {
	Node
	declNode()
	DeclName() *Ident
}

// TypeExpr is any type written in a schema.
type TypeExpr interface {
	Node
	typeNode()
}

// File is one parsed .policy file.
type File struct {
	Filename string

	Policy Pos // position of the "policy" keyword, or of "module" in a module
	// Module is set in a module file (module "name"): it holds imports,
	// constants, functions and tests only.
	Module  bool
	Name    string // the policy's or module's name, unquoted
	NamePos Pos
	OnFault OnFault // what a fault does to the record
	// OnFaultPos is the position of the on_fault action word, invalid if absent.
	OnFaultPos Pos

	Schema *Schema // nil when the file has no schema block
	// Decls are the const and fn declarations, in source order; with the
	// schema they come after the header and before the statements, in
	// any order.
	Decls []Decl
	// Imports are the import declarations, in source order; they are
	// declarations too, laid out among Decls by position.
	Imports  []*ImportDecl
	Stmts    []Stmt
	Tests    []*Test
	Comments []*Comment // every comment, in source order
	EOF      Pos
}

func (f *File) Pos() Pos { return f.Policy }
func (f *File) End() Pos { return f.EOF }

// OnFault is the policy's answer to a fault (docs/language.md, "Faults").
type OnFault int

const (
	OnFaultKeep OnFault = iota // emit the record unchanged (the default)
	OnFaultDrop                // drop the record
)

// Comment is a '#' comment; Text includes the '#' and excludes the newline.
type Comment struct {
	Hash Pos
	Text string
}

func (c *Comment) Pos() Pos { return c.Hash }
func (c *Comment) End() Pos { return c.Hash.Advance(c.Text) }

// ---------------------------------------------------------------- schema

// Schema is the `schema { ... }` block: the record's declared shape. For
// `schema otlp { ... }` the record is an OTLP log record (docs/otlp.md),
// whose keys the view gives, and the block refines some of them.
type Schema struct {
	Schema Pos // the keyword
	// OTLP is the position of the word otlp in `schema otlp`; it is
	// invalid for a plain schema.
	OTLP Pos
	// Type is the block; nil for `schema otlp` written without one.
	Type *ObjectType
}

func (s *Schema) Pos() Pos { return s.Schema }
func (s *Schema) End() Pos {
	if s.Type == nil {
		return s.OTLP.Advance("otlp")
	}
	return s.Type.End()
}

// IsOTLP reports whether the schema is `schema otlp`: the policy runs over
// OTLP log records. It is false for a nil Schema (a file without one).
func (s *Schema) IsOTLP() bool { return s != nil && s.OTLP.IsValid() }

// IsOTLP reports whether the file's policy runs over OTLP log records, as
// `schema otlp` declares. This is the one place the fact comes from: the
// checker types the record by it, and the backends' programs report it
// (vm.Program.OTLP, lua.Program.OTLP, backend.IsOTLP).
func (f *File) IsOTLP() bool { return f.Schema.IsOTLP() }

// NamedType is a scalar type name: bool int float string bytes timestamp null any.
type NamedType struct {
	NamePos Pos
	Name    string
}

// ArrayType is array<Elem>.
type ArrayType struct {
	Array  Pos
	Elem   TypeExpr
	Rangle Pos // position of '>'
}

// MapType is map<Elem> (keys are strings).
type MapType struct {
	Map    Pos
	Elem   TypeExpr
	Rangle Pos
}

// ObjectType is { name: T ... } with an optional trailing `...` that opens it.
type ObjectType struct {
	Lbrace   Pos
	Fields   []*FieldDecl
	Open     bool
	Ellipsis Pos // valid when Open
	Rbrace   Pos
}

// FieldDecl is one `name: T` line of an object type. Quoted names ("a b": T)
// keep Quoted so the formatter writes them back the same way.
type FieldDecl struct {
	NamePos Pos
	Name    string
	Quoted  bool
	Type    TypeExpr
}

// OptionalType is T?.
type OptionalType struct {
	Elem     TypeExpr
	Question Pos
}

// BadType stands for a type that did not parse.
type BadType struct{ From, To Pos }

func (t *NamedType) Pos() Pos    { return t.NamePos }
func (t *NamedType) End() Pos    { return t.NamePos.Advance(t.Name) }
func (t *ArrayType) Pos() Pos    { return t.Array }
func (t *ArrayType) End() Pos    { return t.Rangle.Advance(">") }
func (t *MapType) Pos() Pos      { return t.Map }
func (t *MapType) End() Pos      { return t.Rangle.Advance(">") }
func (t *ObjectType) Pos() Pos   { return t.Lbrace }
func (t *ObjectType) End() Pos   { return t.Rbrace.Advance("}") }
func (f *FieldDecl) Pos() Pos    { return f.NamePos }
func (f *FieldDecl) End() Pos    { return f.Type.End() }
func (t *OptionalType) Pos() Pos { return t.Elem.Pos() }
func (t *OptionalType) End() Pos { return t.Question.Advance("?") }
func (t *BadType) Pos() Pos      { return t.From }
func (t *BadType) End() Pos      { return t.To }

func (*NamedType) typeNode()    {}
func (*ArrayType) typeNode()    {}
func (*MapType) typeNode()      {}
func (*ObjectType) typeNode()   {}
func (*OptionalType) typeNode() {}
func (*BadType) typeNode()      {}

// ----------------------------------------------------------- expressions

// RootExpr is `.`, the record itself. A path such as .a.b is a FieldExpr
// chain whose innermost X is a RootExpr.
type RootExpr struct {
	Dot Pos
}

// MetaExpr is %tag or %time, the record's metadata.
type MetaExpr struct {
	Percent Pos
	Name    string // "tag" or "time"
}

// Ident is a local variable (let, for) or, as CallExpr.Fun, a built-in name.
type Ident struct {
	NamePos Pos
	Name    string
}

// FieldExpr is X.name or X."quoted name".
type FieldExpr struct {
	X       Expr
	Dot     Pos // the '.' before Name; for .a directly under the root, Dot == X.Pos()
	NamePos Pos
	Name    string // unquoted
	Quoted  bool
}

// IndexExpr is X[Index]: an array index (int) or a map key (string).
type IndexExpr struct {
	X      Expr
	Lbrack Pos
	Index  Expr
	Rbrack Pos
}

// CallExpr is a call of a built-in function, of a function the file
// declares, or, with Qual, of a function of an imported module
// (net.mask_ip(.ip)).
type CallExpr struct {
	Qual   *Ident // the module's name before the '.', nil if unqualified
	Fun    *Ident
	Lparen Pos
	Args   []Expr
	Rparen Pos
}

// BinaryExpr is X Op Y.
type BinaryExpr struct {
	X     Expr
	OpPos Pos
	Op    Token
	Y     Expr
}

// UnaryExpr is Op X (! or -).
type UnaryExpr struct {
	OpPos Pos
	Op    Token
	X     Expr
}

// ParenExpr is (X); kept so the formatter can write it back.
type ParenExpr struct {
	Lparen Pos
	X      Expr
	Rparen Pos
}

// Unparen strips the parentheses around x: it returns the innermost X of a
// ParenExpr chain, or x itself when x is not a ParenExpr.
func Unparen(x Expr) Expr {
	for {
		p, ok := x.(*ParenExpr)
		if !ok {
			return x
		}
		x = p.X
	}
}

// SignedLit returns the literal x is, in parentheses or not, and whether a
// unary minus negates it: -1 and (-(2.5)) are literals with neg set. It
// returns nil, false when x is no such literal (--1 is not one).
func SignedLit(x Expr) (lit *BasicLit, neg bool) {
	x = Unparen(x)
	if u, ok := x.(*UnaryExpr); ok && u.Op == SUB {
		neg, x = true, Unparen(u.X)
	}
	if lit, _ = x.(*BasicLit); lit == nil {
		return nil, false
	}
	return lit, neg
}

// LitKind says which kind of literal a BasicLit is.
type LitKind int

const (
	LitNull LitKind = iota
	LitBool
	LitInt
	LitFloat
	LitString // "..." or `...`; Raw tells which
)

// BasicLit is a scalar literal. The parser decodes it: Str for strings (escapes
// resolved), Int for integers, Float for floats, Bool for booleans. Raw is the
// source text, kept for the formatter.
type BasicLit struct {
	ValuePos Pos
	Kind     LitKind
	Raw      string
	Str      string
	Int      int64
	Float    float64
	Bool     bool
}

// ListLit is [e, ...].
type ListLit struct {
	Lbrack Pos
	Elems  []Expr
	Rbrack Pos
}

// MapLit is {"key": e, ...}: a map or object literal, JSON style.
type MapLit struct {
	Lbrace  Pos
	Entries []*MapEntry
	Rbrace  Pos
}

// MapEntry is one "key": value pair of a MapLit.
type MapEntry struct {
	Key   *BasicLit // always a LitString
	Colon Pos
	Value Expr
}

// BadExpr stands for an expression that did not parse.
type BadExpr struct{ From, To Pos }

func (x *RootExpr) Pos() Pos  { return x.Dot }
func (x *RootExpr) End() Pos  { return x.Dot.Advance(".") }
func (x *MetaExpr) Pos() Pos  { return x.Percent }
func (x *MetaExpr) End() Pos  { return x.Percent.Advance("%" + x.Name) }
func (x *Ident) Pos() Pos     { return x.NamePos }
func (x *Ident) End() Pos     { return x.NamePos.Advance(x.Name) }
func (x *FieldExpr) Pos() Pos { return x.X.Pos() }
func (x *FieldExpr) End() Pos { return x.NamePos.Advance(fieldText(x)) }
func (x *IndexExpr) Pos() Pos { return x.X.Pos() }
func (x *IndexExpr) End() Pos { return x.Rbrack.Advance("]") }
func (x *CallExpr) Pos() Pos {
	if x.Qual != nil {
		return x.Qual.Pos()
	}
	return x.Fun.Pos()
}
func (x *CallExpr) End() Pos   { return x.Rparen.Advance(")") }
func (x *BinaryExpr) Pos() Pos { return x.X.Pos() }
func (x *BinaryExpr) End() Pos { return x.Y.End() }
func (x *UnaryExpr) Pos() Pos  { return x.OpPos }
func (x *UnaryExpr) End() Pos  { return x.X.End() }
func (x *ParenExpr) Pos() Pos  { return x.Lparen }
func (x *ParenExpr) End() Pos  { return x.Rparen.Advance(")") }
func (x *BasicLit) Pos() Pos   { return x.ValuePos }
func (x *BasicLit) End() Pos   { return x.ValuePos.Advance(x.Raw) }
func (x *ListLit) Pos() Pos    { return x.Lbrack }
func (x *ListLit) End() Pos    { return x.Rbrack.Advance("]") }
func (x *MapLit) Pos() Pos     { return x.Lbrace }
func (x *MapLit) End() Pos     { return x.Rbrace.Advance("}") }
func (x *BadExpr) Pos() Pos    { return x.From }
func (x *BadExpr) End() Pos    { return x.To }

func (*RootExpr) exprNode()   {}
func (*MetaExpr) exprNode()   {}
func (*Ident) exprNode()      {}
func (*FieldExpr) exprNode()  {}
func (*IndexExpr) exprNode()  {}
func (*CallExpr) exprNode()   {}
func (*BinaryExpr) exprNode() {}
func (*UnaryExpr) exprNode()  {}
func (*ParenExpr) exprNode()  {}
func (*BasicLit) exprNode()   {}
func (*ListLit) exprNode()    {}
func (*MapLit) exprNode()     {}
func (*BadExpr) exprNode()    {}

func fieldText(x *FieldExpr) string {
	if x.Quoted {
		return Quote(x.Name)
	}
	return x.Name
}

// ------------------------------------------------------------ statements

// SetStmt is `set Target = Value` (Op ASSIGN) or `set Target ?= Value`
// (Op QASSIGN, only when Target is absent or null).
type SetStmt struct {
	Set    Pos
	Target Expr
	OpPos  Pos
	Op     Token
	Value  Expr
}

// RemoveStmt is `remove P, Q, ...`.
type RemoveStmt struct {
	Remove  Pos
	Targets []Expr
}

// RenameStmt is `rename From to To`.
type RenameStmt struct {
	Rename Pos
	From   Expr
	ToPos  Pos // the "to" keyword
	To     Expr
}

// LiftStmt is `lift Target [prefix "s"]`; Prefix is nil when absent.
type LiftStmt struct {
	Lift   Pos
	Target Expr
	Prefix *BasicLit
}

// SplitStmt is `split Target`: one record per element of the array at
// Target (docs/language.md, "split").
type SplitStmt struct {
	Split  Pos
	Target Expr
}

// DropStmt is `drop` or `drop when Cond` (Cond nil when unconditional).
type DropStmt struct {
	Drop Pos
	Cond Expr
}

// StopStmt is `stop` or `stop when Cond`.
type StopStmt struct {
	Stop Pos
	Cond Expr
}

// IfStmt is `if Cond { Body } [else Else]`; Else is nil, *IfStmt or *Block.
type IfStmt struct {
	If   Pos
	Cond Expr
	Body *Block
	Else Stmt
}

// Block is { stmts }.
type Block struct {
	Lbrace Pos
	Stmts  []Stmt
	Rbrace Pos
}

// LetStmt is `let Name = Value`.
type LetStmt struct {
	Let   Pos
	Name  *Ident
	Value Expr
}

// ForStmt is `for Key, Value in X { Body }`. Either name may be `_`.
type ForStmt struct {
	For   Pos
	Key   *Ident
	Value *Ident
	X     Expr
	Body  *Block
}

// BadStmt stands for a statement that did not parse; the parser skips to the
// next line and goes on, so later errors are still found.
type BadStmt struct{ From, To Pos }

func (s *SetStmt) Pos() Pos    { return s.Set }
func (s *SetStmt) End() Pos    { return s.Value.End() }
func (s *RemoveStmt) Pos() Pos { return s.Remove }
func (s *RemoveStmt) End() Pos {
	if n := len(s.Targets); n > 0 {
		return s.Targets[n-1].End()
	}
	return s.Remove.Advance("remove")
}
func (s *RenameStmt) Pos() Pos { return s.Rename }
func (s *RenameStmt) End() Pos { return s.To.End() }
func (s *LiftStmt) Pos() Pos   { return s.Lift }
func (s *LiftStmt) End() Pos {
	if s.Prefix != nil {
		return s.Prefix.End()
	}
	return s.Target.End()
}
func (s *SplitStmt) Pos() Pos { return s.Split }
func (s *SplitStmt) End() Pos { return s.Target.End() }
func (s *DropStmt) Pos() Pos  { return s.Drop }
func (s *DropStmt) End() Pos {
	if s.Cond != nil {
		return s.Cond.End()
	}
	return s.Drop.Advance("drop")
}
func (s *StopStmt) Pos() Pos { return s.Stop }
func (s *StopStmt) End() Pos {
	if s.Cond != nil {
		return s.Cond.End()
	}
	return s.Stop.Advance("stop")
}
func (s *IfStmt) Pos() Pos { return s.If }
func (s *IfStmt) End() Pos {
	if s.Else != nil {
		return s.Else.End()
	}
	return s.Body.End()
}
func (s *Block) Pos() Pos     { return s.Lbrace }
func (s *Block) End() Pos     { return s.Rbrace.Advance("}") }
func (s *LetStmt) Pos() Pos   { return s.Let }
func (s *LetStmt) End() Pos   { return s.Value.End() }
func (s *ForStmt) Pos() Pos   { return s.For }
func (s *ForStmt) End() Pos   { return s.Body.End() }
func (s *BadStmt) Pos() Pos   { return s.From }
func (s *BadStmt) End() Pos   { return s.To }
func (*SetStmt) stmtNode()    {}
func (*RemoveStmt) stmtNode() {}
func (*RenameStmt) stmtNode() {}
func (*LiftStmt) stmtNode()   {}
func (*DropStmt) stmtNode()   {}
func (*SplitStmt) stmtNode()  {}
func (*StopStmt) stmtNode()   {}
func (*IfStmt) stmtNode()     {}
func (*Block) stmtNode()      {}
func (*LetStmt) stmtNode()    {}
func (*ForStmt) stmtNode()    {}
func (*BadStmt) stmtNode()    {}

// ReturnStmt is `return Value`, in the body of a function.
type ReturnStmt struct {
	Return Pos
	Value  Expr
}

func (s *ReturnStmt) Pos() Pos { return s.Return }
func (s *ReturnStmt) End() Pos {
	if s.Value != nil {
		return s.Value.End()
	}
	return s.Return.Advance("return")
}
func (*ReturnStmt) stmtNode() {}

// ---------------------------------------------------------- declarations

// ConstDecl is `const Name = Value`: a name for a constant expression.
type ConstDecl struct {
	Const Pos
	Name  *Ident
	Value Expr
}

// FuncDecl is `fn Name(Params) Result { Body }`: a pure function of its
// parameters, whose body holds let, if and return.
type FuncDecl struct {
	Fn     Pos
	Name   *Ident
	Lparen Pos
	Params []*Param
	Rparen Pos
	Result TypeExpr
	Body   *Block
}

// Param is one `name: T` or `name: T = default` of a function; Default is
// nil when the parameter has none.
type Param struct {
	Name    *Ident
	Type    TypeExpr
	Default Expr
}

func (d *ConstDecl) Pos() Pos { return d.Const }
func (d *ConstDecl) End() Pos { return d.Value.End() }
func (d *FuncDecl) Pos() Pos  { return d.Fn }
func (d *FuncDecl) End() Pos  { return d.Body.End() }
func (p *Param) Pos() Pos     { return p.Name.Pos() }
func (p *Param) End() Pos {
	if p.Default != nil {
		return p.Default.End()
	}
	return p.Type.End()
}

// ParamDecl is `param Name: Type` or `param Name: Type = Default`: a
// constant whose value is given when the policy is loaded. Default is nil
// when the parameter has none.
type ParamDecl struct {
	Param   Pos
	Name    *Ident
	Type    TypeExpr
	Default Expr
}

func (d *ParamDecl) Pos() Pos { return d.Param }
func (d *ParamDecl) End() Pos {
	if d.Default != nil {
		return d.Default.End()
	}
	return d.Type.End()
}

// ImportDecl is `import "path.policy"` or `import "path.policy" as Name`:
// the module in the file at Path, relative to the importing file, under
// its declared name or under Name.
type ImportDecl struct {
	Import Pos
	Path   *BasicLit
	As     Pos    // the word as, invalid without it
	Name   *Ident // the name after as, nil without it
}

func (d *ImportDecl) Pos() Pos { return d.Import }
func (d *ImportDecl) End() Pos {
	if d.Name != nil {
		return d.Name.End()
	}
	return d.Path.End()
}

func (*ConstDecl) declNode() {}
func (*FuncDecl) declNode()  {}
func (*ParamDecl) declNode() {}

// DeclName is the name the declaration declares.
func (d *ParamDecl) DeclName() *Ident { return d.Name }

// DeclName is the name the declaration declares.
func (d *ConstDecl) DeclName() *Ident { return d.Name }

// DeclName is the name the declaration declares.
func (d *FuncDecl) DeclName() *Ident { return d.Name }

// ----------------------------------------------------------------- tests

// ExpectKind is what a test block expects.
type ExpectKind int

const (
	ExpectRecord  ExpectKind = iota // expect {json}
	ExpectDropped                   // expect dropped
	ExpectFault                     // expect fault
	// ExpectRecords is expect [{json}, …]: the records that came out, in
	// order ([] when none did). Want is then a *ListLit.
	ExpectRecords
)

// Test is a `test "name" { param ...; input ...; tag ...; expect ... }` block. Input and
// Expect are literal expressions (MapLit, ListLit, BasicLit, nested); the
// checker verifies that they are constant JSON values.
type Test struct {
	Test    Pos
	Name    string
	NamePos Pos
	Lbrace  Pos

	InputPos Pos
	Input    Expr // nil if missing (the parser reports it)
	// Inputs are every input line, in order, each with the at and wait
	// lines before it; Input and InputPos are the first's.
	Inputs []*TestInput
	Tag    *BasicLit // nil when the test gives no tag

	ExpectPos Pos
	Expect    ExpectKind
	Want      Expr // the expected record (ExpectRecord) or records (ExpectRecords)

	// Params are the test's `param name value` lines: the values of the
	// policy's parameters the test loads it with.
	Params []*TestParam
	// Asserts are the `assert C` lines of a module's test, which has no
	// input and no expect.
	Asserts []*Assert

	Rbrace Pos
}

// TestParam is `param Name Value` in a test block; Value is a constant
// JSON literal, as an input is.
type TestParam struct {
	Param Pos
	Name  *Ident
	Value Expr
}

// Assert is `assert Cond` in a module's test: a bool expression over
// constants and calls of functions.
type Assert struct {
	Assert Pos
	Cond   Expr
}

func (a *Assert) Pos() Pos { return a.Assert }
func (a *Assert) End() Pos { return a.Cond.End() }

func (t *TestParam) Pos() Pos { return t.Param }
func (t *TestParam) End() Pos { return t.Value.End() }

func (t *Test) Pos() Pos { return t.Test }
func (t *Test) End() Pos { return t.Rbrace.Advance("}") }
