package main

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

// peakHeapProfile samples the live heap every 100 ms and keeps a heap profile
// taken at its highest point, written to path by the returned stop function:
// the end-of-run profile shows nothing of what pushed the peak RSS.
func peakHeapProfile(path string) (stop func() error) {
	runtime.MemProfileRate = 64 << 10
	done := make(chan struct{})
	finished := make(chan []byte)
	go func() {
		var peak uint64
		var best []byte
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				finished <- best
				return
			case <-t.C:
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak+(4<<20) {
					peak = ms.HeapInuse
					var b bytes.Buffer
					runtime.GC() // the profile's in-use figures are as of the last GC
					if pprof.Lookup("heap").WriteTo(&b, 0) == nil {
						best = b.Bytes()
					}
				}
			}
		}
	}()
	return func() error {
		close(done)
		return os.WriteFile(path, <-finished, 0o644)
	}
}

// startCPUProfile writes a Go CPU profile of the rest of the verb to path
// (--cpuprofile of run, catalog and plan); stop ends it. An empty path
// profiles nothing.
func startCPUProfile(verb, path string) (stop func(), err error) {
	return startRecording(verb, "cpuprofile", path, pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// startTrace writes a Go execution trace of the rest of the verb to path
// (--trace of run): where the goroutines wait, which phases run alone. An
// empty path traces nothing.
func startTrace(verb, path string) (stop func(), err error) {
	return startRecording(verb, "trace", path, trace.Start, trace.Stop)
}

// startRecording starts a recorder of the runtime (start, stop) into a new
// file at path, given by --flag; stop ends it and closes the file. An empty
// path records nothing.
func startRecording(verb, flag, path string, start func(io.Writer) error, end func()) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usagef("%s: --%s: %v", verb, flag, err)
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { end(); f.Close() }, nil
}
