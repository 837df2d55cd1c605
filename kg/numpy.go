package kg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/nlpodyssey/gopickle/types"
)

// numpy pickles an array as _reconstruct(ndarray, (0,), b'b') followed by
// BUILD with the state (version, shape, dtype, fortran order, data), and a
// dtype as dtype(spec, False, True) followed by BUILD with a state tuple
// whose second item is the byte order. The types below take just enough of
// that to read OGB's arrays: integers, str and object arrays of str.

type ndarrayClass struct{}

type ndarrayReconstructor struct{}

func (ndarrayReconstructor) Call(args ...any) (any, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("numpy _reconstruct: no arguments")
	}
	if _, ok := args[0].(ndarrayClass); !ok {
		return nil, fmt.Errorf("numpy _reconstruct of %v: only ndarray is supported", args[0])
	}
	return &ndarray{}, nil
}

type ndarray struct {
	dims    []int
	dtype   *dtype
	fortran bool
	raw     byteReader // the elements, for fixed-size dtypes
	objects []any      // the elements, for dtype object
}

func (a *ndarray) PySetState(state any) error {
	t, ok := state.(*types.Tuple)
	if !ok || (t.Len() != 4 && t.Len() != 5) {
		return fmt.Errorf("numpy array state %v", state)
	}
	items := []any(*t)
	if len(items) == 5 {
		items = items[1:] // drop the version
	}
	shape, ok := items[0].(*types.Tuple)
	if !ok {
		return fmt.Errorf("numpy array shape %v", items[0])
	}
	n := 1
	for _, d := range *shape {
		k, ok := d.(int)
		if !ok || k < 0 || (k > 0 && n > math.MaxInt32*64/k) {
			return fmt.Errorf("numpy array shape %v", shape)
		}
		a.dims = append(a.dims, k)
		n *= k
	}
	if a.dtype, ok = items[1].(*dtype); !ok {
		return fmt.Errorf("numpy array dtype %v", items[1])
	}
	if a.fortran, ok = items[2].(bool); !ok {
		return fmt.Errorf("numpy array order %v", items[2])
	}
	switch data := items[3].(type) {
	case []byte, latin1:
		a.raw = newByteReader(data, n*a.dtype.size)
		if a.dtype.kind == 'O' || !a.raw.plausible() {
			return fmt.Errorf("numpy array of %d elements of dtype %s has the wrong amount of data", n, a.dtype)
		}
	case *types.List:
		if a.dtype.kind != 'O' || data.Len() != n {
			return fmt.Errorf("numpy array of %d elements of dtype %s has %d objects", n, a.dtype, data.Len())
		}
		a.objects = *data
	default:
		return fmt.Errorf("numpy array data is %T", items[3])
	}
	return nil
}

type dtypeClass struct{}

func (dtypeClass) Call(args ...any) (any, error) {
	spec, ok := "", len(args) > 0
	if ok {
		spec, ok = args[0].(string)
	}
	if !ok || len(spec) < 2 {
		return nil, fmt.Errorf("numpy dtype%v: unsupported", args)
	}
	size, err := strconv.Atoi(spec[1:])
	if err != nil || size <= 0 {
		return nil, fmt.Errorf("numpy dtype %q: unsupported", spec)
	}
	d := &dtype{kind: spec[0], size: size, bigEndian: false}
	switch d.kind {
	case 'i', 'u', 'b', 'O':
	case 'U':
		d.size *= 4 // UTF-32 code units
	default:
		return nil, fmt.Errorf("numpy dtype %q: unsupported", spec)
	}
	return d, nil
}

type dtype struct {
	kind      byte // 'i' int, 'u' uint, 'b' bool, 'U' str, 'O' object
	size      int  // bytes per element
	bigEndian bool
}

func (d *dtype) String() string { return fmt.Sprintf("%c%d", d.kind, d.size) }

func (d *dtype) PySetState(state any) error {
	t, ok := state.(*types.Tuple)
	if !ok || t.Len() < 2 {
		return fmt.Errorf("numpy dtype state %v", state)
	}
	order, ok := t.Get(1).(string)
	if !ok {
		return fmt.Errorf("numpy dtype byte order %v", t.Get(1))
	}
	d.bigEndian = order == ">"
	return nil
}

