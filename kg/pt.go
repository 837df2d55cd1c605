package kg

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"
)

// readPT reads a file written by torch.save whose top level is a dict keyed
// by str, as OGB's split files are. Both of torch.save's formats are read:
// the zip archive (the default since PyTorch 1.6) and the older legacy
// stream. Values may be numpy arrays (OGB stores its splits so), torch
// tensors, lists and str.
func readPT(path string) (_ map[string]any, err error) {
	// gopickle panics on some malformed input; a corrupt download must
	// still come back as an error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: cannot read torch file: %v", path, r)
		}
	}()
	zip, err := hasZipMagic(path)
	if err != nil {
		return nil, err
	}
	var v any
	if zip {
		v, err = loadZipPT(path)
	} else {
		v, err = loadLegacyPT(path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return stringKeyedDict(v, path)
}

func hasZipMagic(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return false, fmt.Errorf("%s: too short for a torch file", path)
	}
	return string(magic[:]) == "PK\x03\x04", err
}

func stringKeyedDict(v any, path string) (map[string]any, error) {
	var entries []types.DictEntry
	switch d := v.(type) {
	case *types.Dict:
		entries = *d
	case *types.OrderedDict:
		for _, k := range d.Map {
			entries = append(entries, types.DictEntry{Key: k.Key, Value: k.Value})
		}
	default:
		return nil, fmt.Errorf("%s: top level is %T, want a dict", path, v)
	}
	m := make(map[string]any, len(entries))
	for _, e := range entries {
		k, ok := e.Key.(string)
		if !ok {
			return nil, fmt.Errorf("%s: dict key %v is %T, want str", path, e.Key, e.Key)
		}
		m[k] = e.Value
	}
	return m, nil
}

// legacyMagic and legacyProtocol open a torch.save stream of the legacy
// format (torch/serialization.py, _legacy_save).
var legacyMagic, _ = new(big.Int).SetString("1950a86a20f9469cfc6c", 16)

const legacyProtocol = 1001

// gopickle's pytorch package reads both formats too, but it reads pickles
// without a buffer, one system call per opcode, which is slow for lists of
// millions of str; it trusts a single Read to fill a buffer; and it sizes
// allocations by the file's length fields unchecked. So the archive
// handling is done here, with gopickle's unpickler and storage types, and
// every pickle is first walked by checkPickle.

// loadZipPT reads the zip format: the pickle is the record data.pkl and
// tensors refer to storages by key, each the raw record data/<key>.
func loadZipPT(path string) (any, error) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	var pkl *zip.File
	records := make(map[string]*zip.File, len(z.File))
	for _, f := range z.File {
		records[f.Name] = f
		if pkl == nil && (f.Name == "data.pkl" || strings.HasSuffix(f.Name, "/data.pkl")) {
			pkl = f
		}
	}
	if pkl == nil {
		return nil, errors.New("zip archive without data.pkl")
	}
	prefix := strings.TrimSuffix(pkl.Name, "data.pkl")
	if pkl.UncompressedSize64 > 1<<62 {
		return nil, errors.New("data.pkl too large")
	}
	if err := checkZipPickle(pkl); err != nil {
		return nil, fmt.Errorf("data.pkl: %w", err)
	}
	rc, err := pkl.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()

	loaded := make(map[string]pytorch.StorageInterface)
	u := pickle.NewUnpickler(bufio.NewReaderSize(rc, 1<<20))
	u.FindClass = findClass
	u.PersistentLoad = func(id any) (any, error) {
		class, key, size, location, err := storageID(id)
		if err != nil {
			return nil, err
		}
		if s, ok := loaded[key]; ok {
			return s, nil // tensors may share a storage
		}
		rec, ok := records[prefix+"data/"+key]
		if !ok {
			return nil, fmt.Errorf("no record for storage %s", key)
		}
		if uint64(size)*uint64(elementSize(class)) > rec.UncompressedSize64 {
			return nil, fmt.Errorf("storage %s: %d elements in a record of %d bytes", key, size, rec.UncompressedSize64)
		}
		r, err := rec.Open()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		s := class.New(size, location)
		if err := s.SetFromFileWithSize(fullReader{r}, size); err != nil {
			return nil, fmt.Errorf("storage %s: %w", key, err)
		}
		if _, err := io.Copy(io.Discard, r); err != nil { // verifies the checksum
			return nil, fmt.Errorf("storage %s: %w", key, err)
		}
		loaded[key] = s
		return s, nil
	}
	return u.Load()
}

