package ckpt

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
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
	n, ok := elements([]int{rows, cols}, maxStateBytes/8)
	if !ok {
		return nil, fmt.Errorf("entry %s: %d×%d is too large", key, rows, cols)
	}
	vals := make([]float64, n)
	if err := readMatrixInto(z, key, rows, cols, vals); err != nil {
		return nil, err
	}
	return vals, nil
}

// readMatrixInto is readMatrix decoding straight into dst, a []float32 or
// []float64 of rows·cols values, in row-major order: the entry is streamed
// in chunks, so loading a table costs no copy of it (a 2.5M × 200 float32
// table read whole, decoded and converted took about four times its 2 GB).
// dst nil only checks the header and the entry's size against the shape,
// reading no data.
func readMatrixInto(z *zip.Reader, key string, rows, cols int, dst any) error {
	var alloc func() any
	if dst != nil {
		alloc = func() any { return dst }
	}
	return readArrayInto(z, key, []int{rows, cols}, alloc)
}

// readArrayInto is readMatrixInto for an array of any shape of one or two
// dimensions, which the entry's header must state exactly. The destination
// comes from alloc, called only once the header and the entry's size have
// shown the shape to be true, so that a lying shape is an error, not an
// allocation of its size; alloc nil only checks.
func readArrayInto(z *zip.Reader, key string, shape []int, alloc func() any) error {
	var put func(n int) (func(i int, v float64), error)
	if alloc != nil {
		put = func(n int) (func(i int, v float64), error) { return putter(alloc(), n) }
	}
	return readArrayWith(z, key, shape, put)
}

// readArrayWith is readArrayInto storing each value through the function
// newPut returns (called once the shape is shown true, with the number of
// values); newPut nil only checks.
func readArrayWith(z *zip.Reader, key string, shape []int, newPut func(n int) (func(i int, v float64), error)) error {
	var zf *zip.File
	for _, f := range z.File {
		if f.Name == key || f.Name == key+".npy" {
			zf = f
			break
		}
	}
	if zf == nil {
		var keys []string
		for _, f := range z.File {
			keys = append(keys, strings.TrimSuffix(f.Name, ".npy"))
		}
		return fmt.Errorf("no array %q (has %v)", key, keys)
	}
	name := zf.Name
	n, ok := elements(shape, maxStateBytes/8)
	if !ok || len(shape) == 0 || len(shape) > 2 {
		return fmt.Errorf("entry %s: shape %v is too large or not of one or two dimensions", name, shape)
	}
	f, err := zf.Open()
	if err != nil {
		return fmt.Errorf("entry %s: %w", name, err)
	}
	defer f.Close()
	// The header: magic, version, its length, then the dictionary.
	hdr := make([]byte, 12)
	if _, err := io.ReadFull(f, hdr); err != nil || !bytes.HasPrefix(hdr, []byte("\x93NUMPY")) {
		return fmt.Errorf("entry %s: not a .npy file or shorter than its header", name)
	}
	offset := npyDataOffset(hdr)
	if offset > maxNpyHeader {
		return fmt.Errorf("entry %s: a .npy header of %d bytes", name, offset)
	}
	if offset > len(hdr) {
		rest := make([]byte, offset-len(hdr))
		if _, err := io.ReadFull(f, rest); err != nil {
			return fmt.Errorf("entry %s: not a .npy file or shorter than its header", name)
		}
		hdr = append(hdr, rest...)
	}
	r, err := npyHeader(name, hdr[:offset])
	if err != nil {
		return err
	}
	h := r.Header.Descr
	if !slices.Equal(h.Shape, shape) {
		return fmt.Errorf("entry %s has shape %v, the model needs %v", name, h.Shape, shape)
	}
	var size int
	switch {
	case strings.HasSuffix(h.Type, "f8"):
		size = 8
	case strings.HasSuffix(h.Type, "f4"):
		size = 4
	default:
		return fmt.Errorf("entry %s holds %s values; want float32 or float64", name, h.Type)
	}
	var order binary.ByteOrder = binary.LittleEndian
	if strings.HasPrefix(h.Type, ">") {
		order = binary.BigEndian
	}
	// The data must be exactly as long as the shape says (an offset
	// beyond the entry, as in a truncated one, fails here too).
	if data := int64(zf.UncompressedSize64) - int64(offset); data != int64(n*size) {
		return fmt.Errorf("entry %s: shape %v does not fit its %d data bytes", name, h.Shape, data)
	}
	if newPut == nil {
		return nil
	}
	put, err := newPut(n)
	if err != nil {
		return fmt.Errorf("entry %s: %w", name, err)
	}
	index := func(k int) int { return k }
	if h.Fortran && len(shape) == 2 {
		rows, cols := shape[0], shape[1]
		index = func(k int) int { return (k%rows)*cols + k/rows }
	}
	buf := make([]byte, max(1, min(n*size, 1<<20))) // one byte at least, for the read at the end
	for k := 0; k < n; {
		chunk := buf[:min(len(buf), (n-k)*size)]
		if _, err := io.ReadFull(f, chunk); err != nil {
			return fmt.Errorf("entry %s: %w", name, err)
		}
		for off := 0; off < len(chunk); off, k = off+size, k+1 {
			var v float64
			if size == 8 {
				v = math.Float64frombits(order.Uint64(chunk[off:]))
			} else {
				v = float64(math.Float32frombits(order.Uint32(chunk[off:])))
			}
			put(index(k), v)
		}
	}
	// Reading to the end checks the entry's checksum.
	if _, err := f.Read(buf[:1]); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("data beyond its shape %v", h.Shape)
		}
		return fmt.Errorf("entry %s: %w", name, err)
	}
	return nil
}

// putter returns a function storing value v at index i of dst, a
// []float32 or []float64 of n values.
func putter(dst any, n int) (func(i int, v float64), error) {
	switch d := dst.(type) {
	case []float32:
		if len(d) == n {
			return func(i int, v float64) { d[i] = float32(v) }, nil
		}
	case []float64:
		if len(d) == n {
			return func(i int, v float64) { d[i] = v }, nil
		}
	default:
		return nil, fmt.Errorf("cannot decode into %T", dst)
	}
	return nil, fmt.Errorf("destination of the wrong length for %d values", n)
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
