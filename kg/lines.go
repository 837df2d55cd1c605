package kg

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// maxLine bounds one input line. Lines of the public benchmarks are well
// under 1 KiB; a longer one means the file is not what its name says.
const maxLine = 1 << 20

const byteOrderMark = "\xef\xbb\xbf"

// A lineScanner yields the non-empty lines of a text file, tolerating what
// editors and other tools leave behind: a UTF-8 byte-order mark, CRLF line
// ends and empty lines at the very end. An empty line followed by more
// data is an error, since it usually means a broken concatenation.
type lineScanner struct {
	sc    *bufio.Scanner
	file  string
	line  int    // 1-based number of the current line
	blank int    // first line of a run of empty lines, 0 if none pending
	text  []byte // the current line, without its line end
	err   error
}

func newLineScanner(r io.Reader, file string) *lineScanner {
	sc := bufio.NewScanner(r)
	// A large buffer means few refills; ScanLines drops one trailing '\r'.
	sc.Buffer(make([]byte, 256<<10), maxLine)
	return &lineScanner{sc: sc, file: file}
}

// scan advances to the next non-empty line. It returns false at the end of
// input or on an error, which err then reports.
func (s *lineScanner) scan() bool {
	for s.sc.Scan() {
		s.line++
		b := s.sc.Bytes()
		if s.line == 1 {
			b = bytes.TrimPrefix(b, []byte(byteOrderMark))
		}
		if len(b) == 0 {
			if s.blank == 0 {
				s.blank = s.line
			}
			continue
		}
		if s.blank != 0 {
			s.err = lineErrorf(s.file, s.blank, "empty line before more data on line %d", s.line)
			return false
		}
		s.text = b
		return true
	}
	if err := s.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line longer than %d bytes", maxLine)
		}
		s.err = &LineError{File: s.file, Line: s.line + 1, Err: err}
	}
	return false
}

// errorf returns an error about the current line.
func (s *lineScanner) errorf(format string, args ...any) error {
	return lineErrorf(s.file, s.line, format, args...)
}

// fields splits the current line at tabs into dst, reusing its storage.
// Only tabs separate: identifiers such as "Side Effect::C0000737" hold spaces.
func (s *lineScanner) fields(dst [][]byte) [][]byte {
	dst = dst[:0]
	b := s.text
	for {
		i := bytes.IndexByte(b, '\t')
		if i < 0 {
			return append(dst, b)
		}
		dst = append(dst, b[:i])
		b = b[i+1:]
	}
}

// findInput returns the path of base or base+".gz" in dir, whichever exists.
// It returns "" if neither does, and an error if both do, since then it is
// unclear which one the data set means.
func findInput(dir, base string) (string, error) {
	plain := filepath.Join(dir, base)
	gz := plain + ".gz"
	hasPlain, err := isFile(plain)
	if err != nil {
		return "", err
	}
	hasGz, err := isFile(gz)
	if err != nil {
		return "", err
	}
	switch {
	case hasPlain && hasGz:
		return "", fmt.Errorf("kg: both %s and %s exist; keep one", plain, gz)
	case hasPlain:
		return plain, nil
	case hasGz:
		return gz, nil
	}
	return "", nil
}

func isFile(path string) (bool, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case info.IsDir():
		return false, fmt.Errorf("kg: %s is a directory", path)
	}
	return true, nil
}

// openInput opens path for reading, decompressing it if its name ends in
// ".gz". Closing the result closes the file.
func openInput(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if filepath.Ext(path) != ".gz" {
		return f, nil
	}
	br := bufio.NewReaderSize(f, 256<<10)
	magic, _ := br.Peek(2)
	switch {
	case len(magic) == 0:
		f.Close()
		return nil, fmt.Errorf("%s: empty file, not a gzip stream", path)
	case len(magic) == 2 && (magic[0] != 0x1f || magic[1] != 0x8b):
		f.Close()
		return nil, fmt.Errorf("%s: not a gzip file (no gzip magic bytes at its start)", path)
	}
	z, err := gzip.NewReader(br)
	if err != nil {
		f.Close()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s: truncated gzip file (it ends inside the gzip header)", path)
		}
		return nil, fmt.Errorf("%s: not a gzip file, or corrupt: %w", path, err)
	}
	return &gzipFile{z: z, f: f}, nil
}

// A gzipFile decompresses a file, remembering the first error of the
// stream and how many complete lines came before it. A truncated file
// otherwise shows up as a parse error on its last, cut line (a triple with
// no object), which hides what is wrong.
type gzipFile struct {
	z     *gzip.Reader
	f     *os.File
	lines int   // '\n' bytes delivered so far
	err   error // first decompression error other than io.EOF
}

func (g *gzipFile) Read(p []byte) (int, error) {
	n, err := g.z.Read(p)
	g.lines += bytes.Count(p[:n], []byte{'\n'})
	if err != nil && err != io.EOF && g.err == nil {
		g.err = err
	}
	return n, err
}

func (g *gzipFile) Close() error {
	err := g.z.Close()
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// streamError returns the error to report for path when its gzip stream
// failed: a parse error on a complete line before the failure stands, since
// that line is as written; anything later is the failure's doing.
func (g *gzipFile) streamError(path string, parseErr error) error {
	if le, ok := errors.AsType[*LineError](parseErr); ok && le.Line <= g.lines && !errors.Is(le.Err, g.err) {
		return parseErr
	}
	what := "truncated or corrupt gzip stream"
	switch {
	case errors.Is(g.err, io.ErrUnexpectedEOF):
		what = "truncated gzip file"
	case errors.Is(g.err, gzip.ErrChecksum):
		what = "corrupt gzip file (checksum mismatch)"
	}
	return fmt.Errorf("%s: %s after line %d: %w", path, what, g.lines, g.err)
}

// readInput opens path and hands its content to parse, closing it after.
func readInput(path string, parse func(io.Reader) error) error {
	r, err := openInput(path)
	if err != nil {
		return err
	}
	err = parse(r)
	if cerr := r.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%s: %w", path, cerr)
	}
	if g, ok := r.(*gzipFile); ok && g.err != nil {
		return g.streamError(path, err)
	}
	return err
}
