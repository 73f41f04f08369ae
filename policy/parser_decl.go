package policy

import (
	"strconv"
	"strings"
)

// This file parses the declarations around the statements: the schema block
// with its types, and the test blocks.

func (p *parser) parseSchema() *Schema {
	p.inDecl = true
	defer func() { p.inDecl = false }()
	s := &Schema{Schema: p.t.pos}
	p.next()
	// otlp is a keyword only here, right after schema (a contextual
	// keyword): elsewhere it is an ordinary name.
	if p.t.tok == IDENT && !p.t.bol {
		if p.word(OTLP) {
			s.OTLP = p.t.pos
		} else {
			p.errorHere(CodeSchemaName, "the only named schema is otlp: write schema otlp { ... } for OTLP log records, or schema { ... } to declare the fields of a plain record",
				"unknown schema %s", p.t.lit)
		}
		p.next()
		if s.OTLP.IsValid() && p.atStmtEnd() && !p.nextLineOpensBrace() {
			// schema otlp, with no block: the view as it is.
			p.expectStmtEnd("schema otlp")
			return s
		}
	}
	p.skipNewlinesBefore(LBRACE)
	if p.t.tok != LBRACE {
		what := "schema"
		if s.OTLP.IsValid() {
			what = "schema otlp"
		}
		p.errorHere(CodeExpectedBrace, "write the record's fields in braces: schema { name: type ... }", "expected '{' after %s, found %s", what, p.describe())
		s.Type = &ObjectType{Lbrace: p.t.pos, Rbrace: p.t.pos}
		p.sync()
		return s
	}
	s.Type = p.parseObjectType()
	p.expectStmtEnd("schema block")
	return s
}

// nextLineOpensBrace reports whether the current token is a newline after
// which the first token is a '{', which skipNewlinesBefore would accept.
func (p *parser) nextLineOpensBrace() bool {
	j := p.i
	for j < len(p.toks)-1 && p.toks[j].tok == NEWLINE {
		j++
	}
	return j > p.i && p.toks[j].tok == LBRACE
}

// skipNewlinesBefore skips newlines when the first token after them is tok,
// so that a '{' or else on the next line is accepted; the formatter moves it
// back up.
func (p *parser) skipNewlinesBefore(tok Token) {
	if p.t.tok != NEWLINE {
		return
	}
	j := p.i
	for j < len(p.toks)-1 && p.toks[j].tok == NEWLINE {
		j++
	}
	if p.toks[j].tok == tok {
		p.seek(j)
	}
}

// seek makes toks[j] the current token.
func (p *parser) seek(j int) {
	p.i = j - 1
	p.next()
}

// parseObjectType parses { name: T ... }. Fields are separated by commas or
// line breaks; the line break need not be a NEWLINE token, because a type
// such as map<string> ends in '>', after which a newline ends nothing.
func (p *parser) parseObjectType() *ObjectType {
	t := &ObjectType{Lbrace: p.t.pos}
	p.next()
	// A statement keyword ends it, unless it is a field of that name.
	ends := func(tok Token) bool { return isStmtStart(tok) && p.peek().tok != COLON }
	for {
		if rbrace, done := p.bodyEnd(t.Lbrace, ends, "add a } after the last field", "this object type"); done {
			t.Rbrace = rbrace
			return t
		}
		if p.t.tok == ELLIPSIS {
			if t.Open {
				p.errorHere(CodeSchemaField, "", "second '...' in one object type")
			}
			t.Open, t.Ellipsis = true, p.t.pos
			p.next()
			p.objectFieldEnd()
			for p.t.tok == NEWLINE || p.t.tok == COMMA {
				p.next()
			}
			if p.t.tok != RBRACE && p.t.tok != EOF {
				p.errorAt(t.Ellipsis, t.Ellipsis.Advance("..."), CodeSchemaField, "move ... to the end of the object type",
					"'...' must be the last line of an object type")
			}
			continue
		}
		if fd := p.parseFieldDecl(); fd != nil {
			t.Fields = append(t.Fields, fd)
			p.objectFieldEnd()
		}
	}
}

// objectFieldEnd checks what follows a field's type: a comma, a line break
// or the closing brace.
func (p *parser) objectFieldEnd() {
	switch {
	case p.t.tok == COMMA:
		p.next()
	case p.t.tok == NEWLINE || p.t.tok == RBRACE || p.t.tok == EOF || p.t.bol:
	default:
		p.errorHere(CodeSchemaField, "put one field per line, or separate fields with commas",
			"expected a newline after the field's type, found %s", p.describe())
		p.sync()
	}
}

func (p *parser) parseFieldDecl() *FieldDecl {
	fd := &FieldDecl{NamePos: p.t.pos}
	switch {
	case p.t.tok == IDENT || p.t.tok.IsKeyword():
		fd.Name = p.t.lit
		p.next()
	case p.t.tok == STRING || p.t.tok == RAWSTRING:
		fd.Name, fd.Quoted = p.basicLit().Str, true
	default:
		p.errorHere(CodeSchemaField, "a schema line is name: type, as in status: int", "expected a field name, found %s", p.describe())
		p.sync()
		return nil
	}
	if p.t.tok != COLON {
		p.errorHere(CodeSchemaField, "a schema line is name: type, as in status: int", "expected ':' after the field name %s, found %s", fd.Name, p.describe())
		p.sync()
		return nil
	}
	p.next()
	fd.Type = p.parseType()
	return fd
}

