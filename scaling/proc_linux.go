package scaling

import (
	"math"
	"os"
	"syscall"
)

// childAttr makes the kernel kill a point's child process when the study
// dies, even by SIGKILL: an orphan would go on loading the machine.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// childMaxRSSMB returns the high-water RSS of an ended child from its rusage
// (in kB on Linux), NaN if unknown.
func childMaxRSSMB(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil && ru.Maxrss > 0 {
		return float64(ru.Maxrss) / 1024
	}
	return math.NaN()
}

// CapEnforced reports whether the watchdog that stops a point at
// Options.MaxMem can read a child's memory (from /proc, Linux's).
const CapEnforced = true
