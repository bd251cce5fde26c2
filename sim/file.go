package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/persuarena/persuarena/internal/filelimit"
)

// FileSchema is the schema tag of a simulator config file (version 1).
const FileSchema = "persuarena.sim-config/v1"

// FilePrefix marks a persuadee name that is a config file: "sim:FILE"
// (ByName, and wherever persuadees are resolved).
const FilePrefix = "sim:"

// File is a simulator config file (JSON; docs/simulator/parameters.md,
// "Config files"):
//
//	{
//	  "schema": "persuarena.sim-config/v1",
//	  "base": "sim",
//	  "params": {"Accept": 0.31, "AR.BadMove": 0.02},
//	  "provenance": {...}
//	}
//
// The configuration is Base's (one of Names) with each of Params set by
// name (ParamNames, IntParamNames); it must pass Validate. Provenance is optional and
// not read by the simulator.
type File struct {
	// Schema must be FileSchema.
	Schema string `json:"schema"`
	// Base is the named configuration the parameters start from ("sim",
	// "sim-soft" or "sim-hard"; "" means "sim").
	Base string `json:"base"`
	// Params maps parameter names (ParamNames, IntParamNames) to values;
	// an int parameter's value must be a whole number.
	Params map[string]float64 `json:"params"`
	// Provenance records how the values were made (a fit writes it).
	Provenance *FitProvenance `json:"provenance,omitempty"`
}

// FitProvenance records how a config file was fitted (persuarena sim fit
// p4g; package simfit). It holds no date, so the same fit writes the same
// file.
type FitProvenance struct {
	// Command is the command line that made the file.
	Command string `json:"command"`
	// Data is "sha256:" and the hex SHA-256 of the scenarios fitted on,
	// as canonical JSON lines in scenario order (simfit.DataHash).
	Data string `json:"data"`
	// TraceData is the same hash of the PersuasionTrace scenarios the fit
	// read (train and validation people; "" when it read none).
	TraceData string `json:"trace_data,omitempty"`
	// Seed is the fit's replay seed; Split the split fitted on, with the
	// number of Users and Dialogues; Folds the user-grouped
	// cross-validation folds.
	Seed      uint64 `json:"seed"`
	Split     string `json:"split"`
	Users     int    `json:"users"`
	Dialogues int    `json:"dialogues"`
	Folds     int    `json:"folds"`
	// Optimiser names the method and Evaluations the objective evaluations
	// of the final fit.
	Optimiser   string `json:"optimiser"`
	Evaluations int    `json:"evaluations"`
	// Objective holds the objective values (mean negative log-likelihood
	// in nats, lower is better), keyed e.g. "train", "train_default",
	// "cv", "cv_default", "validation", "validation_default".
	Objective map[string]float64 `json:"objective"`
	// Bounds are the fitted parameters' [lo, hi] bounds.
	Bounds map[string][2]float64 `json:"bounds"`
	// Metrics are further figures of the fit (e.g. AUCs on validation,
	// the closed-loop moments of the fitted and the base configuration).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// ClosedLoop describes the closed-loop eval whose penalty constrained
	// the fit ("" when none did).
	ClosedLoop string `json:"closed_loop,omitempty"`
}

// IsFileRef reports whether name is "sim:FILE".
func IsFileRef(name string) bool {
	return strings.HasPrefix(name, FilePrefix) && len(name) > len(FilePrefix)
}

// LoadFile reads the config file at path (see File) and returns its
// configuration, named "sim:" + path. Errors name the file and line:
// "path:3: params.Acept: sim: unknown parameter ...".
func LoadFile(path string) (Config, *File, error) {
	data, err := filelimit.ReadFile(path, filelimit.Spec)
	if err != nil {
		return Config{}, nil, err
	}
	c, f, err := ParseFile(path, data)
	if err != nil {
		return Config{}, nil, err
	}
	c.Name = FilePrefix + path
	return c, f, nil
}

// ParseFile parses a config file's bytes; name is used in errors (see
// LoadFile) and the configuration keeps Base's name.
func ParseFile(name string, data []byte) (Config, *File, error) {
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n")) }
	fail := func(off int64, field string, err error) error {
		if field != "" {
			return fmt.Errorf("%s:%d: %s: %w", name, lineAt(off), field, err)
		}
		return fmt.Errorf("%s:%d: %w", name, lineAt(off), err)
	}
	keys, err := keyOffsets(data)
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Config{}, nil, fail(se.Offset, "", err)
		}
		return Config{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// the key at or before the offending value names the field
			field, at := te.Field, int64(-1)
			for k, off := range keys {
				if off <= te.Offset && off > at {
					field, at = k, off
				}
			}
			return Config{}, nil, fail(te.Offset, field, fmt.Errorf("want a %s", te.Type))
		}
		if s, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			k := strings.Trim(s, `"`)
			return Config{}, nil, fail(keys[k], k, errors.New("unknown field (known: schema, base, params, provenance)"))
		}
		return Config{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	if f.Schema != FileSchema {
		return Config{}, nil, fail(keys["schema"], "schema", fmt.Errorf("%q, want %q", f.Schema, FileSchema))
	}
	base := f.Base
	if base == "" {
		base = "sim"
	}
	if IsFileRef(base) {
		return Config{}, nil, fail(keys["base"], "base", errors.New("a config file cannot build on another file"))
	}
	c, err := ByName(base)
	if err != nil {
		return Config{}, nil, fail(keys["base"], "base", err)
	}
	for _, k := range sortedKeys(f.Params) {
		v := f.Params[k]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Config{}, nil, fail(keys["params."+k], "params."+k, errors.New("not a finite number"))
		}
		if err := c.SetParam(k, v); err != nil {
			return Config{}, nil, fail(keys["params."+k], "params."+k, err)
		}
	}
	if err := c.Validate(); err != nil {
		// Validate names the field; point at it when the file set it.
		for k := range f.Params {
			if strings.Contains(err.Error(), " "+k+" = ") {
				return Config{}, nil, fail(keys["params."+k], "params."+k, err)
			}
		}
		return Config{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, &f, nil
}

// keyOffsets walks the top-level object and its "params" object and
// returns the byte offset of each key ("schema", "params.Accept", ...).
func keyOffsets(data []byte) (map[string]int64, error) {
	out := map[string]int64{}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, &json.SyntaxError{Offset: dec.InputOffset()}
	}
	for dec.More() {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		out[k] = skipSpace(data, off)
		if k != "params" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
			continue
		}
		if tok, err = dec.Token(); err != nil {
			return nil, err
		}
		if d, ok := tok.(json.Delim); !ok || d != '{' {
			continue // Decode reports the type error
		}
		for dec.More() {
			off := dec.InputOffset()
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			pk, _ := tok.(string)
			out["params."+pk] = skipSpace(data, off)
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, err
	}
	return out, nil
}

// skipSpace returns the offset of the first byte at or after off that is
// not JSON white space or a comma (where the next token starts).
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
		off++
	}
	return off
}

// Encode writes f as indented JSON (keys in a fixed order: the same File
// gives the same bytes).
func (f *File) Encode(w io.Writer) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
