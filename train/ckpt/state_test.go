package ckpt

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gekc/train"

	"github.com/sbinet/npyio/npy"
	"gorgonia.org/tensor"
)

// A state comes back as it was written: counters, the epochs' records
// (NaN losses included), the notes and every tensor, bit for bit; and
// ReadStateInfo says where it resumes without reading the tensors.
func TestStateRoundTrip(t *testing.T) {
	table := func(vals ...float32) *tensor.Dense {
		return tensor.New(tensor.WithShape(len(vals)/2, 2), tensor.WithBacking(vals))
	}
	s := &train.State{Epoch: 2, Batch: 3, EpochLoss: 1.25, EpochSeconds: 0.5, Steps: 9, StepSeconds: 0.75,
		Best: 0.5, BestEpoch: 1, Since: 1, LL: &train.LLTrack{Best: -17.5, Epoch: 1, Since: 1, Test: -17.25},
		Epochs: []train.EpochRecord{{Epoch: 1, TrainLoss: math.NaN(), Seconds: 2, EvalSeconds: 1, Valid: map[string]float64{"mrr": 0.5}},
			{Epoch: 2, TrainLoss: math.Inf(1), Seconds: 3}},
		Initial:      map[string]float64{"mrr": 0.25},
		Notes:        []string{"resumed after epoch 1"},
		Params:       map[string]*tensor.Dense{"entity": table(1, 2, 3, 4), "relation": table(5, 6)},
		BestParams:   map[string]*tensor.Dense{"entity": table(1, 2, 3, 5), "relation": table(5, 7)},
		BestLLParams: map[string]*tensor.Dense{"entity": table(1, 2, 3, 6), "relation": table(5, 8)},
		Slots: map[string]map[string]*tensor.Dense{
			"adam_m": {"entity": table(0, 0, 1, 0), "relation": table(0, 1)},
			"adam_v": {"entity": table(1, 1, 1, 1), "relation": table(2, 2)}}}
	segments := []Segment{
		{Host: "a", CPU: "AMD EPYC × 2", GOMAXPROCS: 2, BLASThreads: 2, SgemmGFLOPS: 185.5,
			Env: map[string]string{"OPENBLAS_CORETYPE": "Haswell"}, Started: time.Date(2026, 11, 28, 2, 38, 0, 0, time.UTC),
			WallSeconds: 60, ToEpoch: 1, ToBatch: 2},
		{Host: "b", GOMAXPROCS: 1, SgemmGFLOPS: 345.6, Env: map[string]string{"OPENBLAS_CORETYPE": ""},
			Started: time.Date(2026, 11, 28, 3, 4, 0, 0, time.UTC), WallSeconds: 30, FromEpoch: 1, FromBatch: 2, ToEpoch: 2, ToBatch: 3},
	}
	path := filepath.Join(t.TempDir(), StateName)
	if err := WriteState(path, "run", s, 90*time.Second, segments); err != nil {
		t.Fatal(err)
	}
	got, info, err := ReadState(path, "run")
	if err != nil {
		t.Fatal(err)
	}
	if info.RunID != "run" || info.Epoch != 2 || info.Batch != 3 || info.Steps != 9 || info.Wall != 90*time.Second || info.SavedAt.IsZero() {
		t.Errorf("info %+v", info)
	}
	if !reflect.DeepEqual(info.Segments, segments) {
		t.Errorf("segments %+v, want %+v", info.Segments, segments)
	}
	if got.Epoch != s.Epoch || got.Batch != s.Batch || got.EpochLoss != s.EpochLoss || got.EpochSeconds != s.EpochSeconds ||
		got.Steps != s.Steps || got.StepSeconds != s.StepSeconds || got.Best != s.Best || got.BestEpoch != s.BestEpoch ||
		got.Since != s.Since || !reflect.DeepEqual(got.Initial, s.Initial) || !reflect.DeepEqual(got.Notes, s.Notes) {
		t.Errorf("counters %+v, want %+v", got, s)
	}
	if got.LL == nil || *got.LL != *s.LL {
		t.Errorf("log-likelihood track %+v, want %+v", got.LL, *s.LL)
	}
	if len(got.Epochs) != 2 || !math.IsNaN(got.Epochs[0].TrainLoss) || !math.IsInf(got.Epochs[1].TrainLoss, 1) ||
		got.Epochs[0].Seconds != 2 || got.Epochs[0].EvalSeconds != 1 || !reflect.DeepEqual(got.Epochs[0].Valid, s.Epochs[0].Valid) {
		t.Errorf("epochs %+v", got.Epochs)
	}
	for _, group := range []struct {
		name      string
		got, want map[string]*tensor.Dense
	}{{"param", got.Params, s.Params}, {"best", got.BestParams, s.BestParams}, {"best_ll", got.BestLLParams, s.BestLLParams},
		{"adam_m", got.Slots["adam_m"], s.Slots["adam_m"]}, {"adam_v", got.Slots["adam_v"], s.Slots["adam_v"]}} {
		for n, w := range group.want {
			g := group.got[n]
			if g == nil || !g.Shape().Eq(w.Shape()) || !reflect.DeepEqual(g.Data(), w.Data()) {
				t.Errorf("%s.%s = %v, want %v", group.name, n, g, w)
			}
		}
	}
	if len(got.Slots) != 2 {
		t.Errorf("optimiser states %v, want adam_m and adam_v", slices.Sorted(maps.Keys(got.Slots)))
	}
	// A run that keeps no best-LL parameters writes none and reads none.
	s.BestLLParams = nil
	if err := WriteState(path, "run", s, 90*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if none, _, err := ReadState(path, "run"); err != nil || none.BestLLParams != nil {
		t.Errorf("a state without best-LL parameters read back with %v (%v)", none.BestLLParams, err)
	}
	if again, err := ReadStateInfo(path); err != nil || again.RunID != info.RunID || again.Epoch != info.Epoch || again.Segments != nil {
		t.Errorf("ReadStateInfo = %+v, %v; ReadState said %+v", again, err, info)
	}
	if _, _, err := ReadState(path, "other"); err == nil || !strings.Contains(err.Error(), `the state of run "run", not of "other"`) {
		t.Errorf("state of another run: %v", err)
	}
	missing := filepath.Join(t.TempDir(), StateName)
	if _, _, err := ReadState(missing, "run"); !errors.Is(err, ErrNoState) {
		t.Errorf("no state file: %v, want ErrNoState", err)
	}
	if _, err := ReadStateInfo(missing); !errors.Is(err, ErrNoState) {
		t.Errorf("no state file: %v, want ErrNoState", err)
	}
}

// BenchmarkWriteState writes the resume state of a FB15k-237 ComplEx run at
// d=200 (four tables of 14,541 x 400 float32 and the relations): ~94 MB.
func BenchmarkWriteState(b *testing.B) {
	dir := b.TempDir()
	table := func(rows, cols int) *tensor.Dense {
		return tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(make([]float32, rows*cols)))
	}
	s := &train.State{Epoch: 3, Params: map[string]*tensor.Dense{}, BestParams: map[string]*tensor.Dense{},
		Slots: map[string]map[string]*tensor.Dense{"adam_m": {}, "adam_v": {}}}
	for _, m := range []map[string]*tensor.Dense{s.Params, s.BestParams, s.Slots["adam_m"], s.Slots["adam_v"]} {
		m["entity"], m["relation"] = table(14541, 400), table(237, 400)
	}
	b.SetBytes(4 * 4 * (14541 + 237) * 400)
	for b.Loop() {
		if err := WriteState(filepath.Join(dir, StateName), "bench", s, time.Second, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// A corrupt or hostile state file is an error, never a panic: the runner
// then trains the run from scratch.
func FuzzReadState(f *testing.F) {
	dir := f.TempDir()
	valid := filepath.Join(dir, "valid.npz")
	table := func(vals ...float32) *tensor.Dense {
		return tensor.New(tensor.WithShape(len(vals)/2, 2), tensor.WithBacking(vals))
	}
	s := &train.State{Epoch: 2, Steps: 7, Best: 0.5, BestEpoch: 1,
		Epochs:     []train.EpochRecord{{Epoch: 1, TrainLoss: 3, Valid: map[string]float64{"mrr": 0.5}}, {Epoch: 2, TrainLoss: 2}},
		Params:     map[string]*tensor.Dense{"entity": table(1, 2, 3, 4)},
		BestParams: map[string]*tensor.Dense{"entity": table(1, 2, 3, 5)},
		Slots: map[string]map[string]*tensor.Dense{
			"adam_m": {"entity": table(0, 0, 1, 0)},
			"adam_v": {"entity": table(1, 1, 1, 1)}}}
	if err := WriteState(valid, "run", s, time.Second, nil); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(valid)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), StateName)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		st, meta, err := ReadState(path, "run")
		if err == nil && (st == nil || meta == nil) {
			t.Fatal("no error and no state")
		}
		ReadStateInfo(path)
	})
}

