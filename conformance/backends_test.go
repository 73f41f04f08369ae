package conformance

import "github.com/policyrun/policyrun/backend"

// backends are the backends every test block runs on, every registered
// one; they must agree with the expectations and with each other.
var backends = backend.All()
