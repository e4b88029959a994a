#!/usr/bin/env python3
"""Summary of the training runs (experiments/train/*.json, scripts/train_experiments.sh) as
Markdown tables (the training figures), and OUT/plots.gp for the comparison plots.

Reads, all machine-readable, OUT/<run>/log.csv (one row per iteration, written by `stiffgrad
train`), summary.json (train's totals: throughput, time fractions), eval.json (`stiffgrad eval
--in mujoco --json`: episodes to a fall) and the snapshot tables snapshots_mujoco*.csv
(scripts/eval_snapshots.sh). A run without eval.json is shown as not evaluated (runs from before
eval wrote JSON: `scripts/experiments.py run train/RUN --steps eval` evaluates them again).
Usage: train_summary.py OUT (default out/experiments/train)
"""
import csv
import json
import math
import os
import sys


def read_log(path):
    with open(path) as f:
        # eval_* columns are empty in the rows without an evaluation (train --eval-every)
        # and `n/a` marks an undefined value (the mean return before any episode ended)
        return [{k: float(v) if v not in ("", "n/a") else float("nan") for k, v in row.items()} for row in csv.DictReader(f)]


def smooth(values, width=5):
    out = []
    for i in range(len(values)):
        window = [v for v in values[max(0, i - width + 1):i + 1] if math.isfinite(v)]
        out.append(sum(window) / len(window) if window else float("nan"))
    return out


def first_reaching(log, key, target, larger_is_better=True, width=1):
    values = smooth([r[key] for r in log], width)
    for r, v in zip(log, values):
        if math.isfinite(v) and (v >= target if larger_is_better else v <= target):
            return r["env_steps"]
    return None


def first_staying(log, key, target, width=5):
    """The first env-steps from which the smoothed `key` stays at or below target to the end."""
    values = smooth([r[key] for r in log], width)
    at = None
    for r, v in zip(log, values):
        if math.isfinite(v) and v <= target:
            at = r["env_steps"] if at is None else at
        else:
            at = None
    return at


def first_without_falls(log):
    """The env-steps of the first in-training evaluation (eval_falls logged) with no fall."""
    for r in log:
        if math.isfinite(r.get("eval_falls", float("nan"))) and r["eval_falls"] == 0:
            return r["env_steps"]
    return None


def parse_eval(path):
    """`stiffgrad eval --json`'s object as {simulator: {"return", "length", "falls" ("n/N"),
    "tracking" (m, NaN where none), "penetration_mm"}, "delta_d_mm": ...}; {} without the file."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        e = json.load(f)
    nan = lambda x: float("nan") if x is None else float(x)
    result = {}
    for sim in ("stiffgrad", "mujoco"):
        if sim in e:
            r = e[sim]
            result[sim] = {"return": nan(r["mean_return"]), "length": nan(r["mean_episode_length"]),
                           "falls": f"{r['falls']}/{r['episodes']}" if r["falls"] is not None else "n/a",
                           "tracking": nan(r["tracking_error"]), "penetration_mm": nan(r["mean_penetration_mm"])}
    if e.get("delta_d_mm") is not None:
        result["delta_d_mm"] = float(e["delta_d_mm"])
    return result


def throughput(path):
    """train's summary.json as the throughput line train prints; "" without the file."""
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        s = json.load(f)
    pct = lambda x: "n/a" if x is None else f"{100 * x:.1f}%"
    t = s["time_fraction"]
    rate = "n/a" if s["env_steps_per_s"] is None else f"{s['env_steps_per_s']:.0f}"
    return (f"{rate} env-steps/s; time in simulation {pct(t['simulation'])}, adjoint {pct(t['adjoint'])}, "
            f"networks {pct(t['networks'])} ({s['wall_s']:.1f} s)")


def parse_snapshots(path):
    """scripts/eval_snapshots.sh's CSV: {iteration: (env-steps, stiffgrad cell, MuJoCo cell, delta_d)},
    each cell (falls "n/N", length, tracking (m), return), as strings."""
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for r in csv.DictReader(f):
            cell = lambda s: (f"{r[s + '_falls']}/{r[s + '_episodes']}", r[s + "_episode_length"],
                              r[s + "_tracking_error_m"] or "nan", r[s + "_return"])
            rows[int(r["iteration"])] = (r["env_steps"] or "?", cell("stiffgrad"), cell("mujoco"), r["delta_d_mm"] or "nan")
    return rows


