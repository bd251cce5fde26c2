package tagger

import "strings"

// Strategy is one persuader strategy of the PersuasionForGood annotation
// scheme (Wang et al. 2019, Persuasion for Good, Table 2 and §4), plus the
// non-strategy dialogue acts the annotators also labelled that the
// simulator needs to tell apart (greeting, praise, thanks) and the amount
// request. It is a second label family beside Act: an utterance has acts
// (Probe-RPO paper, Figure 5) and strategies, read in the same pass.
type Strategy uint8

// The strategies, as bit positions of a StrategySet. Each is named after
// its P4G label (String returns the label as the annotators wrote it).
const (
	// LogicalAppeal is reasoning about why a donation helps (P4G
	// "logical-appeal": "the use of reasoning and evidence").
	LogicalAppeal Strategy = iota
	// EmotionAppeal elicits feelings about the children's plight (P4G
	// "emotion-appeal": "to elicit specific emotions").
	EmotionAppeal
	// CredibilityAppeal cites the organisation's standing and record (P4G
	// "credibility-appeal": "credentials and impacts").
	CredibilityAppeal
	// PersonalStory is a narrative from the persuader's own life (P4G
	// "personal-story").
	PersonalStory
	// SelfModeling is the persuader stating its own (intended) donation as
	// an example (P4G "self-modeling").
	SelfModeling
	// FootInTheDoor asks for a small first step ("even a few cents")
	// (P4G "foot-in-the-door").
	FootInTheDoor
	// DonationInformation is the donation procedure: how much, from what,
	// where it goes (P4G "donation-information").
	DonationInformation
	// SourceInquiry asks whether the persuadee knows the organisation
	// (P4G "source-related-inquiry").
	SourceInquiry
	// TaskInquiry asks the persuadee's view of donating or charity in
	// general (P4G "task-related-inquiry").
	TaskInquiry
	// PersonalInquiry asks about the persuadee's own life and habits (P4G
	// "personal-related-inquiry").
	PersonalInquiry
	// Greeting opens the conversation ("hello, how are you?") (P4G
	// "greeting"; not a persuasion strategy).
	Greeting
	// Praise compliments the persuadee ("that's very kind of you") (P4G
	// "praise-user"; not a persuasion strategy).
	Praise
	// Thanks thanks the persuadee (P4G "thank"; not a persuasion strategy).
	Thanks
	// AskAmount asks how much the persuadee will give (P4G
	// "ask-donation-amount"); the tagger also reads such a question as a
	// Commitment act.
	AskAmount
	// NumStrategies is the number of strategies.
	NumStrategies = 14
)

var strategyNames = [NumStrategies]string{
	"logical-appeal", "emotion-appeal", "credibility-appeal", "personal-story", "self-modeling",
	"foot-in-the-door", "donation-information", "source-related-inquiry", "task-related-inquiry",
	"personal-related-inquiry", "greeting", "praise-user", "thank", "ask-donation-amount",
}

// String returns the strategy's P4G label, e.g. "logical-appeal".
func (s Strategy) String() string {
	if int(s) < NumStrategies {
		return strategyNames[s]
	}
	return "unknown"
}

// Strategies lists every strategy in declaration order.
var Strategies = []Strategy{
	LogicalAppeal, EmotionAppeal, CredibilityAppeal, PersonalStory, SelfModeling, FootInTheDoor,
	DonationInformation, SourceInquiry, TaskInquiry, PersonalInquiry, Greeting, Praise, Thanks, AskAmount,
}

// ContentFree is the set of strategies that carry no persuasive content
// (greeting, praise, thanks): the simulator treats a turn holding only
// these like filler (docs/simulator/model.md, "P4G strategies").
const ContentFree = StrategySet(1<<Greeting | 1<<Praise | 1<<Thanks)

// ParseStrategy returns the Strategy whose P4G label is s
// (case-insensitive; the rare P4G spelling
// "non-personal-task-related-inquiry" is TaskInquiry); ok is false for any
// other label.
func ParseStrategy(s string) (Strategy, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "non-personal-task-related-inquiry" {
		return TaskInquiry, true
	}
	for i, n := range strategyNames {
		if n == s {
			return Strategy(i), true
		}
	}
	return 0, false
}

