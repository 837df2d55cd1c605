package scaling

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MemAvailable returns the memory available for starting new programs
// without swapping, MemAvailable of Linux's /proc/meminfo, in bytes; an
// error elsewhere.
func MemAvailable() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	return procStatusBytes(data, "MemAvailable:")
}

// peakRSSBytes returns the high-water resident memory of this process,
// VmHWM of /proc/self/status, in bytes.
func peakRSSBytes() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	return procStatusBytes(data, "VmHWM:")
}

// procStatusBytes returns the value of a "<key> <n> kB" line of a /proc
// file, in bytes.
func procStatusBytes(data []byte, key string) (int64, error) {
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