def kappa_snapshots(out, table):
    """The kappa runs' snapshot tables OUT/RUN/TABLE that exist, {kappa: parse_snapshots rows}, and
    the iterations all of them evaluated."""
    snaps = {k: parse_snapshots(os.path.join(out, n, table)) for k, n in zip(KAPPAS, W110_KAPPA_RUNS)}
    snaps = {k: v for k, v in snaps.items() if v}
    its = sorted(set.intersection(*(set(v) for v in snaps.values()))) if snaps else []
    return snaps, its


def kappa_table(out):
    """BCG's Table 1 on the 15 s motion: SHAC+BCG trained at kappa 50 / 100 / 300 (same settings
    otherwise), each policy snapshot evaluated in stiffgrad at its own kappa and in MuJoCo 2.2.2."""
    for table, episodes in (("snapshots_mujoco.csv", 5), ("snapshots_mujoco_e20.csv", 20)):
        kappa_table_of(out, table, episodes)


def kappa_table_of(out, table, episodes):
    snaps, its = kappa_snapshots(out, table)
    if len(snaps) < 2:
        return
    its = [i for i in its if i >= 320]  # the snapshots where some run first holds an episode
    if not its:
        return
    print(f"\nkappa ablation on the 15 s motion (SHAC+BCG, clip window 95-110 s, snapshots of {episodes} deterministic "
          f"episodes, `scripts/eval_snapshots.sh`): falls in MuJoCo 2.2.2 (in stiffgrad), MuJoCo tracking error (m), "
          "delta_d (mm)\n")
    print("| iteration | env-steps | " + " | ".join(f"kappa {k}" for k in snaps) + " |")
    print("|---|---|" + "---|" * len(snaps))
    for i in its:
        cells = []
        for k, v in snaps.items():
            steps, sg, mj, dd = v[i]
            cells.append(f"{mj[0]} ({sg[0]}), {float(mj[2]):.3f}, {float(dd):.1f}")
        print(f"| {i} | {next(iter(snaps.values()))[i][0]} | " + " | ".join(cells) + " |")
    for k, v in snaps.items():
        held = [i for i in its if v[i][2][0].startswith("0/")]
        falls = sum(int(v[i][2][0].split("/")[0]) for i in its)
        total = sum(int(v[i][2][0].split("/")[1]) for i in its)
        dd = [float(v[i][3]) for i in its]
        print(f"- kappa {k}: 0 falls in MuJoCo at {len(held)} of {len(its)} snapshots (first at iteration "
              f"{held[0] if held else 'none'}); {falls}/{total} episodes fell in all; mean delta_d {sum(dd) / len(dd):.1f} mm.")


def fmt(x, spec=".1f"):
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, spec)


