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
	mu    sync.Mutex
	mark  time.Time
	total time.Duration
	parts []string
}

func newSteps() *steps { return &steps{mark: time.Now()} }

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
	s.total += d
	s.parts = append(s.parts, fmt.Sprintf("%s %.3fs", name, d.Seconds()))
}

// String is the total and the parts; "" for a nil steps.
func (s *steps) String() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%.3fs (%s)", s.total.Seconds(), strings.Join(s.parts, ", "))
}
