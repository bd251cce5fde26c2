// Package view is PersuArena's read-only trajectory viewer and live run
// dashboard (persuarena view): an HTTP server over a run database
// (store.Store) rendering plain HTML server-side, with its stylesheet and
// a few lines of vanilla JavaScript embedded in the binary (no CDN).
//
// Pages:
//
//   - / lists the runs (kind, status, config) with the live progress of
//     running ones: every request reads the store, and SQLite's WAL lets a
//     running eval in another process show up; the page refreshes itself
//     while a run is running.
//   - /runs/{id} shows a run's outcome table (terminal-state shares per
//     persuader and persuadee with Wilson 95% intervals, stats.Wilson) and
//     a paged, server-side filtered episode list (persuader, persuadee,
//     terminal state, resistance type, domain family, split, scenario),
//     read through store.Store.EpisodePage.
//   - /runs/{id}/episode?k=KEY shows one episode (KEY as
//     episode.ParseKey reads it): the per-turn timeline (persuader
//     utterance and its tagged acts, persuadee reply, decision, the probe
//     read-outs and belief B_t with the dense reward r_t = B_t - B_{t-1}
//     of the Probe-RPO paper, latencies and tokens), a belief-trajectory
//     chart (inline SVG), the judge's rating and the reward components,
//     and, in a separate analyst-only panel, the scenario's hidden profile
//     (never shown to a persuader).
//   - /compare?a=RUN&b=RUN pairs two runs' episodes by (scenario, rollout,
//     persuadee) for one persuader per side: the outcome transitions (A's
//     terminal state against B's), the paired statistics of
//     analysis.CompareOutcomes, the pairs (optionally only the changed
//     ones) and /compare/episode, the two transcripts side by side.
//
// Serve listens on loopback by default (DefaultAddr); RunURL and Hint
// name a run's page, as persuarena eval prints it.
package view
