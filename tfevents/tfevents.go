package tfevents

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// FilePrefix begins the name of every event file TensorBoard reads.
const FilePrefix = "events.out.tfevents."

// fileVersion is the first event's file_version, TensorBoard's current.
const fileVersion = "brain.Event:2"

// Writer appends scalar events to one event file.
type Writer struct {
	f    *os.File
	path string
}

// Open returns a writer appending to dir's event file, created with its
// version record when there is none. Events of steps after keep are cut
// off first: keep is the last step a resumed run still holds (0 for a run
// that starts again), and the steps after it will be written again.
func Open(dir string, keep int64) (*Writer, error) {
	path, err := existing(dir)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return create(dir)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	end, err := keptLength(f, keep)
	if err == nil {
		err = f.Truncate(end)
	}
	if err == nil {
		_, err = f.Seek(end, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("tfevents: %s: %w", path, err)
	}
	w := &Writer{f: f, path: path}
	if end == 0 { // not even the version record was whole
		if err := w.version(); err != nil {
			f.Close()
			return nil, err
		}
	}
	return w, nil
}

// existing returns the path of dir's event file, "" when there is none.
func existing(dir string) (string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, FilePrefix+"*"))
	if err != nil || len(matches) == 0 {
		return "", err
	}
	sort.Strings(matches)
	return matches[len(matches)-1], nil
}

func create(dir string) (*Writer, error) {
	host, _ := os.Hostname()
	host = strings.ReplaceAll(host, "/", "_")
	path := filepath.Join(dir, fmt.Sprintf("%s%d.%s", FilePrefix, time.Now().Unix(), host))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, path: path}
	if err := w.version(); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// version appends the record that opens every event file.
func (w *Writer) version() error {
	ev := protowire.AppendTag(nil, 1, protowire.Fixed64Type)
	ev = protowire.AppendFixed64(ev, math.Float64bits(seconds(time.Now())))
	ev = protowire.AppendTag(ev, 3, protowire.BytesType)
	ev = protowire.AppendString(ev, fileVersion)
	return w.record(ev)
}

// Path is the event file's path.
func (w *Writer) Path() string { return w.path }

// Scalars appends one event of step at wall time with the values by tag,
// in the tags' order. NaN and ±Inf are written as they are.
func (w *Writer) Scalars(step int64, wall time.Time, values map[string]float64) error {
	tags := make([]string, 0, len(values))
	for t := range values {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	var summary []byte
	for _, t := range tags {
		var v []byte
		v = protowire.AppendTag(v, 1, protowire.BytesType)
		v = protowire.AppendString(v, t)
		v = protowire.AppendTag(v, 2, protowire.Fixed32Type)
		v = protowire.AppendFixed32(v, math.Float32bits(float32(values[t])))
		summary = protowire.AppendTag(summary, 1, protowire.BytesType)
		summary = protowire.AppendBytes(summary, v)
	}
	ev := protowire.AppendTag(nil, 1, protowire.Fixed64Type)
	ev = protowire.AppendFixed64(ev, math.Float64bits(seconds(wall)))
	ev = protowire.AppendTag(ev, 2, protowire.VarintType)
	ev = protowire.AppendVarint(ev, uint64(step))
	ev = protowire.AppendTag(ev, 5, protowire.BytesType)
	ev = protowire.AppendBytes(ev, summary)
	return w.record(ev)
}

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }

// record appends data framed as a TFRecord in one write, so that a
// reader sees half a record only while it is being written.
func (w *Writer) record(data []byte) error {
	buf := make([]byte, 0, len(data)+16)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(data)))
	buf = binary.LittleEndian.AppendUint32(buf, maskedCRC(buf[:8]))
	buf = append(buf, data...)
	buf = binary.LittleEndian.AppendUint32(buf, maskedCRC(data))
	if _, err := w.f.Write(buf); err != nil {
		return fmt.Errorf("tfevents: %s: %w", w.path, err)
	}
	return nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is TFRecord's masked CRC-32C.
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// keptLength returns the length of the file's leading records whose step is
// at most keep (the version record has none), stopping at the first later
// step or at a torn or corrupt record.
func keptLength(f *os.File, keep int64) (int64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	r := bufio.NewReader(f)
	var end int64
	for {
		data, n, err := readRecord(r)
		if err != nil {
			return end, nil // the end, or a torn tail: cut there
		}
		if step, ok := eventStep(data); ok && step > keep {
			return end, nil
		}
		end += n
	}
}

