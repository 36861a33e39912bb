package job

import (
	"strings"
	"testing"
)

func TestShardFromEnv(t *testing.T) {
	for _, c := range []struct {
		env      map[string]string
		planned  int
		shard, n int
		from     string
		wantErr  string // in the error, "" for none
	}{
		{map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, 4, 2, 4, "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT", ""},
		// A whole array numbered from 1.
		{map[string]string{"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1"}, 4, 3, 4, "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT", ""},
		// sbatch --array=1 after task 1 of 0-2 failed: what Slurm sets
		// (seen under slurm-wlm 22.05); the index is the shard.
		{map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "1"}, 3, 1, 3, "SLURM_ARRAY_TASK_ID of a resubmitted part (1 of 3 tasks)", ""},
		{map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "2"}, 3, 2, 3, "SLURM_ARRAY_TASK_ID of a resubmitted part (2 of 3 tasks)", ""},
		{map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_ARRAY_TASK_MIN": "3"}, 3, 0, 0, "", "names its shards by their index, 0 to 2"},
		// A whole array with gaps, and one of more tasks than shards.
		{map[string]string{"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0"}, 3, 0, 0, "", "gaps or steps"},
		{map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "5", "SLURM_ARRAY_TASK_MIN": "0"}, 4, 0, 0, "", "planned for 4 shards"},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8", "SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, 8, 3, 8, "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE", ""},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8"}, 4, 0, 0, "", "planned for 4 shards"},
		{map[string]string{"PMI_RANK": "1", "PMI_SIZE": "2"}, 2, 1, 2, "PMI_RANK/PMI_SIZE", ""},
		{map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "16"}, 16, 5, 16, "SLURM_PROCID/SLURM_NTASKS", ""},
		{map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "4"}, 4, 0, 0, "", "not in [0, SLURM_NTASKS=4)"},
		{map[string]string{}, 1, 0, 0, "", "no launcher environment"},
	} {
		s, err := ShardFromEnv(func(k string) string { return c.env[k] })
		if err == nil {
			s, err = s.planned(c.planned, "OUT")
		}
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v, planned %d: got %+v, err %v, want an error saying %q", c.env, c.planned, s, err, c.wantErr)
			}
			continue
		}
		if err != nil || s.I != c.shard || s.N != c.n || s.From != c.from {
			t.Errorf("%v, planned %d: got %+v err %v", c.env, c.planned, s, err)
		}
	}
	if _, err := ParseShard("4/4"); err == nil {
		t.Error("--shard 4/4 accepted")
	}
	if s, err := ParseShard("1/4"); err != nil || s.I != 1 || s.N != 4 {
		t.Errorf("--shard 1/4: %+v %v", s, err)
	}
	if _, err := (Shard{I: 1, N: 4, From: "--shard"}).planned(3, "OUT"); err == nil || !strings.Contains(err.Error(), "planned for 3 shards") {
		t.Errorf("--shard 1/4 of a job planned for 3: %v", err)
	}
}