// StrategySet is a set of strategies (bit i = Strategy i).
type StrategySet uint16

// Has reports whether st is in s.
func (s StrategySet) Has(st Strategy) bool { return s&(1<<st) != 0 }

// With returns s plus st.
func (s StrategySet) With(st Strategy) StrategySet { return s | 1<<st }

// Strings returns the labels in s in declaration order (never nil).
func (s StrategySet) Strings() []string {
	out := []string{}
	for st := Strategy(0); st < NumStrategies; st++ {
		if s.Has(st) {
			out = append(out, st.String())
		}
	}
	return out
}

// Strategy rule modes: where a matched phrase counts.
const (
	smAny      uint8 = iota // any sentence
	smQuestion              // only in a question sentence
	smNoYou                 // only in a clause with no second-person word
	smAmount                // only in a question clause with a decision term or a modal verb
	numModes
)

// kStrategy is the first strategy cue kind: strategy st in mode m is cue
// kind kStrategy + st*numModes + m.
const kStrategy cueKind = 64

// Adjectives of praise, shared by the praise patterns.
const praiseAdj = "great/awesome/wonderful/amazing/kind/generous/nice/sweet/admirable/fantastic/excellent/cool/lovely/noble/thoughtful/beautiful/commendable/impressive/incredible/compassionate/caring/good"

