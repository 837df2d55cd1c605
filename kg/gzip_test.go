package kg

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTruncatedGzip cuts a gzipped train split at every byte and checks
// that each cut is reported as a damaged gzip file, never as a bad triple
// on the cut line, and never loads.
func TestTruncatedGzip(t *testing.T) {
	var text strings.Builder
	for i := range 400 {
		fmt.Fprintf(&text, "entity%d\trelation%d\tentity%d\n", i, i%7, i+1)
	}
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	z.Write([]byte(text.String()))
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	full := gz.Bytes()
	dir := writeDataset(t, map[string]string{"valid.txt": "", "test.txt": ""})
	path := filepath.Join(dir, "train.txt.gz")
	for cut := 1; cut < len(full); cut++ {
		if err := os.WriteFile(path, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(dir)
		if err == nil {
			t.Fatalf("cut at byte %d of %d: loaded", cut, len(full))
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, path+": truncated") && !strings.HasPrefix(msg, path+": corrupt") {
			t.Fatalf("cut at byte %d of %d: %v; want %s: truncated ... or corrupt ...", cut, len(full), err, path)
		}
	}
	// The last line number is that of the last complete line.
	if err := os.WriteFile(path, full[:len(full)-8], 0o644); err != nil { // without the size trailer
		t.Fatal(err)
	}
	_, err := Load(dir)
	if want := path + ": truncated gzip file after line 400"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s...", err, want)
	}
}

// TestCorruptGzip flips a byte of the checksum and one of the data.
func TestCorruptGzip(t *testing.T) {
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	z.Write([]byte("a\tr\tb\nb\tr\tc\n"))
	z.Close()
	dir := writeDataset(t, map[string]string{"valid.txt": "", "test.txt": ""})
	path := filepath.Join(dir, "train.txt.gz")

	bad := bytes.Clone(gz.Bytes())
	bad[len(bad)-8] ^= 0xff // CRC-32
	os.WriteFile(path, bad, 0o644)
	_, err := Load(dir)
	if want := path + ": corrupt gzip file (checksum mismatch) after line 2"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("checksum: got %v, want %s...", err, want)
	}

	os.WriteFile(path, []byte("a\tr\tb\n"), 0o644) // not gzipped at all
	_, err = Load(dir)
	if want := path + ": not a gzip file"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("plain text: got %v, want %s...", err, want)
	}
}

// TestGzipParseErrorStands checks that a genuine error on a complete line
// before the damage is reported as it is.
func TestGzipParseErrorStands(t *testing.T) {
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	z.Write([]byte("a\tr\tb\na\t\tc\nb\tr\tc\n"))
	z.Close()
	dir := writeDataset(t, map[string]string{"valid.txt": "", "test.txt": ""})
	path := filepath.Join(dir, "train.txt.gz")
	os.WriteFile(path, gz.Bytes()[:gz.Len()-8], 0o644)
	_, err := Load(dir)
	if want := path + ":2: empty relation (field 2)"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestUnseen(t *testing.T) {
	d, err := Load(writeDataset(t, map[string]string{
		"train.txt": "a\tr\tb\nb\tr\tc\n",
		"valid.txt": "a\tr\tc\na\tq\td\n",
		"test.txt":  "d\tr\te\nc\tr\ta\n",
	}))
	if err != nil {
		t.Fatal(err)
	}
	got := d.Unseen()
	// a is never an object in train and c never a subject: c r a (test)
	// puts both in the role they lack; a r c (valid) does not.
	if want := (Unseen{Triples: 2, Entities: 2, Relations: 1, NeverSubject: 1, NeverObject: 1, RoleTriples: 1}); got != want {
		t.Errorf("Unseen() = %+v, want %+v", got, want)
	}
	if s := got.RoleString(); !strings.HasPrefix(s, "1 valid/test triples of entities in training put one in a role it never has there (1 entities are never a subject in training, 1 never an object)") {
		t.Errorf("RoleString() = %q", s)
	}
	if s := (Unseen{NeverObject: 3}).RoleString(); s != "" {
		t.Errorf("no triple in a missing role: RoleString() = %q, want \"\"", s)
	}
	if s := got.String(); !strings.HasPrefix(s, "2 valid/test triples mention 2 entities and 1 relations absent from training") {
		t.Errorf("String() = %q", s)
	}
	if s := (Unseen{}).String(); s != "" {
		t.Errorf("nothing unseen: String() = %q, want \"\"", s)
	}
}

// A gzip file cut just after a complete bad line reports that line's own
// error: the line is as written, whatever the stream did after it.
func TestTruncatedGzipAfterABadLine(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte("a\tr\tb\nbad\n")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "train.txt.gz")
	if err := os.WriteFile(path, b.Bytes()[:b.Len()-8], 0o644); err != nil { // drop the CRC and size trailer
		t.Fatal(err)
	}
	_, err := ReadTriplesFile(path)
	le, ok := errors.AsType[*LineError](err)
	if !ok || le.Line != 2 || !strings.Contains(err.Error(), "3 tab-separated fields") {
		t.Errorf("error %v, want line 2's: expected 3 tab-separated fields", err)
	}
}
