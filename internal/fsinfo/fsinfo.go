package fsinfo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Kind is the class of file system that matters for layout decisions.
type Kind string

const (
	Lustre Kind = "lustre"
	GPFS   Kind = "gpfs"
	BeeGFS Kind = "beegfs"
	NFS    Kind = "nfs"
	Local  Kind = "local"
)

// statfs f_type magic numbers (Lustre, GPFS and BeeGFS are not in the
// kernel headers).
const (
	LustreMagic = 0x0BD00BD0
	GPFSMagic   = 0x47504653 // "GPFS"
	BeeGFSMagic = 0x19830326
	NFSMagic    = 0x6969
)

var localNames = map[uint32]string{
	0xEF53: "ext4", 0x58465342: "xfs", 0x01021994: "tmpfs", 0x9123683E: "btrfs",
	0x2FC12FC1: "zfs", 0x794C7630: "overlayfs", 0x65735546: "fuse", 0x00C36400: "ceph",
	0xFF534D42: "cifs", 0xFE534D42: "smb2", 0x01161970: "gfs2", 0xAAD7AAEA: "panfs",
}

// Info describes the file system of a directory.
type Info struct {
	Kind      Kind   `json:"kind"`
	Name      string `json:"name"`       // "lustre", "gpfs", "ext4", "tmpfs", or "0x…" when unknown
	Magic     uint32 `json:"magic"`      // statfs f_type
	BlockSize int64  `json:"block_size"` // statfs f_bsize
	Path      string `json:"path"`       // the directory examined (nearest existing ancestor)
}

// Classify maps a statfs f_type and f_bsize to an Info.
func Classify(magic uint32, bsize int64) Info {
	in := Info{Magic: magic, BlockSize: bsize, Kind: Local}
	switch magic {
	case LustreMagic:
		in.Kind, in.Name = Lustre, "lustre"
	case GPFSMagic:
		in.Kind, in.Name = GPFS, "gpfs"
	case BeeGFSMagic:
		in.Kind, in.Name = BeeGFS, "beegfs"
	case NFSMagic:
		in.Kind, in.Name = NFS, "nfs"
	default:
		in.Name = localNames[magic]
		if in.Name == "" {
			in.Name = fmt.Sprintf("0x%X", magic)
		}
	}
	return in
}

// Detect classifies the file system holding path, or its nearest existing
// ancestor when path does not exist yet.
func Detect(path string) (Info, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Info{}, fmt.Errorf("fsinfo: %s: %w", path, err)
	}
	for cur := abs; ; cur = filepath.Dir(cur) {
		magic, bsize, err := statfs(cur)
		if err == nil {
			in := Classify(magic, bsize)
			in.Path = cur
			return in, nil
		}
		if !errors.Is(err, os.ErrNotExist) || cur == filepath.Dir(cur) {
			return Info{}, fmt.Errorf("fsinfo: statfs %s: %w", cur, err)
		}
	}
}

// Override holds the user's explicit choices; zero values leave the
// heuristic in charge.
type Override struct {
	StripeCount    int   // > 0: stripes per file (Lustre only)
	StripeSize     int64 // > 0: bytes per stripe, a multiple of 64 KiB (Lustre only)
	NoStripe       bool  // keep the directory's default striping (Lustre)
	Align          int64 // > 0: HDF5 alignment on any file system
	AlignThreshold int64 // > 0: with Align, the smallest object aligned (default Align/2)
}

// Lustre limits (lustre_user.h).
const (
	MinStripeSize  = 64 << 10 // LOV_MIN_STRIPE_SIZE; sizes are multiples of it
	MaxStripeCount = 2000     // LOV_MAX_STRIPE_COUNT
)

// Check validates an override.
func (o Override) Check() error {
	switch {
	case o.StripeCount < 0 || o.StripeCount > MaxStripeCount:
		return fmt.Errorf("stripe count %d: want 1-%d", o.StripeCount, MaxStripeCount)
	case o.StripeSize < 0 || o.StripeSize%MinStripeSize != 0 || o.StripeSize > 4<<30-MinStripeSize:
		return fmt.Errorf("stripe size %d: want a multiple of 64 KiB below 4 GiB", o.StripeSize)
	case o.Align < 0 || o.AlignThreshold < 0:
		return fmt.Errorf("alignment %d threshold %d: want positive sizes", o.Align, o.AlignThreshold)
	case o.AlignThreshold > 0 && o.Align == 0:
		return fmt.Errorf("an alignment threshold needs an alignment")
	case o.NoStripe && (o.StripeCount > 0 || o.StripeSize > 0):
		return fmt.Errorf("no-stripe contradicts an explicit stripe count or size")
	}
	return nil
}

