#!/usr/bin/env python3
"""make docker-replay: build deploy/Dockerfile's recipe without a container
daemon (docs/operators/install.md, "Container image").

A clean `git archive` of HEAD is the build context. The build stage's steps
run in order: WORKDIR, ARG, ENV, COPY (from the context, only what the step
names, so a file the recipe forgets to copy before a RUN is missing as it
would be in `docker build`) and RUN (bash, with the stage's absolute paths
mapped into a temporary root). The final stage's `COPY --from=build` sources
must exist, and the built binary must print the version it was given.
Prints each step; exits non-zero on the first failure.
"""
import os, re, shlex, shutil, subprocess, sys, tempfile

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
recipe = os.path.join(repo, "deploy", "Dockerfile")

def instructions(text):
    lines, cur = [], ""
    for raw in text.splitlines():
        if not cur and (not raw.strip() or raw.lstrip().startswith("#")):
            continue
        if raw.rstrip().endswith("\\"):
            cur += raw.rstrip()[:-1] + " "
            continue
        cur += raw
        word, _, rest = cur.strip().partition(" ")
        lines.append((word.upper(), rest.strip()))
        cur = ""
    return lines

def main():
    steps = instructions(open(recipe).read())
    stages, name = {}, None
    for word, rest in steps:
        if word == "FROM":
            m = re.match(r"(\S+)(?:\s+AS\s+(\S+))?", rest, re.I)
            name = m.group(2) or f"stage{len(stages)}"
            stages[name] = []
        else:
            stages[name].append((word, rest))
    if "build" not in stages or len(stages) < 2:
        sys.exit("docker-replay: the recipe has no build stage and final stage")
    tmp = tempfile.mkdtemp(prefix="docker-replay-")
    try:
        ctx, root = os.path.join(tmp, "context"), os.path.join(tmp, "root")
        os.makedirs(ctx); os.makedirs(root)
        archive = subprocess.run(["git", "-C", repo, "archive", "HEAD"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", ctx], input=archive, check=True)
        version = "replay-" + subprocess.run(["git", "-C", repo, "rev-parse", "--short=7", "HEAD"],
                                             check=True, capture_output=True, text=True).stdout.strip()
        def mapped(path):
            return os.path.join(root, path.lstrip("/")) if path.startswith("/") else path
        env = {k: v for k, v in os.environ.items() if k not in ("GOWORK", "GOFLAGS")}
        args = {"VERSION": version}
        workdir = root
        ran = 0
        for word, rest in stages["build"]:
            print(f"docker-replay: {word} {rest[:110]}", flush=True)
            if word == "WORKDIR":
                workdir = mapped(rest)
                os.makedirs(workdir, exist_ok=True)
            elif word == "ARG":
                k, _, v = rest.partition("=")
                args.setdefault(k, v)
                env[k] = args[k]
            elif word == "ENV":
                for part in shlex.split(rest):
                    k, _, v = part.partition("=")
                    env[k] = v
            elif word == "COPY":
                parts = shlex.split(rest)
                if any(p.startswith("--from") for p in parts):
                    sys.exit("docker-replay: COPY --from in the build stage is not replayed")
                parts = [p for p in parts if not p.startswith("--")]
                *srcs, dest = parts
                target = mapped(dest) if dest.startswith("/") else os.path.join(workdir, dest)
                for src in srcs:
                    s = os.path.join(ctx, src)
                    if src == ".":
                        shutil.copytree(ctx, target, dirs_exist_ok=True, symlinks=True)
                        continue
                    if not os.path.exists(s):
                        sys.exit(f"docker-replay: COPY {src}: not in the build context")
                    d = os.path.join(target, os.path.basename(src)) if dest.endswith("/") else target
                    os.makedirs(os.path.dirname(d), exist_ok=True)
                    (shutil.copytree if os.path.isdir(s) else shutil.copy2)(s, d)
            elif word == "RUN":
                cmd = re.sub(r'(^|[\s=>"\'])/(out|src|app|data)(?=[/\s"\']|$)', lambda m: m.group(1) + os.path.join(root, m.group(2)), rest)
                r = subprocess.run(["bash", "-euo", "pipefail", "-c", cmd], cwd=workdir, env=env)
                if r.returncode != 0:
                    sys.exit(f"docker-replay: RUN failed (exit {r.returncode}): {rest}")
                ran += 1
            else:
                sys.exit(f"docker-replay: {word} in the build stage is not replayed")
        final = list(stages)[-1]
        checked = 0
        for word, rest in stages[final]:
            if word == "COPY" and "--from=build" in rest:
                parts = [p for p in shlex.split(rest) if not p.startswith("--")]
                for src in parts[:-1]:
                    if not os.path.exists(mapped(src)):
                        sys.exit(f"docker-replay: the final stage copies {src}, which the build stage did not produce")
                    checked += 1
        out = subprocess.run([mapped("/out/adminkernel"), "version"], capture_output=True, text=True)
        if out.returncode != 0 or version not in out.stdout:
            sys.exit(f"docker-replay: the built adminkernel version printed {out.stdout!r} (exit {out.returncode}), want {version}")
        print(f"docker-replay: {ran} RUN steps passed, {checked} paths the final stage copies exist, "
              f"adminkernel version = {out.stdout.strip()}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

main()
