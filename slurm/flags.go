package slurm

import (
	"flag"
	"time"
)

// Flags defines the -slurm-* flags of -emit slurm on fs, each setting a
// field of o: the resources each array task asks for.
func (o *Array) Flags(fs *flag.FlagSet) {
	fs.IntVar(&o.CPUs, "slurm-cpus", 4, "with -emit slurm: CPUs per array task (GOMAXPROCS and OPENBLAS_NUM_THREADS follow it)")
	fs.StringVar(&o.Mem, "slurm-mem", "", "with -emit slurm: memory per array task, e.g. 8G (default: estimated from the largest run's model and batch sizes)")
	fs.StringVar(&o.Time, "slurm-time", "12:00:00", "with -emit slurm: time limit per array task, in sbatch's format (HH:MM:SS, D-HH:MM, minutes)")
	fs.StringVar(&o.Partition, "slurm-partition", "", "with -emit slurm: partition (default: the cluster's default)")
	fs.DurationVar(&o.SignalBefore, "slurm-signal-before", 5*time.Minute, "with -emit slurm: how long before the time limit SLURM tells a task to save its state and requeue itself")
}
