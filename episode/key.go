package episode

import (
	"fmt"
	"strconv"
	"strings"
)

// Key identifies an episode within a run: a run holds at most one
// episode per key. The evaluation plans by it (eval.Plan), the run store
// keys its rows by it, the job queue names its jobs by it and the viewer
// addresses episodes by its String form.
type Key struct {
	Persuader, Persuadee, ScenarioID string
	Rollout                          int
}

// KeyOf returns ep's key.
func KeyOf(ep *Episode) Key {
	return Key{ep.Persuader, ep.Persuadee, ep.ScenarioID, ep.Rollout}
}

// ParseKey reads the form String writes,
// "persuader/persuadee/scenario#rollout"; the persuadee may hold slashes
// and '#' (sim:FILE), the persuader and the scenario id no slash. Errors
// name the form wanted, or the rollout that is not an integer >= 0.
func ParseKey(s string) (Key, error) {
	var k Key
	h := strings.LastIndexByte(s, '#')
	ok := h >= 0
	head, roll := s, ""
	if ok {
		head, roll = s[:h], s[h+1:]
	}
	first, rest, ok2 := strings.Cut(head, "/")
	i := strings.LastIndex(rest, "/")
	if !ok || !ok2 || i < 0 {
		return k, fmt.Errorf("episode key %q: want persuader/persuadee/scenario#rollout", s)
	}
	n, err := strconv.Atoi(roll)
	if err != nil || n < 0 {
		return k, fmt.Errorf("episode key %q: rollout %q is not a number >= 0", s, roll)
	}
	return Key{Persuader: first, Persuadee: rest[:i], ScenarioID: rest[i+1:], Rollout: n}, nil
}

// String formats k as "persuader/persuadee/scenario#rollout" for messages.
func (k Key) String() string {
	return fmt.Sprintf("%s/%s/%s#%d", k.Persuader, k.Persuadee, k.ScenarioID, k.Rollout)
}
