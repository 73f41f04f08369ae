package parse

import (
	"bytes"
)

// The built-in rules, in the order their names are listed. They are
// written as code rather than regular expressions: most lines are not in a
// trace, and the start tests are what every such line costs.
var builtins = []*Rule{
	{Name: "java", m: javaRule{}},
	{Name: "python", m: pythonRule{}},
	{Name: "go", m: goRule{}},
}

// javaRule reads the stack traces of Java (and of the other JVM languages
// and Node.js, which print theirs alike), as Fluent Bit's java parser and
// Google's detect-exceptions do:
//
//	java.lang.IllegalStateException: payment declined
//		at com.example.shop.PaymentService.charge(PaymentService.java:87)
//		... 12 more
//	Caused by: java.io.IOException: timeout
//		Suppressed: java.lang.IllegalStateException: close failed
//
// A line begins a trace when a word in it ends in Exception, Error or
// Throwable just before a ':' or the end of the line. Indented "at "
// frames, "... N more", "... N common frames omitted", and "Caused by: ",
// "Suppressed: " and "Wrapped by: " lines (indented or not) join it.
type javaRule struct{}

func (javaRule) start(line []byte) (uint8, bool) { return 0, javaException(line) }

func (javaRule) next(_ uint8, line []byte) (verdict, uint8) {
	if javaFrame(line) {
		return join, 0
	}
	return end, 0
}

func javaException(line []byte) bool {
	for rest := line; ; {
		word, after, found := bytes.Cut(rest, colon)
		if javaThrowable(word) {
			return true
		}
		if !found {
			return false
		}
		rest = after
	}
}

// javaThrowable reports whether word ends in Exception, Error or
// Throwable. Most words end otherwise: their last byte tells.
func javaThrowable(word []byte) bool {
	if len(word) == 0 {
		return false
	}
	switch word[len(word)-1] {
	case 'n':
		return bytes.HasSuffix(word, javaExceptionWord)
	case 'r':
		return bytes.HasSuffix(word, javaErrorWord)
	case 'e':
		return bytes.HasSuffix(word, javaThrowableWord)
	}
	return false
}

var (
	javaExceptionWord = []byte("Exception")
	javaErrorWord     = []byte("Error")
	javaThrowableWord = []byte("Throwable")

	colon          = []byte(":")
	javaAt         = []byte("at ")
	javaEllipsis   = []byte("... ")
	javaMore       = []byte(" more")
	javaOmitted    = []byte(" common frames omitted")
	javaChainHeads = [...][]byte{[]byte("Caused by: "), []byte("Suppressed: "), []byte("Wrapped by: ")}
)

func javaFrame(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	if len(t) < len(line) && bytes.HasPrefix(t, javaAt) {
		return true
	}
	for _, h := range javaChainHeads {
		if bytes.HasPrefix(t, h) {
			return true
		}
	}
	if n, ok := bytes.CutPrefix(t, javaEllipsis); ok {
		n = skipDigits(n)
		return len(n) < len(t)-len(javaEllipsis) && (bytes.Equal(n, javaMore) || bytes.Equal(n, javaOmitted))
	}
	return false
}

// pythonRule reads Python tracebacks, chained ones included:
//
//	Traceback (most recent call last):
//	  File "/app/shop/orders.py", line 42, in submit
//	    total = price(order)
//	KeyError: 'sku'
//
//	During handling of the above exception, another exception occurred:
//
//	Traceback (most recent call last):
//	  ...
//	ValueError: bad order
//
// "Traceback (most recent call last):" begins one; indented lines (the
// File lines, their source and the ^^^ markers) join it, and so does the
// exception line after them (a dotted name, then ':' or the end of the
// line). A blank line after the exception line joins if "During handling
// of the above exception, another exception occurred:" or "The above
// exception was the direct cause of the following exception:" follows it,
// and then the blank line and the next traceback join too.
type pythonRule struct{}

const (
	pyFrames  uint8 = iota // after the Traceback line or in its frames
	pyRaised               // after the exception line
	pyBlank                // after a blank line after it (on trial)
	pyChained              // after the line that chains the next traceback
)

var (
	pyTraceback = []byte("Traceback (most recent call last):")
	pyChains    = [...][]byte{
		[]byte("During handling of the above exception, another exception occurred:"),
		[]byte("The above exception was the direct cause of the following exception:"),
	}
)

func (pythonRule) start(line []byte) (uint8, bool) {
	return pyFrames, bytes.Equal(bytes.TrimRight(line, " \t"), pyTraceback)
}

func (pythonRule) next(state uint8, line []byte) (verdict, uint8) {
	t := bytes.TrimRight(line, " \t")
	switch state {
	case pyFrames:
		if indented(t) {
			return join, pyFrames
		}
		if pyException(t) {
			return join, pyRaised
		}
	case pyRaised:
		if len(t) == 0 {
			return try, pyBlank
		}
	case pyBlank:
		for _, c := range pyChains {
			if bytes.Equal(t, c) {
				return join, pyChained
			}
		}
	case pyChained:
		if len(t) == 0 {
			return join, pyChained
		}
		if bytes.Equal(t, pyTraceback) {
			return join, pyFrames
		}
	}
	return end, 0
}

