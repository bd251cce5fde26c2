package perception

import (
	"slices"
	"strings"
)

// Manipulation by meaning: each cue is recognised by sentence frames
// (frames.go) over lexical fields, not by a list of fixed phrases. The
// fields name the meanings a manipulative sentence is built from (a
// person's negative traits for contempt, sacrifice and debt for guilt, a
// sanction for a threat, a deadline for false urgency, a crowd that
// already agreed for false social proof, a flattering trait used to
// obtain a yes, a feeling waved away, an agreement nobody checked), and
// the frames how they combine with "you", "I", conditions and time. The
// cue lists of earlier versions are frames too (lists.go).
//
// Choice: the fields and frames come from the categories of manipulative
// influence in the persuasion literature (guilt appeals, threats and
// ultimatums, scarcity and false deadlines, contempt, bandwagon and false
// consensus, ingratiation, minimisation) and were written before the
// held-out gate phrasings (perception/testdata/manipulation_heldout.jsonl)
// were read against them; docs/simulator/reader.md ("Perception gates") gives
// the figures and what the frames still miss.
var cueFields = map[string][]string{
	"you":       words("you you're you've you'll you'd your yourself u youre"),
	"i":         words("i i'm i've i'll i'd me my myself im ive"),
	"iwe":       words("i i'm i've i'll i'd we we're we've we'll we'd us"),
	"will1":     words("i'll we'll ill"),
	"be":        words("is are was were be being been am seem seems seemed sound sounds sounded act acting behave behaving look looks looking get getting"),
	"negtrait":  words("helpless pathetic baby babies childish clueless stupid dumb idiot idiotic fool foolish silly ridiculous absurd naive lazy coward cowardly spineless dramatic hysterical paranoid irrational embarrassing immature ignorant incompetent useless hopeless daft dense brainless gutless whiny petty laughable spoilt spoiled entitled melodramatic wimp wimpy moron moronic"),
	"child":     words("child children kid kids baby toddler infant teenager"),
	"postrait":  words("clever smart intelligent bright wise brave sensible reasonable rational brilliant sharp savvy mature capable insightful thoughtful strong"),
	"selfish":   words("selfish ungrateful heartless thoughtless inconsiderate uncaring unfeeling"),
	"hurt":      words("hurt hurts heartbroken devastated crushed disappointed gutted wounded"),
	"gratitude": words("gratitude grateful appreciation appreciative thankful"),
	"sacrifice": words("sacrifice sacrificed sacrificing bent slaved struggled carried"),
	"done":      words("done did been given gave sacrificed put through carried"),
	"alone":     words("alone myself own"),
	"again":     words("again always usual"),
	"people":    words("friends friend family families colleagues colleague neighbours neighbors neighbourhood neighborhood parents couples couple others people kids children relatives siblings classmates mates team office coworkers members street town village world class school group club"),
	"all":       words("everyone everybody all every entire whole literally"),
	"conform":   words("done did signed joined agreed board along bought booked enrolled switched"),
	"decide":    words("answer decide decision yes commit commitment sign agree lock book confirm choose"),
	"deadline":  words("now today tonight immediately minute moment lunch noon midnight tomorrow"),
	"need":      words("need needs must have has got"),
	"chance":    words("opportunity chance offer spot spots place places deal window slot slots discount"),
	"gone":      words("gone disappear disappears disappeared vanish vanishes slip slipped slips close closes closing expire expires expired taken sell sold"),
	"sanction":  words("leave leaving quit walk divorce withdraw expose report dump"),
	"refuse":    words("refuse refusing refuses decline declining reject rejecting"),
	"person":    words("person someone somebody anyone anybody man woman people adult"),
	"obvious":   words("obvious clear plain undeniable evident"),
	"see":       words("see sees know knows agree agrees tell realise realize understand"),
	"feel":      words("feel feels felt feeling feelings fear afraid worry worried worries think thought might may"),
	"worries":   words("feelings feeling worries worry fears fear concerns concern doubts doubt"),
	"fret":      words("fretting fret worrying fussing whining moaning complaining stressing panicking sulking"),
	"expect":    words("yes agree go say accept sign"),
}

