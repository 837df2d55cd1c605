package kg

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// pickleWriter writes the one kind of pickle OGB's split files hold: a dict
// keyed by str whose values are int64 numpy arrays or lists of str, as
// torch.save (pickle protocol 2) writes it with numpy 1.x. It emits the
// same opcodes, memo and batches as CPython's pickler, so that a split
// written here is the stream torch.save would write for the same dict
// (the tests compare it byte for byte with files torch wrote, and with
// CPython's pickler on larger dicts). Objects that Python shares by
// identity (globals, the one dtype, numpy's strings, equal type names in
// the lists) are shared here by a key of their role and value.
type pickleWriter struct {
	w       *bufio.Writer
	memo    uint32            // next memo index
	shared  map[string]uint32 // memo index of shared objects, by a key
	scratch [9]byte
}

// Pickle opcodes (CPython's Lib/pickle.py names).
const (
	opProto       = 0x80
	opEmptyDict   = '}'
	opEmptyList   = ']'
	opEmptyTuple  = ')'
	opMark        = '('
	opStop        = '.'
	opBinPut      = 'q'
	opLongBinPut  = 'r'
	opBinGet      = 'h'
	opLongBinGet  = 'j'
	opBinUnicode  = 'X'
	opGlobal      = 'c'
	opBinInt1     = 'K'
	opBinInt2     = 'M'
	opBinInt      = 'J'
	opTuple1      = 0x85
	opTuple2      = 0x86
	opTuple3      = 0x87
	opTuple       = 't'
	opReduce      = 'R'
	opBuild       = 'b'
	opNone        = 'N'
	opNewTrue     = 0x88
	opNewFalse    = 0x89
	opAppend      = 'a'
	opAppends     = 'e'
	opSetItem     = 's'
	opSetItems    = 'u'
	pickleBatch   = 1000 // CPython's BATCHSIZE for APPENDS and SETITEMS
	maxBinUnicode = math.MaxUint32
)

// pickleValue is one value of a split's dict: an int64 array of the
// given shape, its elements in C order by at, or (shape nil) a list of n
// str by str. Accessors, not slices: a split of millions of edges is
// written without a copy of its columns.
type pickleValue struct {
	shape []int
	at    func(i int) int64
	n     int
	str   func(i int) string
}

func newPickleWriter(w io.Writer) *pickleWriter {
	return &pickleWriter{w: bufio.NewWriterSize(w, 1<<20), shared: map[string]uint32{}}
}

// writeDict writes a whole pickle: the dict of the keys in order.
func (p *pickleWriter) writeDict(keys []string, values []pickleValue) error {
	p.w.Write([]byte{opProto, 2, opEmptyDict})
	p.put()
	err := p.batch(len(keys), opSetItem, opSetItems, func(i int) error {
		p.str(keys[i])
		v := values[i]
		if v.shape != nil {
			return p.int64Array(v.shape, v.at)
		}
		p.w.WriteByte(opEmptyList)
		p.put()
		return p.batch(v.n, opAppend, opAppends, func(j int) error {
			p.sharedStr("type:", v.str(j))
			return nil
		})
	})
	if err != nil {
		return err
	}
	p.w.WriteByte(opStop)
	return p.w.Flush()
}

// batch writes n items as CPython does: one item and the single opcode,
// or MARK, up to pickleBatch items and the batch opcode, repeated.
func (p *pickleWriter) batch(n int, single, many byte, item func(int) error) error {
	if n == 1 {
		if err := item(0); err != nil {
			return err
		}
		return p.w.WriteByte(single)
	}
	for i := 0; i < n; {
		p.w.WriteByte(opMark)
		for end := min(i+pickleBatch, n); i < end; i++ {
			if err := item(i); err != nil {
				return err
			}
		}
		p.w.WriteByte(many)
	}
	return nil
}

// put memoizes the object just written, as the pickler does for every
// object it may meet again.
func (p *pickleWriter) put() uint32 {
	i := p.memo
	p.memo++
	if i < 256 {
		p.w.Write([]byte{opBinPut, byte(i)})
	} else {
		p.scratch[0] = opLongBinPut
		binary.LittleEndian.PutUint32(p.scratch[1:5], i)
		p.w.Write(p.scratch[:5])
	}
	return i
}

func (p *pickleWriter) get(i uint32) {
	if i < 256 {
		p.w.Write([]byte{opBinGet, byte(i)})
		return
	}
	p.scratch[0] = opLongBinGet
	binary.LittleEndian.PutUint32(p.scratch[1:5], i)
	p.w.Write(p.scratch[:5])
}

// once writes the object under key the first time (then memoizes it)
// and a memo reference after that.
func (p *pickleWriter) once(key string, write func()) {
	if i, ok := p.shared[key]; ok {
		p.get(i)
		return
	}
	write()
	p.shared[key] = p.put()
}

func (p *pickleWriter) unicodeHeader(n uint64) {
	p.scratch[0] = opBinUnicode
	binary.LittleEndian.PutUint32(p.scratch[1:5], uint32(n))
	p.w.Write(p.scratch[:5])
}

// str writes a new str (a dict key: Python meets each once).
func (p *pickleWriter) str(s string) {
	p.unicodeHeader(uint64(len(s)))
	p.w.WriteString(s)
	p.put()
}

// sharedStr writes a str that may repeat, once per key: a type name in
// the lists (key "type:"), or one of numpy's (key "numpy:"), which are
// other objects than the lists' even when equal.
func (p *pickleWriter) sharedStr(key, s string) {
	p.once(key+s, func() { p.unicodeHeader(uint64(len(s))); p.w.WriteString(s) })
}

func (p *pickleWriter) global(module, name string) {
	p.once("global:"+module+" "+name, func() {
		p.w.WriteByte(opGlobal)
		p.w.WriteString(module + "\n" + name + "\n")
	})
}