// decode visits the elements in storage order.
func (a *ndarray) decode(fn func(int, int64) error) error {
	d := a.dtype
	var order binary.ByteOrder = binary.LittleEndian
	if d.bigEndian {
		order = binary.BigEndian
	}
	r := a.raw // a copy, so that an array can be visited twice
	n := r.len() / d.size
	var buf [8]byte
	b := buf[:d.size]
	for i := range n {
		if err := r.next(b); err != nil {
			return err
		}
		var x int64
		switch {
		case d.size == 1 && d.kind == 'i':
			x = int64(int8(b[0]))
		case d.size == 1:
			x = int64(b[0])
		case d.size == 2 && d.kind == 'i':
			x = int64(int16(order.Uint16(b)))
		case d.size == 2:
			x = int64(order.Uint16(b))
		case d.size == 4 && d.kind == 'i':
			x = int64(int32(order.Uint32(b)))
		case d.size == 4:
			x = int64(order.Uint32(b))
		default:
			// A uint64 beyond MaxInt64 wraps negative and fails the
			// caller's range checks, as it should.
			x = int64(order.Uint64(b))
		}
		if err := fn(i, x); err != nil {
			return err
		}
	}
	return r.end()
}

// utf32Strings decodes numpy's fixed-width str elements: UTF-32 code
// units, padded with zeros.
func (a *ndarray) utf32Strings() ([]string, error) {
	var order binary.ByteOrder = binary.LittleEndian
	if a.dtype.bigEndian {
		order = binary.BigEndian
	}
	size := a.dtype.size
	r := a.raw
	out := make([]string, r.len()/size)
	// Type names repeat millions of times in OGB's splits; share them.
	seen := make(map[string]string)
	elem := make([]byte, size)
	buf := make([]byte, 0, size)
	for i := range out {
		if err := r.next(elem); err != nil {
			return nil, err
		}
		buf = buf[:0]
		for j := 0; j < size; j += 4 {
			r := rune(order.Uint32(elem[j:]))
			if r == 0 {
				break
			}
			if !utf8.ValidRune(r) {
				return nil, fmt.Errorf("item %d holds invalid code point %#x", i, r)
			}
			buf = utf8.AppendRune(buf, r)
		}
		s, ok := seen[string(buf)]
		if !ok {
			s = string(buf)
			seen[s] = s
		}
		out[i] = s
	}
	return out, r.end()
}

// A byteReader reads the raw data of an array in order, from a []byte or
// from latin1 text without copying it first.
type byteReader struct {
	b   []byte
	s   latin1
	n   int // bytes the array needs
	pos int // read position in b or s
}

func newByteReader(data any, n int) byteReader {
	switch d := data.(type) {
	case []byte:
		return byteReader{b: d, n: n}
	case latin1:
		return byteReader{s: d, n: n}
	}
	return byteReader{}
}

func (r *byteReader) len() int { return r.n }

// plausible reports whether the data can hold n bytes. For latin1 text,
// which takes one or two bytes per byte held, the exact count is only
// known after reading it; end checks it then.
func (r *byteReader) plausible() bool {
	if r.s == "" {
		return len(r.b) == r.n
	}
	return r.n <= len(r.s) && len(r.s) <= 2*r.n
}

// next fills p with the next len(p) bytes.
func (r *byteReader) next(p []byte) error {
	if r.s == "" {
		if r.pos+len(p) > len(r.b) {
			return errShortArray
		}
		r.pos += copy(p, r.b[r.pos:])
		return nil
	}
	s := r.s
	for i := range p {
		if r.pos >= len(s) {
			return errShortArray
		}
		c := s[r.pos]
		switch {
		case c < 0x80:
			p[i] = c
			r.pos++
		case (c == 0xc2 || c == 0xc3) && r.pos+1 < len(s) && s[r.pos+1]&0xc0 == 0x80:
			// U+0080..U+00FF in UTF-8: 110000xx 10xxxxxx.
			p[i] = c<<6 | s[r.pos+1]&0x3f
			r.pos += 2
		default:
			return fmt.Errorf("numpy array data: byte %#x at %d is not latin-1 text", c, r.pos)
		}
	}
	return nil
}

// end returns an error if data is left over.
func (r *byteReader) end() error {
	if (r.s == "" && r.pos != len(r.b)) || (r.s != "" && r.pos != len(r.s)) {
		return errors.New("numpy array data is longer than its shape")
	}
	return nil
}

var errShortArray = errors.New("numpy array data is shorter than its shape")
