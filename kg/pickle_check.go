package kg

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// checkPickle walks one pickle in r up to its STOP opcode, without
// building anything, and returns an error if an opcode declares more data
// than the remaining size bytes of input hold. gopickle allocates what a
// length field says before reading, so one corrupt byte in a length could
// otherwise ask for terabytes and end the process. It returns the number
// of bytes the pickle spans.
func checkPickle(r *bufio.Reader, size int64) (int64, error) {
	var pos int64
	skip := func(n int64) error {
		if n < 0 || n > size-pos {
			return fmt.Errorf("pickle opcode at byte %d declares %d bytes, but %d remain", pos, n, size-pos)
		}
		if _, err := r.Discard(int(n)); err != nil {
			return err
		}
		pos += n
		return nil
	}
	length := func(width int) (int64, error) {
		var b [8]byte
		if _, err := io.ReadFull(r, b[:width]); err != nil {
			return 0, err
		}
		pos += int64(width)
		switch width {
		case 1:
			return int64(b[0]), nil
		case 4:
			return int64(binary.LittleEndian.Uint32(b[:4])), nil
		}
		n := binary.LittleEndian.Uint64(b[:])
		if n > 1<<62 {
			return -1, nil
		}
		return int64(n), nil
	}
	line := func() error {
		for {
			b, err := r.ReadSlice('\n')
			pos += int64(len(b))
			if err != bufio.ErrBufferFull {
				return err
			}
		}
	}
	for {
		op, err := r.ReadByte()
		if err != nil {
			return pos, unexpectedEOF(err)
		}
		pos++
		switch arg := pickleArgs[op]; {
		case op == '.': // STOP
			return pos, nil
		case arg == 0:
			return pos, fmt.Errorf("unknown pickle opcode %#x at byte %d", op, pos-1)
		case arg == argNone:
		case arg <= 8: // fixed width: the width itself
			err = skip(int64(arg))
		case arg == argLine:
			err = line()
		case arg == argTwoLines:
			if err = line(); err == nil {
				err = line()
			}
		case arg == argFrame:
			// A frame's length covers the opcodes that follow, which
			// this loop walks anyway.
			var n int64
			if n, err = length(8); err == nil && (n < 0 || n > size-pos) {
				err = fmt.Errorf("pickle frame at byte %d declares %d bytes, but %d remain", pos-9, n, size-pos)
			}
		default: // length-prefixed data
			var n int64
			if n, err = length(int(arg - argPrefixed)); err == nil {
				err = skip(n)
			}
		}
		if err != nil {
			return pos, unexpectedEOF(err)
		}
	}
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Argument kinds of pickle opcodes (Python's pickletools lists them):
// 1..8 is a fixed width, argPrefixed+w a w-byte length and that much data.
const (
	argNone     = 0x40
	argLine     = 0x41
	argTwoLines = 0x42
	argFrame    = 0x43
	argPrefixed = 0x50
)

var pickleArgs = func() (t [256]byte) {
	// MARK EMPTY_TUPLE STOP POP POP_MARK DUP NONE REDUCE EMPTY_LIST APPEND
	// BUILD DICT APPENDS LIST OBJ SETITEM TUPLE SETITEMS EMPTY_DICT
	// BINPERSID, then the opcodes of protocols 2 to 5 without argument.
	for _, op := range []byte("().012NR]abdelostu}Q\x81\x85\x86\x87\x88\x89\x8f\x90\x91\x92\x93\x94\x97\x98") {
		t[op] = argNone
	}
	for op, w := range map[byte]byte{
		'K': 1, 'q': 1, 'h': 1, 0x80: 1, 0x82: 1, // BININT1 BINPUT BINGET PROTO EXT1
		'M': 2, 0x83: 2, // BININT2 EXT2
		'J': 4, 'r': 4, 'j': 4, 0x84: 4, // BININT LONG_BINPUT LONG_BINGET EXT4
		'G': 8, // BINFLOAT
	} {
		t[op] = w
	}
	for _, op := range []byte("ILSVFpgP") { // INT LONG STRING UNICODE FLOAT PUT GET PERSID
		t[op] = argLine
	}
	t['c'], t['i'] = argTwoLines, argTwoLines // GLOBAL INST
	t[0x95] = argFrame
	for op, w := range map[byte]byte{
		'U': 1, 'C': 1, 0x8c: 1, 0x8a: 1, // SHORT_BINSTRING SHORT_BINBYTES SHORT_BINUNICODE LONG1
		'T': 4, 'B': 4, 'X': 4, 0x8b: 4, // BINSTRING BINBYTES BINUNICODE LONG4
		0x8d: 8, 0x8e: 8, 0x96: 8, // BINUNICODE8 BINBYTES8 BYTEARRAY8
	} {
		t[op] = argPrefixed + w
	}
	return t
}()
