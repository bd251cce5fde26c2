// Package perception is the seam between what a persuader writes and what
// the simulated persuadee (package sim) reacts to: a Reader turns each
// persuader message into one typed Perception (the acts of the Probe-RPO
// paper's Figure 5 and pressure; how the message engages each of the
// persuadee's hidden concerns; unsupported specific claims; manipulation
// cues; relevance to the persuadee's last reply; echo and repetition),
// and the simulator's dynamics read that value, never the text.
//
// Two readers sit behind the seam (docs/simulator/reader.md):
// Embedded, the default, rule-based and model-free (package tagger's acts
// on a spelling-corrected text, concern engagement widened with a compact
// WordNet 3.0 lexicon embedded in the binary), and LLM, which asks an LLM
// role for the same value as JSON, one structured request per persuader
// turn.
package perception
