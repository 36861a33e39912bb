package rewriter

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress displays for relayout run. ShowProgress polls a Monitor: "bar"
// draws a progress bar (bytes, rate, ETA, current variable) on w, meant for
// a terminal; "json" prints one JSON line per second for workflow managers;
// anything else shows nothing. The returned stop function prints the final
// state and must be called once the run ends.
func ShowProgress(mon *Monitor, mode string, w io.Writer) (stop func()) {
	var tick func(final bool)
	every := time.Second
	switch mode {
	case "bar":
		var bar *progressbar.ProgressBar
		last := ""
		tick = func(final bool) {
			p := mon.Progress()
			if bar == nil {
				if p.Total == 0 {
					return
				}
				bar = progressbar.NewOptions64(p.Total,
					progressbar.OptionSetWriter(w),
					progressbar.OptionShowBytes(true),
					progressbar.OptionUseIECUnits(true), // like every other size relayout prints
					progressbar.OptionSetWidth(30),
					progressbar.OptionThrottle(100*time.Millisecond),
					progressbar.OptionShowElapsedTimeOnFinish(),
					progressbar.OptionSetPredictTime(true),
					progressbar.OptionFullWidth(),
					progressbar.OptionClearOnFinish(),
				)
			}
			if p.Variable != last {
				last = p.Variable
				bar.Describe(p.Variable)
			}
			_ = bar.Set64(p.Done)
			if final {
				_ = bar.Finish()
			}
		}
		every = 200 * time.Millisecond
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
