package bdi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/persuarena/persuarena/embed"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/filelimit"
)

// Record kinds of a BDI cache line.
const (
	KindSession = "session"
	KindTurn    = "turn"
)

// SessionRecord is a session-level cache entry: one training dialogue's
// initial state and profile text (MASP paper, §3.2: the BDI prior is the pool
// of these).
type SessionRecord struct {
	Kind    string `json:"kind"` // "session"
	Task    Task   `json:"task"`
	Session string `json:"session"`
	// Profile is the user profile text, "" when the data set has none.
	Profile string `json:"profile,omitempty"`
	Initial State  `json:"initial"`
}

// TurnRecord is a dialogue-prefix cache entry: the history h_t and the
// (silver or teacher) state labelled for it. Turn is the number of
// persuader turns in History (0 for the empty prefix).
type TurnRecord struct {
	Kind    string            `json:"kind"` // "turn"
	Task    Task              `json:"task"`
	Session string            `json:"session"`
	Turn    int               `json:"turn"`
	History []episode.Message `json:"history"`
	State   State             `json:"state"`
}

// Cache is a BDI cache (MASP paper, §3.2, Appendix B.1): session records and
// turn records, stored as JSON Lines, one record per line, each with a
// "kind" of "session" or "turn".
type Cache struct {
	Sessions []SessionRecord
	Turns    []TurnRecord
}

