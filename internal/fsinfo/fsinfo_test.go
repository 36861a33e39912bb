package fsinfo

import (
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		magic uint32
		kind  Kind
		name  string
	}{
		{0x0BD00BD0, Lustre, "lustre"}, {0x47504653, GPFS, "gpfs"}, {0x19830326, BeeGFS, "beegfs"},
		{0x6969, NFS, "nfs"}, {0xEF53, Local, "ext4"}, {0x01021994, Local, "tmpfs"}, {0x12345678, Local, "0x12345678"},
	} {
		if in := Classify(c.magic, 4096); in.Kind != c.kind || in.Name != c.name {
			t.Errorf("Classify(%#x) = %s/%s, want %s/%s", c.magic, in.Kind, in.Name, c.kind, c.name)
		}
	}
}

func TestDetectNonexistentUsesAncestor(t *testing.T) {
	dir := t.TempDir()
	in, err := Detect(filepath.Join(dir, "not", "yet"))
	if err != nil {
		t.Fatal(err)
	}
	if in.Path != dir || in.BlockSize <= 0 {
		t.Errorf("Detect: %+v, want path %s and a block size", in, dir)
	}
}

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

func TestDecideLustreHeuristic(t *testing.T) {
	lustre := Classify(LustreMagic, 4096)
	for _, c := range []struct {
		bytes   int64
		writers int
		count   int
		size    int64
	}{
		{0, 1, 1, mib},
		{100 * kib, 1, 1, mib},
		{512 * mib, 1, 1, mib},
		{3 * mib, 8, 3, mib}, // writers want 8, but the file has only 3 stripes' worth
		{512 * mib, 16, 16, mib},
		{gib, 1, 8, mib},
		{10*gib - 1, 1, 8, mib},
		{10 * gib, 1, 24, mib},
		{63 * gib, 1, 24, mib},
		{64 * gib, 1, 24, 4 * mib},
		{100 * gib, 1, 72, 4 * mib},
		{100 * gib, 100, 100, 4 * mib},
		{1 << 50, 5000, MaxStripeCount, 4 * mib},
	} {
		d := Decide(lustre, c.bytes, c.writers, Override{})
		if d.StripeCount != c.count || d.StripeSize != c.size || d.Alignment != c.size || d.AlignThreshold != c.size/2 {
			t.Errorf("Decide(lustre, %d bytes, %d writers) = %+v, want %d x %d aligned", c.bytes, c.writers, d, c.count, c.size)
		}
	}
}

func TestDecideOverridesAndOtherFileSystems(t *testing.T) {
	lustre := Classify(LustreMagic, 4096)
	d := Decide(lustre, 50*gib, 1, Override{StripeCount: 4, StripeSize: 2 * mib})
	if d.StripeCount != 4 || d.StripeSize != 2*mib || d.Alignment != 2*mib || !strings.Contains(d.Reason, "--stripe-size and --stripe-count") {
		t.Errorf("overrides: %+v", d)
	}
	d = Decide(lustre, 50*gib, 1, Override{NoStripe: true})
	if d.Striped() || d.Alignment != mib {
		t.Errorf("--no-stripe: %+v", d)
	}
	d = Decide(Classify(GPFSMagic, 8*mib), 50*gib, 4, Override{})
	if d.Striped() || d.Alignment != 8*mib || d.AlignThreshold != 4*mib {
		t.Errorf("gpfs: %+v", d)
	}
	for _, m := range []uint32{BeeGFSMagic, NFSMagic, 0xEF53, 0x01021994} {
		d := Decide(Classify(m, 4096), 500*gib, 64, Override{StripeCount: 8})
		if d.Striped() || d.Alignment != 0 || !strings.Contains(d.Reason, "ignored") {
			t.Errorf("%#x: %+v, want nothing attempted", m, d)
		}
	}
	d = Decide(Classify(0x01021994, 4096), mib, 1, Override{Align: mib, AlignThreshold: 4 * kib})
	if d.Striped() || d.Alignment != mib || d.AlignThreshold != 4*kib {
		t.Errorf("--align on tmpfs: %+v", d)
	}
	if !strings.Contains(Decide(lustre, gib, 1, Override{}).String(), "8 stripe(s) of 1 MiB") {
		t.Errorf("String: %s", Decide(lustre, gib, 1, Override{}))
	}
}

