package sweep

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"gekc/internal/jsonfloat"
	"gekc/report"
	"gekc/resultsdir"
	"gekc/train"

	"github.com/schollz/progressbar/v3"
)

// progressObserver reports a run's progress on stderr: on a terminal, a
// progress bar per epoch with ETA, the running loss and the last validation
// metrics; elsewhere (a log file, a SLURM job, -j > 1 where bars would
// overwrite each other) a plain line at most every interval, within an
// epoch or at its end. Verbose (-v), every epoch also ends with one line.
type progressObserver struct {
	out       *lockedWriter
	prefix    string // e.g. "[3/12] cp-pll-d50-..."
	maxEpochs int
	bars      bool
	verbose   bool          // a line at the end of every epoch
	interval  time.Duration // plain mode: at most one line per interval

	lastValid     string    // the last validation's metrics, for the bar
	lastEpochLine time.Time // plain mode, not verbose: when the last epoch line was written

	bar        *progressbar.ProgressBar
	epoch      int
	steps      int
	epochStart time.Time
	// priorSteps counts the steps of the epoch finished before epochStart:
	// nonzero when a run resumed mid-epoch, so that the ETA is the rate
	// since the resume, not since a start this process never saw. It is
	// -1 until the epoch's first Step tells it.
	priorSteps int
	lastLine   time.Time
	lastDesc   time.Time
}

// lockedWriter serialises the writes of concurrent runs (-j) so that lines
// never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) printf(format string, args ...any) {
	fmt.Fprintf(l, format, args...)
}

func newProgressObserver(out *lockedWriter, prefix string, maxEpochs int, bars, verbose bool) *progressObserver {
	return &progressObserver{out: out, prefix: prefix, maxEpochs: maxEpochs, bars: bars, verbose: verbose,
		interval: 30 * time.Second, lastEpochLine: time.Now()}
}

func (p *progressObserver) EpochStart(epoch, steps int) {
	p.epoch, p.steps = epoch, steps
	p.epochStart = time.Now()
	p.priorSteps = -1
	p.lastLine = p.epochStart
	if !p.bars {
		return
	}
	p.bar = progressbar.NewOptions(steps,
		progressbar.OptionSetWriter(p.out),
		progressbar.OptionSetDescription(p.describe(math.NaN())),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetWidth(25),
		progressbar.OptionThrottle(150*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)
}

func (p *progressObserver) describe(loss float64) string {
	d := fmt.Sprintf("%s epoch %d/%d", p.prefix, p.epoch, p.maxEpochs)
	if !math.IsNaN(loss) {
		d += fmt.Sprintf(" loss %.4g", loss)
	}
	if p.lastValid != "" {
		d += " | valid " + p.lastValid
	}
	return d
}

func (p *progressObserver) Step(done int, runningLoss float64) {
	now := time.Now()
	if p.priorSteps < 0 {
		p.priorSteps = max(done-1, 0)
	}
	if p.bar != nil {
		// Describe re-renders the bar, so rate-limit it like the bar itself.
		if now.Sub(p.lastDesc) > 150*time.Millisecond {
			p.bar.Describe(p.describe(runningLoss))
			p.lastDesc = now
		}
		p.bar.Set(done)
		return
	}
	if now.Sub(p.lastLine) < p.interval || now.Sub(p.lastEpochLine) < p.interval {
		return
	}
	p.lastLine, p.lastEpochLine = now, now
	eta := "?"
	if here := done - p.priorSteps; here > 0 && p.steps > done {
		elapsed := now.Sub(p.epochStart)
		eta = (elapsed * time.Duration(p.steps-done) / time.Duration(here)).Round(time.Second).String()
	}
	p.out.printf("%s epoch %d/%d: step %d/%d, loss %.4g, epoch ETA %s\n", p.prefix, p.epoch, p.maxEpochs, done, p.steps, runningLoss, eta)
}

func (p *progressObserver) EpochEnd(rec train.EpochRecord) {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
	var valid []string
	for _, k := range sortedMetricKeys(rec.Valid) {
		valid = append(valid, fmt.Sprintf("%s %.4g", k, rec.Valid[k]))
	}
	if len(rec.Valid) > 0 {
		p.lastValid = shortValid(rec.Valid)
	}
	if !p.verbose && (p.bars || time.Since(p.lastEpochLine) < p.interval) {
		return
	}
	p.lastEpochLine = time.Now()
	line := fmt.Sprintf("%s epoch %d/%d: loss %.4g, %.1fs", p.prefix, rec.Epoch, p.maxEpochs, rec.TrainLoss, rec.Seconds)
	switch {
	case len(valid) > 0 && p.verbose:
		line += fmt.Sprintf(", valid (%.1fs) %s", rec.EvalSeconds, strings.Join(valid, ", "))
	case p.lastValid != "":
		line += ", valid " + p.lastValid
	}
	p.out.printf("%s\n", line)
}

// shortValid is the few validation metrics a bar or a concise line has
// room for.
func shortValid(m map[string]float64) string {
	var parts []string
	for _, k := range []string{"mrr", "hits@10", "ll"} {
		if v, ok := m[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %.4g", k, v))
		}
	}
	return strings.Join(parts, ", ")
}

func (p *progressObserver) Log(msg string) {
	if p.bar != nil {
		p.bar.Clear()
	}
	p.out.printf("%s %s\n", p.prefix, msg)
}

func sortedMetricKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	report.SortMetrics(keys)
	return keys
}

// summaryLine is the one line printed when a run ends.
func summaryLine(prefix string, rec *resultsdir.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", prefix, rec.Status)
	metric := func(label string, m map[string]jsonfloat.Float, key, format string) {
		if v, ok := m[key]; ok {
			fmt.Fprintf(&b, "  %s "+format, label, float64(v))
		}
	}
	metric("valid MRR", rec.Valid, "mrr", "%.4f")
	metric("test MRR", rec.Test, "mrr", "%.4f")
	metric("test LL", rec.Test, "ll", "%.3f")
	fmt.Fprintf(&b, "  %s", (time.Duration(float64(rec.WallSeconds) * float64(time.Second))).Round(time.Second))
	if rec.Error != "" {
		msg := rec.Error
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		fmt.Fprintf(&b, "  error: %s", msg)
	}
	return b.String()
}

// nopObserver discards progress.
type nopObserver struct{}

func (nopObserver) EpochStart(int, int)        {}
func (nopObserver) Step(int, float64)          {}
func (nopObserver) EpochEnd(train.EpochRecord) {}
func (nopObserver) Log(string)                 {}
