package planner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/persuarena/persuarena/internal/filelimit"
)

// CheckpointFormat names the file format in every checkpoint.
const CheckpointFormat = "persuarena-planner"

// CheckpointVersion is the checkpoint layout version this build writes and
// reads.
const CheckpointVersion = 1

// Checkpoint is a planner checkpoint file: JSON with the policy (weights
// and feature spec), the reference (initial) policy the KL term is taken
// to, and the trainer's own state (configuration, step, optimiser state),
// which this package stores without reading.
type Checkpoint struct {
	// Format is CheckpointFormat and Version CheckpointVersion.
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Name is the checkpoint's arm name without the "planner:" prefix and
	// hash (ArmName); Save fills it with the file's base name (without
	// ".json") when empty. Older checkpoints without it are named after
	// their file when loaded.
	Name string `json:"name,omitempty"`
	// Policy is the trained policy.
	Policy *Policy `json:"policy"`
	// Reference is the initial policy (for the KL term); nil in a
	// checkpoint written for evaluation only.
	Reference *Policy `json:"reference,omitempty"`
	// Training is package train's state, opaque here.
	Training json.RawMessage `json:"training,omitempty"`
}

// Save writes c to path atomically: it writes a temporary file in the same
// directory, syncs it and renames it over path, so a crash leaves either
// the old file or the new one. Format and Version are filled in. Errors:
// an invalid policy (nothing is written) or a file-system error.
func Save(path string, c *Checkpoint) error {
	if c.Policy == nil {
		return fmt.Errorf("planner: save %s: no policy", path)
	}
	if err := c.Policy.Validate(); err != nil {
		return fmt.Errorf("planner: save %s: policy: %w", path, err)
	}
	if c.Reference != nil {
		if err := c.Reference.Validate(); err != nil {
			return fmt.Errorf("planner: save %s: reference: %w", path, err)
		}
	}
	c.Format, c.Version = CheckpointFormat, CheckpointVersion
	if c.Name == "" {
		c.Name = baseName(path)
	}
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("planner: save %s: %w", path, err)
	}
	return writeAtomic(path, append(data, '\n'))
}

func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("planner: save %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	// CreateTemp makes the file private (0600); a checkpoint is an
	// ordinary shareable file.
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("planner: save %s: %w", path, err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("planner: save %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("planner: save %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("planner: save %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("planner: save %s: %w", path, err)
	}
	return nil
}

// ErrCheckpoint is wrapped by Load's errors about the file's content.
var ErrCheckpoint = errors.New("invalid planner checkpoint")

// Load reads and checks a checkpoint. Errors name the file and the field
// (wrapping ErrCheckpoint): not JSON, unknown fields, another format or
// version, a missing policy, wrong matrix sizes, non-finite weights; a
// JSON syntax error also gives its line.
func Load(path string) (*Checkpoint, error) {
	data, err := filelimit.ReadFile(path, filelimit.Data)
	if err != nil {
		return nil, fmt.Errorf("planner: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Checkpoint
	if err := dec.Decode(&c); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("%s:%d: %w: %v", path, 1+bytes.Count(data[:se.Offset], []byte("\n")), ErrCheckpoint, err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%s: %w: field %s: %v", path, ErrCheckpoint, te.Field, err)
		}
		return nil, fmt.Errorf("%s: %w: %v", path, ErrCheckpoint, err)
	}
	switch {
	case c.Format != CheckpointFormat:
		return nil, fmt.Errorf("%s: %w: format %q, want %q", path, ErrCheckpoint, c.Format, CheckpointFormat)
	case c.Version != CheckpointVersion:
		return nil, fmt.Errorf("%s: %w: version %d, this build reads %d", path, ErrCheckpoint, c.Version, CheckpointVersion)
	case c.Policy == nil:
		return nil, fmt.Errorf("%s: %w: no policy", path, ErrCheckpoint)
	}
	if err := c.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w: policy: %v", path, ErrCheckpoint, err)
	}
	if c.Reference != nil {
		if err := c.Reference.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w: reference: %v", path, ErrCheckpoint, err)
		}
		if c.Reference.Spec != c.Policy.Spec || c.Reference.Hidden != c.Policy.Hidden {
			return nil, fmt.Errorf("%s: %w: reference has another shape than the policy", path, ErrCheckpoint)
		}
	}
	return &c, nil
}

// baseName is path's file name without its ".json" extension.
func baseName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".json")
}

// Hash is the content hash of the checkpoint's policy: the first 12 hex
// digits of the SHA-256 of its JSON encoding (weights and feature spec,
// not the trainer state), so two files holding the same policy hash alike
// and a retrained policy hashes differently. It is "" for a checkpoint
// without a policy.
func (c *Checkpoint) Hash() string {
	if c.Policy == nil {
		return ""
	}
	data, err := json.Marshal(c.Policy)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:6])
}

// ArmName is the stable name of the checkpoint's planner in runs and
// tables: "planner:NAME@HASH", NAME the checkpoint's Name (else the base
// name of path without ".json") and HASH its Hash. It never holds a
// directory, so the same checkpoint has the same name wherever it lies.
func (c *Checkpoint) ArmName(path string) string {
	name := c.Name
	if name == "" {
		name = baseName(path)
	}
	return "planner:" + name + "@" + c.Hash()
}

// LoadPlanner loads the checkpoint at path and returns a sampling planner
// named by the checkpoint's ArmName ("planner:NAME@HASH", how persuarena
// eval names its arm), with opts applied after the name. Errors are
// Load's.
func LoadPlanner(path string, opts ...Option) (*Planner, error) {
	c, err := Load(path)
	if err != nil {
		return nil, err
	}
	return New(c.Policy, append([]Option{WithName(c.ArmName(path))}, opts...)...)
}