def main(out):
    runs = {}
    for name in sorted(os.listdir(out)):
        path = os.path.join(out, name, "log.csv")
        if os.path.exists(path):
            log = read_log(path)
            if log:
                runs[name] = log

    def final(name, key):
        return smooth([r[key] for r in runs[name]], 5)[-1]

    for task, label in (("cartpole", "cartpole-swingup"), ("ant", "ant-run")):
        s, p = task + "_shac", task + "_ppo"
        if s not in runs or p not in runs:
            continue
        print(f"### {label}\n")
        print("| algorithm | env-steps | wall time (s) | final mean return | MuJoCo: deterministic return | throughput |")
        print("|---|---|---|---|---|---|")
        for n in [r for r in (s, task + "_shac_bcg", p) if r in runs]:
            ev = parse_eval(os.path.join(out, n, "eval.json"))
            mj = ev.get("mujoco", {}).get("return")
            print(f"| {n.split('_', 1)[1].replace('_', '-')} | {int(runs[n][-1]['env_steps'])} | {runs[n][-1]['wall_s']:.0f} | "
                  f"{fmt(runs[n][-1]['mean_return'])} | {fmt(mj)} | {throughput(os.path.join(out, n, 'summary.json'))} |")
        target = runs[p][-1]["mean_return"]
        reach = first_reaching(runs[s], "mean_return", target)
        total = runs[p][-1]["env_steps"]
        ratio = f"{total / reach:.1f}x fewer" if reach else "not reached"
        print(f"\nSHAC reaches PPO's final mean return ({target:.1f}) at {fmt(reach, '.0f')} env-steps; PPO used "
              f"{int(total)}: {ratio}.\n")

    g1 = [n for n in runs if n.startswith("g1_")]
    if g1:
        print("### g1-imitate:run1_subject2\n")
        print("| run | env-steps | wall time (s) | final mean return | tracking error, last 5 iterations (m) | "
              "stiffgrad: falls, return, length, tracking (m), penetration (mm) | "
              "MuJoCo 2.2.2: falls, return, length, tracking (m), penetration (mm) | delta_d (mm) |")
        print("|---|---|---|---|---|---|---|---|")
        for n in sorted(g1):
            ev = parse_eval(os.path.join(out, n, "eval.json"))
            sg, mj = ev.get("stiffgrad", {}), ev.get("mujoco", {})
            cell = lambda e: (f"{e['falls']}, {e['return']:.2f}, {e['length']:.0f}, {fmt(e['tracking'], '.4f')}, "
                              f"{fmt(e['penetration_mm'], '.2f')}" if e else "not evaluated (no eval.json)")
            print(f"| {n[3:]} | {int(runs[n][-1]['env_steps'])} | {runs[n][-1]['wall_s']:.0f} | "
                  f"{fmt(runs[n][-1]['mean_return'], '.2f')} | {fmt(final(n, 'mean_tracking_error'), '.3f')} | "
                  f"{cell(sg)} | {cell(mj)} | {fmt(ev.get('delta_d_mm'), '.2f')} |")
        # the return (which grows with both tracking and episode length) is the measure for the
        # tracking-reward runs: episodes start on the reference, so short episodes have small
        # tracking errors
        for shac_runs, ppo in ((("g1_shac", "g1_shac_bcg", "g1_shac_k50", "g1_shac_k100", "g1_shac_bcg_k50",
                                 "g1_shac_bcg_k100", "g1_shac_long"), "g1_ppo"),
                               (("g1_shac_explicit", "g1_shac_bcg_explicit", "g1_shac_h8_explicit",
                                 "g1_shac_h16_explicit"), "g1_ppo_explicit"),
                               (("g1_shac_soft", "g1_shac_bcg_soft", "g1_shac_soft_long"), "g1_ppo_soft"),
                               (("g1_shac_ref", "g1_shac_bcg_ref", "g1_shac_ref_seed1", "g1_shac_lr2e3_n64_ref",
                                 "g1_shac_lr2e3_n64_ref_long"),
                                "g1_ppo_ref"),
                               (("g1_shac_ref_seed1",), "g1_ppo_ref_seed1"),
                               (("g1_shac_w95", "g1_shac_bcg_w95", "g1_shac_lr2e3_n64_w95", "g1_shac_lr2e3_n64_w95_long"),
                                "g1_ppo_w95"),
                               (("g1_shac_lr2e3_n64_w95_long", "g1_shac_lr2e3_n64_w95_long_seed1"), "g1_ppo_n64_w95"),
                               (("g1_shac_lr2e3_n64_w95_long", "g1_shac_lr2e3_n64_w95_long_seed1",
                                 "g1_shac_lr2e3_n64_w95_800", "g1_shac_bcg_lr2e3_n64_w95_800"), "g1_ppo_n64_w95_4000"),
                               (tuple(W110_KAPPA_RUNS[::-1]), "g1_ppo_n64_w95_110_4000")):
            if ppo not in runs:
                continue
            target = runs[ppo][-1]["mean_return"]
            total = runs[ppo][-1]["env_steps"]
            for n in shac_runs:
                if n not in runs:
                    continue
                reach = first_reaching(runs[n], "mean_return", target)
                ratio = f"{total / reach:.1f}x fewer env-steps" if reach else "not reached"
                steps = runs[n][-1]["env_steps"]
                ppo_then = [r["mean_return"] for r in runs[ppo] if r["env_steps"] <= steps]
                print(f"\n{n[3:]} reaches {ppo[3:]}'s final mean return ({target:.2f}) at {fmt(reach, '.0f')} env-steps; "
                      f"{ppo[3:]} used {int(total)}: {ratio}. At {int(steps)} env-steps, {n[3:]} has "
                      f"{runs[n][-1]['mean_return']:.2f} and {ppo[3:]} had {fmt(ppo_then[-1] if ppo_then else None, '.2f')}.")
                # tracking error (5-iteration mean), the paper's measure; the episodes start on the
                # reference, so the first iterations' errors are small: the error must stay at or
                # below PPO's final one from that point to the end of the run
                track = final(ppo, "mean_tracking_error")
                if math.isfinite(track):
                    reach_t = first_staying(runs[n], "mean_tracking_error", track)
                    ratio_t = f"{total / reach_t:.1f}x fewer env-steps" if reach_t else "not reached"
                    print(f"  Training episodes' tracking error (they end where it passes 0.5 m): {ppo[3:]}'s final "
                          f"{track:.3f} m reached for good at {fmt(reach_t, '.0f')} env-steps "
                          f"({ratio_t}); {n[3:]} ends at {final(n, 'mean_tracking_error'):.3f} m.")
                # the in-training evaluations (train --eval-every: 5 deterministic episodes in
                # stiffgrad): the first evaluation without a fall, for each of the two runs
                held_n, held_p = first_without_falls(runs[n]), first_without_falls(runs[ppo])
                if held_n is not None or held_p is not None:
                    if held_n and held_p:
                        verdict = f"{held_p / held_n:.1f}x fewer env-steps"
                    elif held_n:
                        verdict = f"more than {total / held_n:.1f}x fewer env-steps ({ppo[3:]} never did)"
                    else:
                        verdict = f"not reached ({ppo[3:]} did)"
                    print(f"  Deterministic evaluations in stiffgrad (5 episodes): first with 0/5 falls at "
                          f"{fmt(held_n, '.0f')} env-steps for {n[3:]}, {fmt(held_p, '.0f')} for {ppo[3:]} "
                          f"(of {int(total)}): {verdict}.")
                # the paper's Table 2: tracking error after transfer, deterministic episodes in
                # MuJoCo 2.2.2 run to a fall
                ev_n = parse_eval(os.path.join(out, n, "eval.json")).get("mujoco")
                ev_p = parse_eval(os.path.join(out, ppo, "eval.json")).get("mujoco")
                if ev_n and ev_p:
                    t_n, t_p = float(ev_n["tracking"]), float(ev_p["tracking"])
                    print(f"  In MuJoCo 2.2.2 (episodes to a fall): {n[3:]} {t_n:.3f} m over {ev_n['length']:.0f} steps, falls "
                          f"{ev_n['falls']}, after {total / steps:.0f}x fewer env-steps than {ppo[3:]}: {t_p:.3f} m over "
                          f"{ev_p['length']:.0f} steps, falls {ev_p['falls']}: PPO's tracking "
                          f"{'reached' if t_n <= t_p else 'not reached'}.")
        print("\nThe eval columns run each deterministic episode for the task's 300 control steps or to a fall "
              "(root below 0.3 m); training episodes also end where the tracking error passes 0.5 m. "
              "'not evaluated (no eval.json)': the run has no `stiffgrad eval --json` output "
              "(`scripts/experiments.py run train/RUN --steps eval` makes it while its policy.sgp exists).")
        if any("_add" in n for n in g1):
            print("\nWith the ADD reward (*_add) the logged return is the discriminator's reward minus the action-rate "
                  "penalty; the eval columns give the task's tracking return of the deterministic policy.")
        kappa_table(out)
        print()
        for n in sorted(g1):
            t = throughput(os.path.join(out, n, "summary.json"))
            if t:
                print(f"- {n[3:]}: {t}")


