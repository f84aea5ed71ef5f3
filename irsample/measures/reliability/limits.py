"""The reliability rule's seven parts, their thresholds, and how the thresholds were chosen.

No estimator of a topic's AP or nDCG from a fixed-size sample is design-unbiased, and where a
topic's sample holds one or two relevant documents (or none) the ratio's bias, summed over the
topics, can exceed the standard error of the mean; an interval of a mean that rests on a handful
of judged relevant documents is skewed, and its estimated variance often too small. So every
interval of a run's mean over topics gets a status: ``ok``, or ``unreliable`` with the reasons
and the topics that cause it (where to judge next). A run's mean is unreliable when

1. **support**: the sample within the measure's cut-off of its rankings (over its topics) is
   too small for a normal interval, while more than 1 - :data:`SETTLED` of the positions there
   are pooled but unjudged (a ranking mostly judged has little left to estimate). A normal
   interval from n units with skewness G1 needs n > 28 + 25 G1^2 (Cochran, *Sampling
   Techniques*, 1977, §2.15, as revised by Sugden, Smith & Jones, Survey Methodology 26,
   2000), i.e. an estimate whose own skewness gamma = G1 / sqrt(n) stays within
   :func:`skewness_limit`. For ht(M) and ppi(M) on a stratified simple random sample, whose
   intervals take the anticipated variance (``ht/anticipated.py``), gamma is that of the
   design's Horvitz-Thompson estimate of the run's relevant documents within the cut-off, from
   its variance and third cumulant per cell with the relevance model's fitted probabilities,
   added over topics (``Measure.expected_sample``), and n the positions the design is
   expected to judge there. The model is fitted to the draw, and a draw that caught more of a
   run's relevant documents raises both its estimate and the fitted count, which lowers the
   skewness: with the fitted count the unflagged ht(P@10) means of CACM's 2strata 5% samples
   were 0.83 standard errors high on average (400 draws) and covered 0.925 over seven
   seeds. So gamma is read with the run's fitted count lowered to the low end of the model's
   own 95% interval for it, :data:`FIT_Z` delta-method standard errors down
   (``ExpectedSample.count_se``, ``ExpectedSample.skewness_per_run``); that interval is wide
   where the fit rests on few judged documents a topic (CACM: 13-16% of the count, TREC-8
   2-4%, TREC-COVID about 1%; REPRODUCTION.md, "Rule 1 at the low end of the fit"). What
   is left is a cell's edge: the rule's margin (limit less skewness) rises with the draw's
   error (correlation about 0.6 over draws on CACM and Vaswani), so where it passes a small
   share p of a cell's means those sit about 0.6 lambda(p) standard errors high, lambda the
   inverse Mills ratio (CACM's planned 10% ht(P@10): 1.1% pass, +1.6, 10 of 12 covering;
   over ten more seeds 20 of 11,000, 7). A count lowered further moves the edge to other
   cells (Vaswani's uniform 10%: 59% -> 94% flagged, the rest covering 0.95 -> 0.90); the
   lowering bounds the escapes instead: a run whose count at its mean over draws is flagged
   passes only on a draw more than FIT_Z of its (calibrated) standard errors high, 2.5% at
   most (REPRODUCTION.md, "Rule 1's escapes at a cell's edge"). Where relevant documents
   are rare this asks for about 25 of them; where a run's positions are a small share of
   each topic's pool the topics' skews add up. Elsewhere the rule counts the draw's judged
   relevant documents there and asks for :data:`MIN_SUPPORT`: a size read from the draw selects
   the draws that overestimate (ht(P@10), 100 trials: the unflagged intervals covered 0.66 on
   Vaswani at uniform 10% and 0.87 on CACM at uniform 20% with the draw's count). The design's
   count of relevant documents against :data:`MIN_SUPPORT`, the rule before, flagged 22% of
   TREC-8's ht(P@10) means on 2strata 10% samples (400 trials) and 92% on CACM's uniform 20%
   ones (100 trials), whose intervals covered as well as the others (0.947 and 0.935, against
   0.943 and 0.977); Cochran's rule with the runs' rate of relevance p in one sample,
   G1^2 = (1 - 2p)^2 / (p (1 - p)), flagged 60-71% of TREC-COVID's on uniform 10% and
   2strata 5% samples (0.957 and 0.923 covered, against 0.947 and 0.944): its high-p runs'
   skewness is not the estimate's, which stratification by topic averages out
   (REPRODUCTION.md, "Cochran's rule for rule 1");
2. **weak topics** (ratio estimators: AP, nDCG, R-prec, recall): more than :data:`MAX_WEAK` of
   its topics are weak: no judged relevant document (the topic is imputed) unless judged
   whole, or 1 to :data:`FEW` while less than :data:`SETTLED` of the topic's pool is judged;
   such topics' ratios are fitted to one or two documents (their bias is of the order of the
   estimate over the number of relevant documents sampled, and their variance estimate near 0).
   For ht(M) and ppi(M) on a stratified simple random sample the second part reads, as rule 1
   does, the count the design is expected to judge in the topic's pool
   (``Measure.expected_found``: fewer than :data:`FEW` + 1), not the draw's: the draw's count
   flags the draws that caught few relevant documents, and those that caught many (and
   overestimate) stay unflagged; on TREC-8 (100 trials) it flagged 82% and 88% of the 2strata
   10% ht(AP) and ht(nDCG) means, whose intervals cover 0.98-0.99, the rule with the expected
   count 18% and 46% (REPRODUCTION.md, "The floor and rule 2's expected count"). Judged
   :data:`SETTLED` or more, a topic with 1 to :data:`FEW` judged relevant documents is still
   weak until it is judged whole (``unsettled``): one or two judged relevant documents do not
   settle how many are left unjudged, one more can move such a topic's AP or nDCG by a third,
   and the interval's variance, fitted to those one or two, falls short of the error. Measured
   with every kind of design: the planner's (CACM, planned 70%, ht(nDCG), 20 draws: 30% of
   these topics held one more unjudged, and they carried 45% of the topic estimates' squared
   error with a variance of 0), uniform samples (CACM, uniform 70% and 80%, ht(AP), 20 draws:
   their squared error 1.65-2.55 times the variance the interval gave them;
   ``benchmarks/unsettled_topics.py``), and judging in rounds, whose rates differ by band:
   Vaswani's depth-100 pool at 50-60% judged (2.61 times; the unflagged ht(AP) means covered
   0.83-0.90) and CACM's depth-20 pool, where the rounds stopped at 60-90% judged with the
   unflagged ht(AP) intervals covering 0.88-0.92 and the topics with two judged relevant
   documents, at 60-90% judged, holding 41% of the squared error at 2.7-3.1 times their
   variance (30 trials). The part applied to the first two kinds only (no variation left to
   chance, or one rate a topic) until the rounds showed it short there too; the two-strata
   designs that judge the top ranks whole had covered CACM's 60-80% samples (0.965-0.987), and
   are flagged there now, on the safe side (REPRODUCTION.md, "Topics their judged share does
   not settle", "Shallow pools"). The limit,
   :data:`MAX_WEAK` of the topics (four of 50), was 5% (three of 50): the means it flagged
   and the 7% limit does not covered 0.98-0.99 of the truths on TREC-8 2strata 10% samples
   and 0.93-0.99 on TREC-COVID uniform 5% ones (100 draws, two seeds each), and a 10% limit
   lets through means that miss (REPRODUCTION.md, "Rule 2's limit");
3. **estimated bias** (estimators that give it, ``Measure.estimated_bias``): the second-order
   bias of the mean, the topics' signed biases summed (the bias of a sum; adding their absolute
   values instead flagged 0.85 of TREC-8's ht(nDCG) means under the planned design at 10%, whose
   intervals covered 0.94 of the truths: REPRODUCTION.md, "Calibrated or flagged"); on the topics
   where the estimate removes that bias (``Measure.corrected``: ht(AP)'s identified topics,
   ht(nDCG)'s with more than :data:`FEW` relevant documents in the sample), the bounds of the
   correction's own error, which has no fixed sign and is independent from topic to topic, added in
   quadrature (``Measure.bias_in_quadrature`` names those cells; summed, the model's flagged 0.62 of
   TREC-8's ht(AP) means under the planned design at 10%, covering as well as the rest: 0.939 and
   0.944, 40 trials), plus for each imputed topic the spread of the run's estimates over its other
   topics (an imputed topic's error is of that order: on Vaswani at 67% judged one topic with a
   single relevant document carried an AP error of 0.3 while the run's interval had shrunk to
   +-0.015; needs the estimates, ``values``), and at least the imputed value itself where
   :data:`SETTLED` or more of the topic's pool is judged (``imputation_bound``: half a pool judged
   with nothing relevant found leaves open that the topic has no relevant document, and then its
   truth is 0; on Vaswani's rounds at 60-80% judged such topics put the ht(AP) means 0.72-0.96
   standard errors high, past the spread's bound of 0.57-0.68, ``benchmarks/rounds_by_round.py``,
   100 trials from each start: REPRODUCTION.md, "Imputed topics judged half or more"), plus, for a
   measure normalised by R (:data:`PER_RELEVANT`: AP, R-prec, recall) whose interval takes the
   sample's own variance (rule 2 reads the draw's count: the planner's designs, top-ups, importance
   samples), for each weak topic that is not imputed and whose judged relevant documents were all
   judged with certainty (a ratio fitted to 1 to :data:`FEW` of them,
   :func:`.topics.certain_relevant_only`: the jackknife's variance is 0 there, while a relevant
   document drawn at random gets its deletion's variance) the estimate over that count, |theta^| / k
   (:func:`.bias.fitted_bound`: such a ratio's bias is of that order, and its variance, fitted to
   those documents, near 0: on Robust 2005 with synthetic runs, planned 30%, a topic with 9 relevant
   documents whose draw held only the 2 judged with certainty read an AP of 0.5 against 0.2 with
   variance 0, in 7 of 12 draws, and the unflagged ht(AP) means of the planned 20-30% samples
   covered 0.913-0.923; REPRODUCTION.md, "Rule 3 bounds the ratios fitted to few documents", which
   measures why the anticipated variance's designs and nDCG are left out, and "Rule 3's bound,
   restored": taken back once because the demo's extra rounds exposed nDCG's plain ratio on CACM,
   restored once ht(nDCG) took the jackknife of the corrected ratio on these designs), exceeds
   :data:`MAX_BIAS_SE` of its standard error: an interval whose centre is off by b standard errors
   covers (1.96 - b) - (-1.96 - b) of the normal mass, 0.936 at b = 0.35 (the 0.93 floor of the
   coverage the rule is validated for). For ht(M) and ppi(M) on a stratified simple random sample
   the topics' biases are the relevance model's (``ht/anticipated.py``, "Centre"), as their
   variances are: the sample's bias rises and falls with the draw, and against the anticipated
   standard error it flagged 69% of TREC-8's 2strata 10% ht(nDCG) means, whose flagged intervals
   covered as well as the rest (0.96 and 0.98, 30 trials); the model's flags 12%, covering 0.86
   against 0.96 unflagged (100 trials, REPRODUCTION.md, "The model's centre");
4. **unchecked**: a ratio estimator that gives no estimate of its own bias (infAP, xinfAP,
   infNDCG, statAP: the reference estimators) on a sample (some topic not judged whole): rule 3
   cannot be applied, and their intervals describe the sampling spread only (on TREC-COVID
   round 5, 100 trials, xinfAP's covered 0.53-0.95 of the truths with nothing else flagging
   them). ppi(M) takes ht(M)'s estimate: where its value is ht(M)'s own (the topics ppi(nDCG)'s
   difference form leaves to ht, a run the labels do not move) ht's reading as it stands,
   corrected where ht corrects (``PPIEstimate.as_ht``); where the labels move the estimate, on
   a stratified simple random sample ht's signed bias (the relevance model's), taken as ppi's
   bound, and where ht's bias is the sample's (a top-up, a stratum judged whole, an importance
   sample) |b^_y| times Y^'s coefficient of variation, a bound of no fixed sign added in
   quadrature (``PPI.estimated_bias``). The sample's signed bias matches ppi's error on average
   (the recipe's 2strata 20% samples, which judge ranks 1-10 whole, with kappa 0.7 labels, 30
   draws: ppi(nDCG)'s run means erred +0.0019 +- 0.0012 on TREC-8 where the signed sum reads
   +0.0017, +0.0008 +- 0.0007 on TREC-COVID round 5 where it reads +0.0016; on CACM +0.029 +-
   0.002 where it reads +0.022, short as ht's own rule is there, and rule 2 flags every such
   mean), though not topic by topic (REPRODUCTION.md, "ppi(nDCG)'s flags on these cells"), but
   draw by draw it rises with ht's error, which the labels remove in part, and read signed it
   flagged the draws ppi estimated best: DL 2019's planned 5% samples, kappa 0.7 labels, 100
   draws, unflagged means covering 0.878 with 54% flagged, against 0.897 with 16% in
   quadrature (REPRODUCTION.md, "ppi(nDCG)'s rule 3 in quadrature where its bias is the
   sample's").

5. **outside its range**: a run mean of a measure bounded by [0, 1] (ht(M) and ppi(M) but
   num_rel) estimated above 1 or below 0. A Horvitz-Thompson total weights each relevant
   document it found by 1/pi, so a thin draw that found several at a run's top ranks can
   overshoot the largest value the measure takes (a P@10 mean of 1.08, [0.90, 1.26], against a
   truth of 0.82 on a synthesized Web-track collection judged at 10%); a normal interval
   around a value the measure cannot take is not what the draw supports. The limit is the
   measure's own range, not a tuned threshold. On TREC-COVID round 5's ht(P@10) grid (100
   trials; its best run's P@10 is 0.948) where nothing was flagged before, the means it flags
   covered 0.15-0.71 of the truths, the rest 0.955-0.962; on TREC-8's it flags none
   (REPRODUCTION.md, "Rule 5");
6. **strata with nothing judged**: within the measure's cut-off the run ranks pooled
   documents of a (topic, stratum) cell none of whose documents is judged, inclusion probability 0
   (:mod:`irsample.measures.unsampled`: judging stopped early, a depth-k pool read as a sample,
   hand-made strata), or documents prels list with pi = 0. No estimator can tell how many of them
   are relevant, so no interval can cover for them; the reason names the topics and strata (judge
   one of each). The designs irsample draws judge at least one document of every non-empty cell, so
   this rule never fires on them.
7. **blind topics left out** (ht(M) and ppi(M) of AP and nDCG where the interval keeps the
   sample's variance beside a stratum judged whole, ``ht/blind_topics.py``): on a topic whose
   drawn documents hold no relevant one the sample's variance is 0, while the documents not
   drawn may hold relevant ones the run ranks; the relevance model's anticipated variance of
   the run's ratio there, scaled to the sample's level (c, ``blind_topics.unseen_variance``),
   summed over the run's blind topics, exceeds :data:`MAX_UNSEEN` times the variance its
   interval takes: the interval leaves out more than it holds. ppi(M) reads ht(M)'s, against
   ht's variance (the same human sample). Why a flag and not that variance added: added to
   every blind topic it over-covered (0.970-0.984 on TREC-8 and TREC-COVID round 5, 20-30%,
   ``blind_topics.py``), as a topic with nothing drawn below the judged top mostly has nothing
   left; what fails is a run whose relevant documents sit below it on such topics. On the
   model-assisted recipe's 2strata 20% samples of TREC-8 (ranks 1-10 judged whole, 11-100 at
   random) isa25 (AP 0.003) was covered in 389 of 700 draws with nothing flagged: where the
   draw missed its deep relevant documents, its variance was orders below its error (one draw,
   topic 403: 0.059 against 0.093 with variance 0; the two relevant documents at its ranks 12
   and 16 not drawn). With the rule (kappa 0.7 labels, seed 5, trials as units): 4.0% of the
   AP means flagged, covering 0.76, the unflagged ht(AP) 0.943 -> 0.950 and ppi(AP) 0.925 ->
   0.932 (700 draws); at 30% 2.3% flagged (0.65), ht(AP) 0.939 -> 0.946, ppi(AP) 0.931 ->
   0.937 (350 draws); nDCG 0.6-1.2% (0.87-0.91), unchanged; TREC-COVID round 5's 20% and 30%
   at most 0.3% (100 draws; REPRODUCTION.md, "Rule 7: blind topics left out"). The threshold,
   1 (more left out than held), on other draws of the same designs
   (``benchmarks/unseen_threshold.py``, 100 trials, seed 7): 0.5 flagged 15-22% of TREC-8's
   AP means and up to 15% of TREC-COVID's (a blanket, beyond the rule's 10% on informative
   samples), 1 flags 2-4% of TREC-8's (covering 0.65-0.78) and at most 0.3% of
   TREC-COVID's, 2 leaves TREC-8's 20% ht(AP) at 0.939 against 0.940.

A difference of two runs' means has its own rule, built on these
(:mod:`irsample.measures.pair_reliability`).

:class:`~irsample.measures.statuses.Statuses` holds the outcome per run x measure, with the
causing topics by id, as evaluations carry it.

The thresholds below were chosen by simulation across collections (Vaswani, CACM, TREC-8,
TREC-COVID round 5; graded and binary): see REPRODUCTION.md, "Calibrated or flagged". The rule
itself is applied by :func:`.rule.assess`.
"""

