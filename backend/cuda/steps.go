package cuda

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// steps records how long the parts of opening a backend took
// (Backend.StartupSteps): "1.204s (libcuda 0.010s, cuInit 0.301s, …)".
type steps struct {
	mu          sync.Mutex
	start, mark time.Time
	last        time.Time // when the last step ended
	parts       []string
}

func newSteps() *steps {
	now := time.Now()
	return &steps{start: now, mark: now, last: now}
}

// step records the time since the last step under name.
func (s *steps) step(name string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.addLocked(name, now.Sub(s.mark))
	s.mark = now
}

// add records d under name (a step timed on its own).
func (s *steps) add(name string, d time.Duration) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLocked(name, d)
}

func (s *steps) addLocked(name string, d time.Duration) {
	s.last = time.Now()
	s.parts = append(s.parts, fmt.Sprintf("%s %.3fs", name, d.Seconds()))
}

// String is the wall time from the start to the end of the last step, and
// the parts (some ran at the same time); "" for a nil steps.
func (s *steps) String() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%.3fs since New (%s)", s.last.Sub(s.start).Seconds(), strings.Join(s.parts, ", "))
}
