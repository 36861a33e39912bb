package testkit

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a helper ended the test.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func run(fn func(testing.TB)) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r
}

// TestUnavailable: a missing prerequisite skips with the message, and fails
// under CI=true.
func TestUnavailable(t *testing.T) {
	need := func(tb testing.TB) { NeedTool(tb, "relayout-no-such-tool", "nowhere") }
	t.Setenv("CI", "")
	if r := run(need); !r.skipped || r.failed || !strings.Contains(r.msg, "relayout-no-such-tool (nowhere) not installed") {
		t.Errorf("without CI: skipped %v failed %v %q", r.skipped, r.failed, r.msg)
	}
	t.Setenv("CI", "true")
	if r := run(need); r.skipped || !r.failed || !strings.Contains(r.msg, "CI=true") {
		t.Errorf("CI=true: skipped %v failed %v %q", r.skipped, r.failed, r.msg)
	}
	if r := run(func(tb testing.TB) { NeedPython(tb, "nowhere", "relayout_no_such_module") }); !r.failed {
		t.Errorf("CI=true, missing module: skipped %v failed %v %q", r.skipped, r.failed, r.msg)
	}
	if r := run(func(tb testing.TB) { SharedData(tb, "relayout-no-such-set") }); !r.failed {
		t.Errorf("CI=true, missing data: skipped %v failed %v %q", r.skipped, r.failed, r.msg)
	}
}
