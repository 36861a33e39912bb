// Package gen writes synthetic openPMD-HDF5 series (OpenPMDSpec) for the demo,
// tests and benchmarks: every element is a known function of its global index,
// step and component (see ValueRule), so output can be checked without any
// oracle.
//
// It writes through internal/h5 only. It is not on relayout's data path and is
// single-threaded.
package gen
