package store

import (
	"context"
	"reflect"
	"testing"

	"github.com/persuarena/persuarena/episode"
)

// A reward vector (REPO paper) is stored with its episode and loads back
// unchanged, by Episodes and by EachEpisode; an episode without one loads
// with a nil Reward.
func TestRewardVectorRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	mustRun(t, db, "r1")
	ep := sampleEpisode("r1", "s1", 0)
	ep.Reward = &episode.RewardVector{Spec: "negotiation", R: 1.5,
		Components: []episode.RewardComponent{{Name: "r_model", Value: 3}, {Name: "e", Value: -50}},
		Turns:      []episode.TurnReward{{T: 1, R: 2.25, Components: []episode.RewardComponent{{Name: "func.no_pressure", Value: -1}}}}}
	plain := sampleEpisode("r1", "s2", 0)
	if err := db.SaveEpisodes(ctx, "r1", []*episode.Episode{ep, plain}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Episodes(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !reflect.DeepEqual(got[0].Reward, ep.Reward) || got[1].Reward != nil {
		t.Fatalf("loaded rewards %+v, %+v", got[0].Reward, got[1].Reward)
	}
	var streamed []*episode.RewardVector
	if err := db.EachEpisode(ctx, "r1", func(e *episode.Episode) error { streamed = append(streamed, e.Reward); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(streamed[0], ep.Reward) || streamed[1] != nil {
		t.Fatalf("streamed %+v", streamed)
	}
}