// typeAliases are the type names of other languages and what they are here.
var typeAliases = map[string]string{
	"integer": "int", "int64": "int", "long": "int", "number": "float (or int)", "double": "float",
	"float64": "float", "str": "string", "text": "string", "boolean": "bool", "list": "array<T>",
	"dict": "map<T>, or an object { name: T ... }", "object": "map<T>, or an object { name: T ... }",
	"time": "timestamp", "datetime": "timestamp",
}

// parseType parses a type, then its optional '?'.
func (p *parser) parseType() TypeExpr {
	var t TypeExpr
	switch p.t.tok {
	case IDENT:
		switch name := p.t.lit; name {
		case "array", "map":
			pos := p.t.pos
			defer p.leave()
			if !p.enter() {
				return &BadType{From: pos, To: pos}
			}
			p.next()
			if p.t.tok != LSS {
				p.errorHere(CodeUnexpected, "write "+name+"<T>, as in "+name+"<string>", "expected '<' after %s, found %s", name, p.describe())
				return &BadType{From: pos, To: p.t.pos}
			}
			p.next()
			elem := p.parseType()
			rangle := p.t.pos
			if p.t.tok != GTR {
				hint := ""
				if p.t.tok == COMMA && name == "map" {
					hint = "map keys are always strings: give the value type only, as in map<string>"
				}
				p.errorHere(CodeUnexpected, hint, "expected '>' to close %s<, found %s", name, p.describe())
				return &BadType{From: pos, To: p.t.pos}
			}
			p.next()
			if name == "array" {
				t = &ArrayType{Array: pos, Elem: elem, Rangle: rangle}
			} else {
				t = &MapType{Map: pos, Elem: elem, Rangle: rangle}
			}
		case "bool", "int", "float", "string", "bytes", "timestamp", "any":
			t = &NamedType{NamePos: p.t.pos, Name: name}
			p.next()
		default:
			hint := "the types are bool int float string bytes timestamp null any, array<T>, map<T>, { name: T ... } and T?"
			if alt, ok := typeAliases[strings.ToLower(name)]; ok {
				hint = "did you mean " + alt + "?"
			}
			p.errorHere(CodeUnknownType, hint, "unknown type %s", name)
			t = &BadType{From: p.t.pos, To: p.t.end}
			p.next()
		}
	case NULL:
		t = &NamedType{NamePos: p.t.pos, Name: "null"}
		p.next()
	case LBRACE:
		defer p.leave()
		if !p.enter() {
			return &BadType{From: p.t.pos, To: p.t.pos}
		}
		t = p.parseObjectType()
	default:
		hint := ""
		if p.t.tok == QUESTION {
			hint = "the ? of an optional type goes after it: string?"
		}
		p.errorHere(CodeUnexpected, hint, "expected a type, found %s", p.describe())
		return &BadType{From: p.t.pos, To: p.t.pos}
	}
	switch p.t.tok {
	case QUESTION:
		t = &OptionalType{Elem: t, Question: p.t.pos}
		p.next()
	case COALESCE:
		p.errorHere(CodeUnexpected, "write T? once", "a type is made optional once: found '??'")
		t = &OptionalType{Elem: t, Question: p.t.pos}
		p.next()
	}
	if p.t.tok == QUESTION {
		p.errorHere(CodeUnexpected, "write T? once", "a type is made optional once: found another '?'")
		p.next()
	}
	return t
}

// ---------------------------------------------------------------- tests

