#!/usr/bin/env python3
"""Runs the experiments defined in experiments/*.json (docs/experiments/running.md).

  scripts/experiments.py list [PATTERN ...]
  scripts/experiments.py run NAME|PATTERN ... [--build DIR] [--out DIR] [--dry-run]
                         [--steps STEP,...] [--resume] [--keep-going] [--env KEY=VALUE ...]

An experiment is one JSON file under experiments/; its NAME is the file's path there without
.json (experiments/diffmjx_bounce.json: diffmjx_bounce; experiments/train/g1_ppo.json:
train/g1_ppo). PATTERNs are shell globs over the names ('train/*', 'diffmjx_*'). The file:

  {"description": "...",                   what it measures, where its figure is used
   "cost": "8 s on a 2-core Xeon",         optional: how long a full run took
   "out": "diffmjx_bounce",                its folder under --out (default: NAME)
   "env": {"OMP_NUM_THREADS": "1"},        optional: environment of every step
   "command": ["{build}/bench/bench_diffmjx_bounce", "--out", "{out}"]}

or, for several commands, "steps": a list of {"name", "argv", and optional "stdout" / "stderr"
(files in the output folder; default NAME.txt / NAME.stderr.txt), "cwd", "needs" (files of the
output folder the step reads: without them it is skipped), "resume" (a checkpoint file of the
output folder: with --resume, when it exists, `--resume PATH` is appended), "optional" (true: a
missing program or a failure is a note, not an error)}; "command" is the one step "run". In
argv, {build} is --build, {repo} the repository, {out} the experiment's output folder and {root}
--out, all absolute.

Every experiment runs into OUT/<out>/ (created), its steps in order from the repository root,
their stdout and stderr copied to the terminal and into the files above, and writes
OUT/<out>/command.json: the experiment's name and file, each step's resolved command, exit status
and seconds, the environment set, git commit (and whether the tree had changes), date and
machine (nproc, CPU model). --dry-run prints the commands and writes nothing. --steps runs only
the named steps (e.g. --steps eval: evaluate the policies already trained). A failing step stops
its experiment and, without --keep-going, the run; the exit status is 1 when any failed.
"""
import argparse
import datetime
import fnmatch
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPERIMENTS = os.path.join(REPO, "experiments")


def load_all():
    """{name: (path, config)} of every experiments/**/*.json."""
    found = {}
    for top, dirs, files in os.walk(EXPERIMENTS):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(".json"):
                continue
            path = os.path.join(top, f)
            name = os.path.relpath(path, EXPERIMENTS)[:-len(".json")].replace(os.sep, "/")
            with open(path) as fh:
                try:
                    config = json.load(fh)
                except json.JSONDecodeError as e:
                    sys.exit(f"experiments: {path}: {e}")
            check(name, path, config)
            found[name] = (path, config)
    return found


def check(name, path, config):
    if ("command" in config) == ("steps" in config):
        sys.exit(f"experiments: {path}: give either \"command\" or \"steps\"")
    for step in steps_of(config):
        if not step.get("argv") or not all(isinstance(a, str) for a in step["argv"]):
            sys.exit(f"experiments: {path}: every step needs \"argv\", a list of strings")
        if not step.get("name"):
            sys.exit(f"experiments: {path}: every step needs a \"name\"")
    if not config.get("description"):
        sys.exit(f"experiments: {path}: no \"description\"")


def steps_of(config):
    if "command" in config:
        return [{"name": "run", "argv": config["command"]}]
    return config["steps"]


def select(found, patterns):
    names = []
    for p in patterns:
        hits = [n for n in found if fnmatch.fnmatchcase(n, p)]
        if not hits:
            sys.exit(f"experiments: no experiment '{p}' (scripts/experiments.py list)")
        names += [n for n in hits if n not in names]
    return names


def expand(text, values):
    for k, v in values.items():
        text = text.replace("{" + k + "}", v)
    return text


def git_state():
    def git(*args):
        r = subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None
    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def machine():
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu_model": model, "hostname": platform.node(), "system": platform.platform()}


def pump(src, sinks):
    for chunk in iter(lambda: src.read1(65536), b""):
        for s in sinks:
            s.write(chunk)
            s.flush()
    src.close()


