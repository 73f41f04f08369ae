// Package bigpolicy writes large policies of one shape each, for the
// benchmarks and scaling tests of the parser, the checker and the compiler:
// the cost of checking one must grow linearly with its size.
package bigpolicy

import (
	"fmt"
	"strings"
)

const header = "policy \"big\"\n\nschema {\n  x: int\n  s: string?\n  m: map<int>\n  ...\n}\n\n"

// A Shape writes a policy of size n (statements, path steps or operands).
type Shape struct {
	Name string
	Gen  func(n int) []byte
}

// Shapes are the inputs that once took quadratic time, each named for what
// grows.
var Shapes = []Shape{
	{"Sets", Sets},
	{"Ifs", Ifs},
	{"Lets", Lets},
	{"Path", Path},
	{"IndexPath", IndexPath},
	{"SetPath", SetPath},
	{"Coalesce", Coalesce},
	{"Narrow", Narrow},
	{"And", And},
	{"Nested", Nested},
}

func build(f func(b *strings.Builder)) []byte {
	var b strings.Builder
	b.WriteString(header)
	f(&b)
	return []byte(b.String())
}

// Sets is n straight-line statements set .fI = .x + I.
func Sets(n int) []byte {
	return build(func(b *strings.Builder) {
		for i := range n {
			fmt.Fprintf(b, "set .f%d = .x + %d\n", i, i)
		}
	})
}

// Ifs is n if blocks in a row, each writing its own field.
func Ifs(n int) []byte {
	return build(func(b *strings.Builder) {
		for i := range n {
			fmt.Fprintf(b, "if .x > %d {\n  set .f%d = %d\n} else {\n  set .g%d = .s ?? \"\"\n}\n", i, i, i, i)
		}
	})
}

// Lets is a chain of n lets, each reading the one before.
func Lets(n int) []byte {
	return build(func(b *strings.Builder) {
		b.WriteString("let a0 = .x\n")
		for i := 1; i < n; i++ {
			fmt.Fprintf(b, "let a%d = a%d + %d\n", i, i-1, i)
		}
		fmt.Fprintf(b, "set .y = a%d\n", n-1)
	})
}

// Path is one read of a path of n field steps: .a.a.a…
func Path(n int) []byte {
	return build(func(b *strings.Builder) {
		b.WriteString("set .y = ")
		b.WriteString(strings.Repeat(".a", n))
		b.WriteString(" ?? 0\n")
	})
}

// IndexPath is one read of a path of n steps .a[0][0]…
func IndexPath(n int) []byte {
	return build(func(b *strings.Builder) {
		b.WriteString("set .y = .a")
		b.WriteString(strings.Repeat("[0]", n-1))
		b.WriteString(" ?? 0\n")
	})
}

// SetPath writes, tests and removes a path of n steps .a.a…["k"][0].
func SetPath(n int) []byte {
	return build(func(b *strings.Builder) {
		p := strings.Repeat(".a", n/2) + strings.Repeat(`["k"]`, n-n/2)
		fmt.Fprintf(b, "set %s = 1\nif exists(%s) {\n  set .y = %s\n}\nremove %s\n", p, p, p, p)
	})
}

// Coalesce is one chain of n defaults: .f0 ?? .f1 ?? … ?? 0.
func Coalesce(n int) []byte {
	return build(func(b *strings.Builder) {
		b.WriteString("set .y = ")
		for i := range n {
			fmt.Fprintf(b, ".f%d ?? ", i)
		}
		b.WriteString("0\n")
	})
}

// Narrow is n narrowing tests in a row, each proving a fact that stays.
func Narrow(n int) []byte {
	return build(func(b *strings.Builder) {
		for i := range n {
			fmt.Fprintf(b, "drop when !exists(.f%d)\nset .g%d = .f%d\n", i, i, i)
		}
	})
}

// And is one condition of n tests joined by &&, each narrowing a field.
func And(n int) []byte {
	return build(func(b *strings.Builder) {
		b.WriteString("drop when ")
		for i := range n {
			if i > 0 {
				b.WriteString(" && ")
			}
			fmt.Fprintf(b, "exists(.f%d)", i)
		}
		b.WriteString("\n")
	})
}

// Depth is the nesting limit of the language.
const Depth = 1000

// Nested is n/Depth blocks each nested Depth deep, mixing if and for
// blocks, parentheses and list and map literals.
func Nested(n int) []byte {
	return build(func(b *strings.Builder) {
		for k := 0; k < max(n/Depth, 1); k++ {
			// Depth levels: blocks, then brackets in the innermost statement.
			blocks := Depth / 2
			for i := range blocks {
				if i%2 == 0 {
					fmt.Fprintf(b, "if .x > %d {\n", i)
				} else {
					fmt.Fprintf(b, "for k%d, v%d in .m {\n", i, i)
				}
			}
			rest := Depth - blocks
			var e strings.Builder
			for i := range rest {
				switch i % 3 {
				case 0:
					e.WriteString("(")
				case 1:
					e.WriteString("[")
				case 2:
					e.WriteString(`{"k": `)
				}
			}
			e.WriteString("1")
			for i := rest - 1; i >= 0; i-- {
				switch i % 3 {
				case 0:
					e.WriteString(")")
				case 1:
					e.WriteString("]")
				case 2:
					e.WriteString("}")
				}
			}
			fmt.Fprintf(b, "set .n%d = %s\n", k, e.String())
			b.WriteString(strings.Repeat("}\n", blocks))
		}
	})
}
