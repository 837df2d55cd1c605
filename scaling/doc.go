// Package scaling is the training-cost scaling study of the paper (section
// "On the Training Efficiency of GeKCs", figure fig:pll-scaling, and
// appendix "Training Speed-up Benchmark Details"): the time and peak memory
// of one PLL training step, forward, backward and Adam update, of ComplEx,
// ComplEx+ and ComplEx² on random triples over a knowledge graph of
// ogbl-wikikg2's size, (a) with all entities and a growing batch, (b) with
// batch 500 and a growing number of entities.
//
// Options describe a study and Options.Plan lists its points. A Study
// measures every point in a child process: the program named by Study.Exe
// re-executed with the point in $GEKC_SCALING_POINT (ChildEnv), which must
// notice the variable and hand it to RunChild. The child's high-water RSS is
// then the point's peak memory alone, and a point that needs more memory
// than Options.MaxMem is stopped, and recorded as out of memory, without
// bringing down the study. Points are written to <out>/scaling.tsv as they
// end, so that the study can be stopped and started again; scaling.md and
// scaling.png are drawn from it (RenderMarkdown, RenderPlot). Flags maps
// the command's flags onto Options, and Measure runs a study as the
// command does.
//
// The figures are those of the child program's linear algebra: the
// experiments command, and this package's tests, import gekc/graph/openblas.
//
// The cap is a watchdog on the child's resident memory, not RLIMIT_AS. Under
// an address-space limit, OpenBLAS (0.3.21 here), which mallocs its work
// buffers on first use, kept retrying a failed malloc instead of failing, so
// the point hung until its timeout; and address space counts the Go
// runtime's reservations and the threads' stacks, which are never touched.
package scaling
