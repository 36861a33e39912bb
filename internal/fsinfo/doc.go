// Package fsinfo tells which file system an output directory lives on and
// decides, as a pure function, how relayout lays files out there: the Lustre
// stripe count and size of each output file and the HDF5 alignment of large
// objects (see ../../../shared/specs/lustre-gpfs.md).
//
// Detect calls statfs(2) and classifies f_type: Lustre 0x0BD00BD0, GPFS
// 0x47504653, BeeGFS 0x19830326, NFS 0x6969; everything else is "local"
// (with its own name, e.g. ext4, xfs, tmpfs, when known). Decide is pure:
// relayout run applies its result and relayout plan prints it.
//
// # Heuristic (Decide)
//
// Lustre — each output file is written by one relayout process and read
// later by many, so stripes come from the file's size (the NERSC tiers for a
// shared file), raised to the number of processes writing the file:
//
//	file size      < 1 GiB   < 10 GiB   < 100 GiB   >= 100 GiB
//	stripe count   1         8          24          72
//
// count = max(tier, writers), never more stripes than the file has
// stripe-size pieces, and at most 2000 (LOV_MAX_STRIPE_COUNT); Lustre uses
// fewer when it has fewer OSTs. Stripe size is 1 MiB, 4 MiB from 64 GiB on
// (1-4 MiB is the documented sweet spot; a multiple of 64 KiB). HDF5
// allocations (contiguous data, chunks) of at least half a stripe are
// aligned to the stripe size, so no such object straddles more stripe
// boundaries than it must, while smaller objects stay packed (the space lost
// to alignment is below the size of the objects aligned).
// --stripe-count/--stripe-size replace the heuristic's values; --no-stripe
// keeps the directory's default layout (sites with progressive file layouts
// ask for that), and still aligns to 1 MiB.
//
// GPFS — no striping exists; allocations of at least half a block are
// aligned to the file-system block size (statfs f_bsize).
//
// BeeGFS, NFS and local file systems — nothing is attempted.
//
// Override.Align forces an HDF5 alignment on any file system (for tests and
// for file systems relayout does not recognise).
//
// Setting the stripes (SetStripe) uses the LL_IOC_LOV_SETSTRIPE ioctl on a
// file created with O_LOV_DELAY_CREATE, with a lov_user_md_v1 encoded here
// (EncodeLovUserMdV1); no liblustreapi. The package does no cgo.
package fsinfo