func (p *parser) parseTest() *Test {
	p.inDecl = true
	defer func() { p.inDecl = false }()
	t := &Test{Test: p.t.pos}
	p.next()
	if lit, pos, ok := p.parseStringLit("test name", `name the test: test "drops health checks" { ... }`); ok {
		t.Name, t.NamePos = lit.Str, pos
	} else if p.t.tok == IDENT {
		t.Name, t.NamePos = p.t.lit, p.t.pos
		p.next()
	}
	p.skipNewlinesBefore(LBRACE)
	if p.t.tok != LBRACE {
		p.errorHere(CodeExpectedBrace, `a test is written test "name" { input ... expect ... }`, "expected '{' after the test name, found %s", p.describe())
		t.Lbrace, t.Rbrace = p.t.pos, p.prevEnd()
		p.sync()
		return t
	}
	t.Lbrace = p.t.pos
	p.next()
	what := "test " + strconv.Quote(t.Name)
	var tagPos Pos
	var clocks []*TestClock // at and wait lines waiting for their input
	for {
		if rbrace, done := p.bodyEnd(t.Lbrace, startsTestEnd, "add a } after the test's expect line", what); done {
			t.Rbrace = rbrace
			break
		}
		switch {
		case p.word(INPUT):
			in := &TestInput{Pos: p.t.pos, Clocks: clocks}
			clocks = nil
			p.nextWord()
			in.Value = p.parseExpr()
			t.Inputs = append(t.Inputs, in)
			if len(t.Inputs) == 1 {
				t.InputPos, t.Input = in.Pos, in.Value
			}
			p.expectStmtEnd("input value")
		case p.word(ASSERT):
			if !p.file.Module {
				p.errorHere(CodeTestBlock, "assert lines are for the tests of a module; a policy's test gives input and expect",
					"assert in a policy's test %q", t.Name)
				p.sync()
				continue
			}
			t.Asserts = append(t.Asserts, p.parseAssert())
		case p.word(AT) || p.word(WAIT):
			if c := p.parseTestClock(); c != nil {
				clocks = append(clocks, c)
			}
		case p.word(PARAM):
			if prm := p.parseTestParam(t); prm != nil {
				t.Params = append(t.Params, prm)
			}
		case p.word(TAG):
			if tagPos.IsValid() {
				p.errorHere(CodeTestBlock, "", "second tag in test %q; the first is at %s", t.Name, tagPos)
			}
			tagPos = p.t.pos
			p.nextWord()
			if lit, _, ok := p.parseStringLit("tag", `write tag "kube.var.log"`); ok {
				t.Tag = lit
			}
			p.expectStmtEnd("tag")
		case p.word(EXPECT):
			if t.ExpectPos.IsValid() {
				p.errorHere(CodeTestBlock, "", "second expect in test %q; the first is at %s", t.Name, t.ExpectPos)
			}
			t.ExpectPos = p.t.pos
			p.nextWord()
			switch {
			case p.word(DROPPED):
				t.Expect, t.Want = ExpectDropped, nil
				p.next()
			case p.word(FAULT):
				t.Expect, t.Want = ExpectFault, nil
				p.next()
			default:
				t.Expect = ExpectRecord
				t.Want = p.parseExpr()
				if _, ok := t.Want.(*ListLit); ok {
					t.Expect = ExpectRecords
				}
			}
			p.expectStmtEnd("expected value")
		default:
			p.errorHere(CodeTestBlock, "a test block holds input {json}, an optional tag \"t\", param lines, and expect {json} | [{json}, …] | dropped | fault",
				"expected input, tag, param or expect in a test block, found %s", p.describe())
			p.sync()
		}
	}
	if len(clocks) > 0 {
		c := clocks[0]
		p.errorAt(c.Pos, c.Value.End(), CodeTestBlock, "at and wait set the clock for the input after them: add an input line below",
			"%s with no input after it in test %q", c.word(), t.Name)
	}
	switch {
	case p.file.Module:
		if t.InputPos.IsValid() || t.ExpectPos.IsValid() || len(t.Params) > 0 {
			p.errorAt(t.Test, t.Test.Advance("test"), CodeTestBlock, "a module runs no records: test its functions with assert lines, assert f(1) == 2",
				"test %q of a module has input, param or expect", t.Name)
		} else if len(t.Asserts) == 0 {
			p.errorAt(t.Test, t.Test.Advance("test"), CodeTestBlock, "add a line assert C, C a bool over constants and calls", "test %q has no assert", t.Name)
		}
	case !t.InputPos.IsValid() && !t.ExpectPos.IsValid():
		p.errorAt(t.Test, t.Test.Advance("test"), CodeTestBlock, "add the lines input {json} and expect {json} (or dropped, or fault)", "test %q has no input and no expect", t.Name)
	case !t.InputPos.IsValid():
		p.errorAt(t.Test, t.Test.Advance("test"), CodeTestBlock, "add a line input {json}", "test %q has no input", t.Name)
	case !t.ExpectPos.IsValid():
		p.errorAt(t.Test, t.Test.Advance("test"), CodeTestBlock, "add a line expect {json}, expect dropped or expect fault", "test %q has no expect", t.Name)
	}
	p.expectStmtEnd("test block")
	return t
}

// startsTestEnd reports whether tok, at the start of a line in a test
// block, shows the block's } is missing: a statement or a declaration,
// but not param, which is a test's line too.
func startsTestEnd(tok Token) bool { return tok != PARAM && isStmtStart(tok) }

// parseTestParam parses `param name value` in the test t: the value one
// of the policy's parameters has in this test.
func (p *parser) parseTestParam(t *Test) *TestParam {
	prm := &TestParam{Param: p.t.pos}
	p.nextWord()
	if p.t.tok != IDENT && !p.t.tok.IsKeyword() {
		p.errorHere(CodeTestBlock, `write param env "prod": the parameter's name and its value`, "expected a parameter name after param, found %s", p.describe())
		p.sync()
		return nil
	}
	prm.Name = &Ident{NamePos: p.t.pos, Name: p.t.lit}
	p.next()
	for _, prev := range t.Params {
		if prev.Name.Name == prm.Name.Name {
			p.errorAt(prm.Name.Pos(), prm.Name.End(), CodeTestBlock, "", "second param %s in test %q; the first is at %s", prm.Name.Name, t.Name, prev.Param)
		}
	}
	prm.Value = p.parseExpr()
	p.expectStmtEnd("param value")
	return prm
}