// pyException reports whether line is an exception line: a dotted name
// (KeyError, shop.errors.OutOfStock), then ':' and the message, or
// nothing.
func pyException(line []byte) bool {
	if len(line) == 0 || !(isLetter(line[0]) || line[0] == '_') {
		return false
	}
	for i, c := range line {
		switch {
		case c == ':':
			return i > 0
		case isLetter(c) || isDigit(c) || c == '_' || c == '.':
		default:
			return false
		}
	}
	return true
}

// goRule reads Go's panics, fatal errors and goroutine dumps:
//
//	panic: runtime error: index out of range [5] with length 3
//
//	goroutine 1 [running]:
//	main.lookup(...)
//		/app/main.go:12
//	main.main()
//		/app/main.go:20 +0x1d
//
//	goroutine 6 [chan receive]:
//	...
//
// A line that begins with "panic: ", "fatal error: " or a signal's name
// ("SIGSEGV: "), or a goroutine's header ("goroutine 1 [running]:"),
// begins one. After the first line, tab-indented lines ("\tpanic: …" of a
// panic during a panic), "[signal …" and "PC=…" join it. In a stack,
// function lines (a symbol, then its arguments in parentheses),
// tab-indented file:line lines, "created by …", "...additional frames
// elided..." and "runtime stack:" join it. A blank line joins if a
// goroutine's header (or "runtime stack:") follows it.
type goRule struct{}

const (
	goMessage uint8 = iota // after the panic's first line
	goBlank                // after a blank line (on trial)
	goStack                // in a stack
)

var (
	goPanic     = []byte("panic: ")
	goFatal     = []byte("fatal error: ")
	goSignal    = []byte("[signal ")
	goPC        = []byte("PC=")
	goCreatedBy = []byte("created by ")
	goElided    = []byte("...additional frames elided...")
	goRuntime   = []byte("runtime stack:")
	goGoroutine = []byte("goroutine ")
	goHeaderEnd = []byte("]:")
)

func (goRule) start(line []byte) (uint8, bool) {
	switch {
	case bytes.HasPrefix(line, goPanic), bytes.HasPrefix(line, goFatal), goSignalLine(line):
		return goMessage, true
	case goroutineHeader(line):
		return goStack, true
	}
	return 0, false
}

func (goRule) next(state uint8, line []byte) (verdict, uint8) {
	if len(line) == 0 {
		if state == goBlank {
			return end, 0
		}
		return try, goBlank
	}
	if goroutineHeader(line) || bytes.Equal(line, goRuntime) {
		return join, goStack
	}
	switch state {
	case goMessage:
		if line[0] == '\t' || bytes.HasPrefix(line, goSignal) || bytes.HasPrefix(line, goPC) {
			return join, goMessage
		}
	case goStack:
		if line[0] == '\t' || bytes.HasPrefix(line, goCreatedBy) || bytes.Equal(line, goElided) || goFunction(line) {
			return join, goStack
		}
	}
	return end, 0
}

// goroutineHeader reports whether line is "goroutine N [...]:", with the
// "gp=… m=…" of a GOTRACEBACK=system dump before the brackets or without.
func goroutineHeader(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, goGoroutine)
	if !ok {
		return false
	}
	n := skipDigits(rest)
	return len(n) < len(rest) && len(n) > 0 && n[0] == ' ' && bytes.HasSuffix(n, goHeaderEnd)
}

// goSignalLine reports whether line begins with a signal's name and ": ",
// as the runtime's first line for a signal it dies of (SIGSEGV, SIGQUIT).
func goSignalLine(line []byte) bool {
	if len(line) < 5 || line[0] != 'S' || line[1] != 'I' || line[2] != 'G' {
		return false
	}
	for i := 3; i < len(line); i++ {
		switch c := line[i]; {
		case 'A' <= c && c <= 'Z':
		case c == ':':
			return i > 3 && i+1 < len(line) && line[i+1] == ' '
		default:
			return false
		}
	}
	return false
}

// goFunction reports whether line is a stack's function line: a symbol
// (main.main, net/http.(*conn).serve, panic) without spaces, then its
// arguments, ending in ')'.
func goFunction(line []byte) bool {
	i := bytes.IndexByte(line, '(')
	if i <= 0 || line[len(line)-1] != ')' {
		return false
	}
	sym := line[:i]
	if bytes.ContainsAny(sym, " \t") {
		return false
	}
	return bytes.IndexByte(sym, '.') >= 0 || string(sym) == "panic"
}

func indented(line []byte) bool { return len(line) > 0 && (line[0] == ' ' || line[0] == '\t') }

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipDigits returns b after its leading digits.
func skipDigits(b []byte) []byte {
	i := 0
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return b[i:]
}
