package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"relayout/rewriter"
)

// startProgress sets up relayout run's progress display (--progress) and
// returns the Monitor to pass to the rewriter with the function that ends
// the display. "bar" draws on stderr; "json" is ev's (events on stdout).
func startProgress(mode string, quiet bool, ev *progressEvents) (*rewriter.Monitor, func(), error) {
	switch mode {
	case "auto":
		mode = "none"
		if !quiet && term.IsTerminal(int(os.Stderr.Fd())) {
			mode = "bar"
		}
	case "bar":
		if quiet {
			mode = "none"
		}
	case "json", "none":
	default:
		return nil, nil, usagef("run: --progress %q: want auto, bar, json or none", mode)
	}
	mon := rewriter.NewMonitor()
	if mode == "json" && ev != nil {
		ev.setMonitor(mon)
		return mon, func() {}, nil
	}
	return mon, rewriter.ShowProgress(mon, mode, os.Stderr), nil
}

// progressSchema names the --progress json event stream (README: "Progress
// events"); fields and event types are only ever added.
const progressSchema = "relayout-progress/1"

// progressEvents is relayout run --progress json: one JSON object per line
// on stdout (human text stays on stderr), each with "type":
//
//	start     schema, input, output                         once, first
//	progress  phase (catalog, rewrite, verify, commit), elapsed_seconds;
//	          in rewrite, once the total is known, also bytes_done,
//	          bytes_total, variable, bytes_per_second, eta_seconds (-1
//	          while unknown)
//	                                                        at every phase change, then every second
//	warning   message                                       a note or skipped objects
//	error     message                                       the run failed
//	summary   status (done, failed, interrupted), elapsed_seconds,
//	          variables, bytes, verified, output            once, last
//
// Seconds are rounded to milliseconds, rates to whole bytes per second.
type progressEvents struct {
	mu      sync.Mutex
	enc     *json.Encoder
	start   time.Time
	phase   string
	mon     *rewriter.Monitor
	stop    chan struct{}
	wg      sync.WaitGroup
	summary map[string]any
}

func newProgressEvents(w io.Writer, in, out string) *progressEvents {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	e := &progressEvents{enc: enc, start: time.Now(), stop: make(chan struct{}), summary: map[string]any{}}
	e.emit("start", map[string]any{"schema": progressSchema, "input": in, "output": out})
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-e.stop:
				return
			case <-t.C:
				e.mu.Lock()
				if e.phase != "" {
					e.progressLocked()
				}
				e.mu.Unlock()
			}
		}
	}()
	return e
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// emit writes one event; the caller does not hold mu.
func (e *progressEvents) emit(typ string, fields map[string]any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.emitLocked(typ, fields)
}

func (e *progressEvents) emitLocked(typ string, fields map[string]any) {
	fields["type"] = typ
	if _, ok := fields["elapsed_seconds"]; !ok {
		fields["elapsed_seconds"] = round3(time.Since(e.start).Seconds())
	}
	_ = e.enc.Encode(fields)
}

func (e *progressEvents) progressLocked() {
	f := map[string]any{"phase": e.phase}
	if p := e.monProgress(); e.phase == "rewrite" && p.Total > 0 {
		eta := -1.0
		if d := p.ETA(); d >= 0 {
			eta = round3(d.Seconds())
		}
		f["bytes_done"], f["bytes_total"], f["variable"] = p.Done, p.Total, p.Variable
		f["bytes_per_second"], f["eta_seconds"] = math.Round(p.Rate()), eta
	}
	e.emitLocked("progress", f)
}

func (e *progressEvents) monProgress() rewriter.Progress {
	if e.mon == nil {
		return rewriter.Progress{}
	}
	return e.mon.Progress()
}

func (e *progressEvents) setMonitor(m *rewriter.Monitor) {
	e.mu.Lock()
	e.mon = m
	e.mu.Unlock()
}

// setPhase starts a phase with a progress event (the previous phase's last
// rewrite figures are sent first, so the stream ends a rewrite at 100%).
func (e *progressEvents) setPhase(p string) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.phase == "rewrite" {
		e.progressLocked()
	}
	e.phase = p
	e.progressLocked()
}

// set records a summary field.
func (e *progressEvents) set(k string, v any) {
	if e == nil {
		return
	}
	e.mu.Lock()
	e.summary[k] = v
	e.mu.Unlock()
}

// finish ends the stream: an error event when err is not nil, then the
// summary. Called once.
func (e *progressEvents) finish(ctx context.Context, err error) {
	if e == nil {
		return
	}
	close(e.stop)
	e.wg.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	status := "done"
	switch {
	case err == nil || errors.Is(err, errHelp):
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		status = "interrupted"
	default:
		status = "failed"
	}
	if err != nil && status != "done" {
		e.emitLocked("error", map[string]any{"message": err.Error()})
	}
	if e.phase == "rewrite" {
		e.progressLocked()
	}
	e.summary["status"] = status
	e.emitLocked("summary", e.summary)
}

// warnings passes w's lines through and sends those starting with "note:"
// or "skipped:" as warning events too.
func (e *progressEvents) warnings(w io.Writer) io.Writer {
	if e == nil {
		return w
	}
	return &warnWriter{w: w, e: e}
}

type warnWriter struct {
	w       io.Writer
	e       *progressEvents
	partial []byte
}

func (ww *warnWriter) Write(p []byte) (int, error) {
	n, err := ww.w.Write(p)
	ww.partial = append(ww.partial, p...)
	for {
		i := bytes.IndexByte(ww.partial, '\n')
		if i < 0 {
			break
		}
		line := string(ww.partial[:i])
		ww.partial = ww.partial[i+1:]
		for _, pre := range []string{"note: ", "skipped: "} {
			if len(line) > len(pre) && line[:len(pre)] == pre {
				ww.e.emit("warning", map[string]any{"message": line})
			}
		}
	}
	return n, err
}
