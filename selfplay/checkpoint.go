package selfplay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/internal/filelimit"
	"github.com/persuarena/persuarena/planner"
	"github.com/persuarena/persuarena/sim"
)

// The files of a checkpoint directory.
const (
	// CheckpointFile holds the whole run state (Resume reads only it).
	CheckpointFile = "selfplay.json"
	// PlannerFile is the current planner as a planner checkpoint with its
	// reference (evaluate with persuarena masp eval --persuader
	// planner:DIR/planner.json).
	PlannerFile = "planner.json"
	// UserFile is the current user policy with its reference (LoadUser).
	UserFile = "user.json"
)

// Format names and the layout version this build writes and reads.
const (
	CheckpointFormat = "persuarena-selfplay"
	UserFormat       = "persuarena-user-policy"
	FormatVersion    = 1
)

// ErrCheckpoint is wrapped by the errors about a checkpoint's content.
var ErrCheckpoint = errors.New("invalid self-play checkpoint")

// sideState is one policy's part of the checkpoint.
type sideState struct {
	Policy    json.RawMessage `json:"policy"`
	Reference json.RawMessage `json:"reference"`
	// Optimizer is Adam's state (train.Optimizer.State).
	Optimizer json.RawMessage `json:"optimizer"`
}

// checkpoint is CheckpointFile's content.
type checkpoint struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Config  Config `json:"config"`
	// Cycle is the number of completed cycles.
	Cycle int    `json:"cycle"`
	RunID string `json:"run_id,omitempty"`
	// Scenarios fingerprints the training scenario IDs (FNV-1a, in
	// order); a resume on another list is refused.
	Scenarios string       `json:"scenarios"`
	System    sideState    `json:"system"`
	User      sideState    `json:"user"`
	Student   *bdi.Student `json:"student"`
	// Meta is Options.Meta.
	Meta json.RawMessage `json:"meta,omitempty"`
}

// UserCheckpoint is UserFile's content: the user network, its warm-start
// reference and the simulator variant of its mind.
type UserCheckpoint struct {
	// Format is UserFormat and Version FormatVersion.
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Net is the user network (NumFeatures inputs, NumReactions actions)
	// and Reference its warm-start reference.
	Net       *Net `json:"net"`
	Reference *Net `json:"reference,omitempty"`
	// Mind is the simulator variant of the user's mind (sim.Variant).
	Mind string `json:"mind"`
}

// Save writes the run's checkpoints into dir (created if needed):
// PlannerFile and UserFile, then CheckpointFile, each atomically
// (temporary file in dir, sync, rename), so a crash leaves each file
// either old or new and CheckpointFile never ahead of a consistent state
// it describes. Errors: a file-system error.
func (r *Runner) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("selfplay: %w", err)
	}
	if err := planner.Save(filepath.Join(dir, PlannerFile), &planner.Checkpoint{Policy: r.sys, Reference: r.sysRef}); err != nil {
		return err
	}
	uc, err := json.Marshal(UserCheckpoint{Format: UserFormat, Version: FormatVersion, Net: r.usr, Reference: r.usrRef, Mind: r.cfg.Mind})
	if err != nil {
		return fmt.Errorf("selfplay: %w", err)
	}
	if err := writeAtomic(filepath.Join(dir, UserFile), append(uc, '\n')); err != nil {
		return err
	}
	ck := checkpoint{Format: CheckpointFormat, Version: FormatVersion, Config: r.cfg, Cycle: r.cycle, RunID: r.o.RunID,
		Scenarios: r.fp, Student: r.student, Meta: r.o.Meta}
	if ck.System, err = side(r.sys, r.sysRef, r.sysOpt.State); err != nil {
		return err
	}
	if ck.User, err = side(r.usr, r.usrRef, r.usrOpt.State); err != nil {
		return err
	}
	data, err := json.Marshal(ck)
	if err != nil {
		return fmt.Errorf("selfplay: %w", err)
	}
	return writeAtomic(filepath.Join(dir, CheckpointFile), append(data, '\n'))
}

