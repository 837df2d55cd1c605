//go:build !linux

package main

import (
	"math"
	"os"
	"syscall"
)

// scalingChildAttr: only Linux can tie a child's life to its parent's.
func scalingChildAttr() *syscall.SysProcAttr { return nil }

// childMaxRSSMB: rusage's units differ between systems, and the figure is
// only a fallback.
func childMaxRSSMB(ps *os.ProcessState) float64 { return math.NaN() }

// scalingCapEnforced: the watchdog reads /proc, which is Linux's.
const scalingCapEnforced = false