// ReadCache reads a cache from r; name labels errors. Every problem is
// reported as "name:line: field: message" and the whole read fails (no
// partial cache): unknown kind, malformed JSON, unknown fields, an empty
// session id, an invalid state (Validate), a negative turn, a history
// message whose speaker is neither persuader nor persuadee, or a turn
// record whose session has no session record (when sessions are present).
func ReadCache(name string, r io.Reader) (*Cache, error) {
	c := &Cache{}
	var errs []error
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	line := 0
	bad := func(field, msg string) { errs = append(errs, fmt.Errorf("%s:%d: %s: %s", name, line, field, msg)) }
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var head struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			bad("(json)", err.Error())
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		switch head.Kind {
		case KindSession:
			var s SessionRecord
			if err := dec.Decode(&s); err != nil {
				bad("(json)", err.Error())
				continue
			}
			if strings.TrimSpace(s.Session) == "" {
				bad("session", "empty session id")
				continue
			}
			if err := s.Initial.Validate(); err != nil {
				bad("initial", strings.TrimPrefix(err.Error(), "bdi: "))
				continue
			}
			c.Sessions = append(c.Sessions, s)
		case KindTurn:
			var t TurnRecord
			if err := dec.Decode(&t); err != nil {
				bad("(json)", err.Error())
				continue
			}
			if strings.TrimSpace(t.Session) == "" {
				bad("session", "empty session id")
				continue
			}
			if t.Turn < 0 {
				bad("turn", fmt.Sprintf("%d is negative", t.Turn))
				continue
			}
			ok := true
			for i, m := range t.History {
				if m.Speaker != episode.PersuaderSpeaker && m.Speaker != episode.PersuadeeSpeaker {
					bad(fmt.Sprintf("history[%d].speaker", i), fmt.Sprintf("%q is neither persuader nor persuadee", m.Speaker))
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			if err := t.State.Validate(); err != nil {
				bad("state", strings.TrimPrefix(err.Error(), "bdi: "))
				continue
			}
			c.Turns = append(c.Turns, t)
		default:
			bad("kind", fmt.Sprintf("%q is neither session nor turn", head.Kind))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(c.Sessions) > 0 {
		known := map[string]bool{}
		for _, s := range c.Sessions {
			known[string(s.Task)+"\x00"+s.Session] = true
		}
		for _, t := range c.Turns {
			if !known[string(t.Task)+"\x00"+t.Session] {
				errs = append(errs, fmt.Errorf("%s: turn record of session %q (task %s) has no session record", name, t.Session, t.Task))
				break
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// LoadCache reads the cache file at path (see ReadCache).
func LoadCache(path string) (*Cache, error) {
	f, err := filelimit.Open(path, filelimit.Data)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadCache(path, f)
}

// Encode writes the cache as JSON Lines: session records first, then turn
// records, each in stored order. It validates every state first and
// returns the first problem without writing anything.
func (c *Cache) Encode(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, s := range c.Sessions {
		if err := s.Initial.Validate(); err != nil {
			return fmt.Errorf("session record %d (%s): %w", i, s.Session, err)
		}
		s.Kind = KindSession
		if err := enc.Encode(s); err != nil {
			return err
		}
	}
	for i, t := range c.Turns {
		if err := t.State.Validate(); err != nil {
			return fmt.Errorf("turn record %d (%s turn %d): %w", i, t.Session, t.Turn, err)
		}
		t.Kind = KindTurn
		if t.History == nil {
			t.History = []episode.Message{}
		}
		if err := enc.Encode(t); err != nil {
			return err
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteFile writes the cache to path atomically (a temporary file in the
// same directory, then rename); on any error nothing is written.
func (c *Cache) WriteFile(path string) error {
	var buf bytes.Buffer
	if err := c.Encode(&buf); err != nil {
		return err
	}
	return writeAtomic(path, buf.Bytes())
}

func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// Examples encodes every turn record's state with enc and alpha into
// student training examples (history prefix, z).
func (c *Cache) Examples(ctx context.Context, enc embed.Encoder, a Alpha) ([]Example, error) {
	out := make([]Example, 0, len(c.Turns))
	for i, t := range c.Turns {
		z, err := Vector(ctx, t.State, enc, a)
		if err != nil {
			return nil, fmt.Errorf("turn record %d (%s turn %d): %w", i, t.Session, t.Turn, err)
		}
		out = append(out, Example{History: t.History, Z: z})
	}
	return out, nil
}

// PriorRecord is one entry of the BDI prior: a session's initial state,
// its profile text and its encoded vector.
type PriorRecord struct {
	Task    Task
	Session string
	Profile string
	State   State
	Z       []float64
}

// Prior is the BDI prior (MASP paper, §3.2, Appendix B.2): the pool of
// initial states of training sessions, used to sample initial user states
// and to render a continuous estimate z-hat back to text by cosine nearest
// neighbour (Appendix B.5).
type Prior struct {
	Records []PriorRecord
	d       int
}

// NewPrior encodes the session records of c (those of task t, or all when
// t is "") into a prior. Errors: no sessions, or an encoder error.
func NewPrior(ctx context.Context, c *Cache, t Task, enc embed.Encoder, a Alpha) (*Prior, error) {
	p := &Prior{}
	for _, s := range c.Sessions {
		if t != "" && s.Task != t {
			continue
		}
		z, err := Vector(ctx, s.Initial, enc, a)
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", s.Session, err)
		}
		d, _ := TextDim(z)
		if p.d == 0 {
			p.d = d
		} else if d != p.d {
			return nil, fmt.Errorf("session %s: text dimension %d, others %d", s.Session, d, p.d)
		}
		p.Records = append(p.Records, PriorRecord{Task: s.Task, Session: s.Session, Profile: s.Profile, State: s.Initial, Z: z})
	}
	if len(p.Records) == 0 {
		return nil, fmt.Errorf("bdi: no session records for task %q", t)
	}
	return p, nil
}

// cosine returns x.y / (|x| |y|), 0 when either is zero.
func cosine(x, y []float64) float64 {
	var xy, xx, yy float64
	for i := range x {
		xy += x[i] * y[i]
		xx += x[i] * x[i]
		yy += y[i] * y[i]
	}
	if xx == 0 || yy == 0 {
		return 0
	}
	return xy / math.Sqrt(xx*yy)
}

// Nearest returns the prior record whose vector has the highest cosine
// similarity with zHat, and that similarity (MASP paper, Appendix B.5:
// "cosine nearest-neighbour retrieval over the encoded pool").
// Choice: the plain cosine of the Eq. 8 vectors, where the three unit
// text blocks and the sqrt(alpha)-scaled scalars weigh alike. Under the
// metric A the text block would count at most 4/d against the scalars
// (each unit block moves by at most 2, divided by 3d), so retrieval would
// ignore the texts it is meant to render. Ties go to the earlier record.
// It returns an error when zHat's length does not match the prior's.
func (p *Prior) Nearest(zHat []float64) (PriorRecord, float64, error) {
	if len(zHat) != Dim(p.d) {
		return PriorRecord{}, 0, fmt.Errorf("bdi: Nearest: vector of length %d, prior vectors have %d", len(zHat), Dim(p.d))
	}
	best, bestSim := -1, math.Inf(-1)
	for i, r := range p.Records {
		if s := cosine(zHat, r.Z); s > bestSim {
			best, bestSim = i, s
		}
	}
	return p.Records[best], bestSim, nil
}

// Sample draws one record uniformly with r (self-play initial states).
func (p *Prior) Sample(r *rand.Rand) PriorRecord { return p.Records[r.IntN(len(p.Records))] }
