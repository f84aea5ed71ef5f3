"""``irsample demo`` on the bundled Vaswani data: the table, the summary lines and the figure."""

from __future__ import annotations

from irsample.cli import main


def test_demo_runs_on_bundled_data(tmp_path, capsys):
    plot = tmp_path / "demo.png"
    assert main(["demo", "--plot", str(plot), "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("11 runs, 93 topics; depth-100 pool of ")
    assert "xinfAP   vs truth: Kendall tau" in out and "infNDCG  vs truth: Kendall tau" in out
    assert len([line for line in out.splitlines() if line.count("[") == 2]) == 11
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"


def test_demo_complete_judgments_reproduce_the_truth(tmp_path, capsys):
    assert main(["demo", "--plot", str(tmp_path / "d.png"), "--fraction", "1"]) == 0
    out = capsys.readouterr().out
    assert "xinfAP   vs truth: Kendall tau 1.000, RMS error 0.0000" in out
    assert "infNDCG  vs truth: Kendall tau 1.000, RMS error 0.0000" in out


def test_demo_rejects_bad_fraction(capsys):
    assert main(["demo", "--fraction", "0"]) == 1
    assert "--fraction" in capsys.readouterr().err
