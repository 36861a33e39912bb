// Package testkit holds helpers shared by relayout's tests: locating the real
// datasets in ../shared/data and the peers in ../shared/peers, requiring a
// tool or a Python module, collecting a reader's arrays, assembling arrays
// from their blocks independently of the rewriter, and running the yt oracle.
//
// A test that needs something outside the repository (../shared, a Debian
// tool, a Python module) asks through SharedData, SharedPeer, PeersEnv,
// NeedTool, NeedPython or, for anything else, Unavailable: each skips with a
// message saying what is missing and how to get it, and fails under CI=true
// (GUIDE §4). No test reads CI itself.
//
// Only _test.go files import it.
package testkit