def run_step(argv, env, cwd, stdout_path, stderr_path, append):
    """Runs argv, its stdout and stderr teed to the terminal and the two files; the exit status."""
    mode = "ab" if append else "wb"
    with open(stdout_path, mode) as out_f, open(stderr_path, mode) as err_f:
        try:
            p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            err_f.write(f"experiments: cannot run {argv[0]}: {e}\n".encode())
            print(f"experiments: cannot run {argv[0]}: {e}", file=sys.stderr)
            return 127
        threads = [threading.Thread(target=pump, args=(p.stdout, [out_f, sys.stdout.buffer])),
                   threading.Thread(target=pump, args=(p.stderr, [err_f, sys.stderr.buffer]))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return p.wait()


def run_experiment(name, path, config, args):
    root = os.path.abspath(args.out)
    out = os.path.join(root, config.get("out", name))
    values = {"build": os.path.abspath(args.build), "repo": REPO, "out": out, "root": root}
    env_set = dict(config.get("env", {}))
    env_set.update(args.env)
    env = dict(os.environ, **env_set)
    wanted = set(args.steps.split(",")) if args.steps else None
    record = {"experiment": name, "config": os.path.relpath(path, REPO), "description": config["description"],
              "out": out, "build": values["build"], "env": env_set, "git": git_state(),
              "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "machine": machine(),
              "steps": []}
    log = sys.stdout if args.dry_run else sys.stderr  # a dry run's commands are its output
    print(f"== {name}: {config['description']}", file=log)
    previous = read_record(out)
    if not args.dry_run:
        os.makedirs(out, exist_ok=True)
    ok = True
    for step in steps_of(config):
        sname = step["name"]
        if wanted is not None and sname not in wanted:
            continue
        argv = [expand(a, values) for a in step["argv"]]
        cwd = expand(step.get("cwd", "{repo}"), values)
        append = False
        resume = step.get("resume")
        if args.resume and resume and os.path.exists(os.path.join(out, resume)):
            argv += ["--resume", os.path.join(out, resume)]
            append = True  # a resumed run's progress goes on in the same files
        entry = {"name": sname, "argv": argv, "cwd": cwd}
        missing = [f for f in step.get("needs", []) if not os.path.exists(os.path.join(out, f))]
        shown = shlex.join([f"{k}={v}" for k, v in env_set.items()] + argv)
        if cwd != REPO:
            shown = f"(cd {shlex.quote(cwd)} && {shown})"
        entry["command"] = shown  # the same as one shell line
        if missing and not args.dry_run:
            print(f"== {name} [{sname}]: skipped, {', '.join(missing)} not in {out}", file=sys.stderr)
            entry["skipped"] = "missing " + ", ".join(missing)
            record["steps"].append(entry)
            continue
        print(f"== {name} [{sname}]: {shown}", file=log)
        if args.dry_run:
            continue
        if step.get("optional") and shutil.which(argv[0], path=env.get("PATH")) is None and not os.path.exists(argv[0]):
            print(f"== {name} [{sname}]: {argv[0]} not found: skipped (optional)", file=sys.stderr)
            entry["skipped"] = f"{argv[0]} not found"
            record["steps"].append(entry)
            continue
        stdout_name = step.get("stdout", sname + ".txt")
        stderr_name = step.get("stderr", sname + ".stderr.txt")
        entry.update(stdout=stdout_name, stderr=stderr_name)
        record["steps"].append(entry)
        write_record(out, record)  # a run that is stopped still says what it was running
        t0 = time.monotonic()
        status = run_step(argv, env, cwd, os.path.join(out, stdout_name), os.path.join(out, stderr_name), append)
        entry["exit_status"] = status
        entry["seconds"] = round(time.monotonic() - t0, 3)
        for key, file in (("stdout", stdout_name), ("stderr", stderr_name)):  # no empty files
            if os.path.getsize(os.path.join(out, file)) == 0:
                os.remove(os.path.join(out, file))
                del entry[key]
        if status != 0:
            if step.get("optional"):
                print(f"== {name} [{sname}]: exit status {status} (optional step)", file=sys.stderr)
                continue
            print(f"== {name} [{sname}]: failed, exit status {status}", file=sys.stderr)
            ok = False
            break
    if wanted is not None and previous:
        carry_over(previous, record, [st["name"] for st in steps_of(config)])
    record["finished"] = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    record["ok"] = ok
    if not args.dry_run:
        write_record(out, record)
        print(f"== {name}: {'done' if ok else 'FAILED'}, outputs in {out}", file=sys.stderr)
    return ok


def read_record(out):
    try:
        with open(os.path.join(out, "command.json")) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError):
        return None


