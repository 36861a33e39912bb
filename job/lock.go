package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrLocked reports that another relayout process holds OUT's lock.
var ErrLocked = errors.New("output in use by another relayout process")

// LockInfo is what a lock holder records in its lock file, so that a refused
// process (or a person) can tell who holds it, and a later process can
// explain a lock left by a killed job.
type LockInfo struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Start   time.Time `json:"start"`
	Command string    `json:"command"`
}

func (li LockInfo) String() string {
	return fmt.Sprintf("pid %d on host %s since %s (%s)", li.PID, li.Host, li.Start.Format(time.RFC3339), li.Command)
}

// Lock is an flock(2) on a file under OUT/.relayout.
//
// The kernel releases an flock when its holder dies, however it dies (kill
// -9, a node's time limit), so a lock can never block a rerun forever.
// What a killed holder leaves behind is its record in the file: the next
// process that takes the lock finds it non-empty and reports it as Stale
// (that job did not finish; its journal lets this one resume). flock works
// on local file systems, on Lustre mounted with -o flock and on GPFS; on NFS
// it is emulated with POSIX locks.
type Lock struct {
	f     *os.File
	path  string
	own   bool      // this process wrote the record (exclusive holder)
	Stale *LockInfo // record left by a holder that died without releasing
}

// lockExclusive takes path exclusively (plan, commit, run): refused while any
// other process holds it, shared or exclusive.
func lockExclusive(path, command string) (*Lock, error) { return takeLock(path, command, true) }

// lockShared takes path shared (shards of one job run concurrently); an
// exclusive holder refuses them and they refuse it.
func lockShared(path, command string) (*Lock, error) { return takeLock(path, command, false) }

func takeLock(path, command string, exclusive bool) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("job: lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("job: lock: %w", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		holder := readLockInfo(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := "shards of a relayout rewrite (shared lock)"
			if holder != nil {
				who = holder.String()
			}
			return nil, fmt.Errorf("job: %s is held by %s: %w", path, who, ErrLocked)
		}
		return nil, fmt.Errorf("job: lock %s: %w", path, err)
	}
	l := &Lock{f: f, path: path}
	if !exclusive {
		return l, nil
	}
	l.Stale = readLockInfo(path)
	host, _ := os.Hostname()
	rec, _ := json.Marshal(LockInfo{PID: os.Getpid(), Host: host, Start: time.Now().UTC().Truncate(time.Second), Command: command})
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt(append(rec, '\n'), 0)
		if err == nil {
			l.own = true
		}
	}
	return l, nil
}

// StaleMessage explains a lock left by a killed job, or "" when there was none.
func (l *Lock) StaleMessage() string {
	if l == nil || l.Stale == nil {
		return ""
	}
	return fmt.Sprintf("found a stale lock in %s: %s did not finish (killed, or its node failed); the kernel released its lock, so this run takes over and resumes from the journals",
		l.path, l.Stale)
}

// Release clears the record and drops the lock.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	if l.own {
		l.f.Truncate(0)
	}
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}

func readLockInfo(path string) *LockInfo {
	b, err := os.ReadFile(path)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	var li LockInfo
	if json.Unmarshal(b, &li) != nil {
		return nil
	}
	return &li
}
