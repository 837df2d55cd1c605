package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gekc/grid"
	"gekc/models"
	"gekc/query"
	"gekc/resultsdir"
	"gekc/train"
	"gekc/train/ckpt"
)

// fakeFinishedRun writes a finished run of model on UMLS with the random
// parameters models.New gives it: metrics.json and checkpoint.npz, all
// that the query command reads.
func fakeFinishedRun(t *testing.T, dir, model string, rank int) string {
	t.Helper()
	spec := grid.DefaultRunSpec()
	spec.Dataset, spec.Model, spec.Rank, spec.Objective = "umls", model, rank, "mle"
	spec.LearningRate, spec.BatchSize, spec.Epochs = 1e-2, 100, 1
	id := spec.ID()
	run := filepath.Join(dir, "runs", id)
	must(t, os.MkdirAll(run, 0o755))
	m, err := models.New(model, models.Sizes{Entities: 135, Relations: 46, Rank: rank}, models.Options{Seed: 7})
	must(t, err)
	must(t, ckpt.Write(filepath.Join(run, ckpt.CheckpointName), m))
	must(t, resultsdir.WriteRecord(filepath.Join(run, "metrics.json"), &resultsdir.Record{ID: id, Status: train.Finished, Spec: spec}))
	return run
}

func runQueryCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runCLI(context.Background(), append([]string{"query"}, args...),
		cliEnv{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }})
	return code, stdout.String(), stderr.String()
}

func decodeQuery(t *testing.T, out string) query.Result {
	t.Helper()
	var r query.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	return r
}

// For every registered GeKC on UMLS, loaded through the command's own path
// (metrics.json, checkpoint, float32), the answer to (s, r, ?) over all
// candidates, unfiltered, sums to 1 within 1e-5: the candidates' scores
// and the circuit's marginal agree. So do (?, r, o) and (s, ?, o), and
// the marginal p(o | s).
func TestQueryProbabilitiesSumToOneOnUMLS(t *testing.T) {
	data := shippedData(t, "umls")
	dir := t.TempDir()
	for _, name := range models.Names() {
		if _, sem, _ := models.Lookup(name); sem == models.Energy {
			continue
		}
		run := fakeFinishedRun(t, dir, name, 8)
		for _, q := range [][]string{
			{"-s", "alga", "-r", "isa"},
			{"-r", "location_of", "-o", "cell"},
			{"-s", "alga", "-o", "entity"},
			{"-s", "alga", "-target", "object"},
		} {
			code, out, stderr := runQueryCLI(t, append([]string{"-run", run, "-data", data, "-k", "0", "-format", "json"}, q...)...)
			if code != exitOK {
				t.Fatalf("%s %v: exit %d: %s", name, q, code, stderr)
			}
			r := decodeQuery(t, out)
			want := 135
			if q[2] == "-o" && q[0] == "-s" {
				want = 46
			}
			if len(r.Rows) != want {
				t.Fatalf("%s %v: %d rows, want %d", name, q, len(r.Rows), want)
			}
			var sum float64
			for _, row := range r.Rows {
				sum += *row.Prob
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Errorf("%s %v: probabilities sum to %.9f", name, q, sum)
			}
		}
	}
}

func TestQueryCommand(t *testing.T) {
	data := shippedData(t, "umls")
	dir := t.TempDir()
	run := fakeFinishedRun(t, dir, "complex2", 8)
	energy := fakeFinishedRun(t, dir, "complex", 8)
	base := []string{"-run", run, "-data", data}

	// A misspelt name is a usage error that names it and suggests close
	// ones (query's TestAnswererTripleAndParse has the suggestions).
	code, _, stderr := runQueryCLI(t, append(base, "-s", "algae", "-r", "isa")...)
	if code != exitUsage || !strings.Contains(stderr, `unknown entity "algae"`) || !strings.Contains(stderr, `"alga"`) {
		t.Errorf("misspelt entity: exit %d, %q", code, stderr)
	}

	// -filtered reaches the answerer: the known completions go, the rest
	// stay (which ones and in what order is TestAnswererCompletions).
	_, out, _ := runQueryCLI(t, append(base, "-s", "alga", "-r", "isa", "-k", "0", "-format", "json")...)
	all := decodeQuery(t, out)
	_, out, _ = runQueryCLI(t, append(base, "-s", "alga", "-r", "isa", "-k", "0", "-filtered", "-format", "json")...)
	filtered := decodeQuery(t, out)
	known := 0
	for _, row := range all.Rows {
		if *row.Known {
			known++
		}
	}
	if known == 0 || len(filtered.Rows) != len(all.Rows)-known {
		t.Errorf("%d known of %d; filtered %d rows", known, len(all.Rows), len(filtered.Rows))
	}

	// A full triple: log p(s, r, o) and its conditionals, consistent with
	// the completions (same model): log p(o | s, r) is the completion's.
	_, out, _ = runQueryCLI(t, append(base, "-s", "alga", "-r", "isa", "-o", all.Rows[0].Object, "-format", "json")...)
	sc := decodeQuery(t, out)
	if sc.Kind != query.KindJoint || len(sc.Rows) != 1 || math.Abs(*sc.Rows[0].LogPObject-*all.Rows[0].LogProb) > 1e-6 {
		t.Errorf("scored triple %+v, completion log p %v", sc, *all.Rows[0].LogProb)
	}

	// Samples conditioned on the subject keep it.
	code, out, stderr = runQueryCLI(t, append(base, "-s", "alga", "-sample", "20", "-format", "tsv")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) != 21 || lines[0] != "subject\trelation\tobject" {
		t.Fatalf("samples: exit %d, %q, %s", code, out, stderr)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "alga\t") {
			t.Errorf("sample %q does not keep the subject", l)
		}
	}

	// An energy-based model: completions are a softmax, said so; marginals
	// and samples are refused.
	code, out, _ = runQueryCLI(t, "-run", energy, "-data", data, "-s", "alga", "-r", "isa", "-k", "3")
	if code != exitOK || !strings.Contains(out, "softmax") {
		t.Errorf("energy completions: exit %d, %q", code, out)
	}
	for _, q := range [][]string{{"-target", "relation"}, {"-s", "alga", "-sample", "3"}} {
		code, _, stderr = runQueryCLI(t, append([]string{"-run", energy, "-data", data}, q...)...)
		if code != exitUsage || !strings.Contains(stderr, "energy-based") {
			t.Errorf("energy %v: exit %d, %q", q, code, stderr)
		}
	}
}
