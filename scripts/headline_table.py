#!/usr/bin/env python3
"""The README's headline table, computed from the summary files in docs/experiments/.

  scripts/headline_table.py           print the table (Markdown)
  scripts/headline_table.py --write   replace the table between the README's headline markers
  scripts/headline_table.py --check   exit 1 if the README's table differs (the readme_headline test)

Each row names the experiment that wrote its file; `scripts/experiments.py run NAME` reruns it
(docs/experiments/running.md). No figure in the table is typed by hand.
"""
import argparse
import csv
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SUMMARIES = ROOT / "docs" / "experiments"
README = ROOT / "README.md"
BEGIN = "<!-- headline:begin (scripts/headline_table.py --write) -->"
END = "<!-- headline:end -->"


def rows_of(name):
    with open(SUMMARIES / name, newline="") as f:
        return list(csv.DictReader(f))


def toss_row():
    # DiffMJX's toss: median relative gradient error of the cube against its ground truth.
    by_method = {r["method"]: float(r["median_rel_err"])
                 for r in rows_of("toss_eg_summary.csv") if r["shape"] == "cube"}
    return ("Stiff toss (DiffMJX Fig. 5), cube: median relative gradient error",
            f"Euler {by_method['euler']:.2g}; Tsit5 {by_method['tsit5']:.1e}; "
            f"Tsit5 event-aware {by_method['tsit5-eg']:.1e}",
            "toss_eg_summary.csv", "`scripts/experiments.py run diffmjx_toss_eg`")


def bcg_variance_row():
    # BCG Fig. 4: spread of dv_z/dp_z over 32 draws at kappa 300, every environment bundled.
    rows = [r for r in rows_of("bcg_variance.csv") if r["kappa"] == "300" and r["tau"] == "0"]
    std = {int(r["B"]): float(r["std"]) for r in rows}
    return ("G1 dropped on the Impulse floor (BCG Fig. 4), κ 300: std of the gradient",
            f"plain {std[1]:.3g}; bundled B 4 {std[4]:.3g}; B 10 {std[10]:.3g}",
            "bcg_variance.csv", "`scripts/experiments.py run bcg_variance`")


def kappa_row():
    # BCG Table 1 on a 15 s G1 motion: MuJoCo falls (of 20) of SHAC+BCG policies per kappa.
    last = rows_of("g1_15s_kappa_mujoco_falls.csv")[-1]
    steps = int(last["env_steps"])
    falls = ", ".join(f"κ {k} {last['mujoco_falls_kappa' + k]}/20" for k in ("50", "100", "300"))
    return (f"G1 15 s motion, SHAC+BCG trained at κ, falls in MuJoCo 2.2.2 after "
            f"{steps / 1e6:.2f} M env-steps",
            falls, "g1_15s_kappa_mujoco_falls.csv",
            "`scripts/train_experiments.sh` rows `g1_shac_bcg_lr2e3_n64_w95_110{,_k100,_k50}`")


def table():
    lines = ["| measurement | result | file | command |", "|---|---|---|---|"]
    for what, result, name, command in (toss_row(), bcg_variance_row(), kappa_row()):
        lines.append(f"| {what} | {result} | [{name}](docs/experiments/{name}) | {command} |")
    return "\n".join(lines) + "\n"


def readme_with(text, new_table):
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        sys.exit(f"{README}: the markers '{BEGIN}' and '{END}' are missing")
    head = text[:start + len(BEGIN)] + "\n"
    return head + new_table + text[end:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="update README.md in place")
    mode.add_argument("--check", action="store_true", help="fail if README.md's table is stale")
    args = parser.parse_args()
    new_table = table()
    if not (args.write or args.check):
        sys.stdout.write(new_table)
        return 0
    text = README.read_text()
    updated = readme_with(text, new_table)
    if args.write:
        README.write_text(updated)
        return 0
    if updated != text:
        sys.stderr.write("README.md's headline table differs from docs/experiments/; run "
                         "scripts/headline_table.py --write\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