# servo targets at the reference (--servo-targets reference), with home-pose runs beside them
REF_RUNS = ["g1_shac_ref", "g1_shac_bcg_ref", "g1_ppo_ref", "g1_shac_ref_seed1", "g1_ppo_ref_seed1",
            "g1_shac_lr2e3_n64_ref", "g1_shac_lr2e3_n64_ref_long", "g1_shac_ref_s05", "g1_shac", "g1_ppo"]
# the clip window 95-105 s (--clip-window 95:105), with the same settings on the whole clip beside them
W95_RUNS = ["g1_shac_w95", "g1_shac_bcg_w95", "g1_ppo_w95", "g1_shac_lr2e3_n64_w95", "g1_shac_lr2e3_n64_w95_long",
            "g1_shac_lr2e3_n64_w95_long_seed1", "g1_ppo_n64_w95", "g1_shac_ref", "g1_ppo_ref", "g1_shac_lr2e3_n64_ref"]
# the long runs on the window (64 environments): two seeds, 800 iterations, kappa 1000, PPO
W95_10X_RUNS = ["g1_shac_bcg_lr2e3_n64_w95_800", "g1_shac_lr2e3_n64_w95_800", "g1_ppo_n64_w95_4000"]
# the 15 s window (seconds 95 to 110, as long as each of the BCG paper's motions): SHAC+BCG against PPO
W110_RUNS = ["g1_shac_bcg_lr2e3_n64_w95_110", "g1_ppo_n64_w95_110_4000"]
# BCG's Table 1 on the 15 s window: SHAC+BCG at kappa 50, 100 and 300 (1/m), otherwise the same settings
KAPPAS = (50, 100, 300)
W110_KAPPA_RUNS = ["g1_shac_bcg_lr2e3_n64_w95_110_k50", "g1_shac_bcg_lr2e3_n64_w95_110_k100",
                   "g1_shac_bcg_lr2e3_n64_w95_110"]
