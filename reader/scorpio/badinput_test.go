package scorpio

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// copySample copies the io16 set's .nc.bp directory (uncompressed) into a
// writable temporary folder and returns its path.
func copySample(t *testing.T) string {
	t.Helper()
	src := filepath.Join(testkit.SharedData(t, "scorpio/adios-io16"), sample+".bp")
	dst := filepath.Join(t.TempDir(), sample+".bp")
	testkit.CopyTree(t, src, dst)
	return dst
}

func patch(t *testing.T, file string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		if err := os.Chmod(file, 0o644); err != nil {
			t.Fatal(err)
		}
		if f, err = os.OpenFile(file, os.O_WRONLY, 0); err != nil {
			t.Fatal(err)
		}
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func wantCorrupt(t *testing.T, err error, parts ...string) {
	t.Helper()
	if !errors.Is(err, catalog.ErrCorrupt) {
		t.Fatalf("error %v, want ErrCorrupt", err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not say %q", err, p)
		}
	}
}

// TestCorruptDecomposition: a map entry out of range and a destination
// mapped twice, written into data.0, are refused naming the decomposition,
// block and entry.
func TestCorruptDecomposition(t *testing.T) {
	for _, c := range []struct {
		name  string
		entry int64
		want  string
	}{
		{"out of range", 99999, "decomposition 512 block 3 entry 5: map entry 99999 outside 866 elements"},
		{"duplicate", -1, "already mapped by block"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copySample(t)
			d, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			dc := d.decomps[512]
			b := dc.blocks[3]
			e := c.entry
			if e < 0 { // the entry of block 0's first slot: element 0 twice
				e = 1
			}
			patch(t, filepath.Join(dir, b.File), b.Offset+5*8, binary.LittleEndian.AppendUint64(nil, uint64(e)))
			_, err = d.Plan(context.Background(), 512)
			wantCorrupt(t, err, c.want, "/__pio__/decomp/512")
			v := d.Var("PS")
			err = d.ReadWrite(context.Background(), v, &v.Writes[0], make([]byte, 866*8), nil)
			wantCorrupt(t, err, "decomposition 512") // the plan's error, cached
		})
	}
}

// TestMissingDecomposition: a write naming a decomposition that does not
// exist, and a file whose decompositions were not stored, are refused by
// name at Open.
func TestMissingDecomposition(t *testing.T) {
	dir := copySample(t)
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The decomp_id track of PS: one block of 3 int32 (512 each).
	var blk *catalog.Block
	err = d.bp.Scan(context.Background(), func(x *catalog.Array) error {
		if x.Var == pfxDID+"PS" {
			blk = &x.Blocks[0]
		}
		return nil
	})
	if err != nil || blk == nil {
		t.Fatal(err, blk)
	}
	d.Close()
	patch(t, filepath.Join(dir, blk.File), blk.Offset+4, binary.LittleEndian.AppendUint32(nil, 999))
	_, err = Open(dir)
	wantCorrupt(t, err, `variable "PS" step 0 write 1 (frame 1): decomposition 999 does not exist`)

	// decomp_stored 0 (the samples store them): the variable pass refuses
	// the darray variables by name.
	d2 := openSample(t, "adios-io16", false)
	d2.stored = false
	v := &Var{Name: "PS", Kind: Darray, Type: catalog.DType{Kind: catalog.Float, Size: 8}}
	err = d2.darrayWrites(context.Background(), v, []*catalog.Array{{Var: pfxVar + "PS"}}, nil)
	wantCorrupt(t, err, `variable "PS"`, "decompositions were not stored", "decomp_stored")
}

// TestTruncated: md.0 cut short, and data.0 cut short, end in ErrCorrupt
// naming the file.
func TestTruncated(t *testing.T) {
	dir := copySample(t)
	md := filepath.Join(dir, "md.0")
	if err := os.Chmod(md, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(md, 20000); err != nil {
		t.Fatal(err)
	}
	_, err := Open(filepath.Join(filepath.Dir(dir), sample))
	wantCorrupt(t, err, "md.0")

	dir = copySample(t)
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	data := filepath.Join(dir, "data.0")
	if err := os.Chmod(data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(data, 1000); err != nil {
		t.Fatal(err)
	}
	v := d.Var("U")
	err = d.ReadWrite(context.Background(), v, &v.Writes[2], make([]byte, 62352*8), nil)
	if err == nil || !strings.Contains(err.Error(), "data.0") {
		t.Fatalf("truncated data.0: %v", err)
	}
}

// TestNotSCORPIO: a plain BP5 directory and a missing path are not SCORPIO.
func TestNotSCORPIO(t *testing.T) {
	plain := testkit.SharedData(t, "bp5/generated-lb")
	matches, _ := filepath.Glob(filepath.Join(plain, "*.bp"))
	for _, p := range append(matches, "/nonexistent/x.nc") {
		if Is(p) {
			t.Errorf("Is(%s)", p)
		}
		if _, err := Open(p); !errors.Is(err, catalog.ErrUnsupported) {
			t.Errorf("Open(%s): %v, want ErrUnsupported", p, err)
		}
	}
	if !Is(filepath.Join(testkit.SharedData(t, "scorpio/adios-io16"), sample)) {
		t.Error("Is: the .nc symlink of a SCORPIO set")
	}
}
