package kg

import "fmt"

// A LineError reports a problem in one line of an input file.
type LineError struct {
	File string // the file as named to the loader, e.g. "data/umls/train.txt"
	Line int    // 1-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

func lineErrorf(file string, line int, format string, args ...any) error {
	return &LineError{File: file, Line: line, Err: fmt.Errorf(format, args...)}
}