W95_LONG_RUNS = ["g1_shac_lr2e3_n64_w95_long", "g1_shac_lr2e3_n64_w95_long_seed1", "g1_shac_lr2e3_n64_w95_800",
                 "g1_shac_bcg_lr2e3_n64_w95_800", "g1_shac_lr2e3_n64_w95_long_k100",
                 "g1_shac_lr2e3_n64_w95_long_k1000", "g1_ppo_n64_w95", "g1_ppo_n64_w95_4000"]
PLOTS = [
    ("cartpole_return_steps.png", "cartpole-swingup", "environment steps", 2, 4, ["cartpole_shac", "cartpole_ppo"]),
    ("cartpole_return_time.png", "cartpole-swingup", "wall time (s)", 3, 4, ["cartpole_shac", "cartpole_ppo"]),
    ("ant_return_steps.png", "ant-run", "environment steps", 2, 4, ["ant_shac", "ant_shac_bcg", "ant_ppo"]),
    ("ant_return_time.png", "ant-run", "wall time (s)", 3, 4, ["ant_shac", "ant_shac_bcg", "ant_ppo"]),
    ("g1_return_steps.png", "g1-imitate:run1_subject2, Impulse floor", "environment steps", 2, 4,
     ["g1_shac", "g1_shac_bcg", "g1_ppo", "g1_shac_explicit", "g1_shac_bcg_explicit", "g1_ppo_explicit"]),
    ("g1_return_time.png", "g1-imitate:run1_subject2, Impulse floor", "wall time (s)", 3, 4,
     ["g1_shac", "g1_shac_bcg", "g1_ppo", "g1_shac_explicit", "g1_shac_bcg_explicit", "g1_ppo_explicit"]),
    ("g1_tracking_steps.png", "g1-imitate:run1_subject2, Impulse floor", "environment steps", 2, 15,
     ["g1_shac", "g1_shac_bcg", "g1_ppo", "g1_shac_explicit", "g1_ppo_explicit"]),
    ("g1_add_tracking_steps.png", "g1-imitate:run1_subject2, ADD reward", "environment steps", 2, 15,
     ["g1_shac_add_explicit", "g1_shac_bcg_add_explicit", "g1_ppo_add_explicit", "g1_shac_soft_add"]),
    ("g1_horizon_return_steps.png", "g1-imitate:run1_subject2, Impulse floor, servos explicit, SHAC horizon 8 / 16 / 32",
     "environment steps", 2, 4, ["g1_shac_h8_explicit", "g1_shac_h16_explicit", "g1_shac_explicit", "g1_ppo_explicit"]),
    ("g1_soft_return_steps.png", "g1-imitate:run1_subject2, Impulse floor vs soft contact", "environment steps", 2, 4,
     ["g1_shac", "g1_ppo", "g1_shac_soft", "g1_shac_bcg_soft", "g1_ppo_soft", "g1_shac_soft_long"]),
    ("g1_soft_return_time.png", "g1-imitate:run1_subject2, Impulse floor vs soft contact", "wall time (s)", 3, 4,
     ["g1_shac", "g1_ppo", "g1_shac_soft", "g1_shac_bcg_soft", "g1_ppo_soft", "g1_shac_soft_long"]),
    ("g1_kappa_tracking_steps.png", "g1-imitate, SHAC at kappa 50 / 100 / 300", "environment steps", 2, 15,
     ["g1_shac_k50", "g1_shac_k100", "g1_shac"]),
    ("g1_kappa_bcg_tracking_steps.png", "g1-imitate, SHAC+BCG at kappa 50 / 100 / 300",
     "environment steps", 2, 15, ["g1_shac_bcg_k50", "g1_shac_bcg_k100", "g1_shac_bcg"]),
    ("g1_kappa_bcg_explicit_tracking_steps.png", "g1-imitate, servos explicit, SHAC+BCG at kappa 50 / 100 / 300",
     "environment steps", 2, 15, ["g1_shac_bcg_k50_explicit", "g1_shac_bcg_k100_explicit", "g1_shac_bcg_explicit"]),
    # SHAC's settings on the Impulse floor (servos implicit): actor rate, horizon, batch
    ("g1_shac_settings_return_steps.png", "g1-imitate, Impulse floor: SHAC actor lr, horizon and environments",
     "environment steps", 2, 4, ["g1_shac", "g1_shac_lr2e3", "g1_shac_lr1e3", "g1_shac_h8", "g1_shac_h16",
                                 "g1_shac_n64", "g1_shac_lr2e3_n64", "g1_shac_lr2e3_n64_seed1",
                                 "g1_shac_lr2e3_n64_c3", "g1_shac_lr2e3_n128", "g1_shac_long"]),
    ("g1_shac_settings_eval_length_steps.png", "g1-imitate, Impulse floor: SHAC settings, deterministic episodes",
     "environment steps", 2, 18, ["g1_shac", "g1_shac_lr2e3", "g1_shac_lr1e3", "g1_shac_h8", "g1_shac_h16",
                                  "g1_shac_n64", "g1_shac_lr2e3_n64", "g1_shac_lr2e3_n64_seed1",
                                  "g1_shac_lr2e3_n64_c3", "g1_shac_lr2e3_n128", "g1_shac_long"]),
    # the ADD discriminator with and without its replay ring (train --eval-every: column 17)
    ("g1_add_replay_eval_return_steps.png", "g1-imitate, ADD reward: discriminator with / without replay, deterministic episodes",
     "environment steps", 2, 17, ["g1_shac_soft_add", "g1_shac_soft_add_replay", "g1_shac_soft_add_p0",
                                  "g1_shac_soft_add_p0_replay", "g1_shac_soft_add_replay_m1", "g1_shac_add",
                                  "g1_shac_add_replay"]),
    # servo targets at the reference (--servo-targets reference) against the home pose
    ("g1_ref_return_steps.png", "g1-imitate, Impulse floor: servo targets at the reference (_ref) or home",
     "environment steps", 2, 4, REF_RUNS),
    ("g1_ref_eval_tracking_steps.png", "g1-imitate, Impulse floor: servo targets, deterministic episodes",
     "environment steps", 2, 20, REF_RUNS),
    ("g1_ref_eval_length_steps.png", "g1-imitate, Impulse floor: servo targets, deterministic episodes",
     "environment steps", 2, 18, REF_RUNS),
    # episodes drawn from seconds 95 to 105 of the clip (--clip-window 95:105), servo targets at
    # the reference, against the same settings on the whole clip
    ("g1_w95_return_steps.png", "g1-imitate, Impulse floor, reference targets: clip window 95-105 s (_w95) or the whole clip (_ref)",
     "environment steps", 2, 4, W95_RUNS),
    ("g1_w95_eval_length_steps.png", "g1-imitate, Impulse floor, reference targets: clip window or whole clip, deterministic episodes",
     "environment steps", 2, 18, W95_RUNS),
    ("g1_w95_eval_tracking_steps.png", "g1-imitate, Impulse floor, reference targets: clip window or whole clip, deterministic episodes",
     "environment steps", 2, 20, W95_RUNS),
    ("g1_w95_long_return_steps.png", "g1-imitate, clip window 95-105 s, 64 environments: long runs",
     "environment steps", 2, 4, W95_LONG_RUNS),
    ("g1_w95_long_eval_length_steps.png", "g1-imitate, clip window 95-105 s, 64 environments: deterministic episodes",
     "environment steps", 2, 18, W95_LONG_RUNS),
    ("g1_w95_long_eval_falls_steps.png", "g1-imitate, clip window 95-105 s, 64 environments: falls of 5 deterministic episodes",
     "environment steps", 2, 19, W95_LONG_RUNS),
    # the 10x comparison on the stretch: SHAC+BCG and SHAC (1.64 M env-steps) against PPO at 8.2 M,
    # environment steps on a log scale (the 7th field)
    ("g1_w95_10x_tracking_steps.png", "g1-imitate, clip window 95-105 s, 64 environments: training tracking error",
     "environment steps (log scale)", 2, 15, W95_10X_RUNS, True),
    ("g1_w95_10x_eval_falls_steps.png", "g1-imitate, clip window 95-105 s, 64 environments: falls of 5 deterministic episodes",
     "environment steps (log scale)", 2, 19, W95_10X_RUNS, True),
    ("g1_w95_10x_eval_tracking_steps.png", "g1-imitate, clip window 95-105 s, 64 environments: deterministic episodes",
     "environment steps (log scale)", 2, 20, W95_10X_RUNS, True),
    ("g1_w110_tracking_steps.png", "g1-imitate, clip window 95-110 s (15 s), 64 environments: training tracking error",
     "environment steps (log scale)", 2, 15, W110_RUNS, True),
    ("g1_w110_return_steps.png", "g1-imitate, clip window 95-110 s (15 s), 64 environments: mean return",
     "environment steps (log scale)", 2, 4, W110_RUNS, True),
    ("g1_w110_eval_falls_steps.png", "g1-imitate, clip window 95-110 s (15 s), 64 environments: falls of 5 deterministic episodes",
     "environment steps (log scale)", 2, 19, W110_RUNS, True),
    ("g1_w110_eval_tracking_steps.png", "g1-imitate, clip window 95-110 s (15 s), 64 environments: deterministic episodes",
     "environment steps (log scale)", 2, 20, W110_RUNS, True),
    ("g1_w110_kappa_tracking_steps.png", "g1-imitate 95-110 s, SHAC+BCG at kappa 50 / 100 / 300: training tracking error",
     "environment steps (log scale)", 2, 15, W110_KAPPA_RUNS + ["g1_ppo_n64_w95_110_4000"], True),
    ("g1_w110_kappa_eval_falls_steps.png", "g1-imitate 95-110 s, SHAC+BCG at kappa 50 / 100 / 300: falls of 5 episodes in stiffgrad",
     "environment steps", 2, 19, W110_KAPPA_RUNS),
    # train --eval-every: deterministic episodes to a fall (columns 18 and 20)
    ("g1_eval_length_steps.png", "g1-imitate:run1_subject2, Impulse floor: deterministic episodes (train --eval-every)",
     "environment steps", 2, 18, ["g1_shac", "g1_shac_bcg", "g1_ppo", "g1_shac_long"]),
    ("g1_eval_tracking_steps.png", "g1-imitate:run1_subject2, Impulse floor: deterministic episodes (train --eval-every)",
     "environment steps", 2, 20, ["g1_shac", "g1_shac_bcg", "g1_ppo", "g1_shac_long"]),
]
EVAL_COLUMNS = (17, 18, 19, 20)

