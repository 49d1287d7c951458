"""`wsp-ray tune FILE --ray ADDRESS`: `wsp tune` spread over a Ray cluster.

Exit codes are `wsp tune`'s: 0 done, 1 the file has errors or a run failed, 2 a usage error or a
cluster that cannot be reached.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

# How long an address that takes no connection is waited for before it is reported.
CONNECT_TIMEOUT_S = 5.0

# How long joining a cluster may take: an address that takes a connection but is no Ray head
# would otherwise be retried for a minute.
INIT_TIMEOUT_S = 10.0


def parse(argv):
    p = argparse.ArgumentParser(
        prog="wsp-ray",
        description="Run `wsp tune` over a Ray cluster: one shard of each exploration per task.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("tune", help="explore a file's schedules on the cluster")
    t.add_argument("file", help="the .wsp file")
    t.add_argument("--ray", required=True, metavar="ADDRESS",
                   help="the cluster's address (HOST:PORT of its head), or `auto`")
    t.add_argument("--wsp", default=None, metavar="PATH",
                   help="the wsp binary the tasks run (default: `wsp` on the nodes' PATH)")
    t.add_argument("--ship", action="store_true",
                   help="ship the file's folder and the wsp binary to the nodes in the job's "
                        "runtime_env instead of reading them from a shared file system")
    t.add_argument("--shards", type=int, default=None, metavar="N",
                   help="how many shards (default: the cluster's CPUs)")
    t.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="scoring threads per shard")
    t.add_argument("--json", default=None, metavar="OUT.json")
    t.add_argument("--space", default=None, metavar="SPACE.toml")
    t.add_argument("--top", type=int, default=10, metavar="N")
    t.add_argument("--bind", action="append", default=[], metavar="NAME=VALUE")
    t.add_argument("--target-desc", default=None, metavar="FILE.toml")
    t.add_argument("--kernel-cycles", default=None, metavar="FILE.json")
    t.add_argument("--no-cache", action="store_true")
    args = p.parse_args(argv)
    if args.shards is not None and args.shards < 1:
        p.error("--shards is at least 1")
    if args.jobs < 1:
        p.error("--jobs is at least 1")
    return args


def error(message, code):
    print(f"error: {message}", file=sys.stderr)
    return code


def check_reachable(address):
    """`None` if the head at HOST:PORT takes a connection, else why not."""
    if address == "auto":
        return None
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        return f"`{address}` is not HOST:PORT (or `auto`)"
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
            return None
    except OSError as e:
        return f"the Ray cluster at {address} cannot be reached: {e}"


def merge(docs):
    """The shards' documents as one: each exploration's configurations by index, its best
    (least cycles, or wall-clock time, the first of equals, unless the program as written is
    faster) and speedup found again."""
    out = json.loads(json.dumps(docs[0]))
    for k, x in enumerate(out["explorations"]):
        configs = {}
        for d in docs:
            for c in d["explorations"][k]["configurations"]:
                configs[c["index"]] = c
        x["configurations"] = [configs[i] for i in sorted(configs)]

        def key(c):
            return c["time_ms"] if x["metric"] == "wall" else c["total_cycles"]

        ran = [c for c in x["configurations"] if c["status"] == "ran"]
        best = min(ran, key=lambda c: (key(c), c["index"]), default=None)
        base = x["baseline"]
        # The program as written (the baseline) stays the best unless a configuration is
        # no slower, as `wsp tune` decides it.
        if best is not None and base["status"] == "ran" and key(base) < key(best):
            best = None
            x["speedup"] = 1.0
        elif best is not None and base["status"] == "ran" and key(best) > 0:
            x["speedup"] = key(base) / key(best)
        else:
            x["speedup"] = None
        x["best"] = None if best is None else best["index"]
    return out


def write_atomically(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".wsp-ray-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def shard_argv(args, file, i, n):
    argv = ["tune", file, "--shard", f"{i}/{n}", "--json", "-", "--jobs", str(args.jobs)]
    for b in args.bind:
        argv += ["--bind", b]
    for flag, value in (("--space", args.space), ("--target-desc", args.target_desc),
                        ("--kernel-cycles", args.kernel_cycles)):
        if value is not None:
            argv += [flag, value]
    if args.no_cache:
        argv.append("--no-cache")
    return argv


def main(argv=None):
    args = parse(argv)
    why = check_reachable(args.ray)
    if why is not None:
        return error(why, 2)
    if not os.path.isfile(args.file):
        return error(f"cannot read {args.file}: no such file", 2)
    try:
        import ray
    except ImportError as e:
        return error(f"cannot import ray ({e}): `pip install ray==2.60.0`", 2)

    wsp = local_wsp = args.wsp or shutil.which("wsp") or "wsp"
    runtime_env = None
    file = os.path.abspath(args.file)
    extra = [args.space, args.target_desc, args.kernel_cycles]
    if args.ship:
        # The file's folder, with the binary beside it, as the tasks' working directory.
        folder = os.path.dirname(file)
        staging = tempfile.mkdtemp(prefix="wsp-ray-")
        shutil.copytree(folder, os.path.join(staging, "src"))
        shutil.copy2(wsp, os.path.join(staging, "wsp"))
        runtime_env = {"working_dir": staging}
        file = os.path.join("src", os.path.basename(file))
        wsp = "./wsp"
        rel = lambda p: None if p is None else os.path.join(
            "src", os.path.relpath(os.path.abspath(p), folder))
        args.space, args.target_desc, args.kernel_cycles = (rel(p) for p in extra)
    else:
        absolute = lambda p: None if p is None else os.path.abspath(p)
        args.space, args.target_desc, args.kernel_cycles = (absolute(p) for p in extra)

    joined = []

    def join():
        try:
            ray.init(address=args.ray, runtime_env=runtime_env, logging_level="ERROR",
                     log_to_driver=False, configure_logging=False)
            joined.append(None)
        except Exception as e:  # Ray raises ConnectionError, RuntimeError, ...
            joined.append(e)

    joining = threading.Thread(target=join, daemon=True)
    joining.start()
    joining.join(INIT_TIMEOUT_S)
    if not joined:
        error(f"the Ray cluster at {args.ray} did not answer within {INIT_TIMEOUT_S:.0f} s: "
              "is it a Ray head's address?", 2)
        sys.stderr.flush()
        # Ray's own threads may still be retrying: leave without waiting for them.
        os._exit(2)
    if joined[0] is not None:
        return error(f"cannot connect to the Ray cluster at {args.ray}: {joined[0]}", 2)
    try:
        n = args.shards or max(1, int(ray.cluster_resources().get("CPU", 1)))

        @ray.remote(num_cpus=1)
        def shard(wsp, argv):
            done = subprocess.run([wsp] + argv, capture_output=True, text=True)
            return done.returncode, done.stdout, done.stderr

        refs = [shard.remote(wsp, shard_argv(args, file, i, n)) for i in range(1, n + 1)]
        results = ray.get(refs)
    finally:
        ray.shutdown()

    for code, out, err in results:
        if code != 0:
            sys.stderr.write(err)
            return code
    # What the shards noted once, not once per shard.
    sys.stderr.write(results[0][2])
    try:
        docs = [json.loads(out) for _, out, _ in results]
    except ValueError as e:
        return error(f"a shard's document is not JSON: {e}", 1)
    merged = merge(docs)
    merged["file"] = args.file
    text = json.dumps(merged, indent=2, ensure_ascii=False) + "\n"
    if args.json == "-":
        sys.stdout.write(text)
    else:
        if args.json is not None:
            write_atomically(args.json, text)
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write(text)
            f.flush()
            shown = subprocess.run([local_wsp, "tune", args.file, "--render", f.name,
                                    "--top", str(args.top)])
            if shown.returncode != 0:
                return shown.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
