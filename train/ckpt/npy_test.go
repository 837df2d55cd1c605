package ckpt

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// npzOf builds an in-memory .npz whose entry name holds raw.
func npzOf(t testing.TB, name string, raw []byte) *zip.Reader {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	f, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	f.Write(raw)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	z, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// npyBytes is a version-1 .npy file with the given header dictionary.
func npyBytes(dict string, data []byte) []byte {
	hdr := []byte(dict + "\n")
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), byte(len(hdr)>>8))
	return append(append(b, hdr...), data...)
}

func TestReadMatrixRejects(t *testing.T) {
	f64 := make([]byte, 2*3*8)
	for _, tc := range []struct {
		name, entry string
		raw         []byte
		want        string
	}{
		{"missing", "other.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64), `no array "x"`},
		{"shape", "x.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", f64), "has shape [3 2]"},
		{"rank", "x", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", f64), "has shape [6]"},
		{"dtype", "x", npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }", f64), "want float32 or float64"},
		{"short", "x", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64[:40]), "does not fit"},
		{"no newline", "x", append([]byte("\x93NUMPY\x01\x00\x04\x00"), "{'de"...), "malformed"},
		{"not npy", "x", []byte("hello, world"), "entry x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readMatrix(npzOf(t, tc.entry, tc.raw), "x", 2, 3)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// A corrupt or hostile .npy entry is an error, never a panic. The entry
// is fuzzed inside a valid zip, so that the fuzzer reaches the .npy parser
// instead of the zip checksum.
func FuzzReadNpyEntry(f *testing.F) {
	f.Add(npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", make([]byte, 48)))
	f.Add(npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", make([]byte, 24)))
	f.Add(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", make([]byte, 4)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		z := npzOf(t, "x.npy", raw)
		vals, err := readMatrix(z, "x", 2, 3)
		if err == nil && len(vals) != 6 {
			t.Fatalf("%d values for a 2×3 array", len(vals))
		}
		var v []float32
		readNpyEntry(z, "x.npy", &v, 4, 1<<10)
	})
}

// readMatrixInto decodes every layout numpy writes into either dtype, in
// row-major order: little- and big-endian, float32 and float64, C and
// Fortran order; a destination of the wrong length is an error.
func TestReadMatrixInto(t *testing.T) {
	want := []float64{1, 2, 3, 4, 5, 6.5} // 2×3, row-major
	encode := func(size int, order binary.AppendByteOrder, fortran bool) []byte {
		var b []byte
		for k := range 6 {
			i, j := k, k
			if fortran {
				i, j = k%2, k/2 // column-major walk over the 2×3 matrix
			} else {
				i, j = k/3, k%3
			}
			v := want[i*3+j]
			if size == 4 {
				b = order.AppendUint32(b, math.Float32bits(float32(v)))
			} else {
				b = order.AppendUint64(b, math.Float64bits(v))
			}
		}
		return b
	}
	for _, c := range []struct {
		descr   string
		size    int
		order   binary.AppendByteOrder
		fortran bool
	}{
		{"<f4", 4, binary.LittleEndian, false}, {"<f8", 8, binary.LittleEndian, true},
		{">f4", 4, binary.BigEndian, true}, {">f8", 8, binary.BigEndian, false},
	} {
		fo := "False"
		if c.fortran {
			fo = "True"
		}
		z := npzOf(t, "x.npy", npyBytes("{'descr': '"+c.descr+"', 'fortran_order': "+fo+", 'shape': (2, 3), }", encode(c.size, c.order, c.fortran)))
		d64, d32 := make([]float64, 6), make([]float32, 6)
		if err := readMatrixInto(z, "x", 2, 3, d64); err != nil {
			t.Fatalf("%s fortran %v: %v", c.descr, c.fortran, err)
		}
		if err := readMatrixInto(z, "x", 2, 3, d32); err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if d64[i] != w || float64(d32[i]) != w {
				t.Fatalf("%s fortran %v: [%d] = %v, %v; want %v", c.descr, c.fortran, i, d64[i], d32[i], w)
			}
		}
		if err := readMatrixInto(z, "x", 2, 3, nil); err != nil {
			t.Errorf("%s: checking only: %v", c.descr, err)
		}
		if err := readMatrixInto(z, "x", 2, 3, make([]float32, 5)); err == nil {
			t.Errorf("%s: a destination of 5 values is accepted", c.descr)
		}
	}
}