// The log-likelihood track survives its non-finite starting values (−Inf
// best, NaN test), and a state without one (written before runs tracked it)
// reads back without one, so that the resumed run knows not to trust it.
// A state's wall time reads back to the nanosecond, so that a state
// written again from what was read keeps it (0.128615561 s times 10⁹ is
// a hair under the whole number it stands for).
func TestStateWallRoundTrip(t *testing.T) {
	s := &train.State{Params: map[string]*tensor.Dense{"entity": tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float32{1, 2}))}}
	for _, wall := range []time.Duration{128615561, 90 * time.Second, 3*time.Hour + 7} {
		path := filepath.Join(t.TempDir(), StateName)
		if err := WriteState(path, "run", s, wall, nil); err != nil {
			t.Fatal(err)
		}
		info, err := ReadStateInfo(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Wall != wall {
			t.Errorf("wall %v read back as %v", wall, info.Wall)
		}
	}
}

func TestStateLLTrack(t *testing.T) {
	tbl := tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float32{1, 2}))
	for _, c := range []struct {
		name string
		ll   *train.LLTrack
	}{
		{"none", nil},
		{"before the first validation", &train.LLTrack{Best: math.Inf(-1), Epoch: -1, Test: math.NaN()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &train.State{Epoch: 1, Best: math.Inf(-1), BestEpoch: -1, LL: c.ll,
				Params: map[string]*tensor.Dense{"entity": tbl}, BestParams: map[string]*tensor.Dense{"entity": tbl}}
			path := filepath.Join(t.TempDir(), StateName)
			if err := WriteState(path, "run", s, time.Second, nil); err != nil {
				t.Fatal(err)
			}
			got, _, err := ReadState(path, "run")
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.ll == nil && got.LL != nil:
				t.Errorf("read a track %+v from a state without one", *got.LL)
			case c.ll != nil && (got.LL == nil || !math.IsInf(got.LL.Best, -1) || got.LL.Epoch != -1 || !math.IsNaN(got.LL.Test)):
				t.Errorf("track %+v, want %+v", got.LL, *c.ll)
			}
		})
	}
}

