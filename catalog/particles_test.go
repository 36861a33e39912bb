package catalog

import "testing"

func TestParticleRecord(t *testing.T) {
	for _, c := range []struct {
		rel, record string
		scalar      bool
	}{
		{"position/x", "position", false},
		{"weighting", "weighting", true},
		{"id", "id", true},
		{"particlePatches/numParticles", "particlePatches/numParticles", true},
		{"particlePatches/offset/x", "particlePatches/offset", false},
		{"particlePatches", "particlePatches", true},
	} {
		rec, scalar := ParticleRecord(c.rel)
		if rec != c.record || scalar != c.scalar {
			t.Errorf("ParticleRecord(%q) = %q, %v; want %q, %v", c.rel, rec, scalar, c.record, c.scalar)
		}
	}
	if v := ParticleVar("e", "position/x"); v != "particles/e/position/x" {
		t.Errorf("ParticleVar: %q", v)
	}
}
