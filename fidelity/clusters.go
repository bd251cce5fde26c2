package fidelity

import "math"

// The PersuasionTrace paper's two-cluster model of human belief
// trajectories: k-means (k = 2) on z-scored features of 84 persuasion
// rounds (debate-bank propositions, four turns, text, node-belief survey).
// Its scaler and centres are the upstream artefact's
// (github.com/jlcmoore/persuasiontrace, commit d05007f,
// analysis/data/human_trajectory_cluster_model_k2_v1.json, MIT): cluster 0
// barely moves (44 of 84 rounds, 52.4 %; mean first change -0.028), cluster
// 1 moves at the first report (40, 47.6 %; mean first change +0.522)
// (analysis/data/human_clusters_k2_summary.csv).
const clusterGrid = 21

var (
	clusterMean = [clusterGrid]float64{
		0.034425535361510794, 0.06885107072302159, 0.1032766060845324, 0.13770214144604317, 0.17212767680755403,
		0.2065532121690648, 0.22813908873946623, 0.2240456477276489, 0.2199522067158316, 0.21585876570401427,
		0.21138814214040422, 0.2069175185767944, 0.20244689501318436, 0.20373937842314332, 0.2079134153198868,
		0.21208745221663025, 0.2162614891133738, 0.22043552601011732, 0.2246095629068608, 0.22878359980360433,
		2.9404761904761907,
	}
	clusterScale = [clusterGrid]float64{
		0.04786491971453327, 0.09572983942906654, 0.14359475914359981, 0.1914596788581331, 0.23932459857266633,
		0.28718951828719963, 0.31332530099272254, 0.29844654048772745, 0.28765792099698284, 0.2814302225984646,
		0.2760152466259905, 0.27521702611751364, 0.2790751788975631, 0.2761771575362457, 0.2721289249287989,
		0.27273038363540925, 0.2779513509048682, 0.2875403027728025, 0.30108018683470145, 0.3180668373582391,
		0.2366024632660929,
	}
	clusterCenters = [2][clusterGrid]float64{
		{-0.8010996097905883, -0.8010996097905883, -0.8010996097905885, -0.8010996097905883, -0.8010996097905885,
			-0.8010996097905885, -0.8074906329719763, -0.8213786361167952, -0.8248268579293221, -0.8151162436329995,
			-0.7933192077566592, -0.7577221897088499, -0.7098728713543803, -0.7029450226528745, -0.7106801395840859,
			-0.7063968593376639, -0.6904630969195674, -0.6648612830548173, -0.6325015296632288, -0.5963933379302019,
			-0.03659306221284644},
		{0.8812095707696468, 0.8812095707696468, 0.881209570769647, 0.8812095707696468, 0.8812095707696469,
			0.881209570769647, 0.8882396962691742, 0.9035164997284753, 0.907309543722254, 0.8966278679962999,
			0.8726511285323255, 0.8334944086797337, 0.7808601584898177, 0.7732395249181617, 0.7817481535424947,
			0.7770365452714313, 0.7595094066115242, 0.7313474113602989, 0.695751682629552, 0.6560326717232218,
			0.040252368434129354},
	}
)

// The PersuasionTrace paper's cluster sample and shares (see
// clusterCenters).
const (
	PaperClusterRounds = 84
	PaperMovingShare   = 40.0 / 84
	PaperMovingFirst   = 0.5220720714538551
	PaperStillFirst    = -0.028158453209232007
)

// Trajectory clusters.
const (
	ClusterNone   = -1 // no trajectory
	ClusterStill  = 0  // barely moves
	ClusterMoving = 1  // moves at the first report
)

// TrajectoryCluster assigns a trajectory of per-report belief changes
// toward the persuader's side (persuasiontrace.Round.Trajectory; at least
// one) to the paper's nearer cluster (ClusterStill or ClusterMoving): the
// cumulative change, starting at 0, is read at 21 evenly spaced points of
// the dialogue by linear interpolation (the report index scaled to [0, 1]),
// the first point (always 0) is dropped and the number of changes
// appended, the 21 features are z-scored with the model's scaler, and the
// nearer centre in Euclidean distance wins (the first on a tie). It
// returns ClusterNone for an empty trajectory or a NaN change.
func TrajectoryCluster(updates []float64) int {
	n := len(updates)
	if n == 0 {
		return ClusterNone
	}
	cum := make([]float64, n+1)
	for i, u := range updates {
		if math.IsNaN(u) {
			return ClusterNone
		}
		cum[i+1] = cum[i] + u
	}
	var f [clusterGrid]float64
	for g := 1; g < clusterGrid; g++ {
		// x_g = g/(grid-1) on the knots k/n.
		x := float64(g) / float64(clusterGrid-1) * float64(n)
		k := min(int(math.Floor(x)), n-1)
		f[g-1] = cum[k] + (x-float64(k))*(cum[k+1]-cum[k])
	}
	f[clusterGrid-1] = float64(n)
	best, bestD := ClusterNone, math.Inf(1)
	for c, ctr := range clusterCenters {
		d := 0.0
		for j := range f {
			z := (f[j] - clusterMean[j]) / clusterScale[j]
			d += (z - ctr[j]) * (z - ctr[j])
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
