package tfevents

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// eventType is TensorBoard's Event message (event.proto, summary.proto:
// the fields a scalar uses), built from its descriptor so that the files
// are read by the protobuf runtime, not by this package's encoder.
var eventType = func() protoreflect.MessageType {
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label, msg string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum(), JsonName: proto.String(name)}
		if msg != "" {
			f.TypeName = proto.String(msg)
		}
		return f
	}
	opt, rep := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL, descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	fd := &descriptorpb.FileDescriptorProto{
		Name: proto.String("event.proto"), Package: proto.String("tensorboard"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Event"), Field: []*descriptorpb.FieldDescriptorProto{
				field("wall_time", 1, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, opt, ""),
				field("step", 2, descriptorpb.FieldDescriptorProto_TYPE_INT64, opt, ""),
				field("file_version", 3, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
				field("summary", 5, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".tensorboard.Summary"),
			}},
			{Name: proto.String("Summary"), Field: []*descriptorpb.FieldDescriptorProto{
				field("value", 1, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, ".tensorboard.Value"),
			}},
			{Name: proto.String("Value"), Field: []*descriptorpb.FieldDescriptorProto{
				field("tag", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
				field("simple_value", 2, descriptorpb.FieldDescriptorProto_TYPE_FLOAT, opt, ""),
			}},
		},
	}
	file, err := protodesc.NewFile(fd, nil)
	if err != nil {
		panic(err)
	}
	return dynamicpb.NewMessageType(file.Messages().ByName("Event"))
}()

// event is what the independent reader finds in one record.
type event struct {
	wall    float64
	step    int64
	version string
	values  map[string]float64
}

// readEvents reads a file as TensorBoard does: TFRecord framing with both
// masked CRC-32Cs checked, then each record an Event.
func readEvents(t *testing.T, path string) []event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table := crc32.MakeTable(crc32.Castagnoli)
	mask := func(b []byte) uint32 { c := crc32.Checksum(b, table); return ((c >> 15) | (c << 17)) + 0xa282ead8 }
	var out []event
	for {
		var head [12]byte
		if _, err := io.ReadFull(f, head[:]); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("record %d: %v", len(out), err)
		}
		if binary.LittleEndian.Uint32(head[8:]) != mask(head[:8]) {
			t.Fatalf("record %d: length checksum", len(out))
		}
		data := make([]byte, binary.LittleEndian.Uint64(head[:8])+4)
		if _, err := io.ReadFull(f, data); err != nil {
			t.Fatalf("record %d: %v", len(out), err)
		}
		n := len(data) - 4
		if binary.LittleEndian.Uint32(data[n:]) != mask(data[:n]) {
			t.Fatalf("record %d: data checksum", len(out))
		}
		msg := eventType.New()
		if err := proto.Unmarshal(data[:n], msg.Interface()); err != nil {
			t.Fatalf("record %d: %v", len(out), err)
		}
		fields := msg.Descriptor().Fields()
		ev := event{wall: msg.Get(fields.ByName("wall_time")).Float(), step: msg.Get(fields.ByName("step")).Int(),
			version: msg.Get(fields.ByName("file_version")).String(), values: map[string]float64{}}
		if msg.Has(fields.ByName("summary")) {
			vals := msg.Get(fields.ByName("summary")).Message()
			list := vals.Get(vals.Descriptor().Fields().ByName("value")).List()
			for i := range list.Len() {
				v := list.Get(i).Message()
				vf := v.Descriptor().Fields()
				ev.values[v.Get(vf.ByName("tag")).String()] = v.Get(vf.ByName("simple_value")).Float()
			}
		}
		out = append(out, ev)
	}
}

func writeSteps(t *testing.T, w *Writer, from, to int64, offset float64) {
	t.Helper()
	for s := from; s <= to; s++ {
		if err := w.Scalars(s, time.Unix(1000+s, 0), map[string]float64{"loss": float64(s) + offset, "valid/mrr": 0.5}); err != nil {
			t.Fatal(err)
		}
	}
}