func words(s string) []string { return strings.Fields(s) }

// The frames of each cue. A sentence carries a cue when one of its
// frames matches; a threat also when a refusal condition and a sanction
// meet in one sentence, and flattery when praise and the yes it is meant
// to buy do (combined, below).
var (
	guiltFrames = []string{
		"after all/everything .. @iwe .. @done", "after all/everything .. @done .. for you",
		"@i .. @sacrifice .. for you/us/this/years", "@i .. gave/given/giving up .. so/everything/all/my/lot/much",
		"how much @iwe .. given/gave/sacrificed/done/put", "think about/of .. how_much/everything/all .. @iwe",
		"@you owe", "owe it to me/us", "the least you could/can do", "if you .. cared/loved/respected/valued",
		"@you .. @selfish", "so/how/being @selfish", "break/breaks/broke/breaking my heart",
		"@i .. @hurt", "it/that hurts/hurt .. that you", "more/bit/little/some/any .. @gratitude", "@gratitude .. from you",
		"@i .. on_my_own/by_myself/alone/myself .. @again",
		"how could you", "do/don't you even/ever care", "don't you care",
	}
	threatFrames = []string{
		"!don't/do_not expect .. help/support/favours/favors/anything/me", "won't get/see .. help/support .. from me",
		"never speak/talk/help .. again",
	}
	// A threat: a refusal condition and a sanction in one sentence.
	refusalFrames = []string{
		"if you .. won't/refuse/decline/reject/keep", "!if you don't/can't/do_not .. do/agree/go/come/try/sign/say/want/accept/change",
		"unless you", "!if this/it .. doesn't/won't/isn't/does_not", "say no and", "@refuse .. and",
		"turn .. down and", "keep .. and", "otherwise", "or .. i'll/we'll/you'll",
	}
	sanctionFrames = []string{
		"@will1 .. @sanction", "i_will/we_will .. @sanction", "moving/move out", "i'm/i_am/im .. leaving/walking/done",
		"cut .. off", "end it/this/us/things", "rethink/reconsider .. whether/if .. we/us/future/together/relationship",
		"rethink/reconsider .. us/our_future/our_relationship", "will_hear/hear about it", "hear .. from me",
		"!can't/cannot/not .. keep .. putting/going/doing/covering/living", "stop covering/helping/supporting/paying/talking/speaking",
		"!don't/do_not expect",
	}
	urgencyFrames = []string{
		"@need .. @decide .. before/by/now/today/tonight/immediately", "@decide .. before/by .. end/tonight/tomorrow/lunch/noon/midnight",
		"@decide .. this/right .. moment/minute/second/instant", "@need .. be .. yes .. before/by/today/tonight/now",
		"@chance .. @gone", "almost/nearly/practically gone", "slip/slipped/slips away",
		"wait/delay/hesitate .. and .. gone/lose/miss/late/slip/slipped/over", "no time .. left/to_think/to_lose/to_waste",
		"there's/there_is no time", "every/each day/minute/hour/week .. wait/delay/hesitate",
		"@need .. move/act/go/decide/start .. today/now/tonight/immediately",
	}
	contemptFrames = []string{
		"acting/being/behaving/sounding .. @negtrait", "@negtrait .. to watch/see/hear", "like @you .. @child",
		"like a @child", "half a brain", "nobody/anyone/anybody/noone with .. brain/brains/sense", "rocket science",
		"use your head/brain", "get a grip", "act your age", "man up", "pull yourself together",
		"do/did you ever/even listen/hear", "listen to yourself", "can't/cannot believe @i .. have to", "what's wrong with you",
		"spell .. out for you",
	}
	// contemptYouFrames need a statement: "you ... silly" in a question
	// ("do you think it's silly?") asks the persuadee's view, and a
	// feeling in between ("you might feel silly at first") is theirs.
	contemptYouFrames = []string{"@you .. @negtrait"}
	socialFrames      = []string{
		"@all .. @people .. @conform", "@all .. @people .. except/but you", "except you/except_for_you",
		"@you .. the_last/the_only/last/only .. one/person/holdout/people", "still holding out",
		"everyone/everybody/anyone/anybody .. in your/my situation/position/shoes",
		"everyone/everybody .. goes/go/went/gone along",
	}
	flatteryFrames = []string{
		"as @postrait as you", "with your .. judgement/judgment/intelligence/brains/wisdom/sense/experience",
		"too @postrait to", "@postrait enough to .. @expect", "you of all people",
	}
	// Flattery: praise and the yes it is meant to buy in one sentence.
	praiseFrames = []string{
		"admire/love/respect .. how/your .. @postrait", "@you .. the_most/so/such/really/incredibly .. @postrait",
		"@postrait person/people/one/woman/man/guy",
	}
	expectFrames = []string{
		"so .. @expect", "which is why", "that's why", "i'm_sure/i_am_sure you'll/you_will", "i know you'll/you_will",
		"surely", "counting on", "you'll .. say_yes/agree/go_for_it/come_round",
	}
	dismissalFrames = []string{
		"mountain/molehill", "make/making/made .. fuss/drama/song", "make/making/made .. big deal", "no/not_a .. big deal",
		"overthinking/overthink/overreacting/overreact", "stop .. @fret",
		"!not/nothing .. worth .. losing/worrying/stressing/fretting/upset/fuss/sleep",
		"your .. @worries .. aren't/isn't/don't/doesn't/not .. point/matter/relevant/important/count",
	}
	// Imperatives that wave a feeling away, at the head of a clause.
	dismissalHeads  = []string{"relax", "chill", "calm down", "lighten up"}
	consensusFrames = []string{
		"we/you .. both/all .. know", "you_and_i/you_and_me .. know", "deep down .. you/we .. know",
		"you know as well as", "you know .. i'm/i am right", "you know .. it's true",
		"everyone/everybody/anyone/anybody .. can/could .. see/tell", "everyone/everybody knows/agrees",
		"anyone/anybody/everyone/everybody .. .. see/sees/know/knows", "agree/agrees with me/us",
		"@obvious to anyone/everyone/anybody/everybody/all", "no .. debate/dispute/argument/question .. about it/this/that",
		"only one .. answer/right/sensible/real .. choice/answer/option", "goes without saying",
		"in their right mind", "no sane/reasonable/sensible person",
	}
)

