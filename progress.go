package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"relayout/rewriter"
)

// progressMode resolves --progress: auto is a live status line ("bar") when
// stderr is a terminal, else plain lines ("lines") for batch logs; -q turns
// both off (json stays: it goes to stdout).
func progressMode(mode string, quiet bool) (string, error) {
	switch mode {
	case "auto":
		switch {
		case quiet:
			return "none", nil
		case term.IsTerminal(int(os.Stderr.Fd())):
			return "bar", nil
		}
		return "lines", nil
	case "bar":
		if quiet {
			return "none", nil
		}
		return mode, nil
	case "json", "none":
		return mode, nil
	}
	return "", usagef("run: --progress %q: want auto, bar, json or none", mode)
}

// statusDisplay is relayout run's human progress on stderr. On a terminal
// ("bar") it is one status line — phase, bytes done of total, percent,
// rate, ETA and the variable being written — redrawn in place five times a
// second; every log line is printed above it (the line is cleared first and
// redrawn after), so log lines never break it, and it is cleared at the
// end, leaving run's "done:" line as the summary. Elsewhere ("lines") it
// prints a plain "progress:" line at every phase change, at the end of the
// rewrite, and every --stats interval, for batch logs.
type statusDisplay struct {
	mu         sync.Mutex
	w          io.Writer
	tty        bool
	width      int
	phase      string
	phaseStart time.Time
	mon        *rewriter.Monitor
	shown      bool // the status line is on the screen (tty)
	stop       chan struct{}
	wg         sync.WaitGroup
	partial    bool // the last log write did not end a line
}

// newStatusDisplay starts the display; every is the interval of plain lines
// (0: none but those of phase changes).
func newStatusDisplay(w *os.File, tty bool, every time.Duration) *statusDisplay {
	d := &statusDisplay{w: w, tty: tty, width: 100, stop: make(chan struct{})}
	if width, _, err := term.GetSize(int(w.Fd())); err == nil && width > 20 {
		d.width = width
	}
	if tty {
		every = 200 * time.Millisecond
	}
	if every <= 0 {
		return d
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-d.stop:
				return
			case <-t.C:
				d.mu.Lock()
				d.showLocked()
				d.mu.Unlock()
			}
		}
	}()
	return d
}

func (d *statusDisplay) setMonitor(m *rewriter.Monitor) {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.mon = m
	d.mu.Unlock()
}

// countsBytes reports whether phase p follows bytes through a Monitor
// (rewrite and verify; catalog and commit show their elapsed time).
func countsBytes(p string) bool { return p == "rewrite" || p == "verify" }

// setPhase shows the new phase at once (after the rewrite's final figures
// in a log).
func (d *statusDisplay) setPhase(p string) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if countsBytes(d.phase) && !d.tty {
		d.showLocked()
	}
	// A phase's bytes come from the Monitor set after it begins (Monitor).
	d.phase, d.phaseStart, d.mon = p, time.Now(), nil
	d.showLocked()
}

// text is the status: "rewrite  45.2MiB / 128.0MiB  35%  101.3MiB/s  ETA 1s  E/x".
func (d *statusDisplay) text() string {
	parts := []string{d.phase}
	if countsBytes(d.phase) && d.mon != nil {
		p := d.mon.Progress()
		if p.Total > 0 {
			parts = append(parts, fmt.Sprintf("%s / %s", humanBytes(p.Done), humanBytes(p.Total)),
				fmt.Sprintf("%d%%", p.Done*100/p.Total), humanBytes(int64(p.Rate()))+"/s")
			if eta := p.ETA(); eta >= 0 {
				parts = append(parts, "ETA "+eta.Round(time.Second).String())
			}
			if p.Variable != "" {
				parts = append(parts, p.Variable)
			}
			return strings.Join(parts, "  ")
		}
	}
	return strings.Join(append(parts, time.Since(d.phaseStart).Round(100*time.Millisecond).String()), "  ")
}

// showLocked draws the status line (tty) or prints a progress line.
func (d *statusDisplay) showLocked() {
	if d.phase == "" || d.partial {
		return
	}
	t := d.text()
	if !d.tty {
		fmt.Fprintf(d.w, "progress: %s\n", t)
		return
	}
	if r := []rune(t); len(r) > d.width-1 {
		t = string(r[:d.width-1])
	}
	fmt.Fprintf(d.w, "\r\033[K%s", t)
	d.shown = true
}

func (d *statusDisplay) clearLocked() {
	if d.shown {
		fmt.Fprint(d.w, "\r\033[K")
		d.shown = false
	}
}

// finish stops the display and clears the status line.
func (d *statusDisplay) finish() {
	if d == nil {
		return
	}
	close(d.stop)
	d.wg.Wait()
	d.mu.Lock()
	d.clearLocked()
	d.mu.Unlock()
}

// logWriter is w with its lines printed above the status line.
func (d *statusDisplay) logWriter(w io.Writer) io.Writer {
	if d == nil {
		return w
	}
	return writerFunc(func(p []byte) (int, error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.clearLocked()
		n, err := w.Write(p)
		d.partial = len(p) > 0 && p[len(p)-1] != '\n'
		if d.tty {
			d.showLocked()
		}
		return n, err
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// display is relayout run's progress in the resolved --progress mode:
// the status line or log lines on stderr, or the events on stdout. It is
// the job's job.Display.
type display struct {
	sd *statusDisplay
	ev *progressEvents
}

// newDisplay starts the display of a run from in to out and returns the
// log writer to use instead of logw (its lines go above the status line;
// notes become warning events). A nil *display shows nothing.
func newDisplay(mode string, stats time.Duration, in, out string, logw io.Writer) (*display, io.Writer) {
	d := &display{}
	switch mode {
	case "bar", "lines":
		d.sd = newStatusDisplay(os.Stderr, mode == "bar", stats)
		logw = d.sd.logWriter(logw)
	case "json":
		d.ev = newProgressEvents(os.Stdout, in, out)
		d.ev.set("output", out)
		logw = d.ev.warnings(logw)
	}
	return d, logw
}

func (d *display) Phase(p string) {
	if d != nil {
		d.sd.setPhase(p)
		d.ev.setPhase(p)
	}
}

func (d *display) Set(k string, v any) {
	if d != nil {
		d.ev.set(k, v)
	}
}

func (d *display) Monitor() *rewriter.Monitor {
	mon := rewriter.NewMonitor()
	if d != nil {
		d.sd.setMonitor(mon)
		if d.ev != nil {
			d.ev.setMonitor(mon)
		}
	}
	return mon
}

// finish ends the display: the status line cleared, or the events' error
// and summary.
func (d *display) finish(ctx context.Context, err error) {
	if d != nil {
		d.sd.finish()
		d.ev.finish(ctx, err)
	}
}

// progressSchema names the --progress json event stream (docs/usage.md: "Progress
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
	if p := e.monProgress(); countsBytes(e.phase) && p.Total > 0 {
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
// figures are sent first, so the stream ends a rewrite or a verification at
// 100%); the new phase's bytes come from the Monitor set after it begins.
func (e *progressEvents) setPhase(p string) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if countsBytes(e.phase) {
		e.progressLocked()
	}
	e.phase, e.mon = p, nil
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
	if countsBytes(e.phase) {
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
