package models

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// constantTables are the tables a score initialises to one value (its
// input value 1: a weight), as "model.table"; each score's _test.go
// declares its own.
var constantTables = map[string]bool{}

// initSizes are large enough for the spread of an initialisation to show.
var initSizes = Sizes{Entities: 200, Relations: 20, Rank: 4, RelationRank: 3}

// Every model's Init gives the documented distribution, table by table and
// part by part, so that a table initialised in the wrong layout fails:
//   - energy: entries N(0, EnergyInitStd²) (TuckER's core N(0, 0.1²));
//   - non-negative: exp of the features (LogFeatures) of every column of
//     part 0 sums to 1 over the rows, each entry near 1/rows (Dirichlet of
//     concentration DirichletConcentration); a gated part p > 0 is part 0
//     times Cap·σ(θ), θ near 0; a table serving no slot (TuckER's core)
//     sums to 1 as a whole;
//   - squared: the log-normal centring makes the initial φ 1 within 10%
//     on every triple (σ = LogNormalSigma is small);
//   - a table declared in constantTables holds input value 1 everywhere.
func TestInitDistributions(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			m, err := New(name, initSizes, Options{Seed: 5, Dtype: tensor.Float64})
			if err != nil {
				t.Fatal(err)
			}
			base, _, _ := Lookup(name)
			for _, tab := range m.Layout.Tables {
				if !constantTables[base.Name()+"."+tab.Name] {
					continue
				}
				p := refParams{m}
				for i, v := range m.Param(tab.Name).Data().([]float64) {
					if p.val(v) != 1 {
						t.Fatalf("table %s entry %d: input value %v, want 1", tab.Name, i, p.val(v))
					}
				}
			}
			switch m.Semantics {
			case Energy:
				checkEnergyInit(t, m)
			case NonNegative:
				checkNonNegativeInit(t, m)
			case Squared:
				rng := rand.New(rand.NewPCG(1, 1))
				for range 200 {
					s, r, o := rng.IntN(initSizes.Entities), rng.IntN(initSizes.Relations), rng.IntN(initSizes.Entities)
					if phi := refScore(m, s, r, o); math.Abs(phi-1) > 0.1 {
						t.Fatalf("φ(%d, %d, %d) = %v at initialisation, want 1 within 10%%", s, r, o, phi)
					}
				}
			}
		})
	}
}

func checkEnergyInit(t *testing.T, m *Model) {
	for _, tab := range m.Layout.Tables {
		if constantTables[m.Name+"."+tab.Name] {
			continue
		}
		x := m.Param(tab.Name).Data().([]float64)
		want := EnergyInitStd
		if m.Name == "tucker" && tab.Name == "core" {
			want = 0.1
		}
		mean, sd := meanSD(x)
		if math.Abs(mean) > 5*want/math.Sqrt(float64(len(x))) || math.Abs(sd/want-1) > 0.2 {
			t.Errorf("table %s: mean %.3g, sd %.3g; want N(0, %g²)", tab.Name, mean, sd, want)
		}
	}
}

