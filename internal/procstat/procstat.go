// Package procstat reads memory figures from Linux's /proc: the process's
// peak resident memory (which the sweep records per run and the scaling
// study per point) and the memory available to new programs; and the
// processor's name a run record gives. On systems without /proc every call
// fails, and callers record the figure as unknown.
package procstat

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// PeakRSS returns this process's high-water resident memory, VmHWM of
// /proc/self/status, in bytes.
func PeakRSS() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	return Field(data, "VmHWM:")
}

// ResetPeakRSS resets VmHWM to the current resident memory (writing "5" to
// /proc/self/clear_refs), so that PeakRSS then measures what follows.
func ResetPeakRSS() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// MemAvailable returns the memory available for starting new programs
// without swapping, MemAvailable of /proc/meminfo, in bytes.
func MemAvailable() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	return Field(data, "MemAvailable:")
}

// Field returns the value of a "<key> <n> kB" line of a /proc file, in
// bytes.
func Field(data []byte, key string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), key)
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("unexpected line %q: %w", sc.Text(), err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no %s line", strings.TrimSuffix(key, ":"))
}

// MemTotal returns the machine's memory (MemTotal in /proc/meminfo), or
// the memory limit of the process's cgroup when that is lower.
func MemTotal() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	total, err := Field(data, "MemTotal:")
	if err != nil {
		return 0, err
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if limit, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && limit < total {
			total = limit
		}
	}
	return total, nil
}

// CPU names the machine's processor and its logical CPU count, e.g. "AMD
// EPYC × 2", from /proc/cpuinfo; "" where there is none.
func CPU() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	return parseCPUInfo(f, runtime.NumCPU())
}

func parseCPUInfo(r io.Reader, cpus int) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return fmt.Sprintf("%s × %d", strings.TrimSpace(val), cpus)
		}
	}
	return ""
}
