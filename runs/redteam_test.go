package runs

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/redteam"
)

// A red-team budget whose episodes could pass MaxPlannedEpisodes is
// refused before any episode is played: 12 families × 1,000 candidates ×
// 1,001 generations × 32 search scenarios is 384 million.
func TestRedteamBudgetBounded(t *testing.T) {
	o := redteam.DefaultOptions()
	o.Population, o.Generations = 1000, 1000
	spec := RedteamSpec{Persuadee: "sim", Scenarios: []string{"arena"}, SearchSplit: "train", TestSplit: "heldout", Tmax: 10, Options: o}
	_, err := Redteam(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "over the limit of 10000000 episodes") {
		t.Fatalf("err = %v", err)
	}
	// a count past its range is refused before the sets load
	spec.Generations = math.MaxInt
	if _, err := Redteam(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "--generations must be in 0..10000000") {
		t.Fatalf("generations MaxInt: %v", err)
	}
	// the default budget is within it
	if err := redteamSize(RedteamSpec{Options: redteam.DefaultOptions()}, 1065, 120); err != nil {
		t.Fatal(err)
	}
}
