package conformance

import (
	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/policytest"
	"github.com/policyrun/policyrun/lua"
)

// backends are the backends every test block runs on; they must agree with
// the expectations and with each other.
var backends = []policytest.Backend{
	compiler.VMBackend(),
	lua.Backend{},
}
