// Package e2e runs the built relayout binary against the real datasets in
// ../shared/data and checks its output with independent peers: h5py (oracle.py)
// and h5dump. It has no non-test code.
package e2e