// strategyRules are the phrase tables of the strategies (same pattern
// syntax as rules). They were written from the tuning part of the 300
// annotated P4G dialogues only (persuaders with P4GHeldOut false); see
// docs/tagger.md for the figures on the tuning and held-out parts.
var strategyRules = []struct {
	st   Strategy
	mode uint8
	pats []string
}{
	{Greeting, smAny, []string{
		"hello", "hi", "hey", "hiya", "howdy", "greetings", "good morning/afternoon/evening/day",
		"how are you/u/ya/things", "how r you/u", "how's/hows it going", "how is it going", "how you doing",
		"how's/hows your day/morning/evening/afternoon/weekend", "how is your day/morning/evening/afternoon/weekend",
		"how have you been", "how's/hows everything", "nice/good/pleased/glad to meet/chat/talk",
		"pleasure to meet/chat/talk", "i'm/i am doing well/good/great/fine",
	}},
	{Thanks, smAny, []string{
		"thank/thanks/thankyou/thx/ty", "i appreciate", "i really appreciate", "appreciate it/that/your/you/the",
		"much appreciated",
	}},
	{Praise, smAny, []string{
		"that's/thats/that/this/it's/its so/very/really/truly " + praiseAdj,
		"that is/was " + praiseAdj, "that is/was/would so/very/really/be " + praiseAdj,
		"you're/youre/you " + praiseAdj, "you're/youre/you so/very/really/such/truly " + praiseAdj,
		"you are " + praiseAdj, "you are so/very/really/such/truly/a " + praiseAdj,
		"you are/you're a * person", "you're/you are such a", praiseAdj + " of you",
		"good for you", "i admire", "glad/happy/great/nice/good/wonderful to hear",
		"people like you/yourself", "blessed", "glad that you/to see", "so glad", "really glad", "pleased to hear", "you are an/a", "you're an/a",
		"bless you", "you rock", "kind heart", "big heart", "generous person",
	}},
	{CredibilityAppeal, smAny, []string{
		"international", "non governmental/government/profit", "nonprofit/ngo/charity navigator", "organization/organisation/charity that/which",
		"promotes/promote", "provides/provide relief", "relief", "developing countries/nations/world",
		"children's rights", "rights", "url", "website", "www", "org", "founded", "since #", "headquartered",
		"based in", "reputable", "trusted/trustworthy/legit/legitimate/reliable", "rated/rating/ratings",
		"transparent/transparency", "they've/they have helped/been/worked/provided", "they help/helps/provide/work/operate/support/have",
		"save the children is/has/was/works/helps/provides/operates/does/focuses/supports",
		"in # countries", "over # countries", "around the world", "worldwide", "globally", "programs/program",
		"education", "healthcare", "health", "emergency/emergencies", "disaster/disasters", "well known", "known for",
		"reputation", "years of", "# years", "helps support", "goes directly/straight to", "of every dollar",
		"overhead", "administrative", "% of their/the/donations/funds/funding", "funds/funding/donations/proceeds are/go/goes",
		"they are/they're helping/active/going/ready/on/in/also/always/very", "hurricane/earthquake/flood/flooding/storm/storms", "victims",
		"war zones/zone", "third world", "all over the world", "countries", "they do", "they've", "their work/mission/programs/funding", "they are a/an/one/very/well/the", "it is a/an/one", "is one of the",
	}},
	{EmotionAppeal, smAny, []string{
		"violence", "killed", "injured", "war/wars/warzone", "conflict", "suffer/suffering/suffers",
		"starve/starving/starvation/hunger/hungry/malnourished/malnutrition", "poverty",
		"die/dying/died/death/deaths", "threat", "refugee/refugees", "syria/syrian/yemen", "horrible/terrible/awful",
		"heartbreaking/devastating/tragic/sad/sadly/heartbreak", "imagine", "innocent", "heart/hearts",
		"grown up", "facing", "abuse/abused", "homeless", "orphan/orphans/orphaned", "disease/diseases/sick",
		"no food", "clean water", "scared", "desperate/desperately", "deserve/deserves", "vulnerable", "cry/crying", "pain",
	}},
	{LogicalAppeal, smAny, []string{
		"make a difference", "difference", "every dollar/cent/penny", "your donation would/will/could/can",
		"if everyone", "think about/of", "the more", "important", "need it", "a lot of good",
		"compared to", "it's/it is only/just", "you won't/wouldn't/will not even miss/notice", "coffee/snack/latte", "spend", "worth", "can/could/will/would help",
		"because", "so that", "which means", "great cause", "impact",
		"future", "responsibility", "better", "easy", "you can/could help", "help a child", "just think",
		"we all", "so many", "children need", "think how", "this will/would/can/could", "go further", "goes further",
		"benefit/benefits",
	}},
	{DonationInformation, smAny, []string{
		"deducted/deduct/deducting", "task payment", "your payment/earnings/bonus/pay", "the payment",
		"any amount", "from $ #", "from # to", "$ # to", "research team", "send it/them", "sent to",
		"directly", "all your payment", "entire payment", "hit", "at the end of the task",
		"this task", "the task", "from your task/payment/bonus/earnings/pay/reward/compensation", "of your payment", "payment",
	}},
	{PersonalStory, smAny, []string{
		"i remember", "when i was", "i used to", "years ago", "i have/i've been donating/supporting/volunteering/working/giving",
		"i grew up", "my son/daughter/kids/children/family/mother/mom/dad/father/brother/sister/friend/friends/wife/husband/niece/nephew/grandmother/grandma/cousin/church/school/job/work/parents/child",
		"i work/worked/volunteer/volunteered/visited/went/met/lived/saw/watched/read",
		"i once", "we had", "we were", "i had", "when i", "i personally/myself/recently/usually/always/often",
		"i've donated/given/seen/worked/volunteered/been", "i have been to", "i have donated/given/seen/worked/volunteered",
		"i have a/two/three/four/kids/children/family/friends", "children of my own", "kids of my own", "in my community/town/area/life",
		"i know how/what", "i've/i have seen",
	}},
	{SelfModeling, smAny, []string{
		"match your/the/a/their donation", "i'm/i am in", "i will/i'll/i'd also", "i also",
	}},
	{SelfModeling, smNoYou, []string{
		"i donate/donated/give/gave/match/contribute/contributed/support", "i'll/i'd/i'm donate/give/match/contribute/donating/giving/matching",
		"i/we * donate/donating/match/contribute/contributing/give/giving/donated",
		"i/we * * donate/donating/match/contribute/give/giving/donated",
		"i'm/im/i'll/i'd/we'll/we're * donate/donating/match/give/contribute/giving",
		"i'm/im/i'll/i'd/we'll/we're * * donate/donating/match/give/contribute",
		"i * * * donate/give/match",
	}},
	{FootInTheDoor, smAny, []string{
		"even a small/little/few/dollar/penny/cent", "even $", "even #", "as little as", "little bit", "every little", "every bit",
		"small amount/amounts/donation/donations/contribution/sum/gift", "a small", "cents", "penny/pennies",
		"a long way", "just a dollar/few/little", "only a few", "just $", "only $", "any little",
		"anything helps", "no matter how small", "small", "a couple", "few bucks", "spare",
	}},
	{SourceInquiry, smQuestion, []string{
		"heard of/about", "familiar with", "know of", "know about", "know anything/much about", "know what save",
		"know who", "know save", "aware of",
	}},
	{TaskInquiry, smQuestion, []string{
		"do/did you know", "would you like to know/hear/learn", "do you want to know/hear/learn",
		"any questions", "do you think", "what do you think", "interested in learning/hearing/knowing",
		"more information/info", "have you ever thought", "how do you feel about", "do you agree",
		"do you mind if", "can/may i tell", "tell you about/more",
	}},
	{PersonalInquiry, smQuestion, []string{
		"do you have kids/children/a/any", "do you donate/volunteer/give", "have you ever donated/donate/given/volunteered",
		"do you ever", "do you usually/often/currently/regularly/support", "you donate", "you donated",
		"you ever", "are you a/from/in/currently/interested/involved", "what charities/charity/organizations/causes",
		"which charities/charity/organizations", "what do you do", "where are you", "what kind of", "your favorite",
		"do you feel", "your thoughts",
	}},
	{AskAmount, smAmount, []string{
		"how much", "what amount/percentage/portion/percent", "how many dollars/cents", "which amount",
	}},
}

