package progress

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Heartbeat wraps a long verb's progress callback: until its first call,
// a line every beat (15 s when 0) says the work goes on, so that a long
// first compile on a log without a terminal is not silence. stop ends it
// (and may be called more than once).
func Heartbeat[T any](w io.Writer, show func(T), beat time.Duration) (wrapped func(T), stop func()) {
	if beat <= 0 {
		beat = 15 * time.Second
	}
	var mu sync.Mutex
	started := false
	done := make(chan struct{})
	var once sync.Once
	stop = func() { once.Do(func() { close(done) }) }
	t0 := time.Now()
	go func() {
		tick := time.NewTicker(beat)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				mu.Lock()
				if !started {
					fmt.Fprintf(w, "… still compiling and verifying before the first cell (elapsed %s)\n", Duration(time.Since(t0)))
				}
				mu.Unlock()
			}
		}
	}()
	return func(p T) {
		mu.Lock()
		if !started {
			started = true
			stop()
		}
		mu.Unlock()
		show(p)
	}, stop
}
