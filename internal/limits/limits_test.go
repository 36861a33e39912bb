package limits

import (
	"strings"
	"testing"
)

// TestFor: the limits of budgets of 64 MiB to 8 GiB for 1, 2 and 8 jobs are
// those the rewriter's Options methods and the verifier's slots computed
// before Limits (the literals were printed by them), each positive and
// ordered as the rewriter and the verifier rely on.
func TestFor(t *testing.T) {
	const MiB, GiB = 1 << 20, 1 << 30
	for _, c := range []struct {
		mem  int64
		jobs int
		want Limits
	}{
		{64 * MiB, 1, Limits{Share: 16777216, ReadLimit: 4194304, UnitTarget: 12582912, UnitLimit: 29360128, JoinLimit: 29360128, ItemLimit: 16777216, BandAllowance: 8388608, VerifySlots: 1, VerifyShare: 67108864, VerifyJointRows: 6710886}},
		{64 * MiB, 2, Limits{Share: 11184810, ReadLimit: 2796202, UnitTarget: 8388608, UnitLimit: 19573419, JoinLimit: 30758230, ItemLimit: 16777216, BandAllowance: 8388608, VerifySlots: 2, VerifyShare: 33554432, VerifyJointRows: 6710886}},
		{64 * MiB, 8, Limits{Share: 3728270, ReadLimit: 932067, UnitTarget: 2796203, UnitLimit: 6524473, JoinLimit: 32622365, ItemLimit: 16777216, BandAllowance: 8388608, VerifySlots: 2, VerifyShare: 33554432, VerifyJointRows: 6710886}},
		{256 * MiB, 1, Limits{Share: 67108864, ReadLimit: 16777216, UnitTarget: 33554432, UnitLimit: 117440512, JoinLimit: 117440512, ItemLimit: 67108864, BandAllowance: 33554432, VerifySlots: 1, VerifyShare: 268435456, VerifyJointRows: 26843545}},
		{256 * MiB, 2, Limits{Share: 44739242, ReadLimit: 11184810, UnitTarget: 33554432, UnitLimit: 78293675, JoinLimit: 123032918, ItemLimit: 67108864, BandAllowance: 33554432, VerifySlots: 2, VerifyShare: 134217728, VerifyJointRows: 26843545}},
		{256 * MiB, 8, Limits{Share: 14913080, ReadLimit: 3728270, UnitTarget: 11184810, UnitLimit: 26097891, JoinLimit: 130489458, ItemLimit: 67108864, BandAllowance: 33554432, VerifySlots: 4, VerifyShare: 67108864, VerifyJointRows: 26843545}},
		{1 * GiB, 1, Limits{Share: 268435456, ReadLimit: 16777216, UnitTarget: 33554432, UnitLimit: 520093696, JoinLimit: 520093696, ItemLimit: 67108864, BandAllowance: 134217728, VerifySlots: 1, VerifyShare: 1073741824, VerifyJointRows: 107374182}},
		{1 * GiB, 2, Limits{Share: 178956970, ReadLimit: 16777216, UnitTarget: 33554432, UnitLimit: 341136725, JoinLimit: 520093696, ItemLimit: 67108864, BandAllowance: 134217728, VerifySlots: 2, VerifyShare: 536870912, VerifyJointRows: 107374182}},
		{1 * GiB, 8, Limits{Share: 59652323, ReadLimit: 14913080, UnitTarget: 33554432, UnitLimit: 104391567, JoinLimit: 521957832, ItemLimit: 67108864, BandAllowance: 134217728, VerifySlots: 4, VerifyShare: 268435456, VerifyJointRows: 107374182}},
		{8 * GiB, 1, Limits{Share: 2147483648, ReadLimit: 16777216, UnitTarget: 33554432, UnitLimit: 4278190080, JoinLimit: 4278190080, ItemLimit: 67108864, BandAllowance: 1073741824, VerifySlots: 1, VerifyShare: 8589934592, VerifyJointRows: 858993459}},
		{8 * GiB, 2, Limits{Share: 1431655765, ReadLimit: 16777216, UnitTarget: 33554432, UnitLimit: 2846534314, JoinLimit: 4278190080, ItemLimit: 67108864, BandAllowance: 1073741824, VerifySlots: 2, VerifyShare: 4294967296, VerifyJointRows: 858993459}},
		{8 * GiB, 8, Limits{Share: 477218588, ReadLimit: 16777216, UnitTarget: 33554432, UnitLimit: 937659960, JoinLimit: 4278190080, ItemLimit: 67108864, BandAllowance: 1073741824, VerifySlots: 4, VerifyShare: 2147483648, VerifyJointRows: 858993459}},
	} {
		want := c.want
		want.MaxMem, want.Jobs, want.TileTarget, want.TileLimit, want.CoordBytes = c.mem, c.jobs, 8*MiB, 16*MiB, c.mem/4
		got := For(c.mem, c.jobs)
		if got != want {
			t.Errorf("For(%d, %d) =\n%+v, want\n%+v", c.mem, c.jobs, got, want)
		}
		checkOrder(t, got)
		capped := got.CapUnits(4 * MiB)
		checkOrder(t, capped)
		if capped.UnitTarget > 4*MiB || capped.TileLimit > 4*MiB || capped.UnitCap != 4*MiB {
			t.Errorf("For(%d, %d).CapUnits(4 MiB) = %+v", c.mem, c.jobs, capped)
		}
	}
}