func init() {
	for _, r := range strategyRules {
		for _, src := range r.pats {
			compile(kStrategy+cueKind(int(r.st)*int(numModes)+int(r.mode)), src)
		}
	}
}

// inquiries are the three inquiry strategies.
const inquiries = StrategySet(1<<SourceInquiry | 1<<TaskInquiry | 1<<PersonalInquiry)

// strategies turns the strategy cues among sc.cues into a StrategySet;
// acts are the acts resolve found.
func (sc *scratch) strategies(acts ActSet) StrategySet {
	var set StrategySet
	for _, c := range sc.cues {
		if c.kind < kStrategy {
			continue
		}
		k := int(c.kind - kStrategy)
		st, mode := Strategy(k/int(numModes)), uint8(k%int(numModes))
		if set.Has(st) {
			continue
		}
		switch mode {
		case smQuestion:
			if !sc.sents[sc.clauses[c.clause].sent].marked {
				continue
			}
		case smNoYou:
			if sc.hasFlag(sc.clauses[c.clause], fYou) {
				continue
			}
		case smAmount:
			// as resolve's amount request: "how much would you like to
			// give?", not "how much does it weigh on you?"
			cl := sc.clauses[c.clause]
			if !sc.sents[cl.sent].marked || sc.cflags[c.clause]&cbDecision == 0 && !sc.hasFlag(cl, fModal) {
				continue
			}
		}
		set = set.With(st)
	}
	if set&(inquiries|1<<AskAmount|1<<Greeting) == 0 && !acts.Has(Commitment) && sc.openQuestion() {
		// Choice: a question to the persuadee that is no other inquiry and
		// asks for no decision is a task-related inquiry, P4G's catch-all
		// for questions about the cause and the persuadee's views of it.
		set = set.With(TaskInquiry)
	}
	return set
}

// openQuestion reports whether some question clause opens with a wh-word
// or an auxiliary and holds a second-person word, but no decision term
// and no small talk (resolve's clause flags).
func (sc *scratch) openQuestion() bool {
	for _, s := range sc.sents {
		if !s.marked {
			continue
		}
		for ci := s.firstClause; ci < s.endClause; ci++ {
			cl := sc.clauses[ci]
			h := sc.head(cl)
			if h >= 0 && sc.toks[h].flags&(fWH|fAux) != 0 && sc.hasFlag(cl, fYou) && sc.cflags[ci]&(cbDecision|cbSmallTalk) == 0 {
				return true
			}
		}
	}
	return false
}
