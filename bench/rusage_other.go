//go:build !unix

package bench

import "os"

// peakRSSMiB is not known here; bench pipeline falls back to the peak
// RSS of the run summary.
func peakRSSMiB(*os.ProcessState) (float64, bool) { return 0, false }