// checkOrder checks that every limit is positive and that they nest as the
// code relies on.
func checkOrder(t *testing.T, l Limits) {
	t.Helper()
	for _, f := range []struct {
		name string
		v    int64
	}{{"Share", l.Share}, {"ReadLimit", l.ReadLimit}, {"UnitTarget", l.UnitTarget}, {"UnitLimit", l.UnitLimit},
		{"JoinLimit", l.JoinLimit}, {"TileTarget", l.TileTarget}, {"TileLimit", l.TileLimit}, {"ItemLimit", l.ItemLimit},
		{"BandAllowance", l.BandAllowance}, {"CoordBytes", l.CoordBytes}, {"VerifySlots", int64(l.VerifySlots)}, {"VerifyShare", l.VerifyShare},
		{"VerifyJointRows", l.VerifyJointRows}} {
		if f.v <= 0 {
			t.Errorf("%+v: %s %d", l, f.name, f.v)
		}
	}
	for _, o := range []struct {
		what string
		ok   bool
	}{
		{"ReadLimit <= Share", l.ReadLimit <= l.Share},
		{"ReadLimit <= MaxReadLimit", l.ReadLimit <= MaxReadLimit},
		{"UnitTarget+ReadLimit <= Share", l.UnitTarget+l.ReadLimit <= l.Share},
		{"UnitTarget <= MaxSlabBytes", l.UnitTarget <= MaxSlabBytes},
		{"UnitTarget <= UnitLimit", l.UnitTarget <= l.UnitLimit},
		{"UnitLimit <= JoinLimit", l.UnitLimit <= l.JoinLimit},
		{"UnitLimit+ReadLimit fit Jobs+1 times", int64(l.Jobs+1)*(l.UnitLimit+l.ReadLimit) <= l.MaxMem || l.UnitLimit == l.UnitTarget},
		{"JoinLimit+ReadLimit fit twice", 2*(l.JoinLimit+l.ReadLimit) <= l.MaxMem || l.JoinLimit == l.UnitLimit},
		{"UnitTarget <= ItemLimit", l.UnitTarget <= l.ItemLimit},
		{"ItemLimit <= MaxMem", l.ItemLimit <= l.MaxMem},
		{"BandAllowance <= MaxMem/8", l.BandAllowance <= l.MaxMem/8},
		{"BandAllowance+ItemLimit+2*Jobs*ReadLimit <= MaxMem", l.BandAllowance+l.ItemLimit+2*int64(l.Jobs)*l.ReadLimit <= l.MaxMem},
		{"TileTarget <= TileLimit", l.TileTarget <= l.TileLimit || l.UnitCap > 0},
		{"VerifySlots <= VerifyMaxInFlight", l.VerifySlots <= VerifyMaxInFlight && l.VerifySlots <= max(l.Jobs, 1)},
		{"VerifyShare*VerifySlots <= MaxMem", l.VerifyShare*int64(l.VerifySlots) <= l.MaxMem},
	} {
		if !o.ok {
			t.Errorf("%+v: not %s", l, o.what)
		}
	}
}

// TestForDefaults: unset budgets are the defaults, and a tiny budget still
// gives limits of at least one byte.
func TestForDefaults(t *testing.T) {
	l := For(0, 0)
	if l.MaxMem != DefaultMaxMem || l.Jobs < 1 {
		t.Errorf("For(0, 0) = %+v", l)
	}
	for _, mem := range []int64{1, 7, 1000} {
		l := For(mem, 3)
		if l.Share < 1 || l.ReadLimit < 1 || l.UnitTarget < 1 || l.VerifySlots != 1 || l.VerifyShare != mem {
			t.Errorf("For(%d, 3) = %+v", mem, l)
		}
	}
}

// TestCapUnits: a cap equals the limits the rewriter computed with its
// unitCap (the same literals' source), and the cap is in the -v line.
func TestCapUnits(t *testing.T) {
	l := For(1<<30, 2).CapUnits(1000)
	if l.UnitTarget != 1000 || l.UnitLimit != 1000 || l.JoinLimit != 1000 || l.TileLimit != 1000 ||
		l.ItemLimit != 64<<20 || l.BandAllowance != 128<<20 {
		t.Errorf("CapUnits(1000) = %+v", l)
	}
	if l2 := For(1<<30, 2).CapUnits(0); l2 != For(1<<30, 2) {
		t.Errorf("CapUnits(0) = %+v", l2)
	}
	s := l.String()
	for _, w := range []string{"budget 1 GiB, 2 jobs", "units of 1000 B", "work units up to 1000 B", "verify: 2 arrays at once, 512 MiB each"} {
		if !strings.Contains(s, w) {
			t.Errorf("%q lacks %q", s, w)
		}
	}
}
