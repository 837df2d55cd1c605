package resultsdir

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gekc/internal/atomicfile"
	"gekc/kg"
	"gekc/models"
)

// SamplesName is the file, in a run's directory, holding its samples.
const SamplesName = "samples.tsv"

// Sample draws n triples from a GeKC, seeded by seed (a run's samples are
// seeded by its seed: the same wherever they are drawn again), and reports
// how long it took. A constrained model (d not nil) samples only
// consistent triples.
func Sample(m *models.Model, d *models.Domain, n int, seed uint64) ([]kg.Triple, time.Duration, error) {
	start := time.Now()
	s, err := models.NewConstrainedSampler(m, d, 1000)
	if err != nil {
		return nil, 0, err
	}
	ts, err := s.Sample(n, rand.New(rand.NewPCG(seed, 0x5a3b1e)))
	return ts, time.Since(start), err
}

// WriteSamples writes triples as tab-separated entity and relation names,
// one a line, replacing path atomically.
func WriteSamples(path string, ds *kg.Dataset, ts []kg.Triple) error {
	var buf bytes.Buffer
	for _, t := range ts {
		fmt.Fprintf(&buf, "%s\t%s\t%s\n", ds.Entities.Name(t.S), ds.Relations.Name(t.R), ds.Entities.Name(t.O))
	}
	return atomicfile.WriteFile(path, buf.Bytes(), 0o644)
}

// ReadSamples reads a file written by WriteSamples back into ids of ds,
// gzipped when path ends in ".gz" (as published with a run's record); a
// malformed line or an unknown name is an error naming the line.
func ReadSamples(path string, ds *kg.Dataset) ([]kg.Triple, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	var out []kg.Triple
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		p := strings.Split(sc.Text(), "\t")
		if len(p) != 3 {
			return nil, fmt.Errorf("%s:%d: expected 3 tab-separated fields", path, line)
		}
		s, ok1 := ds.Entities.Index(p[0])
		r, ok2 := ds.Relations.Index(p[1])
		o, ok3 := ds.Entities.Index(p[2])
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("%s:%d: unknown entity or relation", path, line)
		}
		out = append(out, kg.Triple{S: s, R: r, O: o})
	}
	return out, sc.Err()
}

// SampleFiles are where the samples of the run in dir may be stored:
// samples.tsv as drawn, samples.tsv.gz as published.
func SampleFiles(dir string) []string {
	return []string{filepath.Join(dir, SamplesName), filepath.Join(dir, SamplesName+".gz")}
}

// StoredSamples returns n samples of the run in dir as stored (SampleFiles),
// or nil when no file holds that many. They are the ones sampling would
// draw again: the seed is the run's.
func StoredSamples(dir string, ds *kg.Dataset, n int) []kg.Triple {
	for _, path := range SampleFiles(dir) {
		if ts, err := ReadSamples(path, ds); err == nil && len(ts) >= n {
			return ts[:n]
		}
	}
	return nil
}
