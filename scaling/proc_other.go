//go:build !linux

package scaling

import (
	"math"
	"os"
	"syscall"
)

// childAttr: only Linux can tie a child's life to its parent's.
func childAttr() *syscall.SysProcAttr { return nil }

// childMaxRSSMB: rusage's units differ between systems, and the figure is
// only a fallback.
func childMaxRSSMB(ps *os.ProcessState) float64 { return math.NaN() }

// CapEnforced reports whether the watchdog that stops a point at
// Options.MaxMem can read a child's memory: it reads /proc, which is
// Linux's.
const CapEnforced = false
