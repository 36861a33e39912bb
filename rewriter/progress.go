package rewriter

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// showProgress polls a Monitor: "json" prints one JSON line per second
// (bytes, rate, ETA, current variable); anything else shows nothing.
// relayout run's own displays (the terminal status line, log lines and
// typed JSON events) are main's progress.go, which reads the same Monitor. The returned stop function prints the final
// state and must be called once the run ends.
func showProgress(mon *Monitor, mode string, w io.Writer) (stop func()) {
	var tick func(final bool)
	every := time.Second
	switch mode {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		tick = func(final bool) {
			p := mon.Progress()
			eta := -1.0
			if d := p.ETA(); d >= 0 {
				eta = d.Seconds()
			}
			_ = enc.Encode(struct {
				Done     int64   `json:"bytes_done"`
				Total    int64   `json:"bytes_total"`
				Variable string  `json:"variable"`
				Rate     float64 `json:"bytes_per_second"`
				ETA      float64 `json:"eta_seconds"` // -1 while unknown
				Elapsed  float64 `json:"elapsed_seconds"`
				Final    bool    `json:"final,omitempty"`
			}{p.Done, p.Total, p.Variable, p.Rate(), eta, p.Elapsed.Seconds(), final})
		}
	default:
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				tick(false)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			tick(true)
		})
	}
}
