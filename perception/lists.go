package perception

// Word and phrase lists of the embedded reader. Phrases are lower-case
// words separated by spaces; "*" stands for any one word and "a/b" for
// alternatives. docs/simulator/reader.md ("The embedded reader") lists what each
// detects.

// ackText are words of acknowledging without answering: they never count
// as content an answer brings.
const ackText = `understand understandable understood hear heard point points fair valid worry worries worried worrying
concern concerns concerned question questions doubt doubts issue issues raise raised raising mention mentioned
appreciate sense reasonable legit legitimate totally absolutely completely real genuine important matter matters
glad happy sorry tough hard difficult feeling feelings`

// linkText are words that tie a sentence to the persuadee or the
// proposal (besides the proposal's own content words).
const linkText = `you your yours yourself you're you'll you'd you've we our ours us let's we'll we're we've together`

// dismissPhrases wave a concern away or mock it (the Contempt cue too).
//
// Words of a person's negative traits ("silly", "ridiculous", "lazy")
// dismiss only when they are said of the persuadee, of what they said or
// of their worry (dismissFrames), not anywhere ("you might feel a bit
// silly at first" reassures).
var dismissPhrases = []string{
	"don't care", "do not care", "dont care", "who cares", "couldn't care less", "nobody cares", "no one cares",
	"doesn't matter", "does not matter", "get over it", "get over", "stop worrying", "stop whining", "stop complaining",
	"stop moaning", "nonsense", "overreacting", "over reacting", "being dramatic", "so dramatic", "grow up",
	"excuse", "excuses", "made up", "all in your head", "in your head", "snowflake", "pointless worry", "non issue",
	"non-issue", "come off it", "give me a break", "not a real", "fussing",
}

// dismissFrames: a negative trait said of the persuadee's words, worry or
// conduct (frames.go; fields in cues.go).
var dismissFrames = []string{
	"that's/that_is/it's/it_is/this_is/how/what_a/what_an/so/such .. @negtrait", "be/being/stop_being/don't_be .. @negtrait",
	"your .. @negtrait", "@negtrait .. idea/ideas/worry/worries/excuse/excuses/objection/objections/fear/fears/concern/concerns/question/questions/doubts",
}

// guiltPhrases, urgencyPhrases, socialPhrases and threatPhrases raise
// their cues.
var (
	guiltPhrases = []string{
		"if you really cared", "if you truly cared", "if you cared", "if you loved", "if you really loved",
		"feel guilty", "feel bad if", "you'll feel terrible", "let * down", "let everyone down", "letting * down",
		"selfish", "shame on you", "ashamed", "after all i've done", "after everything i've done", "you owe",
		"disappoint me", "disappointed in you", "how could you", "think of the children", "on your conscience",
		"blood on your hands", "stingy", "heartless",
	}
	urgencyPhrases = []string{
		"now or never", "last chance", "final chance", "only chance", "running out of time", "time is running out",
		"offer ends", "today only", "only today", "before it's too late", "too late", "act now", "decide now",
		"decide right now", "right now or", "sign right now", "do it right now", "agree right now", "commit right now",
		"decide immediately", "sign immediately", "this minute", "hurry", "won't last", "limited time",
		"tonight or", "by tonight", "deadline is", "no time to", "don't wait", "can't wait any longer", "expires",
		"last spot", "last spots", "only a few left", "closing soon",
	}
	socialPhrases = []string{
		"everyone else", "everybody else", "everyone already", "everybody already", "everyone has already",
		"everybody has already", "everyone's already", "everyone agrees", "everybody agrees",
		"anyone sensible", "anyone smart", "anyone reasonable", "anyone with sense", "any sensible", "any reasonable",
		"any smart", "any normal", "all your friends", "all of your friends",
		// "nobody else hesitates", not "nobody else needs to know"
		"no one else would/is/has/does/thinks/worries/minds/complains/objects/hesitates/refuses/waits/cares",
		"nobody else would/is/has/does/thinks/worries/minds/complains/objects/hesitates/refuses/waits/cares",
		"normal people", "smart people", "sensible people", "most people would already", "the whole world",
		"you're the only one", "you are the only one",
	}
	threatPhrases = []string{
		"or else", "you'll regret", "you will regret", "you'd regret", "you'll be sorry", "you will be sorry",
		"face the consequences", "there will be consequences", "i'll tell", "i will tell", "i'll make sure", "i'll stop helping you", "i will stop helping you",
		"i'll stop talking to you", "i'll leave you for good", "i will leave you for good", "i'm leaving you", "i'll walk out on you",
		"i will walk out on you", "we're done", "we are done", "don't come crying", "or i'll", "or i will", "or we're",
		"i won't help you", "i'll never", "you'll lose", "you will lose", "you'll pay", "i'll report",
	}
	autonomyPhrases = []string{
		"your choice", "your decision", "your call", "up to you", "no pressure", "free to", "take your time",
		"no rush", "whatever you decide", "whatever you choose", "don't have to", "do not have to", "respect your",
		"entirely yours", "fine if you", "okay if you", "ok if you", "no obligation", "your own pace",
	}
	ackPhrases = []string{
		"i understand", "i hear you", "i get that", "i get it", "i see why", "i see what", "that makes sense",
		"makes sense", "fair point", "good point", "i appreciate", "i know", "that's understandable",
		"understandable", "totally valid", "that's valid", "i can see", "thanks for", "thank you for",
	}
)

// sourceNouns mark a named source when capitalised after another
// capitalised word or a name ("Harvard University", "the Reeves
// Institute"); sourceNames are institutions often invoked by name.
var (
	sourceNouns = setOf("university institute journal foundation association organization organisation center centre council agency department school college clinic hospital laboratory lab commission bureau")
	sourceNames = setOf("harvard stanford oxford cambridge yale mit princeton berkeley who cdc nhs nih fda mayo gallup pew lancet nasa unicef johns hopkins cleveland")
	studyWords  = setOf("study studies survey surveys research report poll trial trials experiment paper analysis researchers scientists experts statistics data")
	figureNouns = setOf("people patients participants families children kids users customers students employees cases households donors adults couples members workers parents women men respondents subjects")
)