func checkNonNegativeInit(t *testing.T, m *Model) {
	base, _, _ := Lookup(m.Name)
	nn := nonNegative(base)
	parts := 1
	var cap float64
	if ml, ok := base.(interface{ multilinear() Multilinear }); ok && ml.multilinear().Cap > 0 {
		parts, cap = ml.multilinear().Parts, ml.multilinear().Cap
	} else if _, ok := base.(ComplEx); ok {
		parts, cap = 2, 1
	}
	serves := map[string]bool{m.Layout.Subject: true, m.Layout.Relation: true, m.Layout.Object: true}
	for _, tab := range m.Layout.Tables {
		p := m.Param(tab.Name)
		f := tab.Name
		if constantTables[base.Name()+"."+tab.Name] {
			continue
		}
		if !serves[tab.Name] {
			var sum float64
			for _, v := range p.Data().([]float64) {
				sum += math.Exp(v)
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("table %s (no slot's): exp sums to %v, want 1", tab.Name, sum)
			}
			continue
		}
		g := G.NewGraph()
		node := G.NewMatrix(g, tensor.Float64, G.WithShape(tab.Rows, tab.Cols), G.WithValue(p))
		feats, err := nn.LogFeatures(node)
		if err != nil {
			t.Fatal(err)
		}
		run(t, feats)
		v := feats.Value().Data().([]float64)
		k := tab.Cols / parts
		for j := range k {
			var sum float64
			for i := range tab.Rows {
				e := math.Exp(v[i*tab.Cols+j])
				sum += e
				if math.Abs(e*float64(tab.Rows)-1) > 0.3 {
					t.Fatalf("table %s row %d column %d: %v, want near 1/%d", f, i, j, e, tab.Rows)
				}
				for part := 1; part < parts; part++ {
					if ratio := math.Exp(v[i*tab.Cols+part*k+j]) / e; math.Abs(ratio/(cap/2)-1) > 0.05 {
						t.Fatalf("table %s row %d column %d: part %d is %v times part 0, want Cap·σ(0) = %v", f, i, j, part, ratio, cap/2)
					}
				}
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("table %s column %d: exp sums to %v over the rows, want 1", f, j, sum)
			}
		}
		// The gates θ are N(0, GateInitStd²) in the raw parameters, every
		// gate column drawn (none left at a constant).
		raw := p.Data().([]float64)
		var all []float64
		for c := k; c < tab.Cols && parts > 1; c++ {
			col := make([]float64, tab.Rows)
			for i := range col {
				col[i] = raw[i*tab.Cols+c]
			}
			if _, sd := meanSD(col); sd < 0.2*GateInitStd {
				t.Fatalf("table %s gate column %d: sd %.3g, want N(0, %g²)", f, c, sd, GateInitStd)
			}
			all = append(all, col...)
		}
		if mean, sd := meanSD(all); len(all) > 0 && (math.Abs(mean) > 5*GateInitStd/math.Sqrt(float64(len(all))) || math.Abs(sd/GateInitStd-1) > 0.15) {
			t.Fatalf("table %s gates: mean %.3g, sd %.3g; want N(0, %g²)", f, mean, sd, GateInitStd)
		}
	}
}

func meanSD(x []float64) (float64, float64) {
	var s, ss float64
	for _, v := range x {
		s += v
	}
	mean := s / float64(len(x))
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1))
}

// A non-negative model's φ is ≥ 0 on every triple of the tiny graph at its
// own initialisation and at adversarial parameters (large log-values and
// gates of both signs), by its reference and by its own log-score.
func TestNonNegativeModelsStayNonNegative(t *testing.T) {
	for _, name := range Names() {
		if _, sem, _ := Lookup(name); sem != NonNegative {
			continue
		}
		t.Run(name, func(t *testing.T) {
			for _, draw := range []struct {
				name   string
				spread float64
			}{{"init", 0}, {"N(0, 1)", 1}, {"N(0, 3²)", 3}, {"N(0, 8²)", 8}} {
				m, err := New(name, tinySizes, Options{Seed: 9, Dtype: tensor.Float64})
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(9, uint64(draw.spread)))
				for _, n := range m.ParamNames() {
					if draw.spread == 0 {
						break
					}
					x := m.Param(n).Data().([]float64)
					for i := range x {
						x[i] = draw.spread * rng.NormFloat64()
					}
				}
				g := G.NewGraph()
				c := m.Bind(g)
				S, R, O := allTriples(m.Sizes)
				b := newBatch(t, g, c, S, R, O)
				ls, err := c.LogScore(b)
				if err != nil {
					t.Fatal(err)
				}
				run(t, ls)
				for i, l := range vec(ls) {
					if phi := refScore(m, S[i], R[i], O[i]); phi < 0 || math.IsNaN(l) {
						t.Fatalf("%s: φ(%d, %d, %d) = %v (log-score %v), want ≥ 0", draw.name, S[i], R[i], O[i], phi, l)
					}
				}
			}
		})
	}
}

// Init writes every entry of every table, in every semantics: a table
// filled with NaN beforehand has none left.
func TestInitWritesEveryEntry(t *testing.T) {
	for _, name := range Names() {
		sf, sem, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		sz := Sizes{Entities: 7, Relations: 3, Rank: 4, RelationRank: 3}
		for _, tab := range sf.Layout(sz).Tables {
			x := make([]float64, tab.Rows*tab.Cols)
			for i := range x {
				x[i] = math.NaN()
			}
			if err := sf.Init(sem, sz, tab, x, rand.New(rand.NewPCG(1, 2)), 0); err != nil {
				t.Fatalf("%s table %s: %v", name, tab.Name, err)
			}
			for i, v := range x {
				if math.IsNaN(v) {
					t.Errorf("%s table %s: entry %d (row %d, column %d) not initialised", name, tab.Name, i, i/tab.Cols, i%tab.Cols)
					break
				}
			}
		}
	}
}
