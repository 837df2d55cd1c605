// Package bytesize reads and writes amounts of memory such as 20GiB: the
// scaling study's cap and a run's memory budget.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is an amount of memory in bytes. As a flag.Value it reads a
// number and a unit, B, KiB, MiB, GiB, TiB or KB, MB, GB, TB, and writes
// the largest binary unit that divides it.
type Size int64

var byteUnits = []struct {
	suffix string
	size   float64
}{
	// Longest suffixes first, so that "GiB" is not read as "B".
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// String writes b in the largest binary unit that divides it, e.g.
// 20GiB, 1536MiB, or in bytes, 3000000000B.
func (b Size) String() string {
	n := int64(b)
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// Set reads s, e.g. 20GiB, 512MiB or 0. A bare number of less than a MiB
// is refused, as more likely a forgotten unit than a cap of a few bytes
// that no point could ever meet.
func (b *Size) Set(s string) error {
	s = strings.TrimSpace(s)
	num, mult := s, 1.0
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = strings.TrimSpace(rest), u.size
			break
		}
	}
	x, err := strconv.ParseFloat(num, 64)
	if err != nil || x < 0 || math.IsInf(x, 0) || x*mult >= math.MaxInt64 {
		return fmt.Errorf("%q is not an amount of memory such as 20GiB, 512MiB or 0", s)
	}
	if x > 0 && num == s && x < 1<<20 {
		return fmt.Errorf("%q has no unit: write e.g. %sGiB", s, num)
	}
	*b = Size(x * mult)
	return nil
}
