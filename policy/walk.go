package policy

// Inspect walks the tree rooted at n in depth-first order, calling f for each
// node; when f returns false, the node's children are skipped. It visits
// statements, expressions, schema types and test blocks, as go/ast.Inspect does.
// A nil n, or a nil pointer of a type isNilNode knows, is skipped, so that
// the cases below pass optional children on unguarded.
func Inspect(n Node, f func(Node) bool) {
	if n == nil || isNilNode(n) || !f(n) {
		return
	}
	switch n := n.(type) {
	case *File:
		if n.Schema != nil {
			Inspect(n.Schema, f)
		}
		for _, d := range n.Decls {
			Inspect(d, f)
		}
		for _, s := range n.Stmts {
			Inspect(s, f)
		}
		for _, t := range n.Tests {
			Inspect(t, f)
		}
	case *Schema:
		Inspect(n.Type, f)
	case *ConstDecl:
		Inspect(n.Name, f)
		Inspect(n.Value, f)
	case *FuncDecl:
		Inspect(n.Name, f)
		for _, prm := range n.Params {
			Inspect(prm, f)
		}
		Inspect(n.Result, f)
		Inspect(n.Body, f)
	case *ParamDecl:
		Inspect(n.Name, f)
		Inspect(n.Type, f)
		Inspect(n.Default, f)
	case *Param:
		Inspect(n.Name, f)
		Inspect(n.Type, f)
		Inspect(n.Default, f)
	case *ReturnStmt:
		Inspect(n.Value, f)
	case *ArrayType:
		Inspect(n.Elem, f)
	case *MapType:
		Inspect(n.Elem, f)
	case *ObjectType:
		for _, fd := range n.Fields {
			Inspect(fd, f)
		}
	case *FieldDecl:
		Inspect(n.Type, f)
	case *OptionalType:
		Inspect(n.Elem, f)
	case *FieldExpr:
		Inspect(n.X, f)
	case *IndexExpr:
		Inspect(n.X, f)
		Inspect(n.Index, f)
	case *CallExpr:
		Inspect(n.Fun, f)
		for _, a := range n.Args {
			Inspect(a, f)
		}
	case *BinaryExpr:
		Inspect(n.X, f)
		Inspect(n.Y, f)
	case *UnaryExpr:
		Inspect(n.X, f)
	case *ParenExpr:
		Inspect(n.X, f)
	case *ListLit:
		for _, e := range n.Elems {
			Inspect(e, f)
		}
	case *MapLit:
		for _, e := range n.Entries {
			Inspect(e.Key, f)
			Inspect(e.Value, f)
		}
	case *SetStmt:
		Inspect(n.Target, f)
		Inspect(n.Value, f)
	case *RemoveStmt:
		for _, t := range n.Targets {
			Inspect(t, f)
		}
	case *StateStmt:
		inspectState(n, f)
	case *RenameStmt:
		Inspect(n.From, f)
		Inspect(n.To, f)
	case *LiftStmt:
		Inspect(n.Target, f)
		Inspect(n.Prefix, f)
	case *SplitStmt:
		Inspect(n.Target, f)
	case *DropStmt:
		Inspect(n.Cond, f)
	case *StopStmt:
		Inspect(n.Cond, f)
	case *IfStmt:
		Inspect(n.Cond, f)
		Inspect(n.Body, f)
		Inspect(n.Else, f)
	case *Block:
		for _, s := range n.Stmts {
			Inspect(s, f)
		}
	case *LetStmt:
		Inspect(n.Name, f)
		Inspect(n.Value, f)
	case *ForStmt:
		Inspect(n.Key, f)
		Inspect(n.Value, f)
		Inspect(n.X, f)
		Inspect(n.Body, f)
	case *Test:
		if len(n.Inputs) == 0 {
			Inspect(n.Input, f)
		}
		for _, in := range n.Inputs {
			for _, c := range in.Clocks {
				Inspect(c.Value, f)
			}
			Inspect(in.Value, f)
		}
		Inspect(n.Tag, f)
		Inspect(n.Want, f)
		for _, prm := range n.Params {
			Inspect(prm, f)
		}
	case *TestParam:
		Inspect(n.Name, f)
		Inspect(n.Value, f)
	}
}

// isNilNode catches typed nil pointers stored in the interface (an absent
// *Ident in a ForStmt, say), which n == nil does not.
func isNilNode(n Node) bool {
	switch n := n.(type) {
	case *Ident:
		return n == nil
	case *BasicLit:
		return n == nil
	case *Block:
		return n == nil
	case *ObjectType:
		return n == nil
	}
	return false
}