// A state holding an optimiser's slots other than Adam's (Adagrad's sum)
// round-trips, and one with more optimiser states than any optimiser keeps
// is refused.
func TestStateSlotsRoundTrip(t *testing.T) {
	table := func(vals ...float32) *tensor.Dense {
		return tensor.New(tensor.WithShape(len(vals)/2, 2), tensor.WithBacking(vals))
	}
	s := &train.State{Epoch: 1, Steps: 3, BestEpoch: -1,
		Params:     map[string]*tensor.Dense{"entity": table(1, 2)},
		BestParams: map[string]*tensor.Dense{"entity": table(1, 3)},
		Slots:      map[string]map[string]*tensor.Dense{"adagrad_sum": {"entity": table(4, 5)}}}
	path := filepath.Join(t.TempDir(), StateName)
	if err := WriteState(path, "run", s, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadState(path, "run")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Slots) != 1 || !reflect.DeepEqual(got.Slots["adagrad_sum"]["entity"].Data(), []float32{4, 5}) {
		t.Errorf("slots read back as %v", got.Slots)
	}
	for i := range maxSlots + 1 {
		s.Slots[fmt.Sprintf("slot%d", i)] = map[string]*tensor.Dense{"entity": table(0, 0)}
	}
	if err := WriteState(path, "run", s, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadState(path, "run"); err == nil || !strings.Contains(err.Error(), "optimiser states") {
		t.Errorf("a state with %d optimiser states: %v", len(s.Slots), err)
	}
}

// Each optimiser's slots come back under their names, bit for bit, and a
// state without slots (plain SGD, or saved before the first step) comes back
// without any. The expectation is built apart from the state written, so
// that a WriteState that changed its argument could not hide a loss.
func TestStateRoundTripSlots(t *testing.T) {
	state := func(slots ...string) *train.State {
		table := func(vals ...float32) *tensor.Dense {
			return tensor.New(tensor.WithShape(len(vals)/2, 2), tensor.WithBacking(vals))
		}
		s := &train.State{Epoch: 1, Steps: 6, Best: 0.5, BestEpoch: 1,
			Params:     map[string]*tensor.Dense{"entity": table(1, 2, 3, 4), "relation": table(5, 6)},
			BestParams: map[string]*tensor.Dense{"entity": table(1, 2, 3, 5), "relation": table(5, 7)},
			Slots:      map[string]map[string]*tensor.Dense{}}
		for i, name := range slots {
			v := float32(10 * (i + 1))
			s.Slots[name] = map[string]*tensor.Dense{"entity": table(v, v+1, v+2, v+3), "relation": table(v+4, v+5)}
		}
		return s
	}
	for _, slots := range [][]string{{"adam_m", "adam_v"}, {"adagrad_sum"}, {"sgd_momentum"}, nil} {
		path := filepath.Join(t.TempDir(), StateName)
		if err := WriteState(path, "run", state(slots...), time.Second, nil); err != nil {
			t.Fatal(err)
		}
		got, _, err := ReadState(path, "run")
		if err != nil {
			t.Fatal(err)
		}
		want := state(slots...)
		if g, w := slices.Sorted(maps.Keys(got.Slots)), slices.Sorted(maps.Keys(want.Slots)); !slices.Equal(g, w) {
			t.Errorf("slots %v: read back %v", w, g)
			continue
		}
		for name, tables := range want.Slots {
			for n, w := range tables {
				if g := got.Slots[name][n]; g == nil || !g.Shape().Eq(w.Shape()) || !reflect.DeepEqual(g.Data(), w.Data()) {
					t.Errorf("%s.%s = %v, want %v", name, n, g, w)
				}
			}
		}
	}
}

// An entry is "<group>.<table>.npy" for the longest table name that ends
// it, so a table whose name ends in another's (".entity" in "x.entity")
// reads back as itself, whatever order the tables are tried in (hence the
// repeated reads: Go randomises map order).
func TestReadStateEntryNames(t *testing.T) {
	tables := func(a, b float32) map[string]*tensor.Dense {
		return map[string]*tensor.Dense{
			"entity":   tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{a, a, a, a})),
			"x.entity": tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float32{b, b}))}
	}
	s := &train.State{Epoch: 1, Steps: 6, BestEpoch: -1, Best: math.Inf(-1), Params: tables(1, 2), BestParams: tables(3, 4),
		Slots: map[string]map[string]*tensor.Dense{"adagrad_sum": tables(5, 6)}}
	valid := filepath.Join(t.TempDir(), StateName)
	if err := WriteState(valid, "run", s, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		got, _, err := ReadState(valid, "run")
		if err != nil {
			t.Fatalf("dotted table names: %v", err)
		}
		if g := slices.Sorted(maps.Keys(got.Slots)); !slices.Equal(g, []string{"adagrad_sum"}) {
			t.Fatalf("slot groups %v, want [adagrad_sum]", g)
		}
		for _, group := range []struct {
			name      string
			got, want map[string]*tensor.Dense
		}{{"param", got.Params, s.Params}, {"best", got.BestParams, s.BestParams}, {"adagrad_sum", got.Slots["adagrad_sum"], s.Slots["adagrad_sum"]}} {
			for n, w := range group.want {
				if g := group.got[n]; g == nil || !g.Shape().Eq(w.Shape()) || !reflect.DeepEqual(g.Data(), w.Data()) {
					t.Fatalf("%s.%s = %v, want %v", group.name, n, g, w)
				}
			}
		}
	}
}