// Decision is what relayout does for one output file.
type Decision struct {
	FS             Info   `json:"fs"`
	StripeCount    int    `json:"stripe_count,omitempty"` // 0: striping untouched
	StripeSize     int64  `json:"stripe_size,omitempty"`
	Alignment      int64  `json:"alignment,omitempty"` // 0: HDF5 default (no alignment)
	AlignThreshold int64  `json:"align_threshold,omitempty"`
	Reason         string `json:"reason"`
}

// Striped reports whether the file's stripes are to be set.
func (d Decision) Striped() bool { return d.StripeCount > 0 }

func (d Decision) String() string {
	s := fmt.Sprintf("%s (%s)", d.FS.Kind, d.FS.Name)
	if d.Striped() {
		s += fmt.Sprintf(": %d stripe(s) of %s", d.StripeCount, Size(d.StripeSize))
	} else {
		s += ": striping untouched"
	}
	if d.Alignment > 0 {
		s += fmt.Sprintf(", HDF5 alignment %s for objects >= %s", Size(d.Alignment), Size(d.AlignThreshold))
	} else {
		s += ", no HDF5 alignment"
	}
	return s + " — " + d.Reason
}

// Size prints a byte count in binary units when exact ("1 MiB"), else bytes.
func Size(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return fmt.Sprintf("%d %s", n/u.m, u.s)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// Stripe size and count tiers of the heuristic (see the package comment).
const (
	defaultStripeSize = 1 << 20
	largeStripeSize   = 4 << 20
	largeFile         = 64 << 30
)

// stripeTier is the stripe count for a file of n bytes.
func stripeTier(n int64) int {
	switch {
	case n < 1<<30:
		return 1
	case n < 10<<30:
		return 8
	case n < 100<<30:
		return 24
	}
	return 72
}

// DecideFile is Decide for one of relayout's output files, of fileBytes
// logical bytes on fs: relayout run applies it and relayout plan prints it.
// Each is written by one process (a job writes the variables one after
// another), so the writer count is 1; an Info of no kind is a local file
// system of unknown name.
func DecideFile(fs Info, fileBytes int64, ov Override) Decision {
	if fs.Kind == "" {
		fs.Kind, fs.Name = Local, "unknown"
	}
	return Decide(fs, fileBytes, 1, ov)
}

// Decide chooses the layout of one output file of about fileBytes bytes,
// written by writers processes at once, on file system fs. Pure.
func Decide(fs Info, fileBytes int64, writers int, ov Override) Decision {
	d := Decision{FS: fs}
	writers = max(writers, 1)
	switch fs.Kind {
	case Lustre:
		if ov.NoStripe {
			d.Reason = "--no-stripe: the directory's default layout is kept"
			d.Alignment = defaultStripeSize
			break
		}
		size := int64(defaultStripeSize)
		if fileBytes >= largeFile {
			size = largeStripeSize
		}
		why := "heuristic"
		if ov.StripeSize > 0 {
			size, why = ov.StripeSize, "--stripe-size"
		}
		count := max(stripeTier(fileBytes), writers)
		count = min(count, int(max((fileBytes+size-1)/size, 1)), MaxStripeCount)
		if ov.StripeCount > 0 {
			count = ov.StripeCount
			if why == "heuristic" {
				why = "--stripe-count"
			} else {
				why += " and --stripe-count"
			}
		}
		d.StripeCount, d.StripeSize, d.Alignment = count, size, size
		d.Reason = fmt.Sprintf("%s for a %s file written by %d process(es)", why, approx(fileBytes), writers)
	case GPFS:
		d.Reason = "GPFS: aligned to its block size"
		if fs.BlockSize >= MinStripeSize {
			d.Alignment = fs.BlockSize
		} else {
			d.Reason = "GPFS with a block size below 64 KiB: nothing to align to"
		}
	default:
		d.Reason = "not a striped file system: nothing attempted"
	}
	if ov.Align > 0 {
		d.Alignment = ov.Align
		d.Reason += "; aligned as --align asks"
	}
	if d.Alignment > 0 {
		d.AlignThreshold = max(d.Alignment/2, 1)
		if ov.Align > 0 && ov.AlignThreshold > 0 {
			d.AlignThreshold = ov.AlignThreshold
		}
	}
	if fs.Kind != Lustre && (ov.StripeCount > 0 || ov.StripeSize > 0 || ov.NoStripe) {
		d.Reason += "; --stripe-* ignored (not Lustre)"
	}
	return d
}

// approx prints n bytes roughly ("3.2 GiB").
func approx(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
