package scenario

import "testing"

func TestProposalPhrase(t *testing.T) {
	for _, c := range []struct {
		in, you, me, them string
	}{
		{"Donate part of your task payment to Save the Children: any amount from $0 up to your full $2.",
			"donate part of your task payment to Save the Children",
			"donate part of my task payment to Save the Children",
			"donate part of their task payment to Save the Children"},
		{"Talk through what is troubling you and try one concrete step to cope with it.",
			"talk through what is troubling you and try one concrete step to cope with it",
			"talk through what is troubling me and try one concrete step to cope with it",
			"talk through what is troubling them and try one concrete step to cope with it"},
		{"Accept the transfer, with relocation support, for yourself.",
			"accept the transfer, with relocation support, for yourself",
			"accept the transfer, with relocation support, for myself",
			"accept the transfer, with relocation support, for themselves"},
		{"Keep what is yours - then decide",
			"keep what is yours", "keep what is mine", "keep what is theirs"},
		{"Ask your sister to drive you, your way.",
			"ask your sister to drive you, your way",
			"ask my sister to drive me, my way",
			"ask their sister to drive them, their way"},
		{"A four-day trial of the new process",
			"go ahead with A four-day trial of the new process",
			"go ahead with A four-day trial of the new process",
			"go ahead with A four-day trial of the new process"},
		{"to walk (daily)", "walk", "walk", "walk"},
		{"  Sign up (optional).", "sign up", "sign up", "sign up"},
		{"Buy it; now", "buy it", "buy it", "buy it"},
		{"Get the flu shot this week?", "get the flu shot this week", "get the flu shot this week", "get the flu shot this week"},
		{"NASA tour", "NASA tour", "NASA tour", "NASA tour"},
		{"OK.", "OK", "OK", "OK"},
		{" .!", "", "", ""},
		{"", "", "", ""},
	} {
		for _, w := range []struct {
			who  Person
			want string
		}{{PersonSecond, c.you}, {PersonFirst, c.me}, {PersonThird, c.them}} {
			if got := ProposalPhrase(c.in, w.who); got != w.want {
				t.Errorf("ProposalPhrase(%q, %d) = %q, want %q", c.in, w.who, got, w.want)
			}
		}
	}
}