def carry_over(previous, record, order):
    """With --steps, the steps not run now keep their entries from the previous command.json
    (marked "earlier": that run's date and commit), so the file still says how the outputs were made."""
    ran = {e["name"] for e in record["steps"]}
    earlier = {e["name"]: e for e in previous.get("steps", [])}
    steps = []
    for name in order:
        if name in ran:
            steps += [e for e in record["steps"] if e["name"] == name]
        elif name in earlier:
            e = dict(earlier[name])
            e.setdefault("earlier", {"date": previous.get("date"), "git": previous.get("git")})
            steps.append(e)
    record["steps"] = steps


def write_record(out, record):
    tmp = os.path.join(out, "command.json.tmp")
    with open(tmp, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    os.replace(tmp, os.path.join(out, "command.json"))


def env_pair(text):
    if "=" not in text:
        raise argparse.ArgumentTypeError("--env takes KEY=VALUE")
    return tuple(text.split("=", 1))


def main():
    parser = argparse.ArgumentParser(description="List and run the experiments of experiments/*.json.",
                                     epilog="docs/experiments/running.md describes the files and outputs.")
    sub = parser.add_subparsers(dest="cmd", required=True)
    lp = sub.add_parser("list", help="the experiments, their output folders and descriptions")
    lp.add_argument("patterns", nargs="*", default=["*"], metavar="PATTERN")
    lp.add_argument("--commands", action="store_true", help="also print each step's command")
    rp = sub.add_parser("run", help="run experiments into OUT/<out>/")
    rp.add_argument("names", nargs="+", metavar="NAME")
    rp.add_argument("--build", default=os.path.join(REPO, "build"), help="the build folder (default: REPO/build)")
    rp.add_argument("--out", default=os.path.join(REPO, "out", "experiments"),
                    help="the output root (default: REPO/out/experiments)")
    rp.add_argument("--dry-run", action="store_true", help="print the commands, run and write nothing")
    rp.add_argument("--steps", help="run only these steps (comma-separated names, e.g. eval)")
    rp.add_argument("--resume", action="store_true", help="steps with a checkpoint go on from it when it exists")
    rp.add_argument("--keep-going", action="store_true", help="after a failed experiment, run the others")
    rp.add_argument("--env", type=env_pair, action="append", default=[], metavar="KEY=VALUE",
                    help="set in every step's environment, over the experiment's own (e.g. OMP_NUM_THREADS=2)")
    args = parser.parse_args()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `list | head` ends quietly
    found = load_all()
    if args.cmd == "list":
        for n in select(found, args.patterns):
            path, config = found[n]
            cost = f" [{config['cost']}]" if config.get("cost") else ""
            out = config.get("out", n)
            print(f"{n}{'' if out == n else f'  -> {out}/'}{cost}\n    {config['description']}")
            if args.commands:
                for step in steps_of(config):
                    print(f"    {step['name']}: {' '.join(step['argv'])}")
        return 0
    args.env = dict(args.env)
    names = select(found, args.names)
    if args.steps:  # a misspelt step would silently run nothing
        known = {st["name"] for _, config in found.values() for st in steps_of(config)}
        unknown = sorted(set(args.steps.split(",")) - known)
        if unknown:
            sys.exit(f"experiments: no experiment has a step {', '.join(unknown)} (steps: {', '.join(sorted(known))})")
    failed = []
    for n in names:
        path, config = found[n]
        if not run_experiment(n, path, config, args):
            failed.append(n)
            if not args.keep_going:
                break
    if failed:
        print(f"experiments: failed: {' '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