// frames is every frame of the reader, built once from the lists above
// and in lists.go and assert.go (the package's fixed rules, not a cache).
var frames = newFrameBank([numFrameSets][]string{
	fsGuilt:       slices.Concat(guiltFrames, guiltPhrases),
	fsThreat:      slices.Concat(threatFrames, threatPhrases),
	fsRefusal:     refusalFrames,
	fsSanction:    sanctionFrames,
	fsUrgency:     slices.Concat(urgencyFrames, urgencyPhrases),
	fsContempt:    slices.Concat(contemptFrames, dismissPhrases, dismissFrames),
	fsContemptYou: contemptYouFrames,
	fsSocial:      slices.Concat(socialFrames, socialPhrases),
	fsFlattery:    flatteryFrames,
	fsPraise:      praiseFrames,
	fsExpect:      expectFrames,
	fsDismissal:   dismissalFrames,
	fsConsensus:   consensusFrames,
	fsAutonomy:    autonomyPhrases,
	fsDismiss:     slices.Concat(dismissPhrases, dismissFrames),
	fsAck:         ackPhrases,
	fsRetract:     retractFrames,
	fsAdmit:       admitFrames,
	fsWish:        wishFrames,
	fsDismissHead: dismissalHeads,
})

// sentenceFrames are the sets matched on every sentence (all but the
// clause-head imperatives).
const sentenceFrames = uint32(1)<<numFrameSets - 1&^(1<<fsDismissHead)

