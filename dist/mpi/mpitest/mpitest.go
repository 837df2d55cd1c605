// Package mpitest is test support for launching MPI jobs on this machine
// (as net/http/httptest is for servers): where mpirun is, and the
// environment OpenMPI needs here.
package mpitest

import (
	"os"
	"os/exec"
	"testing"
)

// Mpirun returns mpirun's path for a test that launches MPI jobs. With
// GEKC_MPI=off, or -short, the test is skipped, saying so; without mpirun
// it fails with the remedy.
func Mpirun(t testing.TB) string {
	t.Helper()
	if os.Getenv("GEKC_MPI") == "off" {
		t.Skip("GEKC_MPI=off: the MPI tests are switched off")
	}
	if testing.Short() {
		t.Skip("-short: builds against MPI and launches mpirun")
	}
	path, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatal("mpirun not found: install OpenMPI (scripts/deps does), or set GEKC_MPI=off")
	}
	return path
}

// Env is what OpenMPI needs here: running as root (CI does), and no
// single-copy shared-memory mechanism inside containers.
var Env = []string{
	"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
	"OMPI_MCA_btl_vader_single_copy_mechanism=none",
}
