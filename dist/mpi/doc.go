// Package mpi is gekc's thin layer over the site's MPI library: the few
// collectives a sharded GeKC needs (sum, gather, all-to-all exchange,
// barrier), on MPI_COMM_WORLD, each returning MPI's error as a Go error.
//
// Built with the tag "mpi" it calls MPI through cgo (pkg-config ompi-c,
// Debian's OpenMPI; see mpi_cgo.go for MPICH). Without the tag it is a
// one-process stub, so the default command stays a static binary: World
// then reports one process and every collective is the identity.
//
// MPI is initialised once per process by Init and finalised by Finalize;
// calls are serialised by the caller (gekc's step makes them from one
// goroutine at a time), which MPI_THREAD_SERIALIZED permits from any
// operating-system thread.
package mpi