// cuesOf finds the manipulation cues of sentence si of d, from the
// frame sets hit matched on it (at: where), and sets sfCue in flags for
// it, and for the sentence after it when an autonomy phrase's "but"
// opens that one.
func cuesOf(d doc, si int, hit uint32, at *[numFrameSets]int32, flags []uint8) CueSet {
	st := d.sents[si]
	ts := d.toks[st.first:st.end]
	has := func(set int) bool { return hit&(1<<set) != 0 }
	var sc CueSet
	if has(fsGuilt) {
		sc = sc.With(Guilt)
	}
	if has(fsUrgency) {
		sc = sc.With(Urgency)
	}
	if has(fsContempt) || has(fsContemptYou) && !asks(d.pd, int(d.toks[st.first].sent)) && contemptYou(d, ts, int(at[fsContemptYou])) {
		sc = sc.With(Contempt)
	}
	if has(fsSocial) {
		sc = sc.With(SocialProof)
	}
	if has(fsThreat) || has(fsRefusal) && has(fsSanction) {
		sc = sc.With(Threat)
	}
	if has(fsFlattery) || has(fsPraise) && has(fsExpect) {
		sc = sc.With(Flattery)
	}
	if has(fsDismissal) || dismissHead(d, st) {
		sc = sc.With(Dismissal)
	}
	if has(fsConsensus) {
		sc = sc.With(FalseConsensus)
	}
	if has(fsAutonomy) {
		but, next := false, false
		for _, t := range ts[at[fsAutonomy]:] {
			if t.w == "but" || t.w == "however" {
				but = true
			}
		}
		if !but && si+1 < len(d.sents) {
			nx := d.toks[d.sents[si+1].first]
			but = nx.w == "but" || nx.w == "however"
			next = but
		}
		if but {
			sc = sc.With(AutonomyBut)
		}
		if next {
			// "It's your choice. But ...": the taking back too
			flags[si+1] |= sfCue
		}
	}
	if sc != 0 {
		flags[si] |= sfCue
	}
	return sc
}

// contemptYou reports a "you ... <negative trait>" frame, from token
// from of ts on, whose span holds none of the persuadee's own feelings or
// hedges ("you might feel silly").
func contemptYou(d doc, ts []token, from int) bool {
	feel, trait := fieldBit("feel"), fieldBit("negtrait")
	for at := from; at < len(ts); at++ {
		if !frames.matchAt(d, ts, at, fsContemptYou) {
			continue
		}
		ok := true
		for k := at + 1; k < len(ts) && k <= at+frameGap+1; k++ {
			if ts[k].wi.fields&feel != 0 {
				ok = false
				break
			}
			if ts[k].wi.fields&trait != 0 {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// fieldBit returns the bit of field name in token.fields.
func fieldBit(name string) uint64 { return 1 << slices.Index(fieldNames, name) }

// dismissHead reports a clause of sentence st that opens (after
// discourse markers and "just") with an imperative waving a feeling
// away ("Just relax.", "Calm down, it's fine.").
func dismissHead(d doc, st sentence) bool {
	pd := d.pd
	for c := pd.Sentences[d.toks[st.first].sent].FirstClause; c < pd.Sentences[d.toks[st.first].sent].EndClause; c++ {
		h := pd.Head(int(c))
		if h < 0 {
			continue
		}
		end := int(pd.Clauses[c].End)
		for h < end && d.toks[h].w == "just" {
			h++
		}
		if h < end && frames.matchAt(d, d.toks[h:end], 0, fsDismissHead) {
			return true
		}
	}
	return false
}