func (p *pickleWriter) int(x int) error {
	switch {
	case x >= 0 && x < 256:
		p.w.Write([]byte{opBinInt1, byte(x)})
	case x >= 0 && x < 65536:
		p.w.Write([]byte{opBinInt2, byte(x), byte(x >> 8)})
	case x >= math.MinInt32 && x <= math.MaxInt32:
		p.scratch[0] = opBinInt
		binary.LittleEndian.PutUint32(p.scratch[1:5], uint32(int32(x)))
		p.w.Write(p.scratch[:5])
	default:
		return fmt.Errorf("kg: integer %d does not fit a 4-byte pickle int", x)
	}
	return nil
}

// tuple writes a tuple of the n > 0 items that items writes: TUPLE1-3
// after them when short, else MARK before them and TUPLE after.
func (p *pickleWriter) tuple(n int, items func() error) error {
	if n > 3 {
		p.w.WriteByte(opMark)
	}
	if err := items(); err != nil {
		return err
	}
	switch n {
	case 1:
		p.w.WriteByte(opTuple1)
	case 2:
		p.w.WriteByte(opTuple2)
	case 3:
		p.w.WriteByte(opTuple3)
	default:
		p.w.WriteByte(opTuple)
	}
	p.put()
	return nil
}

// latin1Bytes writes a bytes object of n bytes as protocol 2 must, by
// reducing _codecs.encode(str, 'latin1') over the bytes decoded as
// Latin-1, and returns its memo index. chunks hands the bytes over in
// pieces, twice: once to size the str's UTF-8, once to write it.
func (p *pickleWriter) latin1Bytes(n int, chunks func(func([]byte))) (uint32, error) {
	if n == 0 {
		// CPython reduces b'', a single object, to bytes() instead.
		if i, ok := p.shared["bytes:"]; ok {
			p.get(i)
			return i, nil
		}
		p.global("__builtin__", "bytes")
		p.w.WriteByte(opEmptyTuple)
		p.w.WriteByte(opReduce)
		i := p.put()
		p.shared["bytes:"] = i
		return i, nil
	}
	p.global("_codecs", "encode")
	err := p.tuple(2, func() error {
		size := uint64(0)
		chunks(func(c []byte) {
			size += uint64(len(c))
			for _, b := range c {
				size += uint64(b >> 7)
			}
		})
		if size > maxBinUnicode {
			return fmt.Errorf("kg: an array of %d bytes is too large for a protocol-2 pickle (4 GiB as UTF-8)", n)
		}
		p.unicodeHeader(size)
		var out []byte
		chunks(func(c []byte) {
			out = out[:0]
			for _, b := range c {
				if b < 0x80 {
					out = append(out, b)
				} else {
					out = append(out, 0xc0|b>>6, 0x80|b&0x3f)
				}
			}
			p.w.Write(out)
		})
		p.put()
		p.sharedStr("numpy:", "latin1")
		return nil
	})
	if err != nil {
		return 0, err
	}
	p.w.WriteByte(opReduce)
	return p.put(), nil
}

// int64Array writes a C-ordered little-endian int64 numpy array as
// ndarray.__reduce_ex__(2) describes it: _reconstruct(ndarray, (0,), b'b')
// and the state (1, shape, dtype('i8'), False, data).
func (p *pickleWriter) int64Array(shape []int, at func(int) int64) error {
	n := 1
	for _, s := range shape {
		n *= s
	}
	p.global("numpy.core.multiarray", "_reconstruct")
	err := p.tuple(3, func() error {
		p.global("numpy", "ndarray")
		if err := p.tuple(1, func() error { return p.int(0) }); err != nil {
			return err
		}
		// numpy hands the pickler one b'b' object for every array.
		if i, ok := p.shared["bytes:b"]; ok {
			p.get(i)
			return nil
		}
		i, err := p.latin1Bytes(1, func(f func([]byte)) { f([]byte{'b'}) })
		p.shared["bytes:b"] = i
		return err
	})
	if err != nil {
		return err
	}
	p.w.WriteByte(opReduce)
	p.put()
	err = p.tuple(5, func() error {
		p.int(1)
		if err := p.tuple(len(shape), func() error {
			for _, s := range shape {
				if err := p.int(s); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
		if err := p.int64Dtype(); err != nil {
			return err
		}
		p.w.WriteByte(opNewFalse)
		_, err := p.latin1Bytes(8*n, func(f func([]byte)) {
			var buf [8 << 10]byte
			for i := 0; i < n; {
				c := buf[:0]
				for ; i < n && len(c) < len(buf); i++ {
					c = binary.LittleEndian.AppendUint64(c, uint64(at(i)))
				}
				f(c)
			}
		})
		return err
	})
	if err != nil {
		return err
	}
	p.w.WriteByte(opBuild)
	return nil
}

// int64Dtype writes dtype('i8') as numpy reduces it: dtype('i8', False,
// True) with the state (3, '<', None, None, None, -1, -1, 0), once.
func (p *pickleWriter) int64Dtype() error {
	if i, ok := p.shared["dtype:i8"]; ok {
		p.get(i)
		return nil
	}
	p.global("numpy", "dtype")
	p.tuple(3, func() error {
		p.sharedStr("numpy:", "i8")
		p.w.Write([]byte{opNewFalse, opNewTrue})
		return nil
	})
	p.w.WriteByte(opReduce)
	p.shared["dtype:i8"] = p.put()
	p.tuple(8, func() error {
		p.int(3)
		p.sharedStr("numpy:", "<")
		p.w.Write([]byte{opNone, opNone, opNone})
		p.int(-1)
		p.int(-1)
		return p.int(0)
	})
	p.w.WriteByte(opBuild)
	return nil
}
