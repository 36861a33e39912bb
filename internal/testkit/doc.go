// Package testkit holds helpers shared by relayout's tests: locating the real
// datasets in ../shared/data, collecting a reader's arrays, assembling arrays
// from their blocks independently of the rewriter, and running the yt oracle.
// Only _test.go files import it.
package testkit
