package ckpt

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/sbinet/npyio/npy"
)

// Checkpoints and resume states are zip archives of .npy arrays. Both are
// read through the helpers below, which never trust a file: an entry is
// read whole and at most as many bytes as the caller expects, the header's
// shape is checked against those bytes before anything is allocated for
// it, and panics of the .npy parser on malformed headers become errors.

// Limits on what a file may make the reader allocate.
const (
	maxMetaBytes  = 64 << 20
	maxNpyHeader  = 64 << 10
	maxStateBytes = 1 << 40
)

// zipEntry reads the named entry of z whole, refusing one of more than
// maxBytes. Whole, because npyio v0.6.0 decodes elements with single Read
// calls, and a decompressing reader may return fewer bytes than asked,
// which silently misaligns every later value.
func zipEntry(z *zip.Reader, name string, maxBytes int) ([]byte, error) {
	f, err := z.Open(name)
	if err != nil {
		return nil, fmt.Errorf("entry %s: %w", name, err)
	}
	raw, err := io.ReadAll(io.LimitReader(f, int64(maxBytes)+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("entry %s: %w", name, err)
	}
	if len(raw) > maxBytes {
		return nil, fmt.Errorf("entry %s: larger than %d bytes", name, maxBytes)
	}
	return raw, nil
}

// npyHeader parses the header of the .npy file held in raw.
func npyHeader(name string, raw []byte) (r *npy.Reader, err error) {
	// npyio v0.6.0 allocates the header length the file declares, and
	// slices the header dictionary without bounds checks.
	if len(raw) < 12 || npyDataOffset(raw) > len(raw) {
		return nil, fmt.Errorf("entry %s: not a .npy file or shorter than its header", name)
	}
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("entry %s: malformed .npy header", name)
		}
	}()
	r, err = npy.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("entry %s: %w", name, err)
	}
	return r, nil
}

// decodeNpy decodes the array of r, parsed from raw, into ptr (a pointer
// to a slice of elemSize-byte values) once its shape fits raw's bytes.
func decodeNpy(name string, raw []byte, r *npy.Reader, ptr any, elemSize int) (err error) {
	// npyio fills a short array with zeros without an error, so the data
	// must be exactly as long as the shape says.
	data := len(raw) - npyDataOffset(raw)
	if n, ok := elements(r.Header.Descr.Shape, data/elemSize); !ok || n*elemSize != data {
		return fmt.Errorf("entry %s: shape %v does not fit its %d data bytes", name, r.Header.Descr.Shape, data)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("entry %s: malformed .npy data", name)
		}
	}()
	if err := r.Read(ptr); err != nil {
		return fmt.Errorf("entry %s: %w", name, err)
	}
	return nil
}

// npyDataOffset is where the data of a .npy file of at least 12 bytes
// starts: magic, version, header length, header.
func npyDataOffset(raw []byte) int {
	if raw[6] == 1 {
		return 10 + int(binary.LittleEndian.Uint16(raw[8:]))
	}
	return 12 + int(binary.LittleEndian.Uint32(raw[8:]))
}

// readNpyEntry decodes one array of elemSize-byte values of a zip archive
// into ptr, reading at most maxBytes.
func readNpyEntry(z *zip.Reader, name string, ptr any, elemSize, maxBytes int) error {
	raw, err := zipEntry(z, name, maxBytes)
	if err != nil {
		return err
	}
	r, err := npyHeader(name, raw)
	if err != nil {
		return err
	}
	return decodeNpy(name, raw, r, ptr, elemSize)
}

// readMatrix reads the rows×cols float array stored under key in an .npz
// archive, as Write stores it (entry "key") or as numpy.savez does
// ("key.npy"): float32 or float64, in C or Fortran order. The values come
// back as float64 in row-major order. An array that is missing, of another
// shape or type, or malformed is an error naming the entry.
func readMatrix(z *zip.Reader, key string, rows, cols int) ([]float64, error) {
	name := ""
	for _, f := range z.File {
		if f.Name == key || f.Name == key+".npy" {
			name = f.Name
			break
		}
	}
	if name == "" {
		var keys []string
		for _, f := range z.File {
			keys = append(keys, strings.TrimSuffix(f.Name, ".npy"))
		}
		return nil, fmt.Errorf("no array %q (has %v)", key, keys)
	}
	n, ok := elements([]int{rows, cols}, maxStateBytes/8)
	if !ok {
		return nil, fmt.Errorf("entry %s: %d×%d is too large", name, rows, cols)
	}
	raw, err := zipEntry(z, name, n*8+maxNpyHeader)
	if err != nil {
		return nil, err
	}
	r, err := npyHeader(name, raw)
	if err != nil {
		return nil, err
	}
	h := r.Header.Descr
	if len(h.Shape) != 2 || h.Shape[0] != rows || h.Shape[1] != cols {
		return nil, fmt.Errorf("entry %s has shape %v, the model needs [%d %d]", name, h.Shape, rows, cols)
	}
	var vals []float64
	switch {
	case strings.HasSuffix(h.Type, "f8"):
		err = decodeNpy(name, raw, r, &vals, 8)
	case strings.HasSuffix(h.Type, "f4"):
		var v32 []float32
		if err = decodeNpy(name, raw, r, &v32, 4); err == nil {
			vals = make([]float64, len(v32))
			for i, v := range v32 {
				vals[i] = float64(v)
			}
		}
	default:
		return nil, fmt.Errorf("entry %s holds %s values; want float32 or float64", name, h.Type)
	}
	if err != nil {
		return nil, err
	}
	if len(vals) != n {
		return nil, fmt.Errorf("entry %s has %d values for shape %v", name, len(vals), h.Shape)
	}
	if h.Fortran {
		t := make([]float64, n)
		for j := range cols {
			for i := range rows {
				t[i*cols+j] = vals[j*rows+i]
			}
		}
		vals = t
	}
	return vals, nil
}

// elements returns the product of shape's dimensions, false if one is
// negative or the product exceeds limit.
func elements(shape []int, limit int) (int, bool) {
	n := 1
	for _, d := range shape {
		if d < 0 || (d > 0 && n > limit/d) {
			return 0, false
		}
		n *= d
	}
	return n, true
}
