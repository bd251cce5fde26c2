package llmagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/persuarena/persuarena/llm"
)

// skeleton is a chat template reduced to the text around messages, learnt
// once per persuadee from three renders with marker contents, so that each
// turn's K probe forks are rendered locally: one batched /v1/completions
// request is then the only probe request of a turn (<= 2
// engine requests per persuadee turn with the reply).
//
// A fork is system, then alternating user/assistant turns ending with a
// user turn, rendered with the generation prompt:
//
//	head + sys + sysUser + u1 + userAsst + a1 + asstUser + u2 + ... + tail
type skeleton struct {
	head, sysUser, userAsst, asstUser, tail string
}

// Markers are plain ASCII words that templates neither trim nor escape.
const (
	mkSys = "PAXMKSYS0"
	mkU1  = "PAXMKUSR1"
	mkA1  = "PAXMKAST1"
	mkU2  = "PAXMKUSR2"
	mkA2  = "PAXMKAST2"
	mkU3  = "PAXMKUSR3"
)

var (
	errSkeleton = errors.New("chat template is not a plain per-message template")
	errNoMarkup = errors.New("rendered chat template adds no markup around messages")
)

// learnSkeleton renders [sys, u1, a1, u2] and checks the pieces reproduce
// the renders of [sys, u1] and [sys, u1, a1, u2, a2, u3]. A template that
// places text conditionally (e.g. the system prompt before the last user
// turn only) fails the check: errSkeleton, and forks are rendered by the
// engine each time instead. A render with no markup between the user and
// assistant turns is errNoMarkup.
//
// The three renders are requested concurrently (every episode waits for
// this set-up: one engine round trip instead of three in a row) and
// checked in the order above, whose first error is returned.
func learnSkeleton(ctx context.Context, e engine) (*skeleton, error) {
	msg := func(role, c string) llm.Message { return llm.Message{Role: role, Content: c} }
	short := []llm.Message{msg("system", mkSys), msg("user", mkU1)}
	long := []llm.Message{msg("system", mkSys), msg("user", mkU1), msg("assistant", mkA1), msg("user", mkU2), msg("assistant", mkA2), msg("user", mkU3)}
	var renders [3]string
	var errs [3]error
	var wg sync.WaitGroup
	for i, msgs := range [][]llm.Message{long[:4], short, long} {
		wg.Go(func() { renders[i], errs[i] = renderProbe(ctx, e, msgs) })
	}
	wg.Wait()
	m2, err := renders[0], errs[0]
	if err != nil {
		return nil, err
	}
	idx := make([]int, 4)
	pos := 0
	for i, mk := range []string{mkSys, mkU1, mkA1, mkU2} {
		j := strings.Index(m2[pos:], mk)
		if j < 0 || strings.Count(m2, mk) != 1 {
			return nil, errSkeleton
		}
		idx[i] = pos + j
		pos = idx[i] + len(mk)
	}
	sk := &skeleton{
		head:     m2[:idx[0]],
		sysUser:  m2[idx[0]+len(mkSys) : idx[1]],
		userAsst: m2[idx[1]+len(mkU1) : idx[2]],
		asstUser: m2[idx[2]+len(mkA1) : idx[3]],
		tail:     m2[idx[3]+len(mkU2):],
	}
	if strings.TrimSpace(sk.userAsst) == "" || strings.TrimSpace(sk.asstUser) == "" {
		return nil, errNoMarkup
	}
	m1, err := renders[1], errs[1]
	if err != nil {
		return nil, err
	}
	if got := sk.render(short); got != m1 {
		return nil, errSkeleton
	}
	m3, err := renders[2], errs[2]
	if err != nil {
		return nil, err
	}
	if sk.render(long) != m3 {
		return nil, errSkeleton
	}
	return sk, nil
}

// render assembles msgs (system first, then alternating user/assistant,
// ending with user) with the generation prompt.
func (sk *skeleton) render(msgs []llm.Message) string {
	var b strings.Builder
	sk.writeTurns(&b, msgs)
	b.WriteString(sk.tail)
	return b.String()
}

// writeTurns writes the template head and msgs (system first, then
// alternating user/assistant) with the learnt separators.
func (sk *skeleton) writeTurns(b *strings.Builder, msgs []llm.Message) {
	b.WriteString(sk.head)
	for i, m := range msgs {
		if i > 0 {
			switch {
			case i == 1:
				b.WriteString(sk.sysUser)
			case m.Role == "assistant":
				b.WriteString(sk.userAsst)
			default:
				b.WriteString(sk.asstUser)
			}
		}
		b.WriteString(m.Content)
	}
}

// fork returns the text before and after the probe question of a fork of
// msgs (msgs + one user turn).
func (sk *skeleton) fork(msgs []llm.Message) (prefix, suffix string) {
	var b strings.Builder
	sk.writeTurns(&b, msgs)
	if len(msgs) == 1 {
		b.WriteString(sk.sysUser)
	} else {
		b.WriteString(sk.asstUser)
	}
	return b.String(), sk.tail
}

// probeMarker stands for the probe question when the engine renders a fork.
const probeMarker = "PAXMKPROBE"

// renderFork asks the engine to render msgs + a user turn and splits the
// text at the probe question: one template request per read-out, shared
// by its K probes.
func renderFork(ctx context.Context, e engine, msgs []llm.Message) (prefix, suffix string, err error) {
	fork := append(msgs[:len(msgs):len(msgs)], llm.Message{Role: "user", Content: probeMarker})
	text, err := renderProbe(ctx, e, fork)
	if err != nil {
		return "", "", err
	}
	i := strings.LastIndex(text, probeMarker)
	if i < 0 {
		return "", "", fmt.Errorf("%w: rendered chat template lost the probe question", llm.ErrMalformed)
	}
	return text[:i], text[i+len(probeMarker):], nil
}
