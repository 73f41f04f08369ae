package spec

// DefaultMaxKeys is how many keys a dedupe or rate_limit statement
// remembers when it does not say (max_keys N): docs/language.md, "State".
const DefaultMaxKeys = 100_000

// DefaultStateMemory is the most bytes the stateful statements of a
// pipeline's policies may need together, at worst, unless
// service.state_memory_limit says otherwise: a pipeline past it does not
// start.
const DefaultStateMemory = 256 << 20
