package job

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one shard of a job: I of N (0-based), and where the numbers
// came from (--shard, or a launcher's variables) for messages.
type Shard struct {
	I, N int
	From string
	// task is a Slurm array task's own index (SLURM_ARRAY_TASK_ID) when
	// the shard came from one: which shard it names depends on the
	// planned count (planned).
	task    int
	inArray bool
}

// ShardFromEnv finds this process's shard in the launcher's environment:
// a Slurm array task, then an MPI launcher's rank (Open MPI, then PMI:
// MPICH/Hydra, Intel MPI, srun --mpi=pmi2), then a Slurm job step's task.
// The MPI launchers come before SLURM_PROCID because mpirun inside an sbatch
// script inherits the batch step's SLURM_PROCID=0 in every rank.
// An array task's shard is settled against the planned count (planned).
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
		if err1 != nil || err2 != nil || c < 1 || i < 0 {
			return Shard{}, Usagef("rewrite: %s=%q %s=%q: not a shard", p.id, is, p.count, ns)
		}
		s := Shard{I: i, N: c, From: p.id + "/" + p.count}
		if p.id == "SLURM_ARRAY_TASK_ID" {
			s.task, s.inArray = i, true
			if m, err := strconv.Atoi(getenv("SLURM_ARRAY_TASK_MIN")); err == nil {
				s.I -= m // --array=1-4 numbers tasks from 1
			}
			return s, nil
		}
		if i >= c {
			return Shard{}, Usagef("rewrite: %s=%d is not in [0, %s=%d) (use --shard I/N)", p.id, i, p.count, c)
		}
		return s, nil
	}
	return Shard{}, Usagef("rewrite: no --shard I/N and no launcher environment (SLURM_ARRAY_TASK_ID, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID)")
}

// planned settles s against the n shards OUT's job was planned for. A
// whole Slurm array (as many tasks as shards) numbers its shards from its
// first index (--array=1-4 runs shards 0..3). An array of fewer tasks is
// a part of one resubmitted after a failure (sbatch --array=1 or
// --array=0,2 after those tasks hit their time limit or lost their node):
// Slurm then counts only the resubmitted tasks (SLURM_ARRAY_TASK_COUNT=1,
// SLURM_ARRAY_TASK_MIN=1), so the task's own index is the shard. Every
// other launcher must count the planned shards.
func (s Shard) planned(n int, out string) (Shard, error) {
	if s.inArray && s.N < n {
		if s.task >= n {
			return Shard{}, Usagef("rewrite: SLURM_ARRAY_TASK_ID=%d in an array of %d tasks: a part of an array resubmitted names its shards by their index, 0 to %d for the %d shards %s was planned for (use --shard I/%d)",
				s.task, s.N, n-1, n, out, n)
		}
		return Shard{I: s.task, N: n, From: fmt.Sprintf("SLURM_ARRAY_TASK_ID of a resubmitted part (%d of %d tasks)", s.N, n)}, nil
	}
	if s.N != n {
		return Shard{}, Usagef("rewrite: shard %d/%d (from %s) but %s was planned for %d shards", s.I, s.N, s.From, out, n)
	}
	if s.I < 0 || s.I >= s.N {
		return Shard{}, Usagef("rewrite: %s: task %d is shard %d, not in [0, %d) (an array with gaps or steps? use --shard I/N)", s.From, s.task, s.I, s.N)
	}
	return s, nil
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