func steps(evs []event) []int64 {
	var out []int64
	for _, e := range evs[1:] {
		out = append(out, e.step)
	}
	return out
}

// A file holds its version event, then one event per step with every
// scalar, NaN and infinities as written.
func TestScalarsReadBack(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]float64{"train/loss": 3.25, "valid/ll": math.Inf(-1), "valid/mrr": math.NaN(), "lr": 0.001}
	if err := w.Scalars(7, time.Unix(1700000000, 500_000_000), vals); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	evs := readEvents(t, w.Path())
	if len(evs) != 2 || evs[0].version != "brain.Event:2" || evs[0].wall <= 0 {
		t.Fatalf("events %+v: want the version event and one more", evs)
	}
	e := evs[1]
	if e.step != 7 || e.wall != 1700000000.5 || len(e.values) != 4 {
		t.Fatalf("event %+v", e)
	}
	for tag, want := range vals {
		got := e.values[tag]
		if !(got == float64(float32(want)) || math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("%s: %v, want %v", tag, got, want)
		}
	}
}

// A resumed run cuts the steps after the one it resumes from and writes
// them again: the file then has each step once, the later values.
func TestOpenCutsStepsAfterKeep(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	writeSteps(t, w, 1, 5, 0)
	w.Close()
	w, err = Open(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	writeSteps(t, w, 4, 6, 100)
	w.Close()
	evs := readEvents(t, w.Path())
	if got := steps(evs); !slices.Equal(got, []int64{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("steps %v, want 1 to 6 once each", got)
	}
	for _, e := range evs[1:] {
		want := float64(e.step)
		if e.step > 3 {
			want += 100
		}
		if e.values["loss"] != want {
			t.Errorf("step %d: loss %v, want %v", e.step, e.values["loss"], want)
		}
	}
	// Starting again keeps the version event only.
	w, err = Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if evs := readEvents(t, w.Path()); len(evs) != 1 || evs[0].version == "" {
		t.Errorf("after a restart: %+v, want the version event alone", evs)
	}
}

// A record torn by a crash mid-write is cut, and appending goes on.
func TestOpenCutsATornRecord(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	writeSteps(t, w, 1, 2, 0)
	w.Close()
	info, _ := os.Stat(w.Path())
	if err := os.Truncate(w.Path(), info.Size()-5); err != nil {
		t.Fatal(err)
	}
	w, err = Open(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	writeSteps(t, w, 2, 3, 0)
	w.Close()
	if got := steps(readEvents(t, w.Path())); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("steps %v, want 1, 2, 3", got)
	}
}

// ReadScalars reads back what Scalars wrote, as the independent reader
// does.
func TestReadScalarsAgreesWithTheProtobufRuntime(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	writeSteps(t, w, 1, 4, 0.25)
	w.Close()
	got, err := ReadScalars(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := readEvents(t, w.Path())[1:]
	if len(got) != len(want) {
		t.Fatalf("%d steps, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Step != want[i].step || math.Abs(float64(got[i].Wall.UnixNano())/1e9-want[i].wall) > 1e-6 || len(got[i].Values) != len(want[i].values) {
			t.Fatalf("step %d: %+v, want %+v", i, got[i], want[i])
		}
		for k, v := range want[i].values {
			if got[i].Values[k] != v {
				t.Errorf("step %d %s: %v, want %v", i, k, got[i].Values[k], v)
			}
		}
	}
	if steps, err := ReadScalars(t.TempDir()); err != nil || steps != nil {
		t.Errorf("no file: %v, %v", steps, err)
	}
}

// FuzzReadScalars: no input makes the reader panic.
func FuzzReadScalars(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(dir+"/"+FilePrefix+"1.x", data, 0o644); err != nil {
			t.Fatal(err)
		}
		ReadScalars(dir)
		w, err := Open(dir, 3)
		if err == nil {
			w.Close()
		}
	})
}

// A record whose data or length was damaged is an error of ReadScalars
// naming the record (not the end of the file), and where Open cuts; a
// length beyond any record's, even with its checksum right, is refused
// before anything is allocated.
func TestDamagedRecords(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	writeSteps(t, w, 1, 3, 0)
	w.Close()
	data, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	first := 16 + int(binary.LittleEndian.Uint64(data[:8])) // the version record's size
	second := first + 16 + int(binary.LittleEndian.Uint64(data[first:first+8]))
	bad := slices.Clone(data)
	bad[second+12+3] ^= 0x40 // inside step 2's data
	if err := os.WriteFile(w.Path(), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	steps, err := ReadScalars(dir)
	if err == nil || len(steps) != 1 || !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), "record 2") {
		t.Errorf("a damaged record: %d steps, %v; want step 1 and an error naming record 2", len(steps), err)
	}
	w, err = Open(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	writeSteps(t, w, 2, 2, 0)
	w.Close()
	if got := stepsOf(t, dir); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("after Open cut the damaged record: steps %v, want 1, 2", got)
	}
	huge := slices.Clone(data[:first])
	huge = binary.LittleEndian.AppendUint64(huge, 1<<40)
	huge = binary.LittleEndian.AppendUint32(huge, maskedCRC(huge[first:first+8]))
	if err := os.WriteFile(w.Path(), huge, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadScalars(dir); !errors.Is(err, errCorrupt) {
		t.Errorf("a length of 2^40 with its checksum: %v, want errCorrupt", err)
	}
	if err := os.WriteFile(w.Path(), data[:len(data)-3], 0o644); err != nil { // torn
		t.Fatal(err)
	}
	if steps, err := ReadScalars(dir); err == nil || len(steps) != 2 {
		t.Errorf("a torn last record: %d steps, %v; want 2 and an error", len(steps), err)
	}
}

func stepsOf(t *testing.T, dir string) []int64 {
	t.Helper()
	steps, err := ReadScalars(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, s := range steps {
		out = append(out, s.Step)
	}
	return out
}

// Wall times keep their fraction of a second.
func TestWallTimeRoundTrips(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1700000000, 250_000_000)
	if err := w.Scalars(1, at, map[string]float64{"x": 1}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	steps, err := ReadScalars(dir)
	if err != nil || len(steps) != 1 || steps[0].Wall.Sub(at).Abs() > time.Microsecond {
		t.Errorf("wall time %v (%v), want %v", steps, err, at)
	}
}

// Of several event files in a directory (one copied in, say), the newest
// by its name's time is the one read and appended to.
func TestNewestFileIsTheRunsOwn(t *testing.T) {
	dir := t.TempDir()
	for i, at := range []int64{100, 200} {
		w, err := create(dir)
		if err != nil {
			t.Fatal(err)
		}
		writeSteps(t, w, int64(i+1), int64(i+1), 0)
		w.Close()
		if err := os.Rename(w.Path(), filepath.Join(dir, FilePrefix+strconv.FormatInt(at, 10)+".host")); err != nil {
			t.Fatal(err)
		}
	}
	if got := stepsOf(t, dir); !slices.Equal(got, []int64{2}) {
		t.Errorf("steps %v, want the newer file's step 2", got)
	}
	w, err := Open(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(w.Path()) != FilePrefix+"200.host" {
		t.Errorf("appending to %s, want the newer file", w.Path())
	}
	w.Close()
}

// A file whose version record itself was torn starts again with one.
func TestTornVersionRecordIsWrittenAgain(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := os.Truncate(w.Path(), 7); err != nil {
		t.Fatal(err)
	}
	if w, err = Open(dir, 0); err != nil {
		t.Fatal(err)
	}
	writeSteps(t, w, 1, 1, 0)
	w.Close()
	evs := readEvents(t, w.Path())
	if len(evs) != 2 || evs[0].version != "brain.Event:2" || evs[1].step != 1 {
		t.Errorf("events %+v: want the version event, then step 1", evs)
	}
}