func side(p, ref any, opt func() (json.RawMessage, error)) (sideState, error) {
	var s sideState
	var err error
	if s.Policy, err = json.Marshal(p); err != nil {
		return s, fmt.Errorf("selfplay: %w", err)
	}
	if s.Reference, err = json.Marshal(ref); err != nil {
		return s, fmt.Errorf("selfplay: %w", err)
	}
	if s.Optimizer, err = opt(); err != nil {
		return s, err
	}
	return s, nil
}

func writeAtomic(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("selfplay: save %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("selfplay: save %s: %w", path, err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("selfplay: save %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("selfplay: save %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("selfplay: save %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("selfplay: save %s: %w", path, err)
	}
	return nil
}

// decodeStrict decodes data into v refusing unknown fields; errors name
// path and, for syntax errors, the line.
func decodeStrict(path string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%s:%d: %w: %v", path, 1+bytes.Count(data[:se.Offset], []byte("\n")), ErrCheckpoint, err)
		}
		return fmt.Errorf("%s: %w: %v", path, ErrCheckpoint, err)
	}
	return nil
}

// Resume continues the run saved in dir (CheckpointFile): configuration,
// cycle count, both policies, their references and Adam states, and the
// student are restored, and the real-dialogue examples are rebuilt from
// the same seed (or taken from o.StudentCache), so the continued run
// equals an uninterrupted one. o.Planner is ignored; o.RunID, when empty,
// is the checkpoint's; o.Dir, when empty, is dir. Errors (naming the file
// and field, wrapping ErrCheckpoint where the content is at fault): an
// unreadable file, another format or version, bad weights, a different
// scenario list.
func Resume(ctx context.Context, dir string, o Options) (*Runner, error) {
	path := filepath.Join(dir, CheckpointFile)
	ck, err := readCheckpoint(path)
	if err != nil {
		return nil, err
	}
	if o.RunID == "" {
		o.RunID = ck.RunID
	}
	if o.Meta == nil {
		o.Meta = ck.Meta
	}
	if o.Dir == "" {
		o.Dir = dir
	}
	r, err := newRunner(ck.Config, o)
	if err != nil {
		return nil, err
	}
	if r.fp != ck.Scenarios {
		return nil, fmt.Errorf("%s: the training scenarios differ from the checkpoint's (fingerprint %s, saved %s)", path, r.fp, ck.Scenarios)
	}
	r.cycle = ck.Cycle
	r.student = ck.Student
	field := func(name string, raw json.RawMessage, v any) error {
		if err := decodeStrict(path, raw, v); err != nil {
			return fmt.Errorf("%w (field %s)", err, name)
		}
		return nil
	}
	r.sys, r.sysRef = &planner.Policy{}, &planner.Policy{}
	r.usr, r.usrRef = &Net{}, &Net{}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		v    any
	}{{"system.policy", ck.System.Policy, r.sys}, {"system.reference", ck.System.Reference, r.sysRef},
		{"user.policy", ck.User.Policy, r.usr}, {"user.reference", ck.User.Reference, r.usrRef}} {
		if err := field(f.name, f.raw, f.v); err != nil {
			return nil, err
		}
	}
	for _, p := range []struct {
		name string
		err  error
	}{{"system.policy", r.sys.Validate()}, {"system.reference", r.sysRef.Validate()},
		{"user.policy", r.usr.Validate()}, {"user.reference", r.usrRef.Validate()}} {
		if p.err != nil {
			return nil, fmt.Errorf("%s: %w: %s: %v", path, ErrCheckpoint, p.name, p.err)
		}
	}
	if r.sysRef.Spec != r.sys.Spec || r.sysRef.Hidden != r.sys.Hidden {
		return nil, fmt.Errorf("%s: %w: system.reference has another shape than the policy", path, ErrCheckpoint)
	}
	if r.usr.In != NumFeatures || r.usr.Actions != NumReactions || r.usr.Hidden != ck.Config.UserHidden ||
		r.usrRef.In != r.usr.In || r.usrRef.Hidden != r.usr.Hidden || r.usrRef.Actions != r.usr.Actions {
		return nil, fmt.Errorf("%s: %w: user networks do not match the configuration", path, ErrCheckpoint)
	}
	if r.sysOpt, err = newSysOpt(r.sys, ck.Config.System, ck.System.Optimizer); err != nil {
		return nil, fmt.Errorf("%s: system.optimizer: %w", path, err)
	}
	if r.usrOpt, err = trainOptimizer(r.usr, ck.Config, ck.User.Optimizer); err != nil {
		return nil, fmt.Errorf("%s: user.optimizer: %w", path, err)
	}
	if err := r.loadBase(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

func readCheckpoint(path string) (*checkpoint, error) {
	data, err := filelimit.ReadFile(path, filelimit.Data)
	if err != nil {
		return nil, fmt.Errorf("selfplay: %w", err)
	}
	var ck checkpoint
	if err := decodeStrict(path, data, &ck); err != nil {
		return nil, err
	}
	switch {
	case ck.Format != CheckpointFormat:
		return nil, fmt.Errorf("%s: %w: format %q, want %q", path, ErrCheckpoint, ck.Format, CheckpointFormat)
	case ck.Version != FormatVersion:
		return nil, fmt.Errorf("%s: %w: version %d, this build reads %d", path, ErrCheckpoint, ck.Version, FormatVersion)
	case ck.Student == nil:
		return nil, fmt.Errorf("%s: %w: no student", path, ErrCheckpoint)
	}
	if err := ck.Config.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w: config: %v", path, ErrCheckpoint, err)
	}
	return &ck, nil
}