// checkZipPickle runs checkPickle over a record, then reads the record to
// its end, where archive/zip verifies its checksum.
func checkZipPickle(f *zip.File) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	r := bufio.NewReaderSize(rc, 1<<20)
	if _, err := checkPickle(r, int64(f.UncompressedSize64)); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, r)
	return err
}

// elementSize returns the bytes per element of the storage classes that
// findClass knows.
func elementSize(c pytorch.StorageClassInterface) int {
	switch c.(type) {
	case *pytorch.LongStorageClass:
		return 8
	case *pytorch.IntStorageClass:
		return 4
	case *pytorch.ShortStorageClass:
		return 2
	}
	return 1
}

// storageID unpacks a persistent id ('storage', class, key, location,
// numel[, view]) of either format.
func storageID(id any) (pytorch.StorageClassInterface, string, int, string, error) {
	t, ok := id.(*types.Tuple)
	if !ok || t.Len() < 5 || t.Get(0) != "storage" {
		return nil, "", 0, "", fmt.Errorf("unsupported persistent id %v", id)
	}
	class, ok1 := t.Get(1).(pytorch.StorageClassInterface)
	key, ok2 := t.Get(2).(string)
	location, ok3 := t.Get(3).(string)
	size, ok4 := t.Get(4).(int)
	if !ok1 || !ok2 || !ok3 || !ok4 || size < 0 {
		return nil, "", 0, "", fmt.Errorf("unsupported storage %v", id)
	}
	if t.Len() > 5 && t.Get(5) != nil {
		return nil, "", 0, "", errors.New("storage views are not supported")
	}
	return class, key, size, location, nil
}

// fullReader fills every buffer it is given, as gopickle's storages expect.
type fullReader struct{ r io.Reader }

func (f fullReader) Read(p []byte) (int, error) { return io.ReadFull(f.r, p) }

// loadLegacyPT reads the legacy format: pickles of the magic number, the
// protocol version and system information, then the object, whose tensors
// refer to storages by key, then the sorted list of those keys, then each
// storage's element count and raw data.
func loadLegacyPT(path string) (any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkLegacyPickles(f, info.Size()); err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(f, 1<<20)

	header := func() (any, error) { u := pickle.NewUnpickler(r); return u.Load() }
	magic, err := header()
	if n, ok := magic.(*big.Int); err != nil || !ok || n.Cmp(legacyMagic) != 0 {
		return nil, fmt.Errorf("neither a zip archive nor a legacy torch file")
	}
	if proto, err := header(); err != nil || proto != legacyProtocol {
		return nil, fmt.Errorf("unsupported legacy torch protocol %v", proto)
	}
	if _, err := header(); err != nil { // system information
		return nil, err
	}

	type storage struct {
		pytorch.StorageInterface
		size int
	}
	storages := make(map[string]storage)
	u := pickle.NewUnpickler(r)
	u.FindClass = findClass
	u.PersistentLoad = func(id any) (any, error) {
		class, key, size, location, err := storageID(id)
		if err != nil {
			return nil, err
		}
		if int64(size)*int64(elementSize(class)) > info.Size() {
			return nil, fmt.Errorf("storage %s: %d elements in a file of %d bytes", key, size, info.Size())
		}
		s, ok := storages[key]
		if !ok {
			s = storage{class.New(size, location), size}
			storages[key] = s
		}
		return s.StorageInterface, nil
	}
	obj, err := u.Load()
	if err != nil {
		return nil, err
	}
	keys, err := header()
	if err != nil {
		return nil, err
	}
	list, ok := keys.(*types.List)
	if !ok {
		return nil, fmt.Errorf("storage keys are %T, want a list", keys)
	}
	for _, k := range *list {
		key, _ := k.(string)
		s, ok := storages[key]
		if !ok {
			return nil, fmt.Errorf("data for unknown storage %v", k)
		}
		var n [8]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return nil, fmt.Errorf("storage %s: %w", key, err)
		}
		if size := binary.LittleEndian.Uint64(n[:]); size != uint64(s.size) {
			return nil, fmt.Errorf("storage %s: %d elements, declared %d", key, size, s.size)
		}
		if err := s.SetFromFileWithSize(fullReader{r}, s.size); err != nil {
			return nil, fmt.Errorf("storage %s: %w", key, err)
		}
	}
	return obj, nil
}