from __future__ import annotations

import numpy as np

#: fewest judged relevant documents in the draw a run mean's interval may rest on (rule 1 where
#: the design's expected sample does not apply)
MIN_SUPPORT = 40
#: a topic with this many judged relevant documents or fewer is weak (ratio estimators)
FEW = 2
#: a topic judged at least this share of its pool is not weak, whatever it holds
SETTLED = 0.5
#: largest share of a run's topics that may be weak (rule 2; 5% before, see the docstring)
MAX_WEAK = 0.07
#: rule 1 reads the skewness with the fitted relevant documents this many of the relevance
#: model's standard errors low (the 95% interval's quantile)
FIT_Z = 1.96
#: largest estimated bias of a run mean, in standard errors
MAX_BIAS_SE = 0.35
#: largest variance a run mean's interval may leave out on its blind topics, over the variance
#: it takes (rule 7): more left out than held is flagged
MAX_UNSEEN = 1.0
#: the measures normalised by the topic's count of relevant documents R (AP, R-prec, recall):
#: rule 3 bounds their ratios fitted to few judged relevant documents (:func:`.bias.fitted_bound`)
PER_RELEVANT = ("AP", "Rprec", "R")
#: topics named in a reason, at most (the rest are counted)
NAMED = 8
#: an estimated bias this many standard errors or more means the standard error is of rounding
#: size (0 up to the last bits): the reason says so instead of printing the ratio
NO_SPREAD = 1e4