def write_plots(out):
    """OUT/plots.gp: the comparison plots, paths relative to OUT (log.csv columns as `stiffgrad train` writes)."""
    ylabel = {4: "mean return (last 64 episodes)", 15: "mean tracking error (m)",
              17: "tracking return to a fall (task reward)",
              18: "episode length to a fall (control steps)", 19: "falls (of the evaluated episodes)",
              20: "tracking error to a fall (m)"}
    with open(os.path.join(out, "plots.gp"), "w") as f:
        f.write("# written by scripts/train_summary.py\nset datafile separator ','\nset terminal pngcairo size 800,500 noenhanced\n"
                "set grid\nset key right bottom\n")
        for png, title, xlabel, x, y, runs, *rest in PLOTS:
            logx = bool(rest and rest[0])
            present = [r for r in runs if os.path.exists(os.path.join(out, r, "log.csv"))]
            if y in EVAL_COLUMNS:  # only runs with evaluations, only their evaluated rows
                present = [r for r in present if any(math.isfinite(row.get("eval_return", float("nan")))
                                                     for row in read_log(os.path.join(out, r, "log.csv")))]
            if not present:
                continue
            key = "left top" if y == 17 else "right bottom"  # returns that fall back would sit under the key
            if logx:
                key = "left bottom"  # the log-scale comparisons fall from the top left
            f.write(f"set output '{png}'\nset title '{title}'\nset xlabel '{xlabel}'\nset ylabel '{ylabel[y]}'\n"
                    f"set key {key}\n")
            source = (lambda r: f"'< grep -v \",,,,$\" {r}/log.csv'") if y in EVAL_COLUMNS else (lambda r: f"'{r}/log.csv'")
            style = "linespoints" if y in EVAL_COLUMNS else "lines"
            if logx:
                f.write("set logscale x\n")
            f.write("plot " + ", ".join(f"{source(r)} using {x}:{y} skip 1 with {style} lw 2 title '{r}'" for r in present) + "\n")
            if logx:
                f.write("unset logscale x\n")
        write_kappa_mujoco_plot(f, out)