// checkLegacyPickles runs checkPickle over the five pickles of a legacy
// file: magic number, protocol, system information, object, storage keys.
func checkLegacyPickles(f *os.File, size int64) error {
	r := bufio.NewReaderSize(f, 1<<20)
	for range 5 {
		n, err := checkPickle(r, size)
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return errors.New("neither a zip archive nor a complete legacy torch file")
			}
			return err
		}
		size -= n
	}
	return nil
}

// findClass resolves the Python globals that OGB's split files and torch
// tensors of integers refer to. Anything else is an error rather than an
// opaque object, so that an unexpected file fails where it is read.
func findClass(module, name string) (any, error) {
	switch module + "." + name {
	case "numpy.core.multiarray._reconstruct", "numpy._core.multiarray._reconstruct":
		return ndarrayReconstructor{}, nil
	case "numpy.ndarray":
		return ndarrayClass{}, nil
	case "numpy.dtype":
		return dtypeClass{}, nil
	case "_codecs.encode":
		// Pickle protocol 2, torch.save's default, has no bytes type:
		// bytes are pickled as _codecs.encode(latin-1 text, "latin1").
		return latin1Encoder{}, nil
	case "__builtin__.bytes", "builtins.bytes":
		return emptyBytes{}, nil
	case "torch._utils._rebuild_tensor_v2":
		return &pytorch.RebuildTensorV2{}, nil
	case "torch.LongStorage":
		return &pytorch.LongStorageClass{}, nil
	case "torch.IntStorage":
		return &pytorch.IntStorageClass{}, nil
	case "torch.ShortStorage":
		return &pytorch.ShortStorageClass{}, nil
	case "torch.CharStorage":
		return &pytorch.CharStorageClass{}, nil
	case "torch.ByteStorage":
		return &pytorch.ByteStorageClass{}, nil
	}
	return nil, fmt.Errorf("unsupported Python class %s.%s", module, name)
}

type latin1Encoder struct{}

// Call returns the text itself as a latin1 value rather than a []byte copy:
// OGB's negatives are arrays of 650 MB, and the unpickler keeps the text
// alive until it is done anyway.
func (latin1Encoder) Call(args ...any) (any, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("_codecs.encode: %d arguments", len(args))
	}
	s, ok1 := args[0].(string)
	enc, ok2 := args[1].(string)
	if !ok1 || !ok2 || (enc != "latin1" && enc != "latin-1") {
		return nil, fmt.Errorf("_codecs.encode%v: want (str, \"latin1\")", args)
	}
	return latin1(s), nil
}

// latin1 holds bytes as text whose code points are the byte values,
// UTF-8 encoded: bytes below 0x80 take one byte, others two.
type latin1 string

// len returns the number of bytes held.
func (s latin1) len() int { return utf8.RuneCountInString(string(s)) }

// bytes returns the bytes held, or an error if a code point exceeds 0xff.
func (s latin1) bytes() ([]byte, error) {
	b := make([]byte, 0, len(s))
	for _, r := range string(s) {
		if r > 0xff {
			return nil, fmt.Errorf("_codecs.encode: code point %U is not latin-1", r)
		}
		b = append(b, byte(r))
	}
	return b, nil
}

type emptyBytes struct{}

func (emptyBytes) Call(args ...any) (any, error) {
	if len(args) == 0 {
		return []byte{}, nil
	}
	switch b := args[0].(type) {
	case []byte:
		return bytes.Clone(b), nil
	case latin1:
		return b.bytes()
	}
	return nil, fmt.Errorf("bytes%v: unsupported arguments", args)
}
