//go:build unix

package bench

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSSMiB is the peak resident set of the ended child, from its rusage:
// ru_maxrss is in KiB on Linux and the BSDs, in bytes on macOS.
func peakRSSMiB(ps *os.ProcessState) (float64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil || ru.Maxrss <= 0 {
		return 0, false
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return float64(ru.Maxrss) / (1 << 20), true
	}
	return float64(ru.Maxrss) / (1 << 10), true
}