func TestOverrideCheck(t *testing.T) {
	good := []Override{{}, {StripeCount: 8, StripeSize: 4 * mib}, {Align: mib}, {NoStripe: true}}
	bad := []Override{{StripeCount: -1}, {StripeCount: 2001}, {StripeSize: 100 * kib}, {StripeSize: 4 * gib},
		{AlignThreshold: 5}, {NoStripe: true, StripeCount: 2}}
	for _, o := range good {
		if err := o.Check(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	for _, o := range bad {
		if o.Check() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// TestLovUserMdV1Layout pins the byte layout of the ioctl argument.
func TestLovUserMdV1Layout(t *testing.T) {
	b, err := EncodeLovUserMdV1(8, 4*mib, binary.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	want := "d00bd10b" + "01000000" + // magic, pattern RAID0
		"00000000000000000000000000000000" + // lmm_oi
		"00004000" + "0800" + "ffff" // stripe size 4 MiB, count 8, offset any
	if got := hex.EncodeToString(b[:]); got != want {
		t.Errorf("little-endian lov_user_md_v1:\n got %s\nwant %s", got, want)
	}
	b, _ = EncodeLovUserMdV1(2000, 64*kib, binary.BigEndian)
	if got := hex.EncodeToString(b[:]); got != "0bd10bd0"+"00000001"+strings.Repeat("00", 16)+"00010000"+"07d0"+"ffff" {
		t.Errorf("big-endian lov_user_md_v1: %s", got)
	}
	for _, c := range []struct {
		count int
		size  int64
	}{{0, mib}, {2001, mib}, {1, 0}, {1, 100 * kib}, {1, 4 * gib}} {
		if _, err := EncodeLovUserMdV1(c.count, c.size, binary.LittleEndian); err == nil {
			t.Errorf("EncodeLovUserMdV1(%d, %d) accepted", c.count, c.size)
		}
	}
}

func TestIoctlNumber(t *testing.T) {
	if got := iow(1, 30, 'f', 154, 8); got != 0x4008669A {
		t.Errorf("x86-64 LL_IOC_LOV_SETSTRIPE = %#x, want 0x4008669A", got)
	}
	if got := iow(4, 29, 'f', 154, 8); got != 0x8008669A {
		t.Errorf("ppc64 LL_IOC_LOV_SETSTRIPE = %#x, want 0x8008669A", got)
	}
	if got := iow(1, 30, 'f', 155, 8); got != 0x4008669B {
		t.Errorf("LL_IOC_LOV_GETSTRIPE = %#x", got)
	}
	if runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" || runtime.GOARCH == "riscv64") &&
		llIocLovSetstripe != 0x4008669A {
		t.Errorf("llIocLovSetstripe = %#x on %s", llIocLovSetstripe, runtime.GOARCH)
	}
}

// TestSetStripeOffLustre: the ioctl fails (ENOTTY) on a non-Lustre file
// system, the file is created and stays usable.
func TestSetStripeOffLustre(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	dir := t.TempDir()
	if in, _ := Detect(dir); in.Kind == Lustre {
		t.Skip("temporary directory is on Lustre")
	}
	p := filepath.Join(dir, "f")
	if err := SetStripe(p, 2, mib); err == nil || !strings.Contains(err.Error(), "LL_IOC_LOV_SETSTRIPE") {
		t.Errorf("SetStripe off Lustre: %v", err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Errorf("file unusable after a failed SetStripe: %v", err)
	}
	if err := SetStripe(p, 2, mib); err == nil {
		t.Error("SetStripe on an existing file succeeded (must be O_EXCL)")
	}
}
