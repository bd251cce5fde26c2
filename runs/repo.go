package runs

import (
	"context"
	"fmt"
	"io"

	"github.com/persuarena/persuarena/reporeward"
	"github.com/persuarena/persuarena/roles"
	"github.com/persuarena/persuarena/runplan"
)

// REPOBadCases plays the built-in bad-case suite (reporeward.BadCases) with the
// persuader named persuader (package roles; config resolves llm:ROLE)
// and prints its fix and clean-fix rates under the rule functions of the
// reward spec ref (REPO paper). Errors: the registry's, reporeward's.
func REPOBadCases(ctx context.Context, ref, persuader, config string, seed uint64, w io.Writer) error {
	r, err := reporeward.RulesOnly(ref)
	if err != nil {
		return err
	}
	reg, err := roles.New(config)
	if err != nil {
		return err
	}
	per, err := reg.Persuader(persuader)
	if err != nil {
		return err
	}
	cases, err := reporeward.BadCases()
	if err != nil {
		return err
	}
	rep, err := r.FixRates(ctx, per, cases, seed)
	if err != nil {
		return err
	}
	return reporeward.WriteFixReport(w, rep)
}

// REPOAB compares two stored runs (A, then B) on response rate and task
// success with two-proportion tests (reporeward.AB). Errors: the store's.
func (s *Service) REPOAB(ctx context.Context, a, b string, w io.Writer) error {
	if err := s.ensure(ctx, true); err != nil {
		return err
	}
	ea, err := s.Store.Episodes(ctx, a)
	if err != nil {
		return err
	}
	eb, err := s.Store.Episodes(ctx, b)
	if err != nil {
		return err
	}
	return reporeward.WriteAB(w, a, b, reporeward.AB(ea, eb))
}

// REPORate rates every scored episode of run id with the LLM judge role
// judge (reporeward.Ratings) on the scenario sets refs and prints the mean
// dialogue rating and the share of conversations with an excellent
// response. Errors: the registry's, the store's, the judge's.
func (s *Service) REPORate(ctx context.Context, id, judge, config string, samples int, refs []string, w io.Writer) error {
	reg, err := roles.New(config)
	if err != nil {
		return err
	}
	j, err := reg.Judge(judge, samples)
	if err != nil {
		return err
	}
	sets, err := runplan.LoadSets(ctx, refs, "all")
	if err != nil {
		return err
	}
	if err := s.ensure(ctx, true); err != nil {
		return err
	}
	eps, err := s.Store.Episodes(ctx, id)
	if err != nil {
		return err
	}
	rep, err := reporeward.Ratings(ctx, j, runplan.Scenarios(sets), eps)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "run %s: %d conversations, mean dialogue rating %.2f / 5; %d (%.1f%%, 95%% CI %.1f–%.1f%%) with at least one excellent response; judge requests %d\n",
		id, rep.N, rep.Mean, rep.Excellent, 100*rep.Share, 100*rep.ShareLo, 100*rep.ShareHi, rep.Usage.Requests)
	return err
}
