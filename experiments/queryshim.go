package main

import (
	"gekc/internal/editdist"
	"gekc/sweep"
)

// Names query.go uses from code that moved to package sweep (issue 17);
// they go when query.go moves to its own library.
var (
	loadFinished = sweep.LoadFinished
	constraintOf = sweep.Constraint
	resolveRun   = sweep.ResolveRun
)

func editDistance(a, b string) int { return editdist.Distance(a, b) }
