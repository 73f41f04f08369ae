package check

// Diagnostic codes of the checker, and E0900, which package compiler reports
// when code generation fails after the check. They are stable: tools and the
// user reference (docs/language.md) refer to them, so a code is never reused
// for a different mistake. Syntax errors (policy/errors.go) use E0001–E0099.
const (
	CodeDupField      = "E0101" // a schema object declares a field twice
	CodeDupKey        = "E0102" // a map literal repeats a key
	CodeViewKey       = "E0103" // a schema otlp block declares a key the OTLP view does not have
	CodeViewRefine    = "E0104" // a schema otlp block refines a key the view fixes, or refines one with the wrong kind of type
	CodeUnknownField  = "E0201" // reading a key a closed object does not declare
	CodeIntoScalar    = "E0202" // a path goes into a scalar (.status.code when .status is int)
	CodeIndexType     = "E0203" // an array indexed by a string, a map by an int
	CodeUndefined     = "E0204" // a name that is no local variable
	CodeRedeclared    = "E0205" // let of a name already declared in the same block
	CodeNotWritable   = "E0206" // editing something that is not a record field (a local, the record itself)
	CodeLoopEdit      = "E0207" // a for body edits the collection it iterates
	CodeLiftType      = "E0208" // lift of something that is not an object or map
	CodeMetaType      = "E0209" // %time set to a non-timestamp, %tag to a non-string
	CodeViewWrite     = "E0210" // a write an OTLP record cannot hold: a key outside the view, a fixed key of another type
	CodeCompare       = "E0301" // == or != between values that can never be equal
	CodeOrder         = "E0302" // < <= > >= between values without an order
	CodeArith         = "E0303" // + - * / % on operands that do not fit (+ of arrays of two element types too)
	CodeLogic         = "E0304" // && || ! on a non-bool
	CodeNegate        = "E0305" // unary - on a non-number
	CodeInList        = "E0306" // an in list with an element of the wrong type or not constant
	CodeOptional      = "E0307" // a value that may be absent used where one is needed
	CodeAnyUse        = "E0308" // an any value used where a typed one is needed, without narrowing
	CodeDefault       = "E0309" // a ?? default of another type than the value
	CodeCondition     = "E0310" // an if/drop/stop condition that is not bool
	CodeDivZero       = "E0311" // division or modulo by the constant 0
	CodeForType       = "E0312" // for over something that is not an array, map or object
	CodeUnknownFunc   = "E0401" // a call of a function that does not exist
	CodeArgCount      = "E0402" // a call with the wrong number of arguments
	CodeArgType       = "E0403" // an argument of the wrong type
	CodeRegexConst    = "E0404" // a regex argument that is not a constant string
	CodeRegexSyntax   = "E0405" // a regex that does not compile
	CodeExistsPath    = "E0406" // exists() of something that is not a path
	CodeGrok          = "E0410" // a grok pattern that does not expand to RE2 (unknown %{NAME}, bad syntax)
	CodeConstArg      = "E0411" // a constant argument that can never be valid (a CIDR that does not parse)
	CodeNotConst      = "E0412" // an argument that must be a constant string (a zone, a unit, a format) is computed
	CodeZone          = "E0413" // a time zone name the tz database does not have
	CodeUnit          = "E0414" // a unit of from_unix other than s, ms, us, ns
	CodeFormatVerb    = "E0415" // a format verb that does not fit its argument's type
	CodeFormat        = "E0416" // a malformed format, or verbs and arguments that do not pair up
	CodeTestInput     = "E0501" // a test input that is not a constant JSON object
	CodeTestExpect    = "E0502" // an expected record that is not a constant JSON object
	CodeTestDup       = "E0503" // two tests with the same name
	CodeTestClock     = "E0504" // a test's at that is not an RFC 3339 time, or wait that is not a positive duration
	CodeConstValue    = "E0601" // a const whose value is not constant (reads the record, calls a function)
	CodeImpure        = "E0602" // a function body reads or edits the record or metadata
	CodeCycle         = "E0603" // a function that calls itself, or a constant that refers to itself, directly or not
	CodeNoReturn      = "E0604" // a function whose body can end without a return
	CodeReturnType    = "E0605" // a return whose value is not of the function's result type
	CodeFuncStmt      = "E0606" // drop, stop or for in a function body
	CodeDupDecl       = "E0607" // a const or fn declared twice, or a fn with a built-in's name
	CodeParamDefault  = "E0608" // a parameter default that is not a constant of the parameter's type
	CodeParamType     = "E0609" // a param declared of a type no config value has (an object, a timestamp, an optional)
	CodeParamMissing  = "E0610" // a param without a default given no value
	CodeParamUnknown  = "E0611" // a value given for a param the policy does not declare
	CodeParamValue    = "E0612" // a param given a value of another type than its declared one
	CodeImportClash   = "E0613" // two imports under one name
	CodeImportCycle   = "E0614" // a module that imports itself, directly or through others
	CodeImportFile    = "E0615" // an import whose file cannot be read, or is not a module
	CodeUnknownModule = "E0616" // module.name where no import has that name
	CodeUnknownMember = "E0617" // module.name where the module declares no such function or constant
	CodeAssert        = "E0618" // an assert that is not a bool, or reads the record
	CodeSplitType     = "E0650" // split of something that is not an array (or optional array) record path of keys
	CodeSplitPlace    = "E0651" // split inside if or for: a split is a top-level statement
	CodeSplitTwice    = "E0652" // a second split in a policy
	CodeStateKey      = "E0801" // a key of dedupe, rate_limit or sample that is a map, an object or an array
	CodeStateDuration = "E0802" // within or per of something other than a constant positive duration string
	CodeStateCount    = "E0803" // to, keep 1 in or max_keys of something other than a constant int in range
	CodeCompile       = "E0900" // a checked policy past a limit of the VM's code (reported by package compiler)
	CodeDeadDefault   = "W0001" // ?? on a value that is never absent
	CodeUnreachable   = "W0002" // a statement after an unconditional drop or stop
	CodeNullCompare   = "W0003" // comparing with null a value that is never null
	CodeNoGroups      = "W0004" // capture with a pattern that has no named groups
	CodeDeadInsert    = "W0005" // set ?= of a path that is never absent
	CodeTestInputType = "W0006" // a test input that does not match the schema
	CodeNearField     = "W0007" // reading an undeclared key of an open object, one slip away from a declared one
)