// A state whose meta claims a table far larger than its entry holds is
// refused from the entry's size, before anything of the claimed size is
// allocated (512 GiB here).
func TestReadStateRefusesALyingShape(t *testing.T) {
	table := func(vals ...float32) *tensor.Dense {
		return tensor.New(tensor.WithShape(len(vals)/2, 2), tensor.WithBacking(vals))
	}
	s := &train.State{Epoch: 1, Steps: 1, BestEpoch: -1,
		Params: map[string]*tensor.Dense{"entity": table(1, 2)}, BestParams: map[string]*tensor.Dense{"entity": table(1, 3)}}
	path := filepath.Join(t.TempDir(), StateName)
	if err := WriteState(path, "run", s, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Rewrite meta with a shape of 2^36 rows (2^37 float32s: 512 GiB).
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if f.Name == "meta.npy" {
			var js []uint8
			must(readNpyEntry(npzOf(t, "meta.npy", data), "meta.npy", &js, 1, maxMetaBytes))
			if !bytes.Contains(js, []byte(`"entity":[1,2]`)) {
				t.Fatalf("meta has no entity shape [1,2]: %s", js)
			}
			js = bytes.Replace(js, []byte(`"entity":[1,2]`), []byte(`"entity":[68719476736,2]`), 1)
			var nb bytes.Buffer
			must(npy.Write(&nb, js))
			data = nb.Bytes()
		}
		fw, err := w.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	z.Close()
	must(w.Close())
	must(os.WriteFile(path, buf.Bytes(), 0o644))
	_, _, err = ReadState(path, "run")
	if err == nil || !strings.Contains(err.Error(), "param.entity.npy has shape [2]") {
		t.Errorf("a meta shape of 2^36 rows: %v", err)
	}
}

// ReadStateRows keeps rows [lo, hi) of the tables it is told to cut, in
// every group, and the whole of the others; a range outside a table's
// rows is an error naming it.
func TestReadStateRows(t *testing.T) {
	rows := func(n, cols int, base float64) *tensor.Dense {
		v := make([]float64, n*cols)
		for i := range v {
			v[i] = base + float64(i)
		}
		return tensor.New(tensor.WithShape(n, cols), tensor.WithBacking(v))
	}
	s := &train.State{BestEpoch: -1, Best: math.Inf(-1),
		Params:     map[string]*tensor.Dense{"entity": rows(5, 3, 0), "relation": rows(2, 3, 100)},
		BestParams: map[string]*tensor.Dense{"entity": rows(5, 3, 200), "relation": rows(2, 3, 300)},
		Slots:      map[string]map[string]*tensor.Dense{"adam_m": {"entity": rows(5, 3, 400), "relation": rows(2, 3, 500)}}}
	path := filepath.Join(t.TempDir(), StateName)
	if err := WriteState(path, "run", s, 0, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ lo, hi int }{{0, 5}, {0, 2}, {2, 5}, {4, 5}} {
		got, _, err := ReadStateRows(path, "run", []string{"entity"}, c.lo, c.hi)
		if err != nil {
			t.Fatal(err)
		}
		for group, pair := range map[string][2]*tensor.Dense{
			"param": {got.Params["entity"], s.Params["entity"]}, "best": {got.BestParams["entity"], s.BestParams["entity"]},
			"adam_m": {got.Slots["adam_m"]["entity"], s.Slots["adam_m"]["entity"]}} {
			want := pair[1].Data().([]float64)[c.lo*3 : c.hi*3]
			if g := pair[0]; !g.Shape().Eq(tensor.Shape{c.hi - c.lo, 3}) || !slices.Equal(g.Data().([]float64), want) {
				t.Errorf("rows [%d, %d) of %s.entity: %v %v, want %v", c.lo, c.hi, group, g.Shape(), g.Data(), want)
			}
		}
		if !slices.Equal(got.Params["relation"].Data().([]float64), s.Params["relation"].Data().([]float64)) {
			t.Errorf("rows [%d, %d): the relation table was cut", c.lo, c.hi)
		}
	}
	if _, _, err := ReadStateRows(path, "run", []string{"entity"}, 3, 6); err == nil || !strings.Contains(err.Error(), "entity") {
		t.Errorf("rows [3, 6) of 5: %v", err)
	}
}

// A sharded run's state, written by the process holding rows [0, 2) of
// its entity table with the rest gathered chunk by chunk, reads back as
// the whole state; when the file cannot be written the writer still
// takes part in every gather the other processes make.
func TestWriteStatePart(t *testing.T) {
	whole := func(base float32) *tensor.Dense {
		v := make([]float32, 5*3)
		for i := range v {
			v[i] = base + float32(i)
		}
		return tensor.New(tensor.WithShape(5, 3), tensor.WithBacking(v))
	}
	rel := tensor.New(tensor.WithShape(1, 3), tensor.WithBacking([]float32{7, 8, 9}))
	full := &train.State{BestEpoch: -1, Best: math.Inf(-1),
		Params:     map[string]*tensor.Dense{"entity": whole(0), "relation": rel},
		BestParams: map[string]*tensor.Dense{"entity": whole(100), "relation": rel},
		Slots:      map[string]map[string]*tensor.Dense{"adam_m": {"entity": whole(200), "relation": rel}}}
	of := map[*tensor.Dense]*tensor.Dense{} // a part's tensor → its whole
	part := &train.State{BestEpoch: -1, Best: math.Inf(-1), Params: map[string]*tensor.Dense{"relation": rel},
		BestParams: map[string]*tensor.Dense{"relation": rel}, Slots: map[string]map[string]*tensor.Dense{"adam_m": {"relation": rel}}}
	for _, e := range full.Entries() {
		if e.Table == "entity" {
			p := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(slices.Clone(e.T.Data().([]float32)[:6])))
			of[p] = e.T
			map[string]map[string]*tensor.Dense{"param": part.Params, "best": part.BestParams, "adam_m": part.Slots["adam_m"]}[e.Group]["entity"] = p
		}
	}
	gathers := 0
	part.Part = &train.StatePart{Tables: []string{"entity"}, Lo: 0, Hi: 2, N: 5, Gather: func(t *tensor.Dense, a, b int) (any, error) {
		gathers++
		return slices.Clone(of[t].Data().([]float32)[a*3 : b*3]), nil
	}}
	dir := t.TempDir()
	path := filepath.Join(dir, StateName)
	if err := WriteState(path, "run", part, 0, nil); err != nil {
		t.Fatal(err)
	}
	if gathers != 3 {
		t.Errorf("%d gathers, want one chunk of each of 3 entity tables", gathers)
	}
	got, _, err := ReadState(path, "run")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range full.Entries() {
		g := map[string]map[string]*tensor.Dense{"param": got.Params, "best": got.BestParams, "adam_m": got.Slots["adam_m"]}[e.Group][e.Table]
		if g == nil || !g.Shape().Eq(e.T.Shape()) || !slices.Equal(g.Data().([]float32), e.T.Data().([]float32)) {
			t.Errorf("%s.%s: read %v, wrote %v", e.Group, e.Table, g, e.T.Data())
		}
	}
	gathers = 0
	if err := WriteState(filepath.Join(dir, "missing", StateName), "run", part, 0, nil); err == nil {
		t.Error("a state written into a missing directory: no error")
	}
	if gathers != 3 {
		t.Errorf("a failed write took part in %d gathers, the others make 3", gathers)
	}
}
