package perception

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/persuarena/persuarena/episode"
)

// A session read turn by turn (its history kept between Reads, its recent
// texts and Bloom filters filled) reads each turn as a fresh session given
// the whole transcript does, and a transcript shorter than the last one
// starts the history over.
func TestSessionReadsAsFresh(t *testing.T) {
	ctx := context.Background()
	lines := []string{
		"Our insurance pays part of each session, so it will be much cheaper than you fear.",
		"Therapy is expensive and I do not want a stranger knowing our private life.",
		"I hear you: therapy is expensive, and a stranger knowing our private life is a real worry.",
		"Hm. What about privacy?",
		"Everything we say stays confidential, bound by law and a professional code.",
		"Still, it is expensive.",
		"Our insurance pays part of each session, so it will be much cheaper than you fear.",
	}
	var tr []episode.Message
	for i, l := range lines {
		sp := episode.PersuaderSpeaker
		if i%2 == 1 {
			sp = episode.PersuadeeSpeaker
		}
		tr = append(tr, episode.Message{Speaker: sp, Text: l})
	}
	kept, err := NewEmbedded().Start(ctx, testScenario())
	if err != nil {
		t.Fatal(err)
	}
	var lastRepeat int
	for _, order := range [][]int{{1, 3, 5, 7}, {3, 7}} { // the second pass goes back
		for _, n := range order {
			in := Input{Transcript: tr[:n]}
			got, err := kept.Read(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := NewEmbedded().Start(ctx, testScenario())
			if err != nil {
				t.Fatal(err)
			}
			want, err := fresh.Read(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("turn %d: kept session read %+v, fresh %+v", n, got, want)
			}
			lastRepeat = got.Repeat
		}
	}
	// the last line is the first repeated verbatim
	if lastRepeat != 1 {
		t.Errorf("last line: Repeat %d, want 1", lastRepeat)
	}
}

// A Bloom filter never forgets a hash added, and lets few others pass:
// 200 words added, 10,000 others tried.
func TestBloom(t *testing.T) {
	var b bloom
	for i := range 200 {
		b.add(wordHash(fmt.Sprint("said", i)))
	}
	var c bloom
	c.or(&b)
	for i := range 200 {
		if h := wordHash(fmt.Sprint("said", i)); !b.mayHave(h) || !c.mayHave(h) {
			t.Fatalf("said%d added but not found", i)
		}
	}
	pass := 0
	for i := range 10000 {
		if b.mayHave(wordHash(fmt.Sprint("other", i))) {
			pass++
		}
	}
	// two probes in 2048 bits with 200 hashes: (1 - e^(-400/2048))^2 = 3.2%
	if pass > 500 {
		t.Errorf("%d of 10000 hashes never added pass, want about 320", pass)
	}
}
