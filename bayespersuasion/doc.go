// Package bayespersuasion is PersuArena's Bayesian-persuasion environment: claims
// with a finite set of world states and a common prior, a receiver who
// picks the action best for it under its posterior, a sender who values
// the receiver's action, and a pool of verifiable evidence items whose
// likelihoods P(e | state) are common knowledge (Kamenica & Gentzkow 2011,
// "Bayesian Persuasion"; the Strategic Persuasion paper, "Towards
// Strategic Persuasion with Language Models", arXiv 2509.22989).
//
// Because the model is explicit, every claim has exact benchmarks
// (Optimum): the sender's best value over all signals (the concave
// closure of its value as a function of the receiver's posterior,
// evaluated at the prior), the values of full and of no disclosure, and
// the value a sender can reach with the claim's own evidence pool. A
// persuader's gain (posterior value minus prior value, the Strategic
// Persuasion paper's reward) is then reported as a share of the optimal
// gain.
//
// Roles: Receiver is an embedded Bayesian receiver (an episode.Persuadee
// whose sessions are probed from the exact posterior); FullDisclosure,
// NoDisclosure, Greedy, OptimalSignal and Planner are built-in senders;
// LLMReceiver and LLMSender put an engine-backed role from package
// llmagent into the same game. Eval plays claims in the static (one
// message) and dynamic (multi-turn) settings through episode.Run; Train
// fits a Planner by policy gradient. Claims loads the built-in claim set
// and ImportRatings reads human persuasion-rating data as a reference.
// RunOptimum, RunEval, RunTrain and RunImport are the one-call entry
// points of the "persuarena bayes" commands (typed specs, output written).
package bayespersuasion
