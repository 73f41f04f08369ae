//go:build !unix

package conformance

func processCPU() (int64, bool) { return 0, false }
