package kg

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestReadPT reads one dict of assorted arrays, written by
// testdata/make_ogb_fixture.py in both torch formats and two pickle
// protocols: 2 (torch.save's default, bytes as latin-1 text) and 4.
func TestReadPT(t *testing.T) {
	wantInts := map[string]struct {
		values []int64
		shape  []int
	}{
		"long":       {[]int64{0, 1, 2, 3, 4, 5}, []int{2, 3}},
		"long_t":     {[]int64{0, 3, 1, 4, 2, 5}, []int{3, 2}},
		"offset":     {[]int64{3, 4, 5, 6}, []int{4}},
		"int32":      {[]int64{-1, 2}, []int{2}},
		"np_fortran": {[]int64{0, 1, 2, 3, 4, 5}, []int{2, 3}},
		"np_big":     {[]int64{0, 1, 2}, []int{3}},
		"np_u8":      {[]int64{0, 255}, []int{2}},
		"np_i16":     {[]int64{-300, 300}, []int{2}},
		"list":       {[]int64{1, 2, 3}, []int{3}},
	}
	wantStrs := map[string][]string{
		"np_str": {"a", "bcd", "é中"},
		"np_obj": {"x", "yz"},
		"strs":   {"a", "b"},
	}
	for _, file := range []string{"arrays_zip_p2.pt", "arrays_zip_p4.pt", "arrays_legacy_p2.pt", "arrays_legacy_p4.pt"} {
		t.Run(file, func(t *testing.T) {
			m, err := readPT("testdata/pt/" + file)
			if err != nil {
				t.Fatal(err)
			}
			if len(m) != len(wantInts)+len(wantStrs) {
				t.Errorf("%d keys, want %d", len(m), len(wantInts)+len(wantStrs))
			}
			for key, want := range wantInts {
				got, shape, err := int64s(m[key])
				if err != nil {
					t.Errorf("%s: %v", key, err)
					continue
				}
				if !reflect.DeepEqual(got, want.values) || !reflect.DeepEqual(shape, want.shape) {
					t.Errorf("%s: %v of shape %v, want %v of shape %v", key, got, shape, want.values, want.shape)
				}
				// Reading twice gives the same values: decoding must not
				// consume the array.
				if again, _, _ := int64s(m[key]); !reflect.DeepEqual(again, got) {
					t.Errorf("%s: second read %v", key, again)
				}
			}
			for key, want := range wantStrs {
				got, err := strs(m[key])
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %q, %v; want %q", key, got, err, want)
				}
			}
			if _, err := strs(m["long"]); err == nil {
				t.Error("a tensor read as str")
			}
			if _, _, err := int64s(m["np_str"]); err == nil {
				t.Error("a str array read as integers")
			}
		})
	}
}

func TestLatin1(t *testing.T) {
	raw := []byte{0, 1, 0x7f, 0x80, 0xc3, 0xff, 'a', 0}
	var text []rune
	for _, b := range raw {
		text = append(text, rune(b))
	}
	enc, err := latin1Encoder{}.Call(string(text), "latin1")
	if err != nil {
		t.Fatal(err)
	}
	r := newByteReader(enc, len(raw))
	if !r.plausible() {
		t.Fatal("not plausible")
	}
	got := make([]byte, len(raw))
	if err := r.next(got); err != nil || r.end() != nil {
		t.Fatalf("next: %v, end: %v", err, r.end())
	}
	if !reflect.DeepEqual(got, raw) {
		t.Errorf("got % x, want % x", got, raw)
	}
	if b, err := enc.(latin1).bytes(); err != nil || !reflect.DeepEqual(b, raw) {
		t.Errorf("bytes: % x, %v", b, err)
	}

	bad := newByteReader(latin1("\u0100"), 1)
	if err := bad.next(make([]byte, 1)); err == nil {
		t.Error("U+0100 accepted as latin-1")
	}
	short := newByteReader(latin1("ab"), 3)
	if err := short.next(make([]byte, 3)); err == nil {
		t.Error("short data accepted")
	}
	long := newByteReader([]byte("abc"), 2)
	if long.plausible() {
		t.Error("3 bytes plausible for 2")
	}
	if _, err := (latin1Encoder{}).Call("x", "utf-8"); err == nil {
		t.Error("utf-8 accepted")
	}
}

// TestReadPTCorrupt flips bytes of torch files: each flip must give an
// error or a readable dict, never a panic or a huge allocation.
func TestReadPTCorrupt(t *testing.T) {
	for _, file := range []string{"arrays_zip_p2.pt", "arrays_legacy_p4.pt"} {
		orig, err := os.ReadFile("testdata/pt/" + file)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), file)
		for i := 0; i < len(orig); i += 3 {
			b := bytes.Clone(orig)
			b[i] ^= 0xff
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := readPT(path)
			if err != nil {
				continue
			}
			for _, v := range m {
				int64s(v)
				strs(v)
			}
		}
	}
}