// Info is what ReadInfo tells about a checkpoint directory without
// resuming it.
type Info struct {
	// Config is the stored configuration.
	Config Config
	// Cycle is the number of completed cycles.
	Cycle int
	// RunID is the store run of the metrics ("" when none).
	RunID string
	// Meta is the caller data of Options.Meta (nil when none).
	Meta json.RawMessage
}

// ReadInfo reads dir's CheckpointFile and returns its configuration,
// cycle count, run ID and Meta. Errors: as Resume's for the file.
func ReadInfo(dir string) (Info, error) {
	ck, err := readCheckpoint(filepath.Join(dir, CheckpointFile))
	if err != nil {
		return Info{}, err
	}
	return Info{Config: ck.Config, Cycle: ck.Cycle, RunID: ck.RunID, Meta: ck.Meta}, nil
}

// LoadUser reads a UserFile and returns the user policy (sampling, named
// "user:"+path) with the mind its file names. Errors name the file and
// field (wrapping ErrCheckpoint): not JSON, unknown fields, another format
// or version, bad weights, an unknown mind.
func LoadUser(path string) (*User, error) {
	data, err := filelimit.ReadFile(path, filelimit.Data)
	if err != nil {
		return nil, fmt.Errorf("selfplay: %w", err)
	}
	var uc UserCheckpoint
	if err := decodeStrict(path, data, &uc); err != nil {
		return nil, err
	}
	switch {
	case uc.Format != UserFormat:
		return nil, fmt.Errorf("%s: %w: format %q, want %q", path, ErrCheckpoint, uc.Format, UserFormat)
	case uc.Version != FormatVersion:
		return nil, fmt.Errorf("%s: %w: version %d, this build reads %d", path, ErrCheckpoint, uc.Version, FormatVersion)
	case uc.Net == nil:
		return nil, fmt.Errorf("%s: %w: no net", path, ErrCheckpoint)
	}
	mind, err := sim.Variant(uc.Mind)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: mind: %v", path, ErrCheckpoint, err)
	}
	u, err := NewUser(uc.Net, mind, WithUserName("user:"+path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", path, ErrCheckpoint, err)
	}
	return u, nil
}
