// Package reporeward implements the heterogeneous reward of the REPO paper
// (Reward-Enhanced Policy Optimization, arXiv 2510.04214) for
// SOP-following, guardrailed negotiation agents, and its evaluation.
//
// A reward spec (YAML, LoadSpec) names three kinds of reward:
//
//   - R_model, a reward model's score of the conversation: an HTTP
//     reward/score model served by an engine (HTTPModel: vLLM's /pooling,
//     /score and /classify, SGLang's /classify), the embedded
//     Bradley–Terry model trained in Go on pairwise preferences (BT), or a
//     base reward for the simulator (the episode's R_goal, or a constant);
//   - E_judge, LLM-judge rubrics (prompt, scale, weight; e.g. emotional
//     value, SOP compliance), each score mapped to [-1, 1] and weighted;
//   - E_func, rule functions (regex guardrails, figures checked against the
//     scenario's facts, formatting, SOP stage order), each in [-1, 0] and
//     weighted.
//
// They are composed per persuader turn and per episode (Compose):
//
//	E = clip(E_judge + E_func, -n, n),  R = R_model·(1 + sign(R_model)·E/n),  n = 100
//
// and every component is kept as a named entry of the episode's
// episode.RewardVector (stored with the episode, exported, used by the
// planner trainer as its outcome reward).
//
// A scenario pack (Pack; the built-in "negotiation" pack) adds to plain
// scenarios the facts the rule functions check (allowed commission range,
// real room rates) and ordered SOP stages with entry and exit criteria,
// tracked per turn (Tracker).
//
// Evaluation: judge-based dialogue ratings 1–5 and the share of
// conversations with at least one excellent response (Ratings), a curated
// bad-case suite with bad-case fix rate and clean-fix rate (BadCases,
// FixRates), and A/B analysis between two runs with two-proportion tests
// (AB; stats.TwoProportion).
//
// Source: the REPO paper (abstract; the composition formula is reported in
// secondary notes and is a documented choice here). Its data is private:
// every prompt, rubric, scenario and bad case here is written for this
// project.
package reporeward