// Codes lists every checker code with a one-line meaning, in code order;
// the user reference is written from it.
var Codes = []struct{ Code, Meaning string }{
	{CodeDupField, "a schema object declares the same field twice"},
	{CodeDupKey, "a map literal repeats a key"},
	{CodeViewKey, "the OTLP view has no such key: a schema otlp block refines keys of the view only"},
	{CodeViewRefine, "a schema otlp block refines only the body and the attribute maps, the attributes with an object or a map type"},
	{CodeUnknownField, "the object is closed and does not declare this field"},
	{CodeIntoScalar, "a path goes on past a scalar value"},
	{CodeIndexType, "arrays are indexed by int, maps and objects by string"},
	{CodeUndefined, "no local variable has this name"},
	{CodeRedeclared, "a let declares a name already declared in the same block"},
	{CodeNotWritable, "only record fields can be edited: locals are immutable, the record itself cannot be removed, renamed or lifted, and set . = takes an object or a map"},
	{CodeLoopEdit, "a for body may not edit the collection it iterates"},
	{CodeLiftType, "lift needs an object or a map"},
	{CodeMetaType, "%time holds a timestamp and %tag a string"},
	{CodeViewWrite, "an OTLP record holds only the keys of its view, and each fixed key only its type"},
	{CodeCompare, "== and != need operands of the same type (or two numbers)"},
	{CodeOrder, "< <= > >= work on two numbers, two strings or two timestamps"},
	{CodeArith, "+ adds numbers or joins strings or arrays; - * / % take numbers"},
	{CodeLogic, "&& || ! take bool operands: there is no truthiness"},
	{CodeNegate, "unary - takes a number"},
	{CodeInList, "the list of in holds constants of the left operand's type"},
	{CodeOptional, "the value may be absent or null: give a default with ?? or test != null first"},
	{CodeAnyUse, "a value of type any must be narrowed (is_string, as_int(x) ?? 0, ...) before typed use"},
	{CodeDefault, "the default of ?? must have the type of the value it replaces"},
	{CodeCondition, "conditions of if, drop when and stop when must be bool"},
	{CodeDivZero, "division or modulo by the constant zero always faults"},
	{CodeForType, "for iterates over an array, a map or an object"},
	{CodeUnknownFunc, "there is no built-in function of this name"},
	{CodeArgCount, "the call has too many or too few arguments"},
	{CodeArgType, "an argument has the wrong type"},
	{CodeRegexConst, "regex arguments must be constant strings, compiled once"},
	{CodeRegexSyntax, "the regex does not compile (RE2 syntax)"},
	{CodeExistsPath, "exists takes a path such as .a.b or m[\"k\"]"},
	{CodeGrok, "the grok pattern does not expand: an unknown %{NAME}, a malformed %{…}, or syntax RE2 does not have"},
	{CodeConstArg, "a constant argument is malformed: the call could only ever give false or null"},
	{CodeNotConst, "zone names, units and formats are constant strings, checked when the policy is"},
	{CodeZone, "the tz database has no zone of this name (names are IANA names, case-sensitive: Europe/Paris)"},
	{CodeUnit, "from_unix counts in s, ms, us or ns"},
	{CodeFormatVerb, "a format verb does not fit its argument: %s and %q take a string, %d an int, %f a number, %x an int or a string, %v anything"},
	{CodeFormat, "the format is malformed, or it has more or fewer verbs than arguments"},
	{CodeTestInput, "a test input must be a constant JSON object"},
	{CodeTestExpect, "an expected record must be a constant JSON object"},
	{CodeTestDup, "two tests of a policy have the same name"},
	{CodeTestClock, `a test's at is an RFC 3339 time ("2026-01-01T00:00:30Z"), its wait a positive duration ("30s")`},
	{CodeConstValue, "a constant's value is made of literals, operators and other constants"},
	{CodeImpure, "a function reads its parameters only: not the record, nor metadata, and it edits nothing"},
	{CodeCycle, "functions cannot call themselves, and constants cannot refer to themselves, directly or through others"},
	{CodeNoReturn, "a function returns a value on every path"},
	{CodeReturnType, "a function returns values of its declared result type"},
	{CodeFuncStmt, "a function body holds let, if and return: it cannot drop, stop or loop"},
	{CodeDupDecl, "a file declares each constant and function once, and a function cannot take a built-in's name"},
	{CodeParamDefault, "a parameter's default is a constant of the parameter's type"},
	{CodeParamType, "a policy's parameter is a bool, int, float or string, or an array or map of one of them"},
	{CodeParamMissing, "a parameter without a default must be given a value when the policy is loaded"},
	{CodeParamUnknown, "a value is given for a parameter the policy does not declare"},
	{CodeParamValue, "a parameter's value must have the parameter's declared type"},
	{CodeImportClash, "each import brings its module in under its own name: the module's declared name, or the name after as"},
	{CodeImportCycle, "modules cannot import themselves, directly or through other modules"},
	{CodeImportFile, "an import names a module file, relative to the importing file, that starts with module \"name\""},
	{CodeUnknownModule, "a qualified name (net.mask_ip) starts with the name of an import"},
	{CodeUnknownMember, "the module declares no function or constant of this name"},
	{CodeAssert, "an assert of a module's test is a bool over constants and calls"},
	{CodeSplitType, "split needs a record path holding an array (or an optional array)"},
	{CodeSplitPlace, "split stands at the top level of the policy, not inside if or for"},
	{CodeSplitTwice, "a policy splits its records once"},
	{CodeStateKey, "keys of dedupe, rate_limit and sample are scalars (string, int, float, bool, timestamp, optional or not) or any, not maps, objects or arrays"},
	{CodeStateDuration, `within and per take a constant positive duration string: "500ms", "30s", "1m", "1h"`},
	{CodeStateCount, "to and keep 1 in take a constant int from 1 to 1,000,000,000, max_keys one from 1 to 67,108,864"},
	{CodeCompile, "the policy checks, but its code goes past a limit of the VM (registers, constants, paths or instructions)"},
	{CodeDeadDefault, "?? on a value that is never absent: the default is dead"},
	{CodeUnreachable, "the statement can never run: an unconditional drop or stop comes first"},
	{CodeNullCompare, "the value is never null, so the comparison is constant"},
	{CodeNoGroups, "capture returns only named groups, and the pattern has none"},
	{CodeDeadInsert, "set ?= of a path that is never absent never writes"},
	{CodeTestInputType, "the test input does not match the schema (the run will fault)"},
	{CodeNearField, "an open object does not declare this field but declares one a slip away: a typo reads as absent on every record"},
}