def skewness_limit(n) -> np.ndarray:
    """The largest skewness |gamma| of an estimate from a sample of ``n`` units that Cochran's
    rule for a normal interval, as revised by Sugden, Smith & Jones (Survey Methodology 26,
    2000), allows: n > 28 + 25 G1^2 with G1 = gamma sqrt(n) the units' skewness, i.e.
    |gamma| <= sqrt((1 - 28 / n) / 25); 0 for n <= 28 (any skewness is too much). For 0/1
    values with a share p of ones in one simple random sample, G1^2 = (1 - 2p)^2 / (p (1 - p)):
    n > 28 + 25 G1^2 asks for about 25 relevant documents where they are rare."""
    n = np.asarray(n, dtype=np.float64)
    return np.sqrt(np.clip(1.0 - 28.0 / np.maximum(n, 1e-300), 0.0, None) / 25.0)


def weak_beyond_limit(weak: np.ndarray) -> np.ndarray:
    """Per row: a share of weak topics above :data:`MAX_WEAK` (rule 2)."""
    return weak > MAX_WEAK


def biased_beyond_limit(bias_se: np.ndarray) -> np.ndarray:
    """Per row: an estimated bias over the standard error above :data:`MAX_BIAS_SE`."""
    return np.nan_to_num(bias_se) > MAX_BIAS_SE


def left_out_beyond_limit(unseen: np.ndarray) -> np.ndarray:
    """Per row: rule 7's ratio (variance left out over the variance taken) above
    :data:`MAX_UNSEEN`."""
    return unseen > MAX_UNSEEN
