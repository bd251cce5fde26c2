package perception

import "github.com/persuarena/persuarena/prose"

// wclass is a word's classes in the reader's lists (bits), looked up
// once per token (token.cls).
type wclass uint32

const (
	wStop       wclass = 1 << iota // prose.StopWords
	wAck                           // ackText: acknowledging, never content
	wLink                          // linkText: ties a sentence to the persuadee
	wGeneric                       // genericWords: a move, not a reason
	wWorry                         // worryWords: naming the worry
	wNounHead                      // nounHeads: a determiner or preposition
	wPredicate                     // predicateWords: a copula or auxiliary
	wEpistemic                     // epistemic: saying, knowing, believing
	wSpeech                        // speechActs: saying that takes back
	wContrast                      // contrastive: but, however, ...
	wStudy                         // studyWords
	wSourceName                    // sourceNames
	wSourceNoun                    // sourceNouns
	wFigureNoun                    // figureNouns
	wNumber                        // numberWords
)

// wordClasses maps a word to its classes, built once from the lists.
var wordClasses = func() map[string]wclass {
	m := map[string]wclass{}
	for _, c := range []struct {
		set map[string]bool
		c   wclass
	}{
		{ackWords, wAck}, {linkWords, wLink}, {genericWords, wGeneric}, {worryWords, wWorry},
		{nounHeads, wNounHead}, {predicateWords, wPredicate}, {epistemic, wEpistemic}, {speechActs, wSpeech},
		{contrastive, wContrast}, {studyWords, wStudy}, {sourceNames, wSourceName}, {sourceNouns, wSourceNoun},
		{figureNouns, wFigureNoun}, {numberWords, wNumber},
	} {
		for w := range c.set {
			m[w] |= c.c
		}
	}
	for w := range prose.Set(prose.StopWords) {
		m[w] |= wStop
	}
	return m
}()
