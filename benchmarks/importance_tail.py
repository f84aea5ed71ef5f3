"""Where statAP's design puts the variance of its estimates: the deep tail a sample barely sees.

Under statAP's AP-prior design (``importance(f)``; ``design/sampling/importance.py``) a document
d of a topic's pool is judged with probability pi_d, and the Horvitz-Thompson count of relevant
documents R^ = sum_S rel_d / pi_d has the design variance sum_F (1 - pi_d) / pi_d rel_d under
Poisson sampling (Hájek's form for the fixed-size draw adds a small centring term). Sorting the
pool's documents by pi, this prints how much of that variance (summed over topics) the
documents with the smallest pi carry, how many relevant documents they hold, and how many of
those a sample is expected to catch (sum of their pi): where a quarter of the variance rests on
one expected catch over all topics, whether that one document is caught moves the estimate and
its estimated variance together, and no variance estimate read from the sample (nor a model
fitted to it) can be steady. R^ is the denominator of AP and (through the ideal DCG) of nDCG.

Beside statAP's design, the same with a floor a (``importance(f,floor=a)``: each weight raised
to at least a times the topic's uniform weight, w' = max(w, a / N)): the smallest pi, and the
same shares.

Usage: python benchmarks/importance_tail.py [--collections trec8,covid,vaswani,cacm]
       [--fractions 0.1,0.2] [--floors 0,0.1] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARES = (0.25, 0.5)


def main() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ht_coverage import load

    from irsample.design import importance

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", default="trec8,covid,vaswani,cacm")
    parser.add_argument("--fractions", default="0.1,0.2")
    parser.add_argument("--floors", default="0,0.1")
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = parser.parse_args()
    print("collection  f     floor min pi   R      " + "  ".join(
        f"{s:.0%} of Var(R^): pi <=, relevant, expected catches (per topic)" for s in SHARES))
    for name in args.collections.split(","):
        col, frame = load(name, Path(args.shared))
        relevant = (frame.rel >= 1).astype(np.float64)
        for fraction in (float(f) for f in args.fractions.split(",")):
            for floor in (float(a) for a in args.floors.split(",")):
                pi = importance(fraction, floor=floor).select(frame, rng=0).inclusion
                parts = tail_shares(pi, relevant, col.n_topics)
                inside = pi[pi > 0]
                print(f"{name:10s}  {fraction:<4g}  {floor:<4g}  {inside.min():.4f}  "
                      f"{relevant.sum():5.0f}  " + "  ".join(
                          f"{limit:.4f}, {held:4.0f} ({held / relevant.sum():.0%}), "
                          f"{caught:5.1f} ({caught / col.n_topics:.2f})"
                          for limit, held, caught in parts))


def tail_shares(pi: np.ndarray, relevant: np.ndarray, n_topics: int):
    """Per share s of :data:`SHARES`: (pi limit, relevant documents, expected catches) of the
    documents of smallest pi that carry s of sum (1 - pi) / pi rel over the frame."""
    free = (pi > 0) & (pi < 1)
    weight = np.where(free, (1.0 - pi) / np.where(free, pi, 1.0), 0.0) * relevant
    order = np.argsort(np.where(pi > 0, pi, np.inf), kind="stable")
    carried = np.cumsum(weight[order]) / weight.sum()
    held = np.cumsum(relevant[order])
    caught = np.cumsum((pi * relevant)[order])
    out = []
    for share in SHARES:
        k = int(np.searchsorted(carried, share))
        out.append((float(pi[order][k]), float(held[k]), float(caught[k])))
    return out


if __name__ == "__main__":
    main()
