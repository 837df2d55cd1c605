package kg

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

// goldenValues are make_golden.py's values(n): int64s that need every
// byte, negative ones included.
func goldenValues(n int) func(int) int64 {
	return func(i int) int64 {
		if i%7 == 0 {
			return int64(i)*2654435761%(1<<40) - (1 << 39)
		}
		return int64(i) * 131
	}
}

// The pickle writer lays out a dict as CPython's pickler does at protocol
// 2 (what torch.save writes), byte for byte, on dicts larger than the
// torch-written fixture: memo indices past 255, lists in several batches
// and of one or no item, shapes past 255 and 65535, values of all eight
// bytes, empty arrays (b” pickles differently) and a dict of one key.
// The golden files come from CPython's pickler (testdata/pickle/make_golden.py).
func TestPickleWriterMatchesCPython(t *testing.T) {
	typeNames := func(n int, at func(int) int) pickleValue {
		return pickleValue{n: n, str: func(i int) string { return fmt.Sprintf("type%03d", at(i)) }}
	}
	for _, c := range []struct {
		file   string
		keys   []string
		values []pickleValue
	}{
		{"many.pkl",
			[]string{"head", "head_type", "empty", "head_neg", "one", "also_empty", "none"},
			[]pickleValue{
				{shape: []int{1500}, at: goldenValues(1500)},
				typeNames(2100, func(i int) int { return i * 7 % 300 }),
				{shape: []int{0}},
				{shape: []int{70000, 1}, at: goldenValues(70000)},
				typeNames(1, func(int) int { return 5 }),
				{shape: []int{0, 3}},
				typeNames(0, nil),
			}},
		{"one.pkl", []string{"relation"}, []pickleValue{{shape: []int{3}, at: func(i int) int64 { return []int64{0, 255, 256}[i] }}}},
	} {
		want, err := os.ReadFile("testdata/pickle/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := newPickleWriter(&got).writeDict(c.keys, c.values); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: %d bytes, CPython's %d; first difference at byte %d", c.file, got.Len(), len(want), firstDifference(got.Bytes(), want))
		}
	}
}