// errCorrupt is a record whose length or checksums do not hold.
var errCorrupt = errors.New("tfevents: corrupt record")

// readRecord reads one TFRecord, returning its data and its size in the
// file.
func readRecord(r io.Reader) ([]byte, int64, error) {
	var head [12]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, 0, err
	}
	n := binary.LittleEndian.Uint64(head[:8])
	if binary.LittleEndian.Uint32(head[8:]) != maskedCRC(head[:8]) || n > 1<<30 {
		return nil, 0, errCorrupt
	}
	data := make([]byte, n+4)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, 0, err
	}
	if binary.LittleEndian.Uint32(data[n:]) != maskedCRC(data[:n]) {
		return nil, 0, errCorrupt
	}
	return data[:n], int64(n) + 16, nil
}

// eventStep returns an Event's step field, false when it has none.
func eventStep(data []byte) (int64, bool) {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return 0, false
		}
		data = data[n:]
		if num == 2 && typ == protowire.VarintType {
			v, m := protowire.ConsumeVarint(data)
			return int64(v), m >= 0
		}
		m := protowire.ConsumeFieldValue(num, typ, data)
		if m < 0 {
			return 0, false
		}
		data = data[m:]
	}
	return 0, false
}

// Step is one event of scalars as ReadScalars returns it.
type Step struct {
	Step   int64
	Wall   time.Time
	Values map[string]float64
}

// ReadScalars reads the scalar events of dir's event file, in file order
// (none when there is no file). A torn or corrupt record ends the reading
// with an error naming it.
func ReadScalars(dir string) ([]Step, error) {
	path, err := existing(dir)
	if err != nil || path == "" {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var out []Step
	for i := 0; ; i++ {
		data, _, err := readRecord(r)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("tfevents: %s: record %d: %w", path, i, err)
		}
		if s, ok := decodeScalars(data); ok {
			out = append(out, s)
		}
	}
}

// decodeScalars decodes an Event holding a summary; false for any other.
func decodeScalars(data []byte) (Step, bool) {
	var s Step
	var summary []byte
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return s, false
		}
		data = data[n:]
		switch {
		case num == 1 && typ == protowire.Fixed64Type:
			v, m := protowire.ConsumeFixed64(data)
			sec := math.Float64frombits(v)
			s.Wall, n = time.Unix(0, int64(sec*1e9)), m
		case num == 2 && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(data)
			s.Step, n = int64(v), m
		case num == 5 && typ == protowire.BytesType:
			summary, n = protowire.ConsumeBytes(data)
		default:
			n = protowire.ConsumeFieldValue(num, typ, data)
		}
		if n < 0 {
			return s, false
		}
		data = data[n:]
	}
	if summary == nil {
		return s, false
	}
	s.Values = map[string]float64{}
	for len(summary) > 0 {
		_, _, n := protowire.ConsumeTag(summary)
		if n < 0 {
			return s, false
		}
		v, m := protowire.ConsumeBytes(summary[n:])
		if m < 0 {
			return s, false
		}
		summary = summary[n+m:]
		var tag string
		var val float32
		for len(v) > 0 {
			num, typ, k := protowire.ConsumeTag(v)
			if k < 0 {
				return s, false
			}
			v = v[k:]
			switch {
			case num == 1 && typ == protowire.BytesType:
				var b []byte
				b, k = protowire.ConsumeBytes(v)
				tag = string(b)
			case num == 2 && typ == protowire.Fixed32Type:
				var u uint32
				u, k = protowire.ConsumeFixed32(v)
				val = math.Float32frombits(u)
			default:
				k = protowire.ConsumeFieldValue(num, typ, v)
			}
			if k < 0 {
				return s, false
			}
			v = v[k:]
		}
		s.Values[tag] = float64(val)
	}
	return s, true
}
