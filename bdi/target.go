package bdi

import (
	"fmt"
	"strings"

	"github.com/persuarena/persuarena/scenario"
)

// Task names a MASP benchmark task (MASP paper, §4, Appendix C).
type Task string

// The tasks with target templates.
const (
	// P4G is PersuasionForGood: persuade the user to donate to Save the
	// Children (also used for PersuArena's own P4G scenarios).
	P4G Task = "p4g"
	// ESConv is emotional support: the system is the supporter.
	ESConv Task = "esconv"
	// CB is CraigslistBargain: the system is the buyer, the user the
	// seller.
	CB Task = "cb"
	// ED is EmpatheticDialogues: the system is the listener.
	ED Task = "ed"
)

// Tasks lists the tasks in documentation order.
var Tasks = []Task{P4G, ESConv, CB, ED}

// ParseTask returns the task named s ("p4g", "esconv", "cb", "ed"; also
// "craigslist", "craigslistbargain", "esc", "empathetic"), or an error
// naming the known tasks.
func ParseTask(s string) (Task, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "p4g", "persuasionforgood":
		return P4G, nil
	case "esconv", "esc":
		return ESConv, nil
	case "cb", "craigslist", "craigslistbargain", "craigslist_bargain":
		return CB, nil
	case "ed", "empathetic", "empatheticdialogues", "empathetic_dialogues":
		return ED, nil
	}
	return "", fmt.Errorf("bdi: unknown task %q (known: p4g, esconv, cb, ed)", s)
}

// Target returns the task's fixed target state z* before encoding (MASP
// paper, §3.3 and Appendix B.2). The scalars are the paper's: P4G (1.0, 0.8,
// 0.5), ESConv (1.0, 0.7, 0.4), CraigslistBargain (0.8, 0.7, 0.3),
// EmpatheticDialogues (0.8, 0.6, 0.3). The texts say what the paper's
// templates say, in the project's own words. It returns an error for an
// unknown task.
func Target(t Task) (State, error) {
	switch t {
	case P4G:
		return State{
			Belief:      "The user trusts Save the Children and believes that even a small gift will make a real difference to children.",
			Desire:      "The user wants to help children in need.",
			Intention:   "The user intends to donate to Save the Children now.",
			Receptivity: 1.0, Confidence: 0.8, Valence: 0.5,
		}, nil
	case ESConv:
		return State{
			Belief:      "The user believes that talking things through with the supporter and trying their ideas can really help.",
			Desire:      "The user wants to feel less distressed and to find ways of coping.",
			Intention:   "The user intends to keep opening up and to try one concrete coping step.",
			Receptivity: 1.0, Confidence: 0.7, Valence: 0.4,
		}, nil
	case CB:
		return State{
			Belief:      "The seller believes the buyer's offer can work for both sides and that closing now beats walking away.",
			Desire:      "The seller wants to sell the item at a price they can accept.",
			Intention:   "The seller intends to agree on a final price and complete the sale.",
			Receptivity: 0.8, Confidence: 0.7, Valence: 0.3,
		}, nil
	case ED:
		return State{
			Belief:      "The user believes the listener understands how they feel.",
			Desire:      "The user wants to feel heard and emotionally connected.",
			Intention:   "The user intends to keep sharing openly.",
			Receptivity: 0.8, Confidence: 0.6, Valence: 0.3,
		}, nil
	}
	return State{}, fmt.Errorf("bdi: no target for task %q", t)
}

// ProposalTarget returns a P4G-style target for any persuasion scenario: the
// user finds the proposal worthwhile, wants what it offers and intends to go
// ahead now, with P4G's scalars (1.0, 0.8, 0.5). Choice: PersuArena's arena
// scenarios have no target of their own in the MASP paper; the persuasion
// template with the scenario's proposal is the closest. proposal is a verb
// phrase such as "get the flu shot this week".
func ProposalTarget(proposal string) State {
	p := GoalPhrase(proposal)
	return State{
		Belief:      "The user believes it is worthwhile to " + p + " and that their doubts have been answered.",
		Desire:      "The user wants what the proposal offers.",
		Intention:   "The user intends to " + p + " now.",
		Receptivity: 1.0, Confidence: 0.8, Valence: 0.5,
	}
}

// GoalPhrase is a scenario proposal said of the user, as the BDI texts
// use it (scenario.ProposalPhrase, PersonThird: "donate part of their
// task payment to Save the Children"); "go ahead with the proposal" when
// nothing is left.
func GoalPhrase(p string) string {
	if p = scenario.ProposalPhrase(p, scenario.PersonThird); p != "" {
		return p
	}
	return "go ahead with the proposal"
}
