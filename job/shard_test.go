package job

import "testing"

func TestShardFromEnv(t *testing.T) {
	for _, c := range []struct {
		env      map[string]string
		shard, n int
		from     string
		wantErr  bool
	}{
		{map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, 2, 4, "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT", false},
		{map[string]string{"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1"}, 3, 4, "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT", false},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8", "SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, 3, 8, "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE", false},
		{map[string]string{"PMI_RANK": "1", "PMI_SIZE": "2"}, 1, 2, "PMI_RANK/PMI_SIZE", false},
		{map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "16"}, 5, 16, "SLURM_PROCID/SLURM_NTASKS", false},
		{map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "4"}, 0, 0, "", true},
		{map[string]string{}, 0, 0, "", true},
	} {
		s, err := ShardFromEnv(func(k string) string { return c.env[k] })
		if (err != nil) != c.wantErr || s.I != c.shard || s.N != c.n || s.From != c.from {
			t.Errorf("%v: got %+v err %v", c.env, s, err)
		}
	}
	if _, err := ParseShard("4/4"); err == nil {
		t.Error("--shard 4/4 accepted")
	}
	if s, err := ParseShard("1/4"); err != nil || s.I != 1 || s.N != 4 {
		t.Errorf("--shard 1/4: %+v %v", s, err)
	}
}
