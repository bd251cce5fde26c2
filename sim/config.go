package sim

import (
	"fmt"
	"math"
	"strings"

	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// TypeParams are the parameters of one resistance type (PersuArena paper,
// Table 2). Openness gains are additive changes of openness o per turn
// (o in [-1, 1]); move scores are the per-turn "fitting move" scores m_t in
// [-1, 1] that feed the perceived-persuasiveness EMA q (docs/simulator/model.md).
type TypeParams struct {
	// AddressActs are the acts that resolve a voiced concern when an
	// utterance touches it (EB: evidence; AA: plan detail; IT, AR: either).
	AddressActs tagger.ActSet
	// Reactance scales the reactance built by asks and pressure (>= 0);
	// Brehm (1966): freedom-sensitive people react more.
	Reactance float64
	// Calm is the fraction of reactance removed by an autonomy-supportive
	// utterance, in [0, 1].
	Calm float64
	// GainDiag, GainEvidence, GainPlan, GainAutonomy are the openness
	// gains of each act when it addresses no concern (can be 0).
	GainDiag, GainEvidence, GainPlan, GainAutonomy float64
	// BadMove is the openness loss of the type's characteristic misstep
	// (EB: bare assertion; IT: challenge before feeling understood; AR:
	// ask without autonomy support; AA: ask without a plan), >= 0.
	BadMove float64
	// Surface reports whether a commitment ask makes the persuadee raise
	// its most salient hidden concern (false for AA, who avoids the
	// confrontation and deflects instead).
	Surface bool
	// Plans is the number of turns with plan detail the persuadee needs
	// before it gives any answer to an ask (0: none needed; AA: 2), the
	// centre of each person's own need (PlanSpread).
	Plans int
	// PlanResolves reports whether plan detail resolves the most salient
	// voiced concern it touches, even without answering it (AA: a
	// concrete plan that bears on a doubt about doing it settles it).
	// Choice: only a concern the message touches, so a plan about
	// something else settles nothing, and none in a message with a
	// manipulation cue.
	PlanResolves bool
	// MoveDiag, MoveEvidence, MovePlan, MoveAutonomy, MoveAddress are the
	// move scores (in [-1, 1]) of each act and of addressing a concern;
	// MoveBad is the (negative) score of the characteristic misstep.
	MoveDiag, MoveEvidence, MovePlan, MoveAutonomy, MoveAddress, MoveBad float64

	// The mechanisms that give the types conflicting optima
	// (docs/simulator/types.md): what one type needs, another
	// resents.

	// DirectivePlan reports whether plan detail without autonomy support
	// reads as a directive (AR: being told what to do is a threat to the
	// freedom to decide, Brehm 1966; controlling language, Deci & Ryan
	// 1985): it is the type's misstep and builds ReactAsk reactance, as an
	// ask without autonomy support does.
	DirectivePlan bool
	// Conflict is the number of extra turns of plan detail that evidence
	// and that autonomy support, each, add to what the persuadee needs
	// before it answers an ask, at most MaxConflict in all, >= 0 (AA: 1,
	// at most 10): more reasons for and against raise the decisional
	// conflict an avoider defers on (Janis & Mann 1977; Tversky & Shafir
	// 1992, choice under conflict), and being told there is no hurry is
	// leave to put the decision off (decision avoidance, Anderson 2003).
	// Choice: one turn for each of the two in a message, so that a plan
	// turn that also carries evidence or "take your time" makes no
	// progress and one that carries both loses ground; the cap only
	// bounds the need in long episodes.
	Conflict, MaxConflict int
	// PlanSpread is the per-person spread of Plans, in [0, Plans - 1]
	// (0 when Plans is 0; AA: 1), so that everyone of a type that needs a
	// plan needs at least one turn of it. Each person needs Plans + k
	// turns of plan detail before it answers an ask, k drawn uniformly
	// from {-PlanSpread, ..., +PlanSpread} on the person stream of the
	// seed ("Heterogeneity"), and its need rises with Conflict to at most
	// its own Plans + k + MaxConflict. People differ
	// in how much information they seek before a decision, indecisive
	// ones most (decisional procrastination: Ferrari & Dovidio 2000;
	// need for closure: Webster & Kruglanski 1994), so a plan with no
	// turn to spare fails some avoiders, and the deflections that ask
	// "What would the first step even look like?" are what a persuader
	// can read it from.
	// Choice: symmetric, so the mean need stays Plans, and 1, the
	// smallest spread.
	PlanSpread int
	// Dilution divides the weight of concerns addressed by a message
	// with evidence by 1 + Dilution·k, k in {0, 1, 2} the non-evidential
	// contents beside its evidence (plan detail; an autonomy phrase, also
	// one a manipulation cue takes the credit of), finite and >= 0 (EB:
	// 1): beside information that does not bear on the claim, the
	// evidence that does is judged weaker (the dilution effect, Nisbett,
	// Zukier & Lemley 1981), the more so in people who weigh arguments
	// carefully (Tetlock & Boettger 1989). Choice: questions and the ask
	// do not dilute (they ask, they tell nothing), a cue does not undo
	// the words it sits beside, and 1, so evidence beside a plan counts
	// half.
	Dilution float64
	// RehearseCost is the openness lost on a diagnostic turn that finds
	// no hidden concern left to voice, >= 0 (EB: 0.05): asked yet again
	// why, the persuadee restates its own reasons, and thinking them over
	// polarises the view it holds (Tesser 1978; attitude rehearsal).
	// Choice: 0.05, the size of a small misstep (EB.BadMove is 0.08), and
	// only once nothing is left to voice, since PersuasionTrace's people
	// moved under GPT-5's questions (40 % of its messages read as
	// diagnostic).
	RehearseCost float64
}

// Config holds every parameter of the simulator. DefaultConfig documents
// the defaults; docs/simulator/model.md gives each rule's equation. Units:
// openness o in [-1, 1], rapport u in [0, 1], reactance rho >= 0,
// perceived persuasiveness q in [-1, 1].
type Config struct {
	// Name is what Persuadee.Name reports; "" means "sim".
	Name string

	// Rapport0 is the initial rapport u_0 per closeness, in the order of
	// scenario.Closenesses (intimate .. strangers); an unknown closeness
	// uses the last entry.
	Rapport0 [5]float64
	// RapportDiag and RapportAutonomy are the rapport gains of a diagnostic
	// question and of autonomy support; RapportEcho is the gain of touching
	// an already voiced concern (being listened to); RapportPressure is
	// the loss per pressure marker and RapportAsk the loss of an ask without
	// autonomy support.
	RapportDiag, RapportAutonomy, RapportEcho, RapportPressure, RapportAsk float64
	// Understood is the rapport an IT persuadee needs before it can take a
	// challenge (evidence or an ask) without backfire, in [0, 1].
	Understood float64

	// AddressTotal is the openness gain of addressing all of a scenario's
	// concerns; each addressed concern adds AddressTotal / n.
	AddressTotal float64
	// ReactAsk and ReactPressure are the reactance built by an ask without
	// autonomy support and per pressure marker (before the type's
	// Reactance factor); ReactDecay is the per-turn retention of reactance
	// in [0, 1]; ReactLeak is the openness lost per unit of reactance per
	// turn; ReactBackfire is the reactance added by an IT backfire.
	ReactAsk, ReactPressure, ReactDecay, ReactLeak, ReactBackfire float64
	// PressureCost is the openness lost per pressure marker.
	PressureCost float64
	// FatigueFree is the number of asks tolerated before fatigue; each
	// later ask costs FatigueCost * (asks - FatigueFree) openness.
	FatigueFree int
	FatigueCost float64
	// NoiseSD is the standard deviation of the Gaussian noise added to
	// openness each turn.
	NoiseSD float64
	// IdleCost is the openness lost on a content-free turn (no act, no
	// pressure, no concern touched), >= 0; such a turn also gets no noise,
	// so it never raises the belief.
	IdleCost float64

	// Q0 is the initial perceived persuasiveness q_0 in [-1, 1]; QRate is
	// the EMA rate eta in (0, 1]; MovePressure is the move score per
	// pressure marker (negative); MoveIdle is the score of an utterance
	// with no act.
	Q0, QRate, MovePressure, MoveIdle float64
	// PEOpen weighs where the persuadee stands, o - theta_acc, in the
	// per-turn input of q (added to the move score before clamping to
	// [-1, 1]), >= 0: perceived and actual persuasiveness go together
	// (Dillard et al. 2007), so fitting moves that have not moved the
	// persuadee do not feel persuasive.
	PEOpen float64

	// Accept is the openness needed to accept; Conditional the openness
	// needed for a conditional yes; RejectReactance the reactance at which
	// an ask is rejected; RejectOpen the openness below which repeated
	// pressure (PressureTurns turns with pressure) is rejected; Floor the
	// openness at or below which the FloorAsks-th and later asks are
	// rejected. AA persuadees avoid deciding: only reactance makes them
	// reject.
	Accept, Conditional, RejectReactance, RejectOpen, Floor float64
	PressureTurns, FloorAsks                                int
	// Guarded is the reactance at or above which an ask gets no yes of
	// any kind (the persuadee will not be rushed), >= 0.
	Guarded float64
	// CommitGain is the openness gained by giving a yes, full or
	// conditional, >= 0: people infer their attitude from what they have
	// just said (self-perception, Bem 1972; commitment and consistency,
	// Cialdini 2001). Both decisions end the episode, so it moves only the
	// final belief B_T.
	CommitGain float64
	// Spontaneous is the per-turn chance of a decision without an ask when
	// the state already implies one (see docs/simulator/model.md), in [0, 1];
	// SpontaneousMargin is the extra openness above Accept it needs.
	Spontaneous, SpontaneousMargin float64
	// MaxVoice is the most concerns voiced in one reply (>= 1); Blocking is
	// how many of the most salient concerns a commitment ask surfaces.
	MaxVoice, Blocking int

	// Perception (package perception): how the dynamics weigh what the
	// reader perceives beyond acts and pressure. RapportDismiss,
	// ReactDismiss and DismissCost are the rapport loss, reactance and
	// openness loss per concern dismissed or mocked; ReactManip,
	// ManipCost are the reactance and openness loss per manipulation cue
	// (each cue also costs RapportPressure and MovePressure, like a
	// pressure marker); TrustClaim in [0, 1) is the share of trust lost
	// per unsupported specific claim (trust multiplies every later
	// openness gain) and ClaimCost its openness loss; RapportIgnore is the
	// rapport lost by a message that ignores a reply that voiced a concern
	// (Relevance < 0.5); EchoHigh in (0, 1] is the echo share from which a
	// message counts as echoing the persuadee, and EchoCost the openness
	// lost per echoing turn after the first; RepeatCost the openness lost
	// per earlier repeat beyond the first; AnswerGain is the openness gained
	// per concern answered that this turn does not address (still hidden,
	// or not addressable by the turn's acts): a reason that bears on a
	// worry counts for a little even before it can settle it.
	RapportDismiss, ReactDismiss, DismissCost float64
	AnswerGain                                float64
	ReactManip, ManipCost                     float64
	TrustClaim, ClaimCost                     float64
	RapportIgnore, EchoHigh, EchoCost         float64
	RepeatCost                                float64
	// ArgueGain is the openness gained from a turn that answers at least
	// one concern (a reason that bears on a worry, or a concern
	// addressed), ArgueGain/k on the k-th such turn, >= 0; damped like
	// every gain. Natural persuasion moves people most at its first
	// argument and less at each later one (PersuasionTrace paper: most
	// belief change comes at the first report; diminishing returns of
	// repeated argument, Cacioppo & Petty 1979). 0 in the hand-set
	// parameters; fitted to PersuasionTrace (docs/simulator/fit.md).
	ArgueGain float64

	// Probe read-out: p = sigmoid(K * (score - C)). CA's score is
	// CAWeight*u + (1-CAWeight)*addressed/(voiced + addressed + hidden
	// among the first Blocking); PE's is q; AC's is o - theta_acc, the
	// openness relative to this persuadee's (trait-adjusted) accept
	// threshold, so ACC = 0 puts p_ac = 0.5 exactly at the threshold.
	CAWeight, CAK, CAC, PEK, PEC, ACK, ACC float64
	// ACBlock is the shift of AC's score per obstacle the persuadee knows
	// stands between it and an outright yes (an open or, for types that
	// raise them on an ask, hidden concern among the first Blocking; a
	// turn of plan detail still needed), >= 0: perceived barriers lower
	// the stated willingness (Health Belief Model; Janz & Becker 1984).
	ACBlock float64

	// Trait modulation (P4G survey scores; each trait is mapped to z in
	// [-1, 1] around its scale midpoint, and an absent trait gives z = 0).
	// TraitAgree and TraitOpen scale positive openness gains;
	// TraitRational scales evidence gains; TraitIntuitive scales rapport
	// gains; TraitConscientious scales plan gains; TraitSelfDirection
	// (self_direction and freedom) raises and TraitConform lowers
	// reactance; TraitNeuroticNoise scales noise and TraitNeuroticAccept
	// raises the accept threshold.
	TraitAgree, TraitOpen, TraitRational, TraitIntuitive, TraitConscientious  float64
	TraitSelfDirection, TraitConform, TraitNeuroticNoise, TraitNeuroticAccept float64

	// Per-person variation, drawn from the episode seed (a stream of its
	// own, so the dynamics' and the wording's draws do not move): two
	// people with the same profile differ in how far argument moves them
	// and how quickly they resist. FirmShare in [0, 1] is the share of
	// people who barely move, whose positive openness gains are scaled by
	// FirmGain in [0, 1] (PersuasionTrace paper: about half of the people
	// barely move under GPT-5 persuasion, the rest move about +0.5 at the
	// first report); PersonSD >= 0 is the standard deviation of the log
	// of each person's gain and reactance factors, drawn independently
	// (log-normal, mean-one on the log scale).
	//
	// Choice: 0.4 firm people with FirmGain 0.25 and PersonSD 0.3, set on
	// the closed-loop figures (docs/simulator/types.md), not
	// fitted: fewer than the paper's 52 % because the persuadee's own
	// missteps already leave some movable people unmoved.
	FirmShare, FirmGain, PersonSD float64
	// FirmCap >= 0 is the most a firm person's openness rises above its
	// start over a whole dialogue (0: no cap): strong attitudes persist
	// and resist change however long the persuasion (Krosnick & Petty
	// 1995), which gains scaled per turn do not give.
	//
	// Choice: 0.3 (a belief rise of at most 0.15), chosen from {0.3, 0.4}
	// on the default-trained planner's held-out moved share
	// (docs/simulator/types.md, "Per-person variation"); it barely binds in
	// PersuasionTrace's four-turn rounds.
	FirmCap float64

	// EB, IT, AR, AA are the per-type parameters.
	EB, IT, AR, AA TypeParams

	// Strategy holds the reactions to the PersuasionForGood strategies
	// (see StrategyParams; default DefaultStrategyParams()).
	Strategy StrategyParams
}

// DefaultConfig returns the default parameters of the simulator ("sim"):
// the shipped fit to people (Fitted: HandConfig with the parameters of
// sim/fits/people.json, fitted by `persuarena sim fit people` on PersuasionTrace and PersuasionForGood
// train users under closed-loop limits; docs/simulator/fit.md, "Fitting to
// people"). Soft and Hard are derived from it.
func DefaultConfig() Config {
	c, _ := Fitted()
	return c
}

// HandConfig returns the hand-set parameters of simulator version 2,
// calibrated against the built-in persuaders (docs/simulator/fit.md,
// "Hand calibration against the built-in persuaders"). It is the base the shipped P4G fit (Fitted;
// sim/fits/people.json) starts from, named "sim-hand" by ByName and in config
// files.
func HandConfig() Config {
	ev := tagger.ActSet(0).With(tagger.Evidence)
	pl := tagger.ActSet(0).With(tagger.Plan)
	return Config{
		Name:     "sim",
		Rapport0: [5]float64{0.30, 0.25, 0.20, 0.15, 0.10},

		RapportDiag: 0.20, RapportAutonomy: 0.12, RapportEcho: 0.05,
		RapportPressure: 0.10, RapportAsk: 0.05,
		Understood: 0.45,

		AddressTotal: 1.0,
		ReactAsk:     0.35, ReactPressure: 0.30, ReactDecay: 0.85, ReactLeak: 0.06,
		ReactBackfire: 0.20,
		PressureCost:  0.04,
		FatigueFree:   2, FatigueCost: 0.04,
		NoiseSD: 0.04, IdleCost: 0.01,

		Q0: -0.5, QRate: 0.25, MovePressure: -0.6, MoveIdle: 0, PEOpen: 1,

		Accept: 0.30, Conditional: 0.0, RejectReactance: 1.0, RejectOpen: -0.2, Floor: -0.75,
		PressureTurns: 2, FloorAsks: 3, Guarded: 0.5, CommitGain: 0.5,
		Spontaneous: 0.10, SpontaneousMargin: 0.20,
		MaxVoice: 2, Blocking: 3,

		RapportDismiss: 0.15, ReactDismiss: 0.45, DismissCost: 0.08,
		ReactManip: 0.35, ManipCost: 0.06,
		// Choice: a quarter of trust and 0.03 openness per unsupported
		// figure (half the first values): the reader counts every figure
		// the public scenario does not state, mostly true ones in LLM
		// text, which people do not discount (docs/simulator/fit.md,
		// "Fitting to people").
		TrustClaim: 0.25, ClaimCost: 0.03,
		RapportIgnore: 0.03, EchoHigh: 0.5, EchoCost: 0.06,
		RepeatCost: 0.04, AnswerGain: 0.01,

		// Choice: CAWeight 0.3 (of 0.4, 0.3, 0.2), the largest weight of
		// rapport beside addressed worries that keeps the held-out ask
		// calibration under 0.10 with the reader of version 7, which
		// takes a listening sentence for no answer (0.4: ECE 0.102,
		// 0.3: 0.091, 0.2: 0.083; docs/simulator/probes.md).
		CAWeight: 0.3, CAK: 10, CAC: 0.75,
		PEK: 6, PEC: 0.3,
		// Choice: ACK 2, the steepest AC read-out (of 6, 4, 3, 2, 1.5)
		// whose final belief keeps the stance's order within types on
		// the P4G train users' replays (point estimate of the paired AUC
		// of B_T - B_0 within types >= 0; 3, 2 and 1.5 are within each
		// other's intervals): at 6, AC sits ~1e-5 above 0 at its floor
		// and B is ranked by CA, which the persuader decides, not the
		// person (docs/simulator/probes.md, "The read-out's steepness").
		ACK: 2, ACC: 0.2, ACBlock: 0.45,

		TraitAgree: 0.15, TraitOpen: 0.10, TraitRational: 0.30, TraitIntuitive: 0.20,
		TraitConscientious: 0.20, TraitSelfDirection: 0.30, TraitConform: 0.20,
		TraitNeuroticNoise: 0.50, TraitNeuroticAccept: 0.05,

		FirmShare: 0.4, FirmGain: 0.25, PersonSD: 0.3, FirmCap: 0.3,

		EB: TypeParams{
			AddressActs: ev, Reactance: 0.4, Calm: 0.3, Surface: true,
			GainDiag: 0.01, GainEvidence: 0, GainPlan: 0.03, GainAutonomy: 0.01, BadMove: 0.08,
			MoveDiag: 0.5, MoveEvidence: 0.3, MovePlan: 0.2, MoveAutonomy: 0.2, MoveAddress: 1, MoveBad: -1,
			RehearseCost: 0.05, Dilution: 1,
		},
		IT: TypeParams{
			AddressActs: ev | pl, Reactance: 0.6, Calm: 0.3, Surface: true,
			GainDiag: 0.03, GainEvidence: 0.03, GainPlan: 0.03, GainAutonomy: 0.03, BadMove: 0.15,
			MoveDiag: 0.7, MoveEvidence: 0.3, MovePlan: 0.3, MoveAutonomy: 0.6, MoveAddress: 1, MoveBad: -1,
		},
		AR: TypeParams{
			AddressActs: ev | pl, Reactance: 1.0, Calm: 0.5, Surface: true,
			GainDiag: 0.02, GainEvidence: 0.03, GainPlan: 0.03, GainAutonomy: 0.06, BadMove: 0.05,
			MoveDiag: 0.4, MoveEvidence: 0.3, MovePlan: 0.3, MoveAutonomy: 1, MoveAddress: 0.8, MoveBad: -1,
			DirectivePlan: true,
		},
		AA: TypeParams{
			AddressActs: pl, Reactance: 0.3, Calm: 0.3, Plans: 2, PlanResolves: true,
			GainDiag: 0.02, GainEvidence: -0.02, GainPlan: 0.12, GainAutonomy: 0.02, BadMove: 0.03,
			MoveDiag: 0.4, MoveEvidence: 0.1, MovePlan: 1, MoveAutonomy: 0.3, MoveAddress: 1, MoveBad: -0.6,
			Conflict: 1, MaxConflict: 10, PlanSpread: 1,
		},
		Strategy: DefaultStrategyParams(),
	}
}

// Soft returns a more compliant persuadee ("soft user", MASP paper), derived from DefaultConfig: thresholds lower (Accept by 0.15,
// Conditional by 0.05, Understood by 0.15, each kept in its valid range),
// half the reactance, backfire and missteps, a larger gain for addressing
// concerns (AddressTotal + 0.2), three quarters of the noise and half the
// share of firm people (FirmShare).
//
// Choice: the shifts are relative to the default, so the variants follow
// a refitted default; on HandConfig they give the hand-set soft values
// (Accept 0.15, Conditional -0.05, ReactAsk 0.175, ...).
func Soft() Config { return SoftOf(DefaultConfig()) }

// SoftOf returns the soft variant of c (see Soft), named "sim-soft".
func SoftOf(c Config) Config {
	c.Name = "sim-soft"
	c.Accept = tidy(math.Max(c.Accept-0.15, -1))
	c.Conditional = tidy(math.Min(math.Max(c.Conditional-0.05, -1), c.Accept))
	c.ReactAsk, c.ReactPressure, c.ReactBackfire = tidy(0.5*c.ReactAsk), tidy(0.5*c.ReactPressure), tidy(0.5*c.ReactBackfire)
	c.Understood = tidy(math.Max(c.Understood-0.15, 0))
	c.AddressTotal = tidy(c.AddressTotal + 0.2)
	c.NoiseSD = tidy(0.75 * c.NoiseSD)
	c.FirmShare = tidy(0.5 * c.FirmShare)
	for _, tp := range []*TypeParams{&c.EB, &c.IT, &c.AR, &c.AA} {
		tp.BadMove = tidy(0.5 * tp.BadMove)
	}
	return c
}

// Hard returns a resistant persuadee ("hard user", MASP paper),
// derived from DefaultConfig: thresholds higher (Accept and Conditional by
// 0.15, Understood by 0.15, each kept in its valid range), 1.5x
// reactance, backfire and missteps, a smaller gain for addressing
// concerns (AddressTotal - 0.2, at least 0), 1.5x the noise and 1.5x the
// share of firm people (FirmShare, at most 1). On
// HandConfig they give the hand-set hard values (Accept 0.45, Conditional
// 0.15, ReactAsk 0.525, ...).
func Hard() Config { return HardOf(DefaultConfig()) }

// HardOf returns the hard variant of c (see Hard), named "sim-hard".
func HardOf(c Config) Config {
	c.Name = "sim-hard"
	c.Accept = tidy(math.Min(c.Accept+0.15, 1))
	c.Conditional = tidy(math.Min(c.Conditional+0.15, c.Accept))
	c.ReactAsk, c.ReactPressure, c.ReactBackfire = tidy(1.5*c.ReactAsk), tidy(1.5*c.ReactPressure), tidy(1.5*c.ReactBackfire)
	c.Understood = tidy(math.Min(c.Understood+0.15, 1))
	c.AddressTotal = tidy(math.Max(c.AddressTotal-0.2, 0))
	c.NoiseSD = tidy(1.5 * c.NoiseSD)
	c.FirmShare = tidy(math.Min(1.5*c.FirmShare, 1))
	for _, tp := range []*TypeParams{&c.EB, &c.IT, &c.AR, &c.AA} {
		tp.BadMove = tidy(1.5 * tp.BadMove)
	}
	return c
}

// tidy rounds a derived parameter to 12 decimals, so that the variants of
// HandConfig hold exactly the decimal values written in docs/simulator/parameters.md
// (0.45, not 0.44999999999999996).
func tidy(v float64) float64 { return math.Round(v*1e12) / 1e12 }

// Names lists the persuadee names of the simulator's settings, as runs and
// command lines spell them: "sim" (DefaultConfig), "sim-soft" (Soft) and
// "sim-hard" (Hard).
var Names = []string{"sim", "sim-soft", "sim-hard"}

// HandName names HandConfig in ByName and as a config file's base.
const HandName = "sim-hand"

// ByName returns the configuration of the persuadee named name: one of
// Names, HandName, or "sim:FILE", a config file (LoadFile; docs/simulator/parameters.md); its
// Name field is name. It returns an error listing Names for any other
// name, and LoadFile's error (file:line: field: ...) for a bad file.
func ByName(name string) (Config, error) {
	if IsFileRef(name) {
		c, _, err := LoadFile(strings.TrimPrefix(name, FilePrefix))
		return c, err
	}
	switch name {
	case "sim":
		return DefaultConfig(), nil
	case "sim-soft":
		return Soft(), nil
	case "sim-hard":
		return Hard(), nil
	case HandName:
		c := HandConfig()
		c.Name = HandName
		return c, nil
	}
	return Config{}, fmt.Errorf("unknown simulated persuadee %q (known: %s, %s, sim:FILE)", name, strings.Join(Names, ", "), HandName)
}

// Variants lists the named configurations accepted by Variant.
var Variants = []string{"default", "soft", "hard"}

// Variant returns the named configuration ("default", "soft" or "hard");
// it returns an error naming the known variants otherwise.
func Variant(name string) (Config, error) {
	switch name {
	case "", "default", "sim":
		return DefaultConfig(), nil
	case "soft":
		return Soft(), nil
	case "hard":
		return Hard(), nil
	}
	return Config{}, fmt.Errorf("sim: unknown variant %q (known: %v)", name, Variants)
}

// Type returns the parameters of resistance type r; ok is false for an
// unknown type.
func (c *Config) Type(r scenario.Resistance) (tp *TypeParams, ok bool) {
	switch r {
	case scenario.EntrenchedBelief:
		return &c.EB, true
	case scenario.IdentityThreat:
		return &c.IT, true
	case scenario.AutonomyResistance:
		return &c.AR, true
	case scenario.AmbivalentAvoidance:
		return &c.AA, true
	}
	return nil, false
}

// Validate reports the first out-of-range parameter as an error naming the
// field, or nil.
func (c *Config) Validate() error {
	var errs []error
	in := func(name string, v, lo, hi float64) {
		if math.IsNaN(v) || v < lo || v > hi {
			errs = append(errs, fmt.Errorf("sim config: %s = %g outside [%g, %g]", name, v, lo, hi))
		}
	}
	for i, v := range c.Rapport0 {
		in(fmt.Sprintf("Rapport0[%d]", i), v, 0, 1)
	}
	in("Understood", c.Understood, 0, 1)
	in("ReactDecay", c.ReactDecay, 0, 1)
	in("QRate", c.QRate, 1e-9, 1)
	in("Q0", c.Q0, -1, 1)
	in("PEOpen", c.PEOpen, 0, math.Inf(1))
	in("Spontaneous", c.Spontaneous, 0, 1)
	in("TrustClaim", c.TrustClaim, 0, 0.999)
	in("EchoHigh", c.EchoHigh, 1e-9, 1)
	for _, f := range []struct {
		name string
		v    float64
	}{{"RapportDismiss", c.RapportDismiss}, {"ReactDismiss", c.ReactDismiss}, {"DismissCost", c.DismissCost},
		{"ReactManip", c.ReactManip}, {"ManipCost", c.ManipCost}, {"ClaimCost", c.ClaimCost},
		{"RapportIgnore", c.RapportIgnore}, {"EchoCost", c.EchoCost}, {"RepeatCost", c.RepeatCost},
		{"AnswerGain", c.AnswerGain}, {"ArgueGain", c.ArgueGain}} {
		in(f.name, f.v, 0, math.Inf(1))
	}
	in("CAWeight", c.CAWeight, 0, 1)
	in("ACBlock", c.ACBlock, 0, math.Inf(1))
	in("CommitGain", c.CommitGain, 0, 2)
	in("NoiseSD", c.NoiseSD, 0, math.Inf(1))
	in("IdleCost", c.IdleCost, 0, math.Inf(1))
	in("Accept", c.Accept, -1, 1)
	in("FirmShare", c.FirmShare, 0, 1)
	in("FirmGain", c.FirmGain, 0, 1)
	in("FirmCap", c.FirmCap, 0, 2)
	in("PersonSD", c.PersonSD, 0, 2)
	in("Conditional", c.Conditional, -1, c.Accept)
	// one message per field, "NAME = v, want ...", so a config file's
	// error points at the line that set it (ParseFile)
	atLeast := func(name string, v, lo int) {
		if v < lo {
			errs = append(errs, fmt.Errorf("sim config: %s = %d, want >= %d", name, v, lo))
		}
	}
	atLeast("MaxVoice", c.MaxVoice, 1)
	atLeast("Blocking", c.Blocking, 0)
	atLeast("FatigueFree", c.FatigueFree, 0)
	atLeast("PressureTurns", c.PressureTurns, 1)
	atLeast("FloorAsks", c.FloorAsks, 1)
	for _, r := range scenario.Resistances {
		tp, _ := c.Type(r)
		in(string(r)+".Calm", tp.Calm, 0, 1)
		in(string(r)+".Reactance", tp.Reactance, 0, math.Inf(1))
		in(string(r)+".BadMove", tp.BadMove, 0, math.Inf(1))
		in(string(r)+".RehearseCost", tp.RehearseCost, 0, math.Inf(1))
		// finite, unlike the other >= 0 fields: an infinite weight divisor
		// would zero every answer silently
		if tp.Dilution < 0 || math.IsNaN(tp.Dilution) || math.IsInf(tp.Dilution, 0) {
			errs = append(errs, fmt.Errorf("sim config: %s.Dilution = %v, want a finite value >= 0", r, tp.Dilution))
		}
		atLeast(string(r)+".Plans", tp.Plans, 0)
		atLeast(string(r)+".Conflict", tp.Conflict, 0)
		atLeast(string(r)+".MaxConflict", tp.MaxConflict, 0)
		if tp.PlanSpread < 0 || tp.PlanSpread > max(tp.Plans-1, 0) {
			errs = append(errs, fmt.Errorf("sim config: %s.PlanSpread = %d, want in [0, Plans - 1] (Plans = %d)", r, tp.PlanSpread, tp.Plans))
		}
	}
	errs = append(errs, c.Strategy.check()...)
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}
