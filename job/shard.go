package job

import (
	"strconv"
	"strings"
)

// ShardFromEnv finds this process's shard in the launcher's environment:
// a Slurm array task, then an MPI launcher's rank (Open MPI, then PMI:
// MPICH/Hydra, Intel MPI, srun --mpi=pmi2), then a Slurm job step's task.
// The MPI launchers come before SLURM_PROCID because mpirun inside an sbatch
// script inherits the batch step's SLURM_PROCID=0 in every rank.
func ShardFromEnv(getenv func(string) string) (Shard, error) {
	pairs := []struct{ id, count string }{
		{"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"},
		{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
		{"PMI_RANK", "PMI_SIZE"},
		{"SLURM_PROCID", "SLURM_NTASKS"},
	}
	for _, p := range pairs {
		is, ns := getenv(p.id), getenv(p.count)
		if is == "" || ns == "" {
			continue
		}
		i, err1 := strconv.Atoi(is)
		c, err2 := strconv.Atoi(ns)
		if err1 != nil || err2 != nil || c < 1 {
			return Shard{}, Usagef("rewrite: %s=%q %s=%q: not a shard", p.id, is, p.count, ns)
		}
		if p.id == "SLURM_ARRAY_TASK_ID" {
			if m, err := strconv.Atoi(getenv("SLURM_ARRAY_TASK_MIN")); err == nil {
				i -= m // --array=1-4 numbers tasks from 1
			}
		}
		if i < 0 || i >= c {
			return Shard{}, Usagef("rewrite: %s=%d is not in [0, %s=%d) (an array with gaps or steps? use --shard I/N)", p.id, i, p.count, c)
		}
		return Shard{I: i, N: c, From: p.id + "/" + p.count}, nil
	}
	return Shard{}, Usagef("rewrite: no --shard I/N and no launcher environment (SLURM_ARRAY_TASK_ID, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID)")
}

// ParseShard parses --shard "I/N".
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, Usagef("--shard %q: want I/N with 0 <= I < N, e.g. 2/4", s)
	}
	return Shard{I: i, N: n, From: "--shard"}, nil
}