def write_kappa_mujoco_plot(f, out):
    """BCG's Table 1 as a plot: falls in MuJoCo 2.2.2 of each kappa run's policy snapshots (20
    episodes each, scripts/eval_snapshots.sh's snapshots_mujoco_e20.csv), written to
    OUT/g1_w110_kappa_mujoco_falls.csv (env-steps, then one falls column per kappa) and plotted."""
    snaps, its = kappa_snapshots(out, "snapshots_mujoco_e20.csv")
    if not snaps:
        return
    with open(os.path.join(out, "g1_w110_kappa_mujoco_falls.csv"), "w") as d:
        d.write("env_steps," + ",".join(f"mujoco_falls_kappa{k}" for k in snaps) + "\n")
        for i in its:
            steps = next(iter(snaps.values()))[i][0]
            d.write(steps + "," + ",".join(v[i][2][0].split("/")[0] for v in snaps.values()) + "\n")
    f.write("set output 'g1_w110_kappa_mujoco_falls_steps.png'\n"
            "set title 'g1-imitate 95-110 s, SHAC+BCG at kappa 50 / 100 / 300: falls of 20 episodes in MuJoCo 2.2.2'\n"
            "set xlabel 'environment steps'\nset ylabel 'falls in MuJoCo 2.2.2 (of 20 deterministic episodes)'\n"
            "set key left bottom\n")
    f.write("plot " + ", ".join(f"'g1_w110_kappa_mujoco_falls.csv' using 1:{c + 2} skip 1 with linespoints lw 2 "
                                f"title 'kappa {k}'" for c, k in enumerate(snaps)) + "\n")


if __name__ == "__main__":
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "out/experiments/train"
    write_plots(out_dir)
    main(out_dir)
