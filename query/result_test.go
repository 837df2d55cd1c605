package query

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestResultWrite(t *testing.T) {
	yes, no := true, false
	completions := &Result{Run: "cp2-x", Model: "cp2", Constrained: true, Query: "(a, likes, ?)", Kind: KindConditional, Filtered: true,
		Rows: []Row{
			{Rank: 1, Subject: "a", Relation: "likes", Object: "bb", Prob: fptr(0.75), LogProb: fptr(math.Log(0.75)), Known: &no},
			{Rank: 2, Subject: "a", Relation: "likes", Object: "c", Prob: fptr(0), LogProb: fptr(math.Inf(-1)), Known: &yes},
		}}
	marginal := &Result{Run: "r", Model: "m", Query: "p(relation)", Kind: KindSoftmax,
		Rows: []Row{{Rank: 1, Relation: "likes", Prob: fptr(1), LogProb: fptr(0)}}}
	for _, c := range []struct {
		r      *Result
		format string
		want   string
	}{
		{completions, "tsv", "rank\tsubject\trelation\tobject\tp\tlog_p\tknown\n" +
			"1\ta\tlikes\tbb\t0.75\t-0.28768207\tfalse\n" +
			"2\ta\tlikes\tc\t0\t-Inf\ttrue\n"},
		{completions, "text", "# run cp2-x (cp2, domain-constrained)\n" +
			"# conditional: (a, likes, ?)\n" +
			"# filtered: known triples (train, valid, test) left out; p is still the model's\n" +
			"rank  subject  relation  object  p     log_p        known\n" +
			"1     a        likes     bb      0.75  -0.28768207  false\n" +
			"2     a        likes     c       0     -Inf         true\n"},
		{marginal, "text", "# run r (m)\n# softmax: p(relation)\n" +
			"# energy-based model: p is the softmax of its scores over the free slot, not a GeKC's exact conditional\n" +
			"rank  relation  p  log_p\n1     likes     1  0\n"},
		{marginal, "json", `{
  "run": "r",
  "model": "m",
  "constrained": false,
  "query": "p(relation)",
  "kind": "softmax",
  "rows": [
    {
      "rank": 1,
      "relation": "likes",
      "p": 1,
      "log_p": 0
    }
  ]
}
`},
	} {
		var b bytes.Buffer
		if err := c.r.Write(&b, c.format); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("%s %s:\n%s\nwant\n%s", c.r.Query, c.format, b.String(), c.want)
		}
	}

	// JSON has no −Inf: it becomes the string "-Inf"; everything else
	// reads back as written.
	var b bytes.Buffer
	if err := completions.Write(&b, "json"); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Result
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Run != "cp2-x" || !back.Constrained || !back.Filtered || back.Kind != KindConditional || len(back.Rows) != 2 ||
		back.Rows[1]["log_p"] != "-Inf" || back.Rows[0]["log_p"] != math.Log(0.75) || back.Rows[1]["known"] != true {
		t.Errorf("JSON read back as %+v from %s", back, b.String())
	}

	if err := completions.Write(&b, "xml"); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("format xml: error %v", err)
	}
}
