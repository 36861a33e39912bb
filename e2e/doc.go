// Package e2e runs the built relayout binary against the real datasets in
// ../shared/data, and against data written during the test by real peers
// (ADIOS 1.x through MPI: testdata/adios1/write_bp3.py), and checks its output
// with independent peers: h5py (oracle.py), ADIOS 1.x's bpls (bpls_oracle.py)
// and h5dump. It has no non-test code; its benchmarks (the 100,000-block
// catalog) run with `go test ./e2e -run '^$' -bench .`.
package e2e
