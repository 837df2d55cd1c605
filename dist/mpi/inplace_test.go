package mpi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// MPI's sentinel pointers (OpenMPI's MPI_IN_PLACE is (void *) 1) must not
// be named from Go: held in a Go frame, a pointer-typed 0x1 makes the
// runtime throw "invalid pointer found on stack" when it moves the stack,
// at random (a SLURM test of a sharded run died of it). The C wrappers in
// the cgo preamble use them instead.
func TestNoMPISentinelsInGo(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "mpi_cgo.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == "C" {
			for _, bad := range []string{"MPI_IN_PLACE", "MPI_BOTTOM", "MPI_STATUS_IGNORE", "MPI_STATUSES_IGNORE"} {
				if strings.EqualFold(sel.Sel.Name, bad) {
					t.Errorf("%s: C.%s named from Go; use it inside a C wrapper", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
		}
		return true
	})
}
