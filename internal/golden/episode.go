package golden

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/persuarena/persuarena/episode"
)

// EpisodeJSON returns ep's JSON with each turn on a line of its own, so a
// diff names the turn that moved: the episode's fields up to "turns" on the
// first line, one line per turn, the fields after them on the last.
// Deleting its newlines gives json.Marshal(ep) byte for byte (compact JSON
// has none of its own). Errors are json.Marshal's.
func EpisodeJSON(ep *episode.Episode) ([]byte, error) {
	if len(ep.Turns) == 0 {
		return json.Marshal(ep)
	}
	head := *ep
	head.Turns = nil
	b, err := json.Marshal(&head)
	if err != nil {
		return nil, err
	}
	lines := make([][]byte, len(ep.Turns))
	for k := range ep.Turns {
		if lines[k], err = json.Marshal(&ep.Turns[k]); err != nil {
			return nil, err
		}
	}
	const null = `"turns":null`
	if bytes.Count(b, []byte(null)) != 1 {
		return nil, fmt.Errorf("episode %s: no single %s in its JSON", ep.ScenarioID, null)
	}
	list := append(append([]byte(`"turns":[`+"\n"), bytes.Join(lines, []byte(",\n"))...), "\n]"...)
	return bytes.Replace(b, []byte(null), list, 1), nil
}
